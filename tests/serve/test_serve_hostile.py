"""``choicebox serve`` against hostile clients: slow grading, slow or endless requests, idle
connections, huge and deeply nested values. Never a 500, never a hang, never a huge echo."""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections.abc import Iterator, MutableMapping
from typing import Any

import httpx
import orjson
import pytest
from test_serve import _request, _response, _start

from choicebox._modes import default_registry
from choicebox.cli import build_parser
from choicebox.server import create_app
from choicebox.server._app import (
    BODY_DEADLINE_EXTENSION,
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_GRADE_TIMEOUT,
    DEFAULT_GRADE_WORKERS,
    DEFAULT_MAX_QUEUE,
    DEFAULT_SMALL_WORKERS,
    DEFAULT_WORKER_MEMORY,
    SMALL_MAX_BYTES,
)
from choicebox.server._http import DEFAULT_HEADER_TIMEOUT, DEFAULT_SEND_TIMEOUT
from choicebox.server._respond import (
    MAX_DETAIL_CHARS,
    MAX_DETAIL_PROBLEMS,
    REPLY_FACTOR,
    Verifier,
    bounded_detail,
    respond,
)

BIG = 6_000_000  # a bad value this long must not come back whole


@pytest.fixture(scope="module")
def strict_server() -> Iterator[str]:
    """Short deadlines, a large body limit, and a regex bound longer than the grading bound."""
    yield from _start(
        "--max-body-bytes",
        str(32 * 2**20),
        "--header-timeout",
        "1",
        "--body-timeout",
        "2",
        "--grade-timeout",
        "2",
        "--regex-timeout",
        "30",
    )


