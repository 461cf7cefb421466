"""What ``choicebox serve``'s protocol adds between a connection and the app, at little cost per
request: a small reply leaves in one write, the scope says that the server bounds the body's
arrival, and a deadline moved by the next one holds (``test_serve_hostile`` has the deadlines
met and missed over real sockets).

uvicorn writes a response's head and its body separately; on a kept-alive connection under load
that is two ``send`` calls and two TCP segments per verify, which cost a quarter of the server's
CPU. ``GuardedHttpToolsProtocol`` hands uvicorn a transport that joins the writes of one turn
of the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, NamedTuple

import orjson
import pytest
import uvicorn
from test_serve import _request
from uvicorn.server import ServerState

from choicebox.server import create_app
from choicebox.server._app import BODY_DEADLINE_EXTENSION
from choicebox.server._http import (
    _COALESCE_MAX,
    ConnectionLimits,
    GuardedHttpToolsProtocol,
    _CoalescedWrites,
    _limits,
)


class _Recording(asyncio.Transport):
    """A transport that keeps what is written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.events: list[str] = []
        self.closing = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))
        self.events.append("write")

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True
        self.events.append("close")

    def abort(self) -> None:
        self.closing = True
        self.events.append("abort")

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _replies(data: bytes) -> list[tuple[bytes, dict[str, Any]]]:
    """The (status line, JSON body) of each whole reply in ``data``, which must hold no more."""
    replies = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next(int(v) for k, _, v in (h.partition(b": ") for h in lines[1:]) if k == b"content-length")
        replies.append((lines[0], orjson.loads(rest[:length])))
        data = rest[length:]
    return replies


def test_each_reply_leaves_in_one_write() -> None:
    body = orjson.dumps(_request())
    request = b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    transport = _Recording()

    async def two_requests_on_one_connection() -> None:
        config = uvicorn.Config(app=create_app(grade_workers=0), lifespan="off", log_level="warning")
        config.load()
        protocol = GuardedHttpToolsProtocol(
            config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop()
        )
        protocol.connection_made(transport)
        for answered in (1, 2):
            protocol.data_received(request)
            for _ in range(400):
                await asyncio.sleep(0.005)
                if len(transport.writes) >= answered and transport.writes[-1].endswith(b"}"):
                    break
            await asyncio.sleep(0.02)  # a second write, were there one, would be out by now
        protocol.connection_lost(None)

    asyncio.run(two_requests_on_one_connection())
    assert len(transport.writes) == 2, [w[:60] for w in transport.writes]
    for write in transport.writes:
        ((status, reply),) = _replies(write)  # the whole reply, head and body, in one write
        assert status == b"HTTP/1.1 200 OK"
        assert reply["reward"] == 1.0


class _Coalesced(NamedTuple):
    transport: _Recording
    writes: _CoalescedWrites
    loop: asyncio.AbstractEventLoop

    def one_turn(self) -> None:
        self.loop.run_until_complete(asyncio.sleep(0))


@pytest.fixture
def coalesced() -> Iterator[_Coalesced]:
    """A recording transport behind ``_CoalescedWrites``, on a loop of its own."""
    loop = asyncio.new_event_loop()
    transport = _Recording()
    yield _Coalesced(transport, _CoalescedWrites(transport, loop), loop)
    loop.close()


def test_writes_in_one_turn_leave_together_at_its_end(coalesced: _Coalesced) -> None:
    transport, writes = coalesced.transport, coalesced.writes
    writes.write(b"HTTP/1.1 200 OK\r\n\r\n")
    writes.write(memoryview(b"{}"))
    assert transport.writes == []
    assert writes.get_write_buffer_size() == 21
    coalesced.one_turn()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
    writes.write(b"next")
    coalesced.one_turn()
    assert transport.writes[1:] == [b"next"]


def test_close_sends_what_was_written_before_it(coalesced: _Coalesced) -> None:
    transport, writes = coalesced.transport, coalesced.writes
    writes.write(b"HTTP/1.1 408 Request Timeout\r\n\r\n")
    writes.close()
    assert transport.events == ["write", "close"]
    coalesced.one_turn()  # the turn's own flush finds nothing left
    assert transport.events == ["write", "close"]


def test_abort_drops_what_was_not_sent(coalesced: _Coalesced) -> None:
    transport, writes = coalesced.transport, coalesced.writes
    writes.write(b"lost")
    writes.abort()
    coalesced.one_turn()
    assert transport.events == ["abort"]


def test_everything_else_is_the_transport_s_own(coalesced: _Coalesced) -> None:
    transport, writes = coalesced.transport, coalesced.writes
    assert writes.get_extra_info("peername") == ("127.0.0.1", 5000)
    assert writes.is_closing() is False
    transport.closing = True
    assert writes.is_closing() is True


