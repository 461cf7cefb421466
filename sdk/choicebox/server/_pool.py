"""A few worker processes that answer requests for the event loop, each within a deadline.

Grading is CPU-bound, and the slow cases are C calls (a stdlib ``re`` match over a long output)
that hold the GIL from start to end: in a thread they stall the event loop as much as inline. In
another process they stall nothing but that process. ``WorkerPool`` hands a request's route and
body (bytes) to an idle worker and waits for its status and reply (bytes) without blocking the
loop. A request has ``timeout`` seconds from the moment it asks, waiting for a worker included:
past it the request gets a ``WorkerTimeout`` (and a worker still on it is killed and replaced).
A worker that dies (the kernel's OOM killer, a crash) is replaced too, and so is one whose
request was cancelled (its client went away): its work is dropped, not finished.

Each worker may grow its data to ``memory_limit`` bytes (``RLIMIT_DATA``): a request that needs
more fails there with a ``MemoryError``, gets a ``WorkerOutOfMemory`` and the worker is
replaced, so no request can take a grading process's memory past that bound.

Requests come in two lanes. A *small* request is one whose cost the caller has bounded (a small
body without sample patterns): it may take any idle worker, and ``reserved`` workers take
nothing else, so small requests never wait behind expensive ones. A *large* request takes only
the shared workers. A shared worker that comes free takes the request that has waited longest
in either lane. A lane queues at most ``max_waiting`` requests and ``max_waiting_bytes`` bytes of
bodies, and takes no request that would wait longer than ``timeout`` at the lane's recent pace
(its mean service time, times the requests ahead, over its workers): such a request is refused
at once with ``PoolFull``, which says when to try again, instead of timing out in the queue.

Workers are started by the forkserver, never forked from the server: a process that runs threads
(the event loop's executor, uvloop's) must not be forked mid-lock. Each builds its request handler
once, by calling the picklable ``factory`` it is given, and then serves one request at a time over
a socket pair: frames of an 8-byte big-endian length and a payload.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import math
import multiprocessing
import os
import resource
import signal
import socket
import struct
import time
from collections.abc import Callable, Sequence
from multiprocessing.process import BaseProcess
from typing import Any, Final, Literal, NamedTuple

__all__ = [
    "DEFAULT_MAX_WAITING",
    "Handler",
    "Lane",
    "PoolFull",
    "WorkerCrashed",
    "WorkerOutOfMemory",
    "WorkerPool",
    "WorkerTimeout",
]

logger = logging.getLogger("choicebox.server")

# A worker's request handler: (route, body) -> (HTTP status, reply body).
Handler = Callable[[str, bytes], tuple[int, bytes]]

_LENGTH: Final = struct.Struct("!Q")
_STATUS: Final = struct.Struct("!H")
_READY: Final = b"ready"
# How long a new worker may take to import choicebox and build its handler (rule files included).
_START_TIMEOUT: Final = 120.0
# How often a worker's launch is tried when the forkserver refuses the connection, and the
# first pause between tries (doubled each time): a forkserver that died is started again by
# the next try, and one swamped by a burst of starts takes the connection a moment later.
_LAUNCH_TRIES: Final = 4
_LAUNCH_PAUSE: Final = 0.05
# Requests a lane queues at most: NeMo Gym's client opens up to 1,024 connections to a server.
DEFAULT_MAX_WAITING: Final = 1024
# The status a worker sends instead of a reply when its handler ran out of memory; it then ends.
_OUT_OF_MEMORY: Final = 0
# How much lower a worker's CPU priority is than the server's (nice(2)).
_NICENESS: Final = 5
# Math libraries start a thread (and its buffers) per core; a worker grades on one.
_ONE_THREAD: Final = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# A lane's mean service time, for Retry-After, follows recent requests with this weight.
_SERVICE_WEIGHT: Final = 0.2

Lane = Literal["small", "large"]


class WorkerTimeout(Exception):
    """A request was not answered within the pool's timeout: ``waited`` when no worker took it
    in time, else its worker was killed and is being replaced."""

    def __init__(self, message: str, *, waited: bool = False) -> None:
        super().__init__(message)
        self.waited = waited


class WorkerCrashed(Exception):
    """A worker died while it handled the request (killed by a signal, out of memory)."""


class WorkerOutOfMemory(Exception):
    """The request needed more memory than a worker may have; the worker is being replaced."""


class PoolFull(Exception):
    """The request's lane queues as much as it may (the message says what); ``retry_after``
    is about how many seconds the requests ahead of it take (at least 1)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Waiter(NamedTuple):
    arrival: int  # the order of arrival, across lanes
    future: asyncio.Future[_Worker]
    size: int  # the body's bytes


