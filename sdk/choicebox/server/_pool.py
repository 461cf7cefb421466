"""A few worker processes that answer requests for the event loop, each within a deadline.

Grading is CPU-bound, and the slow cases are C calls (a stdlib ``re`` match over a long output)
that hold the GIL from start to end: in a thread they stall the event loop as much as inline. In
another process they stall nothing but that process. ``WorkerPool`` hands a request's route and
body (bytes) to an idle worker and waits for its status and reply (bytes) without blocking the
loop; a worker that has not answered within ``timeout`` is killed and replaced, and the request
gets a ``WorkerTimeout``. A worker that dies (the kernel's OOM killer, a crash) is replaced too.

Workers are started by the forkserver, never forked from the server: a process that runs threads
(the event loop's executor, uvloop's) must not be forked mid-lock. Each builds its request handler
once, by calling the picklable ``factory`` it is given, and then serves one request at a time over
a socket pair: frames of an 8-byte big-endian length and a payload.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import signal
import socket
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["Handler", "WorkerCrashed", "WorkerPool", "WorkerTimeout"]

logger = logging.getLogger("choicebox.server")

# A worker's request handler: (route, body) -> (HTTP status, reply body).
Handler = Callable[[str, bytes], tuple[int, bytes]]

_LENGTH: Final = struct.Struct("!Q")
_STATUS: Final = struct.Struct("!H")
_READY: Final = b"ready"
# How long a new worker may take to import choicebox and build its handler (rule files included).
_START_TIMEOUT: Final = 120.0


class WorkerTimeout(Exception):
    """A worker did not answer within the pool's timeout; it was killed and is being replaced."""


class WorkerCrashed(Exception):
    """A worker died while it handled the request (killed by a signal, out of memory)."""


class _Worker:
    """One worker process and the server's end of its socket pair."""

    def __init__(self, process: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.process = process
        self.reader = reader
        self.writer = writer

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
    """``size`` worker processes, started by ``start`` or on first use, each request answered
        within ``timeout`` seconds of a worker taking it. ``preload`` names modules the workers need
    (those of ``factory``), imported once by the forkserver.

        A request waits for an idle worker first; that wait is not part of the timeout (it is bounded
        by the timeouts of the requests ahead of it).
    """

    def __init__(
        self,
        factory: Callable[[], Handler],
        *,
        size: int,
        timeout: float,
        preload: Sequence[str] = (),
    ) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least one worker, got {size}")
        self._factory = factory
        self.size = size
        self.timeout = timeout
        self._context = multiprocessing.get_context("forkserver")
        if preload:
            # The forkserver imports these once; every worker forked from it starts with them,
            # so a replacement is ready in milliseconds. (No effect once the forkserver runs.)
            self._context.set_forkserver_preload(list(preload))
        self._changed: asyncio.Condition | None = None  # an idle worker, a failure, or closing
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._live = 0  # workers running or starting
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
        async with self._changed:
            while len(self._idle) + len(self._busy) < self.size:
                if self._failure is not None and self._live < self.size:
                    raise RuntimeError(f"a grading worker could not be started: {self._failure}")
                await self._changed.wait()

    def _spawn_missing(self) -> None:
        while self._live < self.size:
            self._live += 1
            task = asyncio.get_running_loop().create_task(self._start_one())
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def run(self, route: str, body: bytes) -> tuple[int, bytes]:
        """The worker's ``(status, reply)`` for ``route`` and ``body``.

        Raises ``WorkerTimeout`` past the deadline, ``WorkerCrashed`` when the worker died, and
        ``RuntimeError`` when no worker can be started (or the pool is closed).
        """
        await self.start()
        worker = await self._take()
        try:
            async with asyncio.timeout(self.timeout):
                reply = await worker.call(route, body)
        except TimeoutError:
            self._retire(worker)
            raise WorkerTimeout(f"no answer within {self.timeout:g} s") from None
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            self._retire(worker)
            raise WorkerCrashed(await worker.death()) from exc
        except BaseException:  # cancelled mid-request: the worker's state is unknown
            self._retire(worker)
            raise
        await self._give_back(worker)
        (status,) = _STATUS.unpack_from(reply)
        return status, reply[_STATUS.size :]

    async def _take(self) -> _Worker:
        assert self._changed is not None
        async with self._changed:
            while not self._idle:
                if self._closed:
                    raise RuntimeError("the worker pool is closed")
                if self._live == 0 and self._failure is not None:
                    raise RuntimeError(f"no grading worker could be started: {self._failure}")
                await self._changed.wait()
            worker = self._idle.pop()
            self._busy.add(worker)
            return worker

    async def _give_back(self, worker: _Worker) -> None:
        assert self._changed is not None
        async with self._changed:
            self._busy.discard(worker)
            self._idle.append(worker)
            self._changed.notify()

    def _retire(self, worker: _Worker) -> None:
        """Kill ``worker`` and start its replacement."""
        self._busy.discard(worker)
        self._live -= 1
        worker.kill()
        if not self._closed:
            self._spawn_missing()

    async def _start_one(self) -> None:
        """Start one worker and make it idle once it says it is ready.

        A worker that cannot start is counted out and its failure kept, so that requests
        waiting with no worker left get an error instead of waiting forever; the next request
        tries again.
        """
        assert self._changed is not None
        began = time.monotonic()
        ours, theirs = socket.socketpair()
        process = self._context.Process(
            target=_worker_main, args=(theirs, self._factory), daemon=True, name="choicebox-grader"
        )
        worker: _Worker | None = None
        failure: str | None = None
        try:
            # Starting talks to the forkserver (and starts it, the first time): not on the loop.
            await asyncio.get_running_loop().run_in_executor(None, process.start)
            theirs.close()
            reader, writer = await asyncio.open_unix_connection(sock=ours)
            worker = _Worker(process, reader, writer)
            async with asyncio.timeout(_START_TIMEOUT):
                hello = await worker.receive()
            if hello != _READY:
                failure = hello.decode("utf-8", "replace")
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            failure = await worker.death() if worker is not None else str(exc)
        except BaseException:  # cancelled by close()
            self._live -= 1
            ours.close()
            if process.pid is not None:
                process.kill()
            raise
        finally:
            theirs.close()
        async with self._changed:
            if failure is not None or self._closed:
                self._live -= 1
                ours.close()
                if process.pid is not None:
                    process.kill()
                if failure is not None:
                    self._failure = failure
                    logger.error("a grading worker did not start: %s", failure)
                self._changed.notify_all()
                return
            assert worker is not None
            self._failure = None
            self._idle.append(worker)
            self._changed.notify()
        logger.debug("grading worker %s ready in %.2f s", process.pid, time.monotonic() - began)

    async def close(self) -> None:
        """Stop every worker: idle ones at once, busy ones too (their requests fail)."""
        self._closed = True
        for task in list(self._starting):
            task.cancel()
        workers = [*self._idle, *self._busy]
        self._idle.clear()
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


def _worker_main(sock: socket.socket, factory: Callable[[], Handler]) -> None:
    """Build the handler, say so, then answer requests until the server closes the socket."""
    # Ctrl-C reaches the whole process group: the server shuts down, and closes our socket.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        handle = factory()
    except Exception as exc:  # reported to the server, which logs it and answers 500s
        _send(sock, f"{type(exc).__name__}: {exc}".encode())
        return
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
        status, reply = handle(route.decode("ascii"), body)
        _send(sock, _STATUS.pack(status) + reply)


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_LENGTH.pack(len(payload)) + payload)
