"""The server's bounds on work, waiting and replies (issue 24.3-5): what the event loop grades,
the queue's bound and its 503, dropped work of clients that left, the reply's size, the worker's
memory and clients that do not read. Behaviour only; the timings are in
``benchmarks/serve_hostile.py``."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from test_serve import _request, _response, _start
from test_serve_hostile import _address, _wait_closed

from choicebox import _modes
from choicebox._modes import default_registry
from choicebox.server import create_app
from choicebox.server._app import SMALL_MAX_BYTES
from choicebox.server._pool import WorkerPool
from choicebox.server._respond import (
    INLINE_CHARS,
    INLINE_MAX_CHARS,
    NotInline,
    Verifier,
    respond,
)

# A sample pattern that backtracks for minutes on this output (each pattern has 60 s here).
_SLOW = _request(
    template_metadata={"output_regex": "(a+)+$"}, response=_response("a" * 50_000 + "!")
)
_LONG_OPTION = "é" + "a ," * 2700


def _lane(verifier: Verifier, row: dict[str, Any]) -> str:
    """Where the server answers a small /verify of ``row``: "inline", or the pool's lane."""
    body = orjson.dumps(row)
    assert len(body) <= SMALL_MAX_BYTES
    try:
        respond(verifier, "verify", body, inline=True)
    except NotInline as exc:
        return exc.lane
    return "inline"


# --- what the event loop grades ----------------------------------------------------------------


def test_only_rows_of_bounded_cost_are_graded_on_the_event_loop() -> None:
    verifier = Verifier(default_registry())
    assert _lane(verifier, _request()) == "inline"
    limit = INLINE_CHARS["robust"]
    just = _request("x" * (limit - 200) + r" \boxed{C}", question="Q?", grading_mode="robust")
    assert _lane(verifier, just) == "inline"
    over = _request("x" * (limit + 1), grading_mode="robust")
    assert _lane(verifier, over) == "small"
    # The same output, in a mode that grades it at a third of the cost.
    assert _lane(verifier, {**over, "grading_mode": "strict_single_letter_boxed"}) == "inline"
    # The request: 660 boxes against a 2,450-character option, in 16 KiB.
    boxes = _request(
        r"\boxed{red}" * 660,
        options=[{"A": "x" * 2450}, {"B": "b"}, {"C": "c"}, {"D": "d"}],
        grading_mode="lenient_boxed",
    )
    assert _lane(verifier, boxes) == "small"
    long_output = _request("x" * (INLINE_CHARS["lenient_boxed"] + 1), grading_mode="lenient_boxed")
    assert _lane(verifier, long_output) == "small"
    # Long options and questions count too, for a quarter of their characters.
    options = [{"A": _LONG_OPTION}, {"B": "b"}, {"C": "c"}]
    assert _lane(verifier, _request(options=options, grading_mode="robust")) == "small"
    # Sample patterns may each run to the regex timeout: never inline, nor small.
    patterned = _request(template_metadata={"output_regex": r"Final: ([A-D])"})
    assert _lane(verifier, patterned) == "large"
    # Nor a mode whose rule file may hold such patterns.
    rules = Path(__file__).parents[1] / "fixtures" / "rules" / "good"
    ruled = Verifier(default_registry((str(rules),)))
    assert _lane(ruled, _request(grading_mode="first_box")) == "large"
    assert _lane(Verifier(default_registry((str(rules),)), mode="first_box"), _request()) == "large"


def test_every_built_in_mode_has_an_inline_bound() -> None:
    """Each figure is that mode's worst rate measured (``serve_hostile.py --inline-survey``): a
    new built-in mode needs its own."""
    registry = default_registry()
    assert set(INLINE_CHARS) == {name for name in registry.names() if registry.is_builtin(name)}
    assert min(INLINE_CHARS.values()) == INLINE_MAX_CHARS


def test_a_row_graded_inline_gets_the_reply_the_pool_gives() -> None:
    verifier = Verifier(default_registry())
    for row in (_request(), _request(r"\boxed{Z}"), _request(options=[{"A": "one"}])):
        body = orjson.dumps(row)
        assert respond(verifier, "verify", body, inline=True) == respond(verifier, "verify", body)


# --- the reply's bound -------------------------------------------------------------------------