def test_the_scope_says_the_server_ends_a_late_body() -> None:
    scopes: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        await receive()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def one_request() -> None:
        config = uvicorn.Config(app=app, lifespan="off", log_level="warning")
        config.load()
        protocol = GuardedHttpToolsProtocol(
            config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop()
        )
        protocol.connection_made(_Recording())
        protocol.data_received(b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        for _ in range(200):
            await asyncio.sleep(0.005)
            if scopes:
                break
        protocol.connection_lost(None)

    asyncio.run(one_request())
    assert scopes[0]["extensions"][BODY_DEADLINE_EXTENSION] == {"seconds": _limits().body_timeout}


def _verify_request() -> bytes:
    body = orjson.dumps(_request())
    return b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


async def _connected(limits: ConnectionLimits) -> tuple[GuardedHttpToolsProtocol, _Recording]:
    config = uvicorn.Config(app=create_app(grade_workers=0), lifespan="off", log_level="warning")
    config.load()
    protocol = GuardedHttpToolsProtocol(
        config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop()
    )
    protocol._limits = limits
    transport = _Recording()
    protocol.connection_made(transport)
    return protocol, transport


async def _settle(transport: _Recording, writes: int) -> None:
    for _ in range(400):
        if len(transport.writes) >= writes or transport.closing:
            return
        await asyncio.sleep(0.005)


def test_the_body_deadline_outlasts_the_head_deadline_it_replaces() -> None:
    # The head's deadline (0.2 s) is replaced by the body's (0.6 s after the head): a body that
    # comes 0.35 s after its head is in time, though the first timer fell before it.
    request = _verify_request()
    cut = request.index(b"\r\n\r\n") + 4
    head, body = request[:cut], request[cut:]

    async def scenario() -> _Recording:
        protocol, transport = await _connected(ConnectionLimits(header_timeout=0.2, body_timeout=0.6))
        protocol.data_received(head[:20])
        await asyncio.sleep(0.01)
        protocol.data_received(head[20:])
        await asyncio.sleep(0.35)
        protocol.data_received(body)
        await _settle(transport, 1)
        protocol.connection_lost(None)
        return transport

    transport = asyncio.run(scenario())
    ((status, reply),) = _replies(transport.writes[0])
    assert status == b"HTTP/1.1 200 OK"
    assert reply["reward"] == 1.0


def test_a_deadline_sooner_than_the_pending_timer_is_kept() -> None:
    # The head came in well within 5 s; its body is due 0.2 s later and never comes: 408 then,
    # not when the head's timer would have fired.
    request = _verify_request()

    async def scenario() -> tuple[_Recording, float]:
        protocol, transport = await _connected(ConnectionLimits(header_timeout=5.0, body_timeout=0.2))
        loop = asyncio.get_running_loop()
        start = loop.time()
        protocol.data_received(request[: request.index(b"\r\n\r\n") + 4])
        await _settle(transport, 1)
        took = loop.time() - start
        protocol.connection_lost(None)
        return transport, took

    transport, took = asyncio.run(scenario())
    assert transport.writes, "no reply"
    assert transport.writes[0].startswith(b"HTTP/1.1 408 "), transport.writes
    assert transport.closing
    assert 0.15 < took < 2.0, took


def test_a_client_that_half_closes_after_its_request_gets_its_reply() -> None:
    # The transport closes itself once eof_received returns: the reply written in the same turn
    # must be handed to it first.
    async def scenario() -> _Recording:
        protocol, transport = await _connected(ConnectionLimits())
        protocol.data_received(_verify_request())
        for _ in range(400):  # until the app has written its reply, not yet flushed
            if protocol._writes._pending:
                break
            await asyncio.sleep(0)
        protocol.eof_received()
        transport.close()  # what the transport does when eof_received returns None
        protocol.connection_lost(None)
        return transport

    transport = asyncio.run(scenario())
    assert transport.events[:2] == ["write", "close"], transport.events
    ((status, _),) = _replies(transport.writes[0])
    assert status == b"HTTP/1.1 200 OK"


def test_a_large_write_goes_at_once_so_flow_control_holds(coalesced: _Coalesced) -> None:
    transport, writes = coalesced.transport, coalesced.writes
    writes.write(b"HTTP/1.1 200 OK\r\n\r\n")
    big = b"x" * (_COALESCE_MAX + 1)
    writes.write(big)  # what came before it first, then it, both now
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n", big]
    assert writes.get_write_buffer_size() == 0
    coalesced.one_turn()
    assert len(transport.writes) == 2


def test_a_buffer_reused_after_its_write_is_sent_as_it_was(coalesced: _Coalesced) -> None:
    transport, writes = coalesced.transport, coalesced.writes
    buffer = bytearray(b"chunk1")
    writes.write(buffer)
    buffer[:] = b"chunk2"
    writes.write(memoryview(buffer).cast("B"))
    assert writes.get_write_buffer_size() == 12
    coalesced.one_turn()
    assert transport.writes == [b"chunk1chunk2"]


def test_a_lost_connection_is_sent_nothing_more() -> None:
    async def scenario() -> _Recording:
        protocol, transport = await _connected(ConnectionLimits())
        protocol._writes.write(b"written as the connection went")
        protocol.connection_lost(ConnectionResetError())
        await asyncio.sleep(0)  # the turn's flush runs, and finds nothing
        return transport

    assert asyncio.run(scenario()).writes == []
