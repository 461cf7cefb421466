"""An HTTP verify server with the routes and JSON of a NeMo Gym resources server.

NeMo Gym's agents call ``POST /verify`` on a resources server after each rollout; this app
answers it with choicebox's verdict, so a Gym setup can point its agent here instead of at the
``mcqa`` server. Rule files are read once, when the app is built; no route reads a file or a
pattern from a path a client names.

Requests are read and graded by the batch engine's ``Grader`` (``_respond``, which a grading
process runs too), so the server accepts exactly the rows ``choicebox grade`` grades (a rollout
without ``options`` included) and gives the same verdicts. Error contract: malformed JSON is
400, a body over the size limit 413, a body that decodes but is not a verify request 422
(``{"detail": ["message @ $.path", ...]}``). A verify request whose task data is unusable (bad
options, a bad ``output_regex``, an unknown grading mode) is answered 200, masked, with the
problems in ``failure_reason`` (``_protocol``): Gym aborts a whole collection on a 4xx. A 500
means a bug in choicebox, never bad input.

Grading is CPU-bound, and a hostile row can make one grading call slow (a sample regex that
backtracks: a long C-level regex match holds the GIL, so a thread does not help). So the event
loop grades only what it can bound: a ``/verify`` body of at most ``SMALL_MAX_BYTES`` whose row
has no sample patterns, is graded in a built-in mode, and costs at most its mode's
``INLINE_CHARS`` (its output's characters and a quarter of its options' and question's: grading
is linear in them, and each mode's figure is about 3 ms at its worst rate measured, 2 us an
output character in ``robust``). Reading the row to find that out costs about as much as
decoding it. Everything else runs in a pool of grading processes (``grade_workers``, default
2), so ``/health`` and the other requests are answered while a slow row is graded, in two
lanes: *small* requests (bodies up to ``SMALL_MAX_BYTES`` without sample patterns, in built-in
modes: tens of milliseconds at worst) may use any process and have ``small_workers`` (default
1) of their own, so they never queue behind expensive ones; *large* ones (batches and bodies
past that size, sample patterns, modes from rule files) use the shared processes. Each lane
queues at most ``max_queue`` requests (1,024: the connections NeMo Gym opens to a server) and
``QUEUED_BODIES`` bodies' worth of bytes, and no request that would wait longer than
``grade_timeout`` at the lane's recent pace: such a request gets a 503 with ``Retry-After`` at
once. A request not answered within ``grade_timeout`` seconds of asking (waiting included) gets
a 503, and a process still on it is replaced; a request whose client disconnects is dropped,
from the queue or from its process (which is replaced). A grading process holds at most
``worker_memory`` bytes of data. No reply is longer than ``max_reply_bytes`` (twice the body
limit by default): a batch or a metrics request whose reply would be gets a 413. With
``grade_workers=0`` everything runs in this process: cheap requests inline, others in a thread
(no isolation from a slow row, no lanes). Reading a body is bounded by ``body_timeout`` (408),
and the detail of an error reply is bounded in size whatever the request held.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from choicebox._modes import default_registry
from choicebox._regex import DEFAULT_TIMEOUT

from ._judging import DEFAULT_JUDGE_DEADLINE, ServeJudge
from ._pool import (
    DEFAULT_MAX_WAITING,
    Lane,
    PoolFull,
    WorkerCrashed,
    WorkerOutOfMemory,
    WorkerPool,
    WorkerTimeout,
)
from ._protocol import (
    SessionCookie,
    close_session_reply,
    seed_session_reply,
)
from ._respond import (
    DEFAULT_MAX_BODY_BYTES,
    GRADING_ROUTES,
    REPLY_FACTOR,
    ClientError,
    NotInline,
    Verifier,
    decode,
    dumps,
    error_body,
    listed,
    respond,
    worker_handler,
)

if TYPE_CHECKING:
    from choicebox.judge import JudgeEndpoint

__all__ = [
    "BODY_DEADLINE_EXTENSION",
    "CONFIG_ENV",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_GRADE_TIMEOUT",
    "DEFAULT_GRADE_WORKERS",
    "DEFAULT_MAX_QUEUE",
    "DEFAULT_SMALL_WORKERS",
    "DEFAULT_WORKER_MEMORY",
    "SMALL_MAX_BYTES",
    "app_from_env",
    "create_app",
]

logger = logging.getLogger("choicebox.server")

# Bodies up to this size without sample patterns, in built-in modes, are small requests: grading
# is linear in them, tens of milliseconds at worst (robust, 16 KiB of answer statements).
SMALL_MAX_BYTES: Final = 16 * 2**10
DEFAULT_GRADE_WORKERS: Final = 2  # grading processes per server process
DEFAULT_SMALL_WORKERS: Final = 1  # and the ones that take small requests only
DEFAULT_MAX_QUEUE: Final = DEFAULT_MAX_WAITING  # requests a lane queues before a 503
QUEUED_BODIES: Final = 16  # and the bytes of bodies it queues, in bodies of the largest size
# The data a grading process may grow to: decoding a 16 MiB body of empty objects takes about
# 350 MB, and a reply is at most 32 MiB; a request that needs more gets a 413.
DEFAULT_WORKER_MEMORY: Final = 2**30
DEFAULT_GRADE_TIMEOUT: Final = 30.0  # seconds a grading request may take: 32 regex timeouts fit
DEFAULT_BODY_TIMEOUT: Final = 60.0  # seconds a client may take to send a body
CONFIG_ENV: Final = "CHOICEBOX_SERVE_CONFIG"  # how `choicebox serve` hands options to workers
# The ASGI scope extension by which a server says it ends a request whose body is late itself
# (``{"seconds": s}``: ``choicebox serve``'s protocol answers 408 ``s`` seconds after the head).
BODY_DEADLINE_EXTENSION: Final = "choicebox.body_deadline"
DEFAULT_SERVER_NAME: Final = "choicebox"
_LIVENESS_PATHS: Final = ("/", "/healthz", "/livez", "/readyz")

_JSON: Final = "application/json"


def _json(content: Any, status: int = 200) -> Response:
    return Response(dumps(content), status_code=status, media_type=_JSON)


def _error(status: int, detail: str | list[str], retry_after: int | None = None) -> Response:
    headers = {}
    if status == 408:
        # The rest of the body may still come: the connection cannot carry another request.
        headers["connection"] = "close"
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    return Response(error_body(detail), status_code=status, media_type=_JSON, headers=headers)


Handler = Callable[[Request], Awaitable[Response]]
T = TypeVar("T")


def _guarded(handler: Handler) -> Handler:
    """Client errors become their 4xx reply; anything else is logged and becomes a 500."""

    @functools.wraps(handler)
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except Exception as exc:
            return _failure_reply(exc, request.method, request.url.path)

    return run


def _failure_reply(exc: Exception, method: str, path: str) -> Response:
    """The reply to a request whose handler raised ``exc``: its 4xx, or a logged 500."""
    if isinstance(exc, ClientError):
        return _error(exc.status, exc.detail, exc.retry_after)
    if isinstance(exc, ClientDisconnect):  # no one will read it
        return _error(400, "the client disconnected before its reply")
    logger.error("unexpected error on %s %s", method, path, exc_info=exc)
    return _error(500, "internal server error")


class _Server(Starlette):
    """Starlette, with ``POST /verify`` (the request every rollout makes) answered before its
    middleware and router: they, and building a ``Request``, cost about a third of a small
    verify's time in the server. Everything else, ``/verify`` with another method or path
    included, goes through Starlette."""

    verify_lane: Callable[[Scope, Receive, Send], Awaitable[None]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lane = self.verify_lane
        if (
            lane is not None
            and scope["type"] == "http"
            and scope["path"] == "/verify"
            and scope["method"] == "POST"
        ):
            await lane(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


async def until_disconnected(work: Awaitable[T], receive: Receive) -> T:
    """``work``'s result, unless the client disconnects first: then ``work`` is cancelled (a
    request waiting for a grading process leaves the queue, one being graded has its process
    replaced) and ``ClientDisconnect`` raised. Once a body is read, the next ASGI message is the
    disconnect, whenever it comes."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task  # the pool cleans up before the reply is given up
            raise ClientDisconnect
    return task.result()


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