def test_a_batch_whose_reply_would_pass_the_bound_is_413_naming_the_row() -> None:
    verifier = Verifier(default_registry())
    zeros = orjson.dumps({"requests": [0] * 10_000})
    status, reply = respond(verifier, "verify_batch", zeros, max_reply=100_000)
    assert status == 413
    detail = orjson.loads(reply)["detail"]
    assert "larger than the limit of 100000 bytes" in detail
    assert "of 10000; send fewer rows per request @ $.requests" in detail
    assert len(reply) < 1_000
    # Under the bound, the same batch is answered, one error entry a row.
    status, reply = respond(verifier, "verify_batch", zeros, max_reply=10**9)
    assert status == 200
    assert len(orjson.loads(reply)["responses"]) == 10_000


def test_a_metrics_reply_past_the_bound_is_413() -> None:
    verifier = Verifier(default_registry())
    row = {"reward": 1.0, "uuid": "t", **{f"metric_{i:05d}_{'n' * 30}": 1.0 for i in range(2_000)}}
    body = orjson.dumps({"verify_responses": [row]})
    status, reply = respond(verifier, "aggregate_metrics", body, max_reply=len(body))
    assert status == 413
    assert f"more than the limit of {len(body)}" in orjson.loads(reply)["detail"]
    assert respond(verifier, "aggregate_metrics", body, max_reply=20 * len(body))[0] == 200


def test_a_verify_reply_is_bounded_too() -> None:
    verifier = Verifier(default_registry())
    body = orjson.dumps(_request(metadata={"pad": "p" * 10_000}))
    assert respond(verifier, "verify", body, max_reply=5_000)[0] == 413
    assert respond(verifier, "verify", body, max_reply=20_000)[0] == 200


# --- the queue, the deadline and clients that leave --------------------------------------------


def test_a_full_queue_is_503_with_retry_after() -> None:
    server = _start(
        "--grade-workers", "1", "--small-workers", "0", "--max-queue", "1",
        "--grade-timeout", "20", "--regex-timeout", "60",
    )  # fmt: skip
    base = next(server)
    try:

        async def scenario() -> httpx.Response:
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                held = asyncio.create_task(client.post("/verify", json=_SLOW))
                await asyncio.sleep(1)  # the worker has it
                queued = asyncio.create_task(client.post("/verify", json=_SLOW))
                await asyncio.sleep(1)  # the queue's one place is taken
                refused = await client.post("/verify", json=_SLOW)
                held.cancel()
                queued.cancel()
                await asyncio.gather(held, queued, return_exceptions=True)
                return refused

        refused = asyncio.run(scenario())
        assert refused.status_code == 503
        assert int(refused.headers["retry-after"]) >= 1
        assert "the server is busy: 1 large requests are already waiting" in refused.json()["detail"]
        # Small requests are not in that queue: answered meanwhile, inline.
        assert httpx.post(f"{base}/verify", json=_request()).json()["reward"] == 1.0
    finally:
        server.close()


def _asgi_scope(path: str, body: bytes) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": [(b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "scheme": "http",
    }  # fmt: skip


async def _call(
    app: Any, path: str, body: bytes, leave: asyncio.Event | None = None
) -> list[MutableMapping[str, Any]]:
    """What ``app`` sends for one request whose client disconnects once ``leave`` is set."""
    sent: list[MutableMapping[str, Any]] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if chunks:
            return chunks.pop()
        if leave is None:
            await asyncio.Event().wait()
        else:
            await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await app(_asgi_scope(path, body), receive, send)
    return sent


def test_the_work_of_a_client_that_left_is_dropped() -> None:
    """From the worker (which is replaced) and from the queue: nothing is graded for a client
    that is gone, so what it asked no longer holds anyone up."""
    app = create_app(grade_workers=1, small_workers=0, grade_timeout=600, regex_timeout=300)
    pool: WorkerPool = app.state.pool
    slow = orjson.dumps(_SLOW)

    async def scenario() -> None:
        leave_graded, leave_queued = asyncio.Event(), asyncio.Event()
        graded = asyncio.create_task(_call(app, "/verify", slow, leave_graded))
        while not pool._busy:
            await asyncio.sleep(0.05)
        worker = next(iter(pool._busy))
        queued = asyncio.create_task(_call(app, "/verify", slow, leave_queued))
        while pool.waiting("large") == 0:
            await asyncio.sleep(0.05)
        leave_queued.set()
        await asyncio.wait_for(queued, 30)
        assert pool.waiting("large") == 0
        assert worker.process.is_alive()  # still on the first request
        leave_graded.set()
        await asyncio.wait_for(graded, 30)
        # Killed (the kill is seen once the forkserver reaps it), minutes before its patterns
        # would end.
        await asyncio.wait_for(asyncio.to_thread(worker.process.join), 30)
        # The replacement grades the next request.
        patterned = orjson.dumps(_request("Final: C", template_metadata={"output_regex": r"Final: ([A-D])"}))
        sent = await asyncio.wait_for(_call(app, "/verify", patterned), 60)
        assert sent[0]["status"] == 200
        assert orjson.loads(sent[1]["body"])["reward"] == 1.0
        await pool.close()

    asyncio.run(scenario())


