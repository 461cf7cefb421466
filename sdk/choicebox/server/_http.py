"""uvicorn's httptools protocol with the deadlines and the header bound it lacks.

uvicorn bounds the idle time after a response (``timeout_keep_alive``) and nothing else: a
connection that never sends a byte, a head sent one byte at a time or a body shorter than its
``Content-Length`` holds a connection (and a file descriptor) forever, and httptools buffers a
head of any size. ``GuardedHttpToolsProtocol`` adds, per connection:

* a head deadline: the request line and headers must be complete ``header_timeout`` seconds after
  the connection opens, or after the first byte of each later request on it;
* a body deadline: the body must be complete ``body_timeout`` seconds after its head (the
  scope's ``choicebox.body_deadline`` extension says so, and the app sets no timer of its own);
* a head bound: a head over ``max_header_bytes`` gets ``431`` and the connection is closed;
* a send deadline: a client that takes nothing of its reply for ``send_timeout`` seconds while
  the reply waits in the transport's buffer (past its high-water mark) is disconnected, and the
  buffer dropped, so a client that never reads does not hold a reply's memory (nginx's
  ``send_timeout``: the time between two reads, not the time of the whole reply).

On a head or body deadline the server answers ``408`` (unless the app has begun its response, or
no byte of a request came) and closes the connection. Grading time is not covered: the app
bounds it. The
limits come from ``$CHOICEBOX_SERVE_CONFIG``, as the app's options do, because uvicorn builds the
protocol itself, in every worker process.
"""

from __future__ import annotations

import asyncio
import functools
import os
from typing import Any, Final

import attrs
import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._app import BODY_DEADLINE_EXTENSION, CONFIG_ENV, DEFAULT_BODY_TIMEOUT

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_SEND_TIMEOUT",
    "ConnectionLimits",
    "GuardedHttpToolsProtocol",
]

DEFAULT_HEADER_TIMEOUT: Final = 10.0
DEFAULT_MAX_HEADER_BYTES: Final = 64 * 2**10
DEFAULT_SEND_TIMEOUT: Final = 30.0


@attrs.frozen(kw_only=True)
class ConnectionLimits:
    """How long a client may take to send a request's head and body, how large the head is,
    and how long a client may leave its reply unread."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    send_timeout: float = DEFAULT_SEND_TIMEOUT

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ConnectionLimits:
        names = ("header_timeout", "body_timeout", "max_header_bytes", "send_timeout")
        return cls(**{name: config[name] for name in names if config.get(name) is not None})


@functools.cache
def _limits() -> ConnectionLimits:
    return ConnectionLimits.from_config(orjson.loads(os.environ.get(CONFIG_ENV, "{}")))


def _reply(status: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


_TIMEOUT_REPLY: Final = _reply(b"408 Request Timeout")
_TOO_LARGE_REPLY: Final = _reply(b"431 Request Header Fields Too Large")


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` with head and body deadlines and a bound on the head's size."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._limits = _limits()
        self._deadline: asyncio.TimerHandle | None = None
        self._in_body = False  # between a request's head and the end of its body
        self._ends = 0  # heads and bodies completed on this connection
        self._head_bytes = 0  # bytes received towards the current head
        self._send_deadline: asyncio.TimerHandle | None = None  # armed while writing is paused
        self._unsent = 0  # the buffered reply's size when the send deadline was armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._writes = _CoalescedWrites(transport, self.loop)
        super().connection_made(self._writes)  # type: ignore[arg-type]
        self._arm(self._limits.header_timeout)  # a connection that never sends a head is closed

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and not self._in_body and self._between_requests():
            self._arm(self._limits.header_timeout)  # the first byte of the next request
        ends = self._ends
        super().data_received(data)
        if self._ends != ends:
            # A head or a body ended in this data; what follows it (at most one read) is not
            # counted towards the next head.
            return
        if not self._in_body:
            self._head_bytes += len(data)
            if self._head_bytes > self._limits.max_header_bytes:
                self._close(_TOO_LARGE_REPLY)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a pipelined request, read while the last one is answered
            self._arm(self._limits.header_timeout)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        # The app's task has not run yet: the body deadline it finds in the scope is this one.
        extensions = self.scope.setdefault("extensions", {})
        extensions[BODY_DEADLINE_EXTENSION] = {"seconds": self._limits.body_timeout}
        self._ends += 1
        self._head_bytes = 0
        self._in_body = True
        self._arm(self._limits.body_timeout)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._ends += 1
        self._in_body = False
        self._disarm()

    def eof_received(self) -> None:
        # The transport closes itself when this returns: what was written this turn goes first
        # (a client that half-closes after its request still gets its reply).
        self._writes.flush()
        super().eof_received()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._arm_send()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_deadline is not None:
            self._send_deadline.cancel()
            self._send_deadline = None

    def _arm_send(self) -> None:
        self._unsent = self.transport.get_write_buffer_size()
        self._send_deadline = self.loop.call_later(self._limits.send_timeout, self._send_expired)

    def _send_expired(self) -> None:
        self._send_deadline = None
        if self.transport.get_write_buffer_size() < self._unsent:
            self._arm_send()  # the client took some of it: it has as long again for the rest
            return
        self.transport.abort()  # drops the buffered reply; uvicorn sees a disconnect

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._send_deadline is not None:
            self._send_deadline.cancel()
            self._send_deadline = None
        self._writes.discard()  # nothing can be sent now; a flush still to come finds nothing
        super().connection_lost(exc)

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        started = self._in_body or self._head_bytes > 0
        answered = self.cycle is not None and self.cycle.response_started
        self._close(_TIMEOUT_REPLY if started and not answered else b"")

    def _close(self, reply: bytes) -> None:
        self._disarm()
        if self.transport.is_closing():
            return
        if reply:
            self.transport.write(reply)
        self.transport.close()


class _CoalescedWrites:
    """A transport whose small writes in one turn of the event loop leave as one write, at its
    end.

    uvicorn writes a response's status line and headers, then its body: two writes, so two
    ``send`` calls and two TCP segments for every small reply, where the second costs about as
    much as the first (on loopback, a segment is delivered in the sender's own system call). A
    response is written within one turn (nothing between its messages waits), so its head and
    body leave together. Past ``_COALESCE_MAX`` bytes, writes go straight through, so the
    transport's buffer limits (``pause_writing``) still hold a large or streamed reply back.
    Everything else is the transport's own.
    """

    __slots__ = ("_loop", "_pending", "_size", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        # Kept as bytes: a caller may reuse its buffer once the write returns.
        chunk = data if type(data) is bytes else bytes(data)
        if self._size + len(chunk) > _COALESCE_MAX:
            self.flush()
            self._transport.write(chunk)
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(chunk)
        self._size += len(chunk)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Hand what was written to the transport (which sends it even while closing)."""
        pending = self._pending
        if not pending:
            return
        self._pending = []
        self._size = 0
        self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def discard(self) -> None:
        """Drop what was written and not yet handed to the transport."""
        self._pending = []
        self._size = 0

    def abort(self) -> None:
        self.discard()
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._size

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


# A response's head and a small body (a verify reply is 1-8 KB) go out together; a larger write
# goes at once, as uvicorn's flow control expects (its high-water mark is 64 KiB).
_COALESCE_MAX: Final = 64 * 2**10