# --- the app -----------------------------------------------------------------------------------


def create_app(
    *,
    mode: str | None = None,
    rules_dirs: Sequence[str | Path] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_reply_bytes: int | None = None,
    regex_timeout: float = DEFAULT_TIMEOUT,
    grade_workers: int = DEFAULT_GRADE_WORKERS,
    small_workers: int = DEFAULT_SMALL_WORKERS,
    max_queue: int = DEFAULT_MAX_QUEUE,
    worker_memory: int = DEFAULT_WORKER_MEMORY,
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    server_name: str = DEFAULT_SERVER_NAME,
    judge: JudgeEndpoint | None = None,
    judge_deadline: float = DEFAULT_JUDGE_DEADLINE,
) -> Starlette:
    """The verify app. Rule files in ``rules_dirs`` are loaded now, once.

    ``mode`` overrides the rows' ``grading_mode``; an unknown one raises ``UnknownModeError``
    here, at start-up, not per request. ``grade_workers`` processes grade, and ``small_workers``
    more take small requests only (started with the app, or on the first request), each with
    at most ``worker_memory`` bytes of data; each lane queues at most ``max_queue`` requests,
    and a request not answered within ``grade_timeout`` seconds of asking gets a 503. ``grade_workers=0`` grades in this process. A body not
    received within ``body_timeout`` seconds gets a 408; a reply is at most ``max_reply_bytes``
    (``REPLY_FACTOR`` times ``max_body_bytes`` unless given). ``server_name`` (Gym's instance
    name) names the session cookie. ``judge`` (off by default) names a model judge for the
    verdicts the mode flags: a flagged ``POST /verify`` waits for it up to ``judge_deadline``
    seconds, and is answered with its rule verdict when the judge is late or down
    (``server._judging``).
    """
    verifier = Verifier(default_registry(tuple(rules_dirs)), mode=mode, regex_timeout=regex_timeout)
    judging = None if judge is None else ServeJudge(judge, verifier.registry, deadline=judge_deadline)
    max_reply = REPLY_FACTOR * max_body_bytes if max_reply_bytes is None else max_reply_bytes
    pool: WorkerPool | None = None
    if grade_workers > 0:
        factory = functools.partial(
            worker_handler, mode, tuple(str(d) for d in rules_dirs), regex_timeout, max_reply
        )
        pool = WorkerPool(
            factory,
            size=grade_workers,
            reserved=small_workers,
            max_waiting=max_queue,
            max_waiting_bytes=QUEUED_BODIES * max_body_bytes,
            memory_limit=worker_memory,
            timeout=grade_timeout,
            preload=[__name__],
        )
    limit = max_body_bytes
    too_large = f"request body exceeds the limit of {limit} bytes"

    async def read_body(length: str | None, scope: Scope, receive: Receive) -> bytes:
        """The body of a request whose Content-Length header is ``length`` (or none)."""
        if length is not None:
            if not length.isdigit():
                raise ClientError(400, "invalid Content-Length header")
            if int(length) > limit:
                raise ClientError(413, too_large)
        extensions = scope.get("extensions")
        deadline = extensions.get(BODY_DEADLINE_EXTENSION) if extensions else None
        if deadline is not None and deadline["seconds"] <= body_timeout:
            # The server ends a late body itself, as soon: a second timer would cost about 6 us
            # of a small request's 100.
            return await receive_body(receive)
        try:
            # asyncio's own timeout and the ASGI messages read directly: anyio's cancel scope
            # and Starlette's stream generator cost about a tenth of a small request's time.
            # The app runs on asyncio (uvicorn, Starlette's TestClient).
            async with asyncio.timeout(body_timeout):
                return await receive_body(receive)
        except TimeoutError:
            raise ClientError(
                408, f"the request body did not arrive within {body_timeout:g} s"
            ) from None

    async def receive_body(receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnect
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:
                    raise ClientError(413, too_large)
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def lane_of(route: str, body: bytes) -> Lane:
        """The pool lane of a request (see the module docstring)."""
        if len(body) > SMALL_MAX_BYTES or b"output_regex" in body:
            return "large"
        if route == "verify_batch" and b"grading_mode" in body and verifier.mode is None:
            try:  # 16 KiB at most: tens of microseconds
                rows = listed(decode(body), "requests")
            except ClientError:
                return "small"  # answered with its error
            if not all(map(verifier.calibrated, rows)):
                return "large"
        elif route != "aggregate_metrics" and not verifier.calibrated({}):
            return "large"  # the server's own mode is a rule file's
        return "small"

    async def reply_to(route: str, body: bytes, receive: Receive) -> tuple[int, bytes]:
        """The status and JSON reply to ``body`` on a grading route."""
        lane: Lane | None = None
        if route == "verify" and len(body) <= SMALL_MAX_BYTES and b"output_regex" not in body:
            try:
                return respond(verifier, route, body, max_reply=max_reply, inline=True)
            except NotInline as exc:
                lane = exc.lane
        if pool is None:
            # Sample regexes (the regex engine releases the GIL) or a costly row.
            return await anyio.to_thread.run_sync(
                functools.partial(respond, verifier, route, body, max_reply=max_reply)
            )
        try:
            return await until_disconnected(
                pool.run(route, body, lane=lane or lane_of(route, body)), receive
            )
        except PoolFull as exc:
            raise ClientError(
                503,
                f"the server is busy: {exc}; try again in {exc.retry_after} s",
                retry_after=exc.retry_after,
            ) from None
        except WorkerTimeout as exc:
            if exc.waited:
                raise ClientError(
                    503,
                    f"the server is busy: no grading process was free within {grade_timeout:g} s "
                    "(the time a request may take, waiting included); the request was abandoned",
                    retry_after=math.ceil(grade_timeout),
                ) from None
            raise ClientError(
                503,
                f"grading took longer than {grade_timeout:g} s: the request was abandoned "
                "(and its grading process replaced)",
            ) from None
        except WorkerOutOfMemory as exc:
            raise ClientError(413, f"{exc}: send a smaller request") from None
        except WorkerCrashed as exc:
            logger.warning("a grading process died on POST /%s: %s", route, exc)
            raise ClientError(
                503, f"the grading process died while grading the request ({exc})"
            ) from None

    async def verify_reply(body: bytes, receive: Receive) -> tuple[int, bytes]:
        """``POST /verify``'s status and reply: graded, then read by the judge when one is set."""
        status, reply = await reply_to("verify", body, receive)
        if judging is not None and status == 200:
            reply = await judging.judged(reply)
        return status, reply

    def grading_route(route: str) -> Handler:
        async def handle(request: Request) -> Response:
            length = request.headers.get("content-length")
            body = await read_body(length, request.scope, request.receive)
            status, reply = await (
                verify_reply(body, request.receive) if route == "verify" else reply_to(route, body, request.receive)
            )
            return Response(reply, status_code=status, media_type=_JSON)

        handle.__name__ = route
        return handle

    async def verify_lane(scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /verify`` as its route answers it, read off the ASGI scope (see ``_Server``)."""
        length = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = value.decode("latin-1")
                break
        try:
            body = await read_body(length, scope, receive)
            status, reply = await verify_reply(body, receive)
            response = Response(reply, status_code=status, media_type=_JSON)
        except Exception as exc:
            response = _failure_reply(exc, "POST", "/verify")
        await response(scope, receive, send)

    async def optional_body(request: Request) -> Any:
        """A session request's body, decoded (None when it has none)."""
        length = request.headers.get("content-length")
        if length == "0":
            return None
        body = await read_body(length, request.scope, request.receive)
        return decode(body) if body.strip() else None

    cookie = SessionCookie(server_name)

    def with_cookie(request: Request, content: Any) -> Response:
        response = _json(content)
        response.headers.append("set-cookie", cookie.header(cookie.value(request.cookies)))
        return response

    async def seed_session(request: Request) -> Response:
        return with_cookie(request, seed_session_reply(await optional_body(request)))

    async def close_session(request: Request) -> Response:
        reply, problems = close_session_reply(await optional_body(request))
        if reply is None:
            raise ClientError(422, problems)
        return with_cookie(request, reply)

    async def alive(request: Request) -> Response:
        return _json({"status": "ok"})

    async def reverify_mode(request: Request) -> Response:
        return _json("stateless")

    modes = verifier.registry.names()

    async def health(request: Request) -> Response:
        return _json({"status": "ok", "modes": modes})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        verifier.warm()  # before the first request, not in it
        if pool is not None:
            # Serve once the graders are up: a worker that cannot start stops the server here.
            await pool.ready()
        try:
            yield
        finally:
            if pool is not None:
                await pool.close()
            if judging is not None:
                judging.close()

    routes = [
        *(
            Route(f"/{route}", _guarded(grading_route(route)), methods=["POST"])
            for route in GRADING_ROUTES
        ),
        Route("/seed_session", _guarded(seed_session), methods=["POST"]),
        Route("/close_session", _guarded(close_session), methods=["POST"]),
        Route("/reverify_mode", _guarded(reverify_mode), methods=["GET"]),
        Route("/health", _guarded(health), methods=["GET"]),
        # Gym's liveness paths: it polls GET / until a server answers.
        *(Route(path, _guarded(alive), methods=["GET"]) for path in _LIVENESS_PATHS),
    ]
    app = _Server(routes=routes, lifespan=lifespan)
    app.verify_lane = verify_lane
    app.state.verifier = verifier
    app.state.pool = pool
    return app


def app_from_env() -> Starlette:
    """The app configured by ``$CHOICEBOX_SERVE_CONFIG`` (JSON); uvicorn's factory for workers."""
    raw = os.environ.get(CONFIG_ENV, "{}")
    config: Mapping[str, Any] = orjson.loads(raw)
    max_reply = config.get("max_reply_bytes")
    app = create_app(
        mode=config.get("mode"),
        rules_dirs=tuple(config.get("rules_dirs", ())),
        max_body_bytes=int(config.get("max_body_bytes", DEFAULT_MAX_BODY_BYTES)),
        max_reply_bytes=None if max_reply is None else int(max_reply),
        regex_timeout=float(config.get("regex_timeout", DEFAULT_TIMEOUT)),
        grade_workers=int(config.get("grade_workers", DEFAULT_GRADE_WORKERS)),
        small_workers=int(config.get("small_workers", DEFAULT_SMALL_WORKERS)),
        max_queue=int(config.get("max_queue", DEFAULT_MAX_QUEUE)),
        worker_memory=int(config.get("worker_memory", DEFAULT_WORKER_MEMORY)),
        grade_timeout=float(config.get("grade_timeout", DEFAULT_GRADE_TIMEOUT)),
        body_timeout=float(config.get("body_timeout", DEFAULT_BODY_TIMEOUT)),
        server_name=str(config.get("server_name", DEFAULT_SERVER_NAME)),
        **_judge_options(config.get("judge")),
    )
    # This process only serves: build every mode, then move everything loaded so far (modules,
    # rule files, compiled patterns) out of the collector's way, so full collections stay short
    # under load.
    app.state.verifier.warm()
    gc.collect()
    gc.freeze()
    return app


def _judge_options(judge: Mapping[str, Any] | None) -> dict[str, Any]:
    """``create_app``'s judge arguments from the served config's ``judge`` (``choicebox serve
    --judge-url``); none when it has none. The API key comes from the environment, as the
    command's does."""
    if not judge:
        return {}
    from choicebox.judge import JudgeEndpoint, api_key_from_env  # noqa: PLC0415  the judge extra: only a server configured with a judge loads it

    settings = {key: value for key, value in judge.items() if key != "deadline"}
    endpoint = JudgeEndpoint(api_key=api_key_from_env(), **settings)
    return {"judge": endpoint, "judge_deadline": float(judge.get("deadline", DEFAULT_JUDGE_DEADLINE))}