def test_a_request_past_the_worker_memory_is_413() -> None:
    app = create_app(grade_workers=1, small_workers=0, worker_memory=200 * 2**20)
    pool: WorkerPool = app.state.pool
    empties = b'{"requests":[' + b",".join([b"{}"] * 4_000_000) + b"]}"  # decodes to 300 MB

    async def scenario() -> None:
        sent = await asyncio.wait_for(_call(app, "/verify_batch", empties), 120)
        detail = orjson.loads(sent[1]["body"])["detail"]
        # Out of memory, Python raises MemoryError (413), but a C extension may crash the
        # process instead (503): either way the request, not the server, pays.
        if sent[0]["status"] == 413:
            assert "bytes a grading process may use" in detail
        else:
            assert (sent[0]["status"], "the grading process died" in detail) == (503, True)
        batch = orjson.dumps({"requests": [_request()]})
        sent = await asyncio.wait_for(_call(app, "/verify_batch", batch), 60)
        assert sent[0]["status"] == 200  # a new grading process
        await pool.close()

    asyncio.run(scenario())


# --- clients that do not read -----------------------------------------------------------------


def test_a_client_that_does_not_read_its_reply_is_disconnected() -> None:
    server = _start("--max-body-bytes", str(16 * 2**20), "--send-timeout", "1")
    base = next(server)
    try:
        row = _request(metadata={"pad": "p" * 10_000})
        body = orjson.dumps({"requests": [row] * 1_200})  # a 12 MB reply
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(_address(base))
            sock.sendall(
                b"POST /verify_batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            # Nothing read while the reply is graded and its deadline passes; what the kernel
            # buffered is read after, then the end the server made.
            time.sleep(8)
            got, _ = _wait_closed(sock, 30)
        assert got.startswith(b"HTTP/1.1 200 ")
        length = int(got.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        assert len(got.partition(b"\r\n\r\n")[2]) < length
        assert httpx.get(f"{base}/health").status_code == 200
    finally:
        server.close()


def test_a_client_that_reads_gets_all_of_a_large_reply() -> None:
    server = _start("--max-body-bytes", str(16 * 2**20), "--send-timeout", "1")
    base = next(server)
    try:
        row = _request(metadata={"pad": "p" * 10_000})
        body = orjson.dumps({"requests": [row] * 600})
        reply = httpx.post(f"{base}/verify_batch", content=body, timeout=60)
        assert reply.status_code == 200
        assert len(reply.json()["responses"]) == 600
    finally:
        server.close()


def test_every_mode_is_built_before_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mode is built on first use (robust in about 150 ms): the served app builds them all at
    start-up, so no first request spends that on the event loop."""
    rules = tmp_path / "rules"  # a registry of its own, built by no other test
    rules.mkdir()
    good = Path(__file__).parents[1] / "fixtures" / "rules" / "good" / "first_box.yaml"
    (rules / "first_box.yaml").write_text(good.read_text())
    app = create_app(grade_workers=0, rules_dirs=(rules,))

    def no_building(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a mode was built during a request")

    async def scenario() -> None:
        async with app.router.lifespan_context(app):  # what uvicorn runs before serving
            monkeypatch.setattr(_modes, "parse_mode", no_building)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
                for mode in ("robust", "mmlu_pro", "first_box"):
                    reply = await client.post("/verify", json=_request(grading_mode=mode))
                    assert reply.status_code == 200
                    assert reply.json()["grading_mode"] == mode

    asyncio.run(scenario())
