"""The server's grading processes: a slow request stalls neither the event loop nor the other
workers, a deadline kills and replaces its worker, and a dead worker is replaced."""

from __future__ import annotations

import asyncio
import functools
import os
import re
import signal
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from choicebox.server._pool import Handler, WorkerCrashed, WorkerPool, WorkerTimeout

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
    return 404, b""


def _factory() -> Handler:
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
) -> T:
    async def main() -> T:
        pool = WorkerPool(
            factory, size=size, timeout=timeout, reserved=reserved, max_waiting=max_waiting
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
