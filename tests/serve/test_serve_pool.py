"""The server's grading processes: a slow request stalls neither the event loop nor the other
workers, a deadline kills and replaces its worker, and a dead worker is replaced."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing.process
import os
import re
import signal
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from choicebox.server._pool import (
    Handler,
    PoolFull,
    WorkerCrashed,
    WorkerOutOfMemory,
    WorkerPool,
    WorkerTimeout,
)

# A stdlib `re` match that backtracks for seconds in one C call, holding the GIL throughout: the
# kind of call that freezes an event loop even from a worker thread.
T = TypeVar("T")

_CATASTROPHIC = re.compile(r"(a+)+$")


def _handle(route: str, body: bytes) -> tuple[int, bytes]:
    if route == "echo":
        return 200, body
    if route == "backtrack":
        _CATASTROPHIC.match("a" * int(body) + "!")
        return 200, b"done"
    if route == "sleep":
        time.sleep(float(body))
        return 200, b"slept"
    if route == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if route == "pid":
        return 200, str(os.getpid()).encode()
    if route == "alloc":  # hold this many MB at once
        held = [bytearray(2**20) for _ in range(int(body))]
        return 200, str(len(held)).encode()
    return 404, b""


def _factory() -> Handler:
    return _handle


def _slow_factory() -> Handler:
    time.sleep(1)  # a replacement is ready a second after its predecessor was killed
    return _handle


def _broken_factory() -> Handler:
    raise ValueError("no rules here")


def _run(
    scenario: Callable[[WorkerPool], Awaitable[T]],
    *,
    size: int = 2,
    timeout: float = 30.0,
    factory: Callable[[], Handler] = _factory,
    reserved: int = 0,
    max_waiting: int = 64,
    max_waiting_bytes: int | None = None,
    memory_limit: int | None = None,
) -> T:
    async def main() -> T:
        pool = WorkerPool(
            factory,
            size=size,
            timeout=timeout,
            reserved=reserved,
            max_waiting=max_waiting,
            max_waiting_bytes=max_waiting_bytes,
            memory_limit=memory_limit,
        )
        try:
            return await scenario(pool)
        finally:
            await pool.close()

    return asyncio.run(main())


def test_round_trip_of_any_body() -> None:
    body = bytes(range(256)) * 40_000  # 10 MB, every byte value, newlines included

    async def scenario(pool: WorkerPool) -> None:
        assert await pool.run("echo", body) == (200, body)
        assert await pool.run("echo", b"") == (200, b"")
        assert await pool.run("nope", b"x") == (404, b"")

    _run(scenario)


def test_a_gil_holding_request_stalls_neither_the_loop_nor_the_other_worker() -> None:
    async def scenario(pool: WorkerPool) -> tuple[float, float, float]:
        await pool.ready()
        gaps: list[float] = []
        stop = asyncio.Event()

        async def ticker() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticking = asyncio.create_task(ticker())
        start = time.perf_counter()
        slow = asyncio.create_task(pool.run("backtrack", b"25"))
        await asyncio.sleep(0.05)
        fast_start = time.perf_counter()
        assert await pool.run("echo", b"meanwhile") == (200, b"meanwhile")
        fast = time.perf_counter() - fast_start
        assert await slow == (200, b"done")
        slow_took = time.perf_counter() - start
        stop.set()
        await ticking
        return slow_took, fast, max(gaps)

    slow_took, fast, worst_gap = _run(scenario)
    assert slow_took > 0.5, "the backtracking match should take long enough to prove anything"
    # Held in this process, the GIL would stall both for the whole match; a busy machine may
    # still delay them a little.
    bound = max(0.25, slow_took / 4)
    assert fast < bound, (fast, slow_took)
    assert worst_gap < bound, (worst_gap, slow_took)


def test_a_request_past_the_deadline_is_abandoned_and_its_worker_replaced() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        (_, first), (_, second) = await asyncio.gather(pool.run("pid", b""), pool.run("pid", b""))
        assert first != second
        start = time.perf_counter()
        with pytest.raises(WorkerTimeout, match=r"no answer within 0\.5 s"):
            await pool.run("backtrack", b"40")  # hours of backtracking
        assert time.perf_counter() - start < 2
        pids = set()
        for _ in range(6):
            status, pid = await pool.run("pid", b"")
            assert status == 200
            pids.add(pid)
        assert len({first, second} - pids) == 1, "exactly one worker was replaced"

    _run(scenario, timeout=0.5)


def test_a_worker_that_dies_is_replaced() -> None:
    async def scenario(pool: WorkerPool) -> None:
        # The forkserver reports a killed child's status through a pipe; on a loaded machine
        # that read can lose the race and multiprocessing says 255. Either way the request fails
        # with WorkerCrashed saying how the worker ended, and the pool goes on.
        with pytest.raises(WorkerCrashed, match=r"killed by SIGKILL|exited with status 255"):
            await pool.run("die", b"")
        assert await pool.run("echo", b"still here") == (200, b"still here")

    _run(scenario, size=1)


def test_requests_queue_for_a_busy_worker() -> None:
    async def scenario(pool: WorkerPool) -> None:
        replies = await asyncio.gather(*(pool.run("echo", str(i).encode()) for i in range(50)))
        assert replies == [(200, str(i).encode()) for i in range(50)]
        slow = asyncio.create_task(pool.run("sleep", b"0.3"))
        await asyncio.sleep(0.05)
        assert await pool.run("echo", b"after") == (200, b"after")  # waited for the sleeper
        assert slow.done()

    _run(scenario, size=1)


def test_a_worker_that_cannot_start_is_an_error_not_a_hang() -> None:
    async def scenario(pool: WorkerPool) -> None:
        with pytest.raises(RuntimeError, match="ValueError: no rules here"):
            await asyncio.wait_for(pool.ready(), 60)
        with pytest.raises(RuntimeError, match="ValueError: no rules here"):
            await asyncio.wait_for(pool.run("echo", b""), 60)

    _run(scenario, factory=_broken_factory)


def test_a_launch_the_forkserver_refuses_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Under load the forkserver can refuse a connection (it died, or a burst of starts swamped
    # it): the start is tried again instead of failing the pool.
    refused: list[int] = []
    start = multiprocessing.process.BaseProcess.start

    def refuse_twice(process: multiprocessing.process.BaseProcess) -> None:
        if len(refused) < 2:
            refused.append(1)
            raise ConnectionRefusedError(111, "Connection refused")
        start(process)

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse_twice)

    async def scenario(pool: WorkerPool) -> None:
        await asyncio.wait_for(pool.ready(), 60)
        assert await pool.run("echo", b"hi") == (200, b"hi")

    _run(scenario, size=1)
    assert len(refused) == 2


def test_a_launch_refused_every_time_is_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(process: multiprocessing.process.BaseProcess) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)

    async def scenario(pool: WorkerPool) -> None:
        with pytest.raises(RuntimeError, match="Connection refused"):
            await asyncio.wait_for(pool.ready(), 60)

    _run(scenario, size=1)


def test_a_closed_pool_refuses_work() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.run("echo", b"")
        await pool.close()
        with pytest.raises(RuntimeError, match="closed"):
            await pool.run("echo", b"")

    _run(scenario)


def test_pool_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        WorkerPool(functools.partial(_factory), size=0, timeout=1)


# --- lanes, queues and the deadline -----------------------------------------------------------


async def _queued(pool: WorkerPool, lane: str, count: int) -> None:
    """Until ``count`` requests of ``lane`` wait (they are queued by tasks already started)."""
    for _ in range(1000):
        if pool.waiting(lane) == count:  # type: ignore[arg-type]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{pool.waiting(lane)} {lane} requests wait, not {count}")  # type: ignore[arg-type]


def test_a_full_lane_refuses_the_next_request_at_once() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        busy = asyncio.create_task(pool.run("sleep", b"0.5"))
        waiting = [asyncio.create_task(pool.run("echo", str(i).encode())) for i in range(2)]
        await _queued(pool, "large", 2)
        with pytest.raises(PoolFull, match="2 large requests are already waiting") as refused:
            await pool.run("echo", b"one too many")
        assert refused.value.retry_after >= 1
        # The queued ones are still served, in order.
        assert [await task for task in waiting] == [(200, b"0"), (200, b"1")]
        assert await busy == (200, b"slept")
        assert await pool.run("echo", b"room again") == (200, b"room again")

    _run(scenario, size=1, max_waiting=2)


def test_time_spent_waiting_counts_in_the_deadline() -> None:
    """The second request asks at once and waits 0.7 s: its 1 s are over 0.3 s into its own
    0.6 s of work (without the wait counted it would have been answered)."""

    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        first = asyncio.create_task(pool.run("sleep", b"0.7"))
        await asyncio.sleep(0.05)
        with pytest.raises(WorkerTimeout, match=r"no answer within 1 s") as late:
            await pool.run("sleep", b"0.6")
        assert not late.value.waited
        assert await first == (200, b"slept")

    _run(scenario, size=1, timeout=1.0)


def test_a_request_that_waits_out_its_deadline_says_so() -> None:
    """The holder is killed at its deadline, and its replacement takes a second to start: the
    request behind it has no worker before its own deadline."""

    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        holder = asyncio.create_task(pool.run("sleep", b"5"))
        await asyncio.sleep(0.05)
        with pytest.raises(WorkerTimeout, match="no grading process was free within") as late:
            await pool.run("echo", b"never taken")
        assert late.value.waited
        with pytest.raises(WorkerTimeout):
            await holder

    _run(scenario, size=1, timeout=0.5, factory=_slow_factory)


def test_a_cancelled_request_leaves_the_queue() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        busy = asyncio.create_task(pool.run("sleep", b"0.5"))
        gone = asyncio.create_task(pool.run("echo", b"gone"))
        await _queued(pool, "large", 1)
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        assert pool.waiting("large") == 0
        # Its place is free: with one place in all, this one would be refused otherwise.
        assert await pool.run("echo", b"next") == (200, b"next")
        await busy

    _run(scenario, size=1, max_waiting=1)


def test_a_request_cancelled_in_its_worker_is_dropped_and_the_worker_replaced() -> None:
    async def scenario(pool: WorkerPool) -> None:
        _, before = await pool.run("pid", b"")
        gone = asyncio.create_task(pool.run("sleep", b"600"))
        await asyncio.sleep(0.2)
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        # Answered by a new process, not after the ten minutes the old one would have slept.
        status, after = await asyncio.wait_for(pool.run("pid", b""), 60)
        assert status == 200
        assert after != before

    _run(scenario, size=1)


def test_small_requests_do_not_wait_behind_large_ones() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        large = [asyncio.create_task(pool.run("sleep", b"1")) for _ in range(2)]
        await _queued(pool, "large", 1)  # the shared worker has the first, the second waits
        for i in range(5):
            assert await pool.run("echo", str(i).encode(), lane="small") == (200, str(i).encode())
        assert not any(task.done() for task in large)  # answered by the reserved worker
        assert pool.waiting("large") == 1  # which takes no large request
        assert [await task for task in large] == [(200, b"slept")] * 2

    _run(scenario, size=1, reserved=1)


def test_a_shared_worker_takes_small_requests_too() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        pids = {(await pool.run("pid", b"", lane="small"))[1] for _ in range(2)}
        held = asyncio.create_task(pool.run("sleep", b"1", lane="small"))
        await asyncio.sleep(0.1)
        pids.add((await pool.run("pid", b"", lane="small"))[1])  # the other worker
        assert len(pids) == 2
        await held

    _run(scenario, size=1, reserved=1)


def test_a_request_past_the_memory_limit_gets_out_of_memory_and_a_new_worker() -> None:
    async def scenario(pool: WorkerPool) -> None:
        _, before = await pool.run("pid", b"")
        assert await pool.run("alloc", b"20") == (200, b"20")
        with pytest.raises(WorkerOutOfMemory, match="more than the 314572800 bytes"):
            await pool.run("alloc", b"1000")  # a gigabyte at once
        status, after = await pool.run("pid", b"")
        assert (status, after != before) == (200, True)
        assert await pool.run("alloc", b"20") == (200, b"20")

    _run(scenario, size=1, memory_limit=300 * 2**20)


def test_a_lane_queues_a_bounded_number_of_bytes() -> None:
    async def scenario(pool: WorkerPool) -> None:
        await pool.ready()
        busy = asyncio.create_task(pool.run("sleep", b"0.5"))
        queued = asyncio.create_task(pool.run("echo", b"x" * 60))
        await _queued(pool, "large", 1)
        with pytest.raises(PoolFull, match=r"60 bytes of large requests are already waiting"):
            await pool.run("echo", b"y" * 60)
        assert await queued == (200, b"x" * 60)
        await busy

    _run(scenario, size=1, max_waiting_bytes=100)


def test_a_request_that_would_wait_past_the_deadline_is_refused_at_once() -> None:
    """Requests of 0.4 s each, one worker and 1 s a request: the fourth one queued would wait
    about 1.3 s, so it is refused instead of timing out in the queue."""

    async def scenario(pool: WorkerPool) -> None:
        for _ in range(8):  # the lane learns its pace
            await pool.run("sleep", b"0.4")
        holder = asyncio.create_task(pool.run("sleep", b"0.9"))
        queued: list[asyncio.Task[tuple[int, bytes]]] = []
        refused: PoolFull | None = None
        while refused is None and len(queued) < 6:
            task = asyncio.create_task(pool.run("sleep", b"0.4"))
            await asyncio.sleep(0.02)
            if task.done() and isinstance(task.exception(), PoolFull):
                refused = task.exception()  # type: ignore[assignment]
            else:
                queued.append(task)
        assert refused is not None, "six requests queued"
        assert "would take about" in str(refused)
        assert refused.retry_after >= 1
        assert 2 <= len(queued) <= 4
        for task in [holder, *queued]:
            task.cancel()
        await asyncio.gather(holder, *queued, return_exceptions=True)

    _run(scenario, size=1, timeout=1.0)