def _address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def _wait_closed(sock: socket.socket, limit: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    sock.settimeout(limit)
    start = time.monotonic()
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for {limit} s (sent {got[:80]!r})")
    except ConnectionResetError:
        pass
    return got, time.monotonic() - start


def _read_reply(sock: socket.socket) -> bytes:
    """One whole HTTP reply (head and ``Content-Length`` body) from a kept-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


# --- grading never holds up the server -------------------------------------------------------


def test_grading_past_the_deadline_is_503_and_other_requests_go_on(strict_server: str) -> None:
    # One pattern that backtracks far longer than the 2 s grading deadline (its own bound is 30 s).
    slow = _request(
        template_metadata={"output_regex": "(a+)+$"}, response=_response("a" * 50_000 + "!")
    )

    async def scenario() -> tuple[httpx.Response, float, list[float]]:
        async with httpx.AsyncClient(base_url=strict_server, timeout=60) as client:
            await client.post("/verify", json=_request())  # the grading processes are up
            start = time.monotonic()
            hostile = asyncio.create_task(client.post("/verify", json=slow))
            waits = []
            while not hostile.done():
                began = time.monotonic()
                assert (await client.get("/health")).status_code == 200
                reply = await client.post("/verify", json=_request(r"\boxed{C}"))
                assert reply.json()["reward"] == 1.0
                waits.append(time.monotonic() - began)
                await asyncio.sleep(0.05)
            return await hostile, time.monotonic() - start, waits

    reply, took, waits = asyncio.run(scenario())
    assert reply.status_code == 503
    assert "longer than 2 s" in reply.json()["detail"]
    assert 1.5 < took < 10, took
    assert len(waits) > 5
    assert max(waits) < 1.0, waits
    # The killed worker was replaced: the next requests are graded as before.
    for _ in range(4):
        assert httpx.post(f"{strict_server}/verify", json=_request()).status_code == 200


def test_small_bodies_are_graded_inline_while_the_only_worker_is_busy() -> None:
    """A verify body up to SMALL_MAX_BYTES without sample regexes never waits for a
    grading process: with the one worker held by a slow sample regex, it is still answered."""
    slow = _request(
        template_metadata={"output_regex": "(a+)+$"}, response=_response("a" * 50_000 + "!")
    )
    small = _request(r"\boxed{C}")
    assert len(orjson.dumps(small)) <= SMALL_MAX_BYTES
    server = _start("--grade-workers", "1", "--grade-timeout", "4", "--regex-timeout", "30")
    base = next(server)
    try:

        async def scenario() -> tuple[httpx.Response, list[float]]:
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                hostile = asyncio.create_task(client.post("/verify", json=slow))
                await asyncio.sleep(0.5)  # the worker has taken the slow row
                waits = []
                for _ in range(5):
                    began = time.monotonic()
                    reply = await client.post("/verify", json=small)
                    assert reply.json()["reward"] == 1.0
                    waits.append(time.monotonic() - began)
                assert not hostile.done()
                return await hostile, waits

        reply, waits = asyncio.run(scenario())
        assert reply.status_code == 503  # the sample regex went to the pool, and its deadline
        assert max(waits) < 1.0, waits
    finally:
        server.close()


# --- slow, idle and endless clients -----------------------------------------------------------


def test_a_body_shorter_than_its_content_length_gets_408(strict_server: str) -> None:
    with socket.create_connection(_address(strict_server)) as sock:
        sock.sendall(b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        got, took = _wait_closed(sock, 15)
    assert got.startswith(b"HTTP/1.1 408 "), got[:80]
    assert 1.5 < took < 10, took


def test_a_connection_that_sends_nothing_is_closed(strict_server: str) -> None:
    socks = [socket.create_connection(_address(strict_server)) for _ in range(50)]
    try:
        for sock in socks:
            got, took = _wait_closed(sock, 15)
            assert got == b""
            assert took < 10
    finally:
        for sock in socks:
            sock.close()
    assert httpx.get(f"{strict_server}/health").status_code == 200


def test_a_head_sent_byte_by_byte_is_cut_off(strict_server: str) -> None:
    with socket.create_connection(_address(strict_server)) as sock:
        start = time.monotonic()
        head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"z" * 100
        try:
            for byte in head:
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
        except OSError:
            pass  # closed while we were still sending: the point
        got, _ = _wait_closed(sock, 15)
        assert time.monotonic() - start < 10
    assert got.startswith(b"HTTP/1.1 408 "), got[:80]


def test_an_endless_head_gets_431(strict_server: str) -> None:
    with socket.create_connection(_address(strict_server)) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        sent = 0
        try:
            while sent < 32 * 2**20:
                sock.sendall(b"X-Pad: " + b"p" * 1000 + b"\r\n")
                sent += 1009
        except OSError:
            pass
        got, _ = _wait_closed(sock, 15)
    assert got.startswith(b"HTTP/1.1 431 "), got[:80]
    # Refused near its 64 KiB bound: what was sent past it sits in the kernel's socket buffers.
    assert sent < 16 * 2**20, sent


def test_a_slow_client_within_the_deadlines_is_served(strict_server: str) -> None:
    body = orjson.dumps(_request())
    with socket.create_connection(_address(strict_server), timeout=15) as sock:
        for _ in range(2):  # two requests on one kept-alive connection
            sock.sendall(b"POST /verify HTTP/1.1\r\nHost: x\r\n")
            time.sleep(0.3)
            sock.sendall(f"Content-Length: {len(body)}\r\n\r\n".encode())
            for part in (body[:10], body[10:100], body[100:]):
                time.sleep(0.3)
                sock.sendall(part)
            reply = _read_reply(sock)
            assert reply.startswith(b"HTTP/1.1 200 "), reply[:80]
            assert orjson.loads(reply.partition(b"\r\n\r\n")[2])["reward"] == 1.0
            time.sleep(0.5)  # idle between requests: under the keep-alive bound


def test_the_app_bounds_reading_a_body_by_itself() -> None:
    """Behind any ASGI server: a body that stops arriving ends in a 408 that closes."""
    app = create_app(grade_workers=0, body_timeout=0.3)
    sent: list[MutableMapping[str, Any]] = []

    async def scenario() -> None:
        chunks = [{"type": "http.request", "body": b'{"resp', "more_body": True}]

        async def receive() -> dict[str, Any]:
            if chunks:
                return chunks.pop()
            await asyncio.sleep(3600)  # the rest never comes
            raise AssertionError("unreachable")

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "path": "/verify",
            "raw_path": b"/verify",
            "query_string": b"",
            "headers": [(b"content-length", b"100"), (b"content-type", b"application/json")],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 2),
            "scheme": "http",
        }
        await asyncio.wait_for(app(scope, receive, send), 10)

    start = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - start < 5
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    assert b"did not arrive within 0.3 s" in sent[1]["body"]


def _late_body_reply(body_timeout: float, server_seconds: float) -> list[MutableMapping[str, Any]]:
    """What the app sends when a body arrives 0.6 s after the head, behind a server whose scope
    says it ends late bodies itself after ``server_seconds``."""
    app = create_app(grade_workers=0, body_timeout=body_timeout)
    body = orjson.dumps(_request())
    sent: list[MutableMapping[str, Any]] = []

    async def scenario() -> None:
        async def receive() -> dict[str, Any]:
            await asyncio.sleep(0.6)
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "path": "/verify", "raw_path": b"/verify", "query_string": b"",
            "headers": [(b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "scheme": "http",
            "extensions": {BODY_DEADLINE_EXTENSION: {"seconds": server_seconds}},
        }  # fmt: skip
        await asyncio.wait_for(app(scope, receive, send), 10)

    asyncio.run(scenario())
    return sent


def test_the_app_leaves_a_late_body_to_a_server_that_ends_it_as_soon() -> None:
    # The server's deadline (0.2 s) is the one that holds; the app sets no second timer, so
    # in this scenario, where the server does not act, the body is read.
    assert _late_body_reply(body_timeout=0.3, server_seconds=0.2)[0]["status"] == 200


def test_the_app_keeps_its_own_deadline_when_the_server_s_is_longer() -> None:
    assert _late_body_reply(body_timeout=0.3, server_seconds=100)[0]["status"] == 408


def _asgi_reply(app: Any, body: bytes, headers: list[tuple[bytes, bytes]]) -> list[Any]:
    """What ``app`` sends for ``POST /verify`` with ``body``, message by message."""
    sent: list[Any] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if chunks:
            return chunks.pop()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "path": "/verify", "raw_path": b"/verify", "query_string": b"", "headers": headers,
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "scheme": "http",
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return sent


@pytest.mark.parametrize(
    "body",
    [
        orjson.dumps(_request()),  # graded
        orjson.dumps(_request(r"\boxed{Z}")),  # a letter that is no option
        orjson.dumps(_request(options=[{"A": "one"}])),  # bad task data: masked
        orjson.dumps({k: v for k, v in _request().items() if k != "response"}),  # 422
        b"{not json",  # 400
        b"[1, 2]",  # no object
        orjson.dumps(_request(template_metadata={"output_regex": "(?P<x>[A-D])"})),
        b"x" * 2_000,  # over the body limit below: 413
    ],
)
def test_the_verify_lane_answers_as_the_verify_route(body: bytes) -> None:
    """``POST /verify`` skips Starlette's router for speed; its replies (status, headers, body)
    must be the route's, which answers when the lane is off."""
    headers = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
    app = create_app(grade_workers=0, max_body_bytes=1_500)
    fast = _asgi_reply(app, body, headers)
    app.verify_lane = None  # type: ignore[attr-defined]
    routed = _asgi_reply(app, body, headers)
    assert fast == routed
    assert fast[0]["type"] == "http.response.start"


# --- bounded error replies --------------------------------------------------------------------


def _masked_reason(reply: httpx.Response) -> str:
    """The failure_reason of a masked verify response (bad task data is answered 200, masked)."""
    assert reply.status_code == 200
    body = reply.json()
    assert (body["mask_sample"], body["reward"]) == (True, 0.0)
    reason: str = body["failure_reason"]
    return reason


def test_a_huge_bad_value_is_not_echoed_whole(strict_server: str) -> None:
    # The row comes back as in every verify response; the problem quoting it is cut.
    reason = _masked_reason(
        httpx.post(f"{strict_server}/verify", json=_request(grading_mode=["x" * BIG]), timeout=60)
    )
    assert len(reason) < 2 * MAX_DETAIL_CHARS
    assert reason.endswith("@ $.grading_mode")
    # A key as long as the body shows up in a path: cut the same way.
    reason = _masked_reason(
        httpx.post(f"{strict_server}/verify", json=_request(options=[{"k" * BIG: "x"}]), timeout=60)
    )
    assert len(reason) < 2 * MAX_DETAIL_CHARS * MAX_DETAIL_PROBLEMS
    # A body that is no verify request keeps its 422, just as bounded.
    reply = httpx.post(f"{strict_server}/verify", json={"x" * BIG: 1}, timeout=60)
    assert reply.status_code == 422
    assert len(reply.content) < 4 * MAX_DETAIL_CHARS * MAX_DETAIL_PROBLEMS


def test_a_batch_of_huge_bad_values_is_not_echoed_whole(strict_server: str) -> None:
    rows = [{**_request(), "response": ["y" * 100_000]}] * 100  # no response: no verify request
    reply = httpx.post(f"{strict_server}/verify_batch", json={"requests": rows}, timeout=60)
    assert reply.status_code == 200
    out = reply.json()["responses"]
    assert [item["status"] for item in out] == [422] * 100
    assert len(reply.content) < 100 * 4 * MAX_DETAIL_CHARS


def test_thousands_of_problems_are_counted_not_listed(strict_server: str) -> None:
    reason = _masked_reason(httpx.post(f"{strict_server}/verify", json=_request(options=[7] * 500)))
    problems = reason.split("; ")
    assert len(problems) == MAX_DETAIL_PROBLEMS + 1
    assert problems[-1] == f"... and {500 - MAX_DETAIL_PROBLEMS} more problems"


def test_bounded_detail_keeps_short_messages_and_both_ends_of_long_ones() -> None:
    assert bounded_detail("short") == "short"
    assert bounded_detail(["a @ $.x", "b @ $.y"]) == ["a @ $.x", "b @ $.y"]
    long = "unknown grading mode '" + "m" * 10_000 + "' @ $.grading_mode"
    cut = bounded_detail([long])[0]
    assert len(cut) < MAX_DETAIL_CHARS + 40
    assert cut.startswith("unknown grading mode 'mmm")
    assert cut.endswith("' @ $.grading_mode")
    assert f"[{len(long) - MAX_DETAIL_CHARS} characters cut]" in cut


# --- never a 500 ------------------------------------------------------------------------------

_FIELDS = (
    "responses_create_params",
    "response",
    "options",
    "expected_answer",
    "uuid",
    "metadata",
    "template_metadata",
    "grading_mode",
    "task_type",
    "style",
    "question",
)
_VALUES: dict[str, Any] = {
    "null": None,
    "true": True,
    "int": 7,
    "float": -1.5e300,
    "string": "s",
    "empty list": [],
    "empty object": {},
    "junk list": [None, 1, "a", [], {}, [[["x"]]]],
    "junk object": {"": None, "A": [1], "B": {"C": "d"}},
    "huge string": "(" * 1_000_000,
    "long list": ["A"] * 2_000,
    "deep list": "DEEP_LIST",
    "deep object": "DEEP_OBJECT",
}
_DEEP = {
    "DEEP_LIST": b"[" * 1000 + b"]" * 1000,
    "DEEP_OBJECT": b'{"a":' * 1000 + b"1" + b"}" * 1000,
}


def _with(field: str, value: Any) -> bytes:
    row = _request()
    row[field] = value
    body = orjson.dumps(row)
    for marker, nested in _DEEP.items():
        body = body.replace(f'"{marker}"'.encode(), nested)
    return body


_MALFORMED = [
    b"",
    b"   \n",
    b"{",
    b'{"response": ',
    b"[" * 100_000,
    b"\xff\xfe\xfd",
    b"\xef\xbb\xbf{}",
    b'{"a": 1e400}',
    b"1" * 400,
    b'"\\ud800"',
    b"\x00",
    b"null",
    b"[]",
    b"{}",
    b'{"requests": {"a": 1}}',
    b'{"verify_responses": "x"}',
]


@pytest.mark.parametrize("route", ["verify", "verify_batch", "aggregate_metrics"])
def test_no_body_is_a_server_error(route: str, caplog: pytest.LogCaptureFixture) -> None:
    verifier = Verifier(default_registry())
    bodies = list(_MALFORMED)
    for field, value in itertools.product(_FIELDS, _VALUES.values()):
        row = _with(field, value)
        bodies += [row, b"[" + row + b"]", b'{"requests": [' + row + b"]}"]
    for body in bodies:
        status, reply = respond(verifier, route, body)
        assert status < 500, (route, body[:200], reply[:300])
        decoded = orjson.loads(reply)
        if status >= 400:
            assert len(reply) < 4 * MAX_DETAIL_CHARS * (MAX_DETAIL_PROBLEMS + 1)
            assert decoded["detail"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_hostile_bodies_over_http_are_client_errors(strict_server: str) -> None:
    """The same over HTTP, through the grading processes (their log is checked for tracebacks
    when the server stops)."""
    with httpx.Client(base_url=strict_server, timeout=60) as client:
        for body in _MALFORMED:
            reply = client.post("/verify", content=body)
            assert 400 <= reply.status_code < 500, (body[:80], reply.text[:200])
        for field in _FIELDS:
            for name in ("huge string", "deep list", "junk object"):
                if field == "grading_mode" and name.startswith("deep"):
                    continue
                reply = client.post("/verify", content=_with(field, _VALUES[name]))
                assert reply.status_code in (200, 422), (field, name, reply.text[:200])


# --- options ----------------------------------------------------------------------------------


def test_grading_in_the_server_process_answers_as_the_workers_do(strict_server: str) -> None:
    """``grade_workers=0``: small bodies inline, large ones and sample regexes in a thread."""
    app = create_app(grade_workers=0)
    rows = [
        _request(r"\boxed{C}"),
        _request(r"\boxed{B}", metadata={"pad": "p" * 100_000}),  # past the inline size
        _request("Final: C", template_metadata={"output_regex": r"Final: ([A-D])"}),
        _request(expected_answer="Z"),
    ]

    async def in_process() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            return [await client.post("/verify", json=row) for row in rows]

    for row, mine in zip(rows, asyncio.run(in_process()), strict=True):
        theirs = httpx.post(f"{strict_server}/verify", json=row)
        assert (mine.status_code, mine.json()) == (theirs.status_code, theirs.json())


def test_serve_help_states_the_defaults_in_force() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    serve = commands.choices["serve"]  # type: ignore[index]
    helps = {action.dest: action.help or "" for action in serve._actions}
    assert f"(default {DEFAULT_GRADE_WORKERS})" in helps["grade_workers"]
    assert f"(default {DEFAULT_GRADE_TIMEOUT:g})" in helps["grade_timeout"]
    assert f"(default {DEFAULT_HEADER_TIMEOUT:g})" in helps["header_timeout"]
    assert f"(default {DEFAULT_BODY_TIMEOUT:g})" in helps["body_timeout"]
    assert f"(default {DEFAULT_SMALL_WORKERS})" in helps["small_workers"]
    assert f"(default {DEFAULT_MAX_QUEUE})" in helps["max_queue"]
    assert f"(default {DEFAULT_SEND_TIMEOUT:g})" in helps["send_timeout"]
    assert f"(default {DEFAULT_WORKER_MEMORY // 2**30} GiB)" in helps["worker_memory"]
    assert f"default {'twice' if REPLY_FACTOR == 2 else REPLY_FACTOR}" in helps["max_reply_bytes"]


def test_past_the_concurrency_limit_new_requests_get_503() -> None:
    for base in _start("--limit-concurrency", "3", "--header-timeout", "1"):
        idle = [socket.create_connection(_address(base)) for _ in range(2)]
        try:
            time.sleep(0.2)
            assert httpx.get(f"{base}/health").status_code == 503
        finally:
            for sock in idle:
                sock.close()
        time.sleep(0.5)
        assert httpx.get(f"{base}/health").status_code == 200