class _Worker:
    """One worker process and the server's end of its socket pair."""

    def __init__(
        self,
        process: Any,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        reserved: bool,
    ) -> None:
        self.process = process
        self.reader = reader
        self.writer = writer
        self.reserved = reserved  # takes small requests only

    async def call(self, route: str, body: bytes) -> bytes:
        head = route.encode("ascii") + b"\n"
        # One write, so one system call for a small request (each wakes the worker).
        self.writer.writelines((_LENGTH.pack(len(head) + len(body)), head, body))
        await self.writer.drain()
        return await self.receive()

    async def receive(self) -> bytes:
        (size,) = _LENGTH.unpack(await self.reader.readexactly(_LENGTH.size))
        return await self.reader.readexactly(size)

    def kill(self) -> None:
        """Stop the process now (it may be stuck in C code) and close the socket."""
        self.writer.close()
        if self.process.is_alive():
            self.process.kill()

    async def death(self) -> str:
        """How the process ended, once it has (it is waited for, briefly, off the loop)."""
        await asyncio.get_running_loop().run_in_executor(None, self.process.join, 2)
        code = self.process.exitcode
        if code is None:
            return "it stopped answering"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"it was killed by {signal.Signals(-code).name}"
        return f"it exited with status {code}"


class WorkerPool:
    """``size`` shared worker processes and ``reserved`` ones for small requests, started by
    ``start`` or on first use; each request is answered within ``timeout`` seconds of asking,
    or gets a ``WorkerTimeout``. ``preload`` names modules the workers need (those of
    ``factory``), imported once by the forkserver. Each lane queues at most ``max_waiting``
    requests and ``max_waiting_bytes`` of bodies, and each worker's data is bounded by
    ``memory_limit`` bytes (see the module docstring).
    """

    def __init__(
        self,
        factory: Callable[[], Handler],
        *,
        size: int,
        timeout: float,
        reserved: int = 0,
        max_waiting: int = DEFAULT_MAX_WAITING,
        max_waiting_bytes: int | None = None,
        memory_limit: int | None = None,
        preload: Sequence[str] = (),
    ) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least one worker, got {size}")
        if reserved < 0 or max_waiting < 0 or (max_waiting_bytes or 0) < 0:
            raise ValueError("reserved workers and queued requests cannot be negative")
        self._factory = factory
        self.size = size
        self.reserved = reserved
        self.timeout = timeout
        self.max_waiting = max_waiting
        self.max_waiting_bytes = max_waiting_bytes
        self.memory_limit = memory_limit
        self._context = multiprocessing.get_context("forkserver")
        if preload:
            # The forkserver imports these once; every worker forked from it starts with them,
            # so a replacement is ready in milliseconds. (No effect once the forkserver runs.)
            self._context.set_forkserver_preload(list(preload))
        self._changed: asyncio.Condition | None = None  # a worker started or failed, or closing
        # Idle workers, keyed by whether they are reserved for small requests.
        self._idle: dict[bool, list[_Worker]] = {False: [], True: []}
        self._busy: set[_Worker] = set()
        self._live = {False: 0, True: 0}  # workers running or starting, by kind
        # Requests waiting for a worker, oldest first, and their bodies' bytes.
        self._waiting: dict[Lane, collections.deque[_Waiter]] = {
            "small": collections.deque(),
            "large": collections.deque(),
        }
        self._waiting_bytes: dict[Lane, int] = {"small": 0, "large": 0}
        self._arrivals = itertools.count()
        self._service: dict[Lane, float] = {"small": 0.0, "large": 0.0}  # mean seconds
        self._starting: set[asyncio.Task[None]] = set()
        self._failure: str | None = None
        self._closed = False

    async def start(self) -> None:
        """Start the workers; returns at once, while they start (requests wait for them)."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        if self._changed is None:
            self._changed = asyncio.Condition()
        self._spawn_missing()

    async def ready(self) -> None:
        """Wait until every worker is up; raises ``RuntimeError`` if one cannot start."""
        await self.start()
        assert self._changed is not None
        wanted = self.size + self.reserved
        async with self._changed:
            while len(self._idle[False]) + len(self._idle[True]) + len(self._busy) < wanted:
                if self._failure is not None and sum(self._live.values()) < wanted:
                    raise RuntimeError(f"a grading worker could not be started: {self._failure}")
                await self._changed.wait()

    def waiting(self, lane: Lane) -> int:
        """How many requests of ``lane`` wait for a worker."""
        return len(self._waiting[lane])

    def _spawn_missing(self) -> None:
        for reserved, wanted in ((False, self.size), (True, self.reserved)):
            while self._live[reserved] < wanted:
                self._live[reserved] += 1
                task = asyncio.get_running_loop().create_task(self._start_one(reserved))
                self._starting.add(task)
                task.add_done_callback(self._starting.discard)

    async def run(self, route: str, body: bytes, *, lane: Lane = "large") -> tuple[int, bytes]:
        """The worker's ``(status, reply)`` for ``route`` and ``body``.

        Raises ``PoolFull`` when ``lane`` may not queue the request, ``WorkerTimeout``
        past the deadline (waiting included), ``WorkerOutOfMemory`` when the request needed more
        than ``memory_limit``, ``WorkerCrashed`` when the worker died, and
        ``RuntimeError`` when no worker can be started (or the pool is closed). Cancelled, the
        request leaves the queue, or its worker is killed and replaced.
        """
        await self.start()
        worker: _Worker | None = None
        try:
            async with asyncio.timeout(self.timeout):
                worker = await self._take(lane, len(body))
                taken = time.monotonic()
                reply = await worker.call(route, body)
        except TimeoutError:
            if worker is None:
                raise WorkerTimeout(
                    f"no grading process was free within {self.timeout:g} s", waited=True
                ) from None
            self._service[lane] += _SERVICE_WEIGHT * (self.timeout - self._service[lane])
            self._retire(worker)
            raise WorkerTimeout(f"no answer within {self.timeout:g} s") from None
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            assert worker is not None  # only talking to a worker fails so
            self._retire(worker)
            raise WorkerCrashed(await worker.death()) from exc
        except BaseException:  # cancelled mid-request: the worker's state is unknown
            if worker is not None:
                self._retire(worker)
            raise
        took = time.monotonic() - taken
        self._service[lane] += _SERVICE_WEIGHT * (took - self._service[lane])
        (status,) = _STATUS.unpack_from(reply)
        if status == _OUT_OF_MEMORY:
            self._retire(worker)  # it has ended
            raise WorkerOutOfMemory(
                f"the request needed more than the {self.memory_limit} bytes a grading process "
                "may use"
            )
        self._release(worker)
        return status, reply[_STATUS.size :]

    async def _take(self, lane: Lane, size: int) -> _Worker:
        idle = self._idle[True] if lane == "small" and self._idle[True] else self._idle[False]
        if idle:
            worker = idle.pop()
            self._busy.add(worker)
            return worker
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        self._check_startable(lane)
        self._admit(lane, size)
        waiter = _Waiter(next(self._arrivals), asyncio.get_running_loop().create_future(), size)
        self._waiting[lane].append(waiter)
        self._waiting_bytes[lane] += size
        future = waiter.future
        try:
            return await future
        except BaseException:
            if future.done() and not future.cancelled() and future.exception() is None:
                self._release(future.result())  # handed a worker as it was cancelled: pass it on
            elif waiter in self._waiting[lane]:
                self._waiting[lane].remove(waiter)
                self._waiting_bytes[lane] -= size
            raise

    def _admit(self, lane: Lane, size: int) -> None:
        """Raise ``PoolFull`` when a request of ``size`` bytes may not wait in ``lane``."""
        waiting = len(self._waiting[lane])
        workers = self.size + (self.reserved if lane == "small" else 0)
        expected = self._service[lane] * (waiting + 1) / workers
        retry_after = max(1, math.ceil(expected))
        if waiting >= self.max_waiting:
            message = f"{waiting} {lane} requests are already waiting for a grading process"
        elif (
            self.max_waiting_bytes is not None
            and waiting
            and self._waiting_bytes[lane] + size > self.max_waiting_bytes
        ):
            message = (
                f"{self._waiting_bytes[lane]} bytes of {lane} requests are already waiting for "
                f"a grading process (at most {self.max_waiting_bytes})"
            )
        elif expected > self.timeout:
            message = (
                f"the {waiting} {lane} requests ahead would take about {expected:.0f} s, more "
                f"than the {self.timeout:g} s a request may take"
            )
        else:
            return
        raise PoolFull(message, retry_after)

    def _check_startable(self, lane: Lane) -> None:
        """Raise when no worker that could take a request of ``lane`` runs or is starting."""
        live = self._live[False] + (self._live[True] if lane == "small" else 0)
        if live == 0 and self._failure is not None:
            raise RuntimeError(f"no grading worker could be started: {self._failure}")

    def _release(self, worker: _Worker) -> None:
        """Hand an idle ``worker`` to the request that has waited longest for one it may take."""
        self._busy.discard(worker)
        lanes: tuple[Lane, ...] = ("small",) if worker.reserved else ("small", "large")
        while True:
            heads = [(self._waiting[lane][0], lane) for lane in lanes if self._waiting[lane]]
            if not heads:
                self._idle[worker.reserved].append(worker)
                return
            waiter, lane = min(heads, key=lambda head: head[0].arrival)
            self._waiting[lane].popleft()
            self._waiting_bytes[lane] -= waiter.size
            if not waiter.future.done():
                self._busy.add(worker)
                waiter.future.set_result(worker)
                return

    def _retire(self, worker: _Worker) -> None:
        """Kill ``worker`` and start its replacement."""
        self._busy.discard(worker)
        self._live[worker.reserved] -= 1
        worker.kill()
        if not self._closed:
            self._spawn_missing()

    def _fail_waiting(self, message: str, lanes: Sequence[Lane]) -> None:
        for lane in lanes:
            waiters = self._waiting[lane]
            self._waiting_bytes[lane] = 0
            while waiters:
                future = waiters.popleft().future
                if not future.done():
                    future.set_exception(RuntimeError(message))

    def _process(self, theirs: socket.socket) -> BaseProcess:
        """A new, unstarted worker process that talks over ``theirs``."""
        return self._context.Process(
            target=_worker_main,
            args=(theirs, self._factory, self.memory_limit),
            daemon=True,
            name="choicebox-grader",
        )

    async def _start_one(self, reserved: bool) -> None:
        """Start one worker and make it idle once it says it is ready.

        A worker that cannot start is counted out and its failure kept, so that requests
        waiting with no worker left get an error instead of waiting forever; the next request
        tries again.
        """
        assert self._changed is not None
        began = time.monotonic()
        ours, theirs = socket.socketpair()
        process = self._process(theirs)
        worker: _Worker | None = None
        failure: str | None = None
        try:
            # Starting talks to the forkserver (and starts it, the first time): not on the loop.
            for attempt in range(_LAUNCH_TRIES):
                try:
                    await asyncio.get_running_loop().run_in_executor(None, process.start)
                    break
                except OSError:
                    if attempt == _LAUNCH_TRIES - 1:
                        raise
                    logger.debug("the forkserver refused a worker's launch; trying again")
                    await asyncio.sleep(_LAUNCH_PAUSE * 2**attempt)
                    process = self._process(theirs)
            theirs.close()
            reader, writer = await asyncio.open_unix_connection(sock=ours)
            worker = _Worker(process, reader, writer, reserved=reserved)
            async with asyncio.timeout(_START_TIMEOUT):
                hello = await worker.receive()
            if hello != _READY:
                failure = hello.decode("utf-8", "replace")
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            failure = await worker.death() if worker is not None else str(exc)
        except BaseException:  # cancelled by close()
            self._live[reserved] -= 1
            ours.close()
            if process.pid is not None:
                process.kill()
            raise
        finally:
            theirs.close()
        async with self._changed:
            if failure is not None or self._closed:
                self._live[reserved] -= 1
                ours.close()
                if process.pid is not None:
                    process.kill()
                if failure is not None:
                    self._failure = failure
                    logger.error("a grading worker did not start: %s", failure)
                    message = f"no grading worker could be started: {failure}"
                    if self._live[False] == 0:
                        self._fail_waiting(message, ("large",))
                    if self._live[False] + self._live[True] == 0:
                        self._fail_waiting(message, ("small",))
                self._changed.notify_all()
                return
            assert worker is not None
            self._failure = None
            self._release(worker)
            self._changed.notify_all()
        logger.debug("grading worker %s ready in %.2f s", process.pid, time.monotonic() - began)

    async def close(self) -> None:
        """Stop every worker: idle ones at once, busy ones too (their requests fail)."""
        self._closed = True
        for task in list(self._starting):
            task.cancel()
        self._fail_waiting("the worker pool is closed", ("small", "large"))
        workers = [*self._idle[False], *self._idle[True], *self._busy]
        self._idle[False].clear()
        self._idle[True].clear()
        self._busy.clear()
        if self._changed is not None:
            async with self._changed:
                self._changed.notify_all()
        for worker in workers:
            worker.writer.close()  # an idle worker reads EOF and exits
        loop = asyncio.get_running_loop()
        for worker in workers:
            await loop.run_in_executor(None, worker.process.join, 2)
            worker.kill()


# --- the worker process ---------------------------------------------------------------------


def _worker_main(
    sock: socket.socket, factory: Callable[[], Handler], memory_limit: int | None
) -> None:
    """Build the handler, say so, then answer requests until the server closes the socket."""
    # Ctrl-C reaches the whole process group: the server shuts down, and closes our socket.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # On a busy machine the event loop, which answers every client, goes first.
    with contextlib.suppress(OSError):
        os.nice(_NICENESS)
    for name in _ONE_THREAD:
        os.environ.setdefault(name, "1")
    try:
        if memory_limit is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_DATA)
            if hard != resource.RLIM_INFINITY:
                memory_limit = min(memory_limit, hard)
            resource.setrlimit(resource.RLIMIT_DATA, (memory_limit, hard))
        handle = factory()
    except Exception as exc:  # reported to the server, which logs it and answers 500s
        with contextlib.suppress(OSError):
            _send(sock, f"{type(exc).__name__}: {exc}".encode())
        return
    # The server closes its end when it shuts down or gives up on a request: then so do we.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        _serve(sock, handle)


def _serve(sock: socket.socket, handle: Handler) -> None:
    _send(sock, _READY)
    stream = sock.makefile("rb")
    while True:
        head = stream.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return  # the server closed its end
        (size,) = _LENGTH.unpack(head)
        payload = stream.read(size)
        if len(payload) < size:
            return
        route, _, body = payload.partition(b"\n")
        del payload
        try:
            status, reply = handle(route.decode("ascii"), body)
        except MemoryError:
            # Past the memory bound: say so and end, for a fresh process to take over.
            del body
            _send(sock, _STATUS.pack(_OUT_OF_MEMORY))
            return
        _send(sock, _STATUS.pack(status) + reply)


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_LENGTH.pack(len(payload)) + payload)
