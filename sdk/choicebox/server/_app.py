"""An HTTP verify server with the routes and JSON of a NeMo Gym resources server.

NeMo Gym's agents call ``POST /verify`` on a resources server after each rollout; this app
answers it with choicebox's verdict, so a Gym setup can point its agent here instead of at the
``mcqa`` server. Rule files are read once, when the app is built; no route reads a file or a
pattern from a path a client names.

Requests are read and graded by the batch engine's ``Grader``, so the server accepts exactly the
rows ``choicebox grade`` grades (a rollout without ``options`` included) and gives the same
verdicts. Error contract: malformed JSON is 400, a body over the size limit 413, a body that
decodes but is not a verify request 422 (``{"detail": ["message @ $.path", ...]}``). A verify
request whose task data is unusable (bad options, a bad ``output_regex``, an unknown grading
mode) is answered 200, masked, with the problems in ``failure_reason`` (``_protocol``): Gym
aborts a whole collection on a 4xx. A 500 means a bug in choicebox, never bad input.

Grading is CPU-bound, and a hostile row can make one grading call slow (a sample regex that
backtracks: a long C-level regex match holds the GIL, so a thread does not help). Such requests
therefore run in a small pool of worker processes (``grade_workers``, default 2), so ``/health``
and the other requests are answered while a slow row is graded, and a row still grading after
``grade_timeout`` seconds gets a 503 while its worker is replaced: every batch, every body with
sample regexes and every body over ``POOL_INLINE_MAX_BYTES``. A small verify body without sample
regexes (nearly every real one) is graded on the event loop: grading is linear in the output, so
it costs at most tens of milliseconds, less than the hop to a worker would add to every request.
With ``grade_workers=0`` everything runs in this process: small requests inline, others in a
thread (no isolation from a slow row). Reading a body is bounded by ``body_timeout`` (408), and
the detail of an error reply is bounded in size whatever the request held.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from choicebox._errors import MetricsError, WireFormatError
from choicebox._modes import ModeRegistry, default_registry
from choicebox._problems import Problem
from choicebox._regex import DEFAULT_TIMEOUT, MAX_PATTERNS_PER_ROW
from choicebox._rollout import response_text
from choicebox.batch._engine import Grader
from choicebox.metrics import MetricsAccumulator
from choicebox.render import gym_verify_response, masked_response, output_row

from ._judging import DEFAULT_JUDGE_DEADLINE, ServeJudge
from ._pool import Handler as PoolHandler
from ._pool import WorkerCrashed, WorkerPool, WorkerTimeout
from ._protocol import (
    SessionCookie,
    close_session_reply,
    request_problems,
    seed_session_reply,
)

if TYPE_CHECKING:
    from choicebox.judge import JudgeEndpoint

__all__ = [
    "BODY_DEADLINE_EXTENSION",
    "CONFIG_ENV",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_GRADE_TIMEOUT",
    "DEFAULT_GRADE_WORKERS",
    "DEFAULT_MAX_BODY_BYTES",
    "INLINE_MAX_BYTES",
    "MAX_DETAIL_CHARS",
    "MAX_DETAIL_PROBLEMS",
    "MAX_OUTPUT_REGEXES",
    "POOL_INLINE_MAX_BYTES",
    "Verifier",
    "app_from_env",
    "create_app",
]

logger = logging.getLogger("choicebox.server")

DEFAULT_MAX_BODY_BYTES: Final = 16 * 2**20
INLINE_MAX_BYTES: Final = 64 * 2**10  # without workers, bodies up to this size are graded inline
# With workers, a verify body up to this size and without sample regexes is graded inline too:
# grading is linear in the output, so such a body holds the event loop for at most about 35 ms
# (robust's worst shape; 5 ms in the Gym modes), while a hop to a grading process costs about
# twice the grading of a typical 3 KB row. Sample regexes, batches and larger bodies go to the
# pool, whose deadline is what bounds them.
POOL_INLINE_MAX_BYTES: Final = 16 * 2**10
DEFAULT_GRADE_WORKERS: Final = 2  # grading processes per server process
DEFAULT_GRADE_TIMEOUT: Final = 30.0  # seconds a grading request may take: 32 regex timeouts fit
DEFAULT_BODY_TIMEOUT: Final = 60.0  # seconds a client may take to send a body
MAX_DETAIL_CHARS: Final = 1000  # an error reply's message is cut to about this many characters
MAX_DETAIL_PROBLEMS: Final = 50  # and lists at most this many problems
MAX_OUTPUT_REGEXES: Final = MAX_PATTERNS_PER_ROW  # the library-wide cap: 422 here, not skipped
CONFIG_ENV: Final = "CHOICEBOX_SERVE_CONFIG"  # how `choicebox serve` hands options to workers
# The ASGI scope extension by which a server says it ends a request whose body is late itself
# (``{"seconds": s}``: ``choicebox serve``'s protocol answers 408 ``s`` seconds after the head).
BODY_DEADLINE_EXTENSION: Final = "choicebox.body_deadline"
TASK_KEY_FIELD: Final = "uuid"
DEFAULT_SERVER_NAME: Final = "choicebox"
_LIVENESS_PATHS: Final = ("/", "/healthz", "/livez", "/readyz")

_JSON: Final = "application/json"


class ClientError(Exception):
    """A request the client got wrong: ``status`` and the ``detail`` to send back; ``issues``
    are the coded problems behind a row's 422 (what decides whether it is masked instead)."""

    def __init__(
        self, status: int, detail: str | list[str], *, issues: Sequence[Problem] = ()
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.issues = tuple(issues)


def _row_error(issues: Sequence[Problem]) -> ClientError:
    """The 422 of a verify request whose row cannot be graded, listing every problem."""
    return ClientError(422, [str(p) for p in issues], issues=issues)


def _dumps(content: Any) -> bytes:
    """``content`` as JSON. orjson refuses to write more than 254 levels of nesting, which
    orjson itself reads (up to 1024); the standard library writes those, and a request too deep
    even for it is the client's error."""
    try:
        return orjson.dumps(content)
    except orjson.JSONEncodeError:
        pass
    try:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()
    except (RecursionError, ValueError, TypeError):
        raise ClientError(422, ["the request nests too deeply to be echoed back @ $"]) from None


def _json(content: Any, status: int = 200) -> Response:
    return Response(_dumps(content), status_code=status, media_type=_JSON)


def _batch_body(results: list[dict[str, Any]]) -> bytes:
    try:
        return orjson.dumps({"responses": results})
    except orjson.JSONEncodeError:  # some item nests too deeply: encode item by item
        parts: list[bytes] = []
        for index, item in enumerate(results):
            try:
                parts.append(_dumps(item))
            except ClientError as exc:
                parts.append(
                    orjson.dumps({"error": exc.detail, "status": exc.status, "index": index})
                )
        return b'{"responses":[' + b",".join(parts) + b"]}"


def bounded_detail(detail: str | list[str]) -> str | list[str]:
    """``detail`` cut to what an error reply may carry: each message to about
    ``MAX_DETAIL_CHARS`` characters (its start and its ``@ $.path`` end kept), and a list to
    ``MAX_DETAIL_PROBLEMS`` messages and a count of the rest. A problem can quote the request
    (a 6 MB bad value, a key as long as the body), and the reply must stay small."""
    if isinstance(detail, str):
        return _bounded_message(detail)
    shown = [_bounded_message(problem) for problem in detail[:MAX_DETAIL_PROBLEMS]]
    if len(detail) > MAX_DETAIL_PROBLEMS:
        shown.append(f"... and {len(detail) - MAX_DETAIL_PROBLEMS} more problems")
    return shown


def _bounded_message(message: str) -> str:
    if len(message) <= MAX_DETAIL_CHARS:
        return message
    keep = MAX_DETAIL_CHARS // 2
    cut = len(message) - 2 * keep
    return f"{message[:keep]}…[{cut} characters cut]…{message[-keep:]}"


def _error_body(detail: str | list[str]) -> bytes:
    return _dumps({"detail": bounded_detail(detail)})


def _error(status: int, detail: str | list[str]) -> Response:
    # After a 408 the rest of the body may still come: the connection cannot carry another request.
    headers = {"connection": "close"} if status == 408 else None
    return Response(_error_body(detail), status_code=status, media_type=_JSON, headers=headers)


class Verifier:
    """Turns verify requests (decoded JSON) into verify responses: the batch engine's ``Grader``
    reads and grades; this class only maps its outcomes to HTTP (422 detail lists, the cap on
    sample patterns)."""

    def __init__(
        self,
        registry: ModeRegistry,
        *,
        mode: str | None = None,
        regex_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.registry = registry
        # The server's mode, when set, overrides every row's grading_mode (as Gym's config does).
        self.grader = Grader(registry=registry, mode=mode, regex_timeout=regex_timeout)

    def verify(self, row: Any) -> dict[str, Any]:
        """The verify response for ``row``; raises ``ClientError`` for an invalid request."""
        if not isinstance(row, dict):
            raise ClientError(422, [f"expected a JSON object, got {_kind(row)} @ $"])
        reading = self.grader.read(row)
        if isinstance(reading, list):
            problems = list(reading)
            response = row.get("response")
            if response is not None:
                # Report the response's problems with the others; when there are none, grading
                # reads the response itself and an unreadable one comes back as invalid_output.
                try:
                    response_text(response)
                except WireFormatError as exc:
                    problems.extend(exc.issues)
            raise _row_error(problems)
        count = len(reading.output_regex)
        if count > MAX_OUTPUT_REGEXES:
            raise _row_error(
                [
                    Problem(
                        "wrong_value",
                        f"at most {MAX_OUTPUT_REGEXES} patterns are accepted, got {count}",
                        "$.template_metadata.output_regex",
                    )
                ]
            )
        try:
            text = response_text(row["response"])
        except WireFormatError as exc:
            # Not something a model wrote: the client sent a response that is no response.
            raise _row_error(list(exc.issues)) from None
        verdict = self.grader.grade_reading(reading, text)  # a text is its own response
        return output_row(row, verdict)

    def metrics(self, rows: Sequence[Any]) -> dict[str, Any]:
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise ClientError(
                    422, [f"expected a JSON object, got {_kind(row)} @ $.verify_responses[{i}]"]
                )
        # Gym 0.7.0's whole reply: every numeric field's statistics (reward components and
        # response.usage included), per task and per repeat, masked rows as coverage.
        metrics = MetricsAccumulator(profile=True)
        try:
            metrics.add_rows(rows, task_key_field=TASK_KEY_FIELD)
            document = metrics.document(accuracy_ci=False)
        except MetricsError as exc:
            raise ClientError(422, [f"{exc} @ $.verify_responses"]) from None
        except (TypeError, ValueError) as exc:  # a row whose fields have the wrong types
            raise ClientError(
                422, [f"invalid verify response: {exc} @ $.verify_responses"]
            ) from None
        return document.gym_response()


def verify_row(verifier: Verifier, row: Any) -> dict[str, Any]:
    """Gym's verify response for ``row``: the verdict with Gym's failure fields, or, for a
    verify request whose task data is unusable, a masked response naming every problem (Gym
    aborts a collection on a 4xx); a body that is no verify request still raises."""
    try:
        return gym_verify_response(verifier.verify(row))
    except ClientError as exc:
        if not exc.issues or request_problems(exc.issues):
            raise
        # The row is echoed as every verify response echoes it; the problems are bounded as an
        # error reply's are, since one may quote a huge value.
        return masked_response(row, bounded_detail(exc.detail))


def verify_rows(verifier: Verifier, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """:func:`verify_row` of each row, in order; a row that is no verify request gets an error
    entry ``{"error", "status", "index"}`` instead."""
    out: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        try:
            out.append(verify_row(verifier, row))
        except ClientError as exc:
            out.append({"error": exc.detail, "status": exc.status, "index": index})
    return out


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


Handler = Callable[[Request], Awaitable[Response]]


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
        return _error(exc.status, exc.detail)
    if isinstance(exc, ClientDisconnect):
        return _error(400, "the client disconnected before the body was read")
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


# --- one grading request, without HTTP: what a worker process runs ---------------------------

# The routes whose work is grading (or metrics over many rows), done by ``respond``.
GRADING_ROUTES: Final = ("verify", "verify_batch", "aggregate_metrics")


def respond(verifier: Verifier, route: str, body: bytes) -> tuple[int, bytes]:
    """The status and JSON reply for the body of a request on one of ``GRADING_ROUTES``:
    decoding, grading and encoding, and every client error as its 4xx reply."""
    try:
        payload = _decode(body)
        if route == "verify":
            return 200, _dumps(verify_row(verifier, payload))
        if route == "verify_batch":
            results = verify_rows(verifier, _listed(payload, "requests"))
            for item in results:
                if "error" in item:
                    item["error"] = bounded_detail(item["error"])
            return 200, _batch_body(results)
        if route == "aggregate_metrics":
            return 200, _dumps(verifier.metrics(_listed(payload, "verify_responses")))
        raise ValueError(f"not a grading route: {route!r}")
    except ClientError as exc:
        return exc.status, _error_body(exc.detail)
    except Exception:
        logger.exception("unexpected error on POST /%s", route)
        return 500, _error_body("internal server error")


def _decode(body: bytes) -> Any:
    if not body.strip():
        raise ClientError(400, "malformed JSON: the body is empty")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ClientError(400, f"malformed JSON: {exc}") from None


def _listed(payload: Any, key: str) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get(key), list):
        return list(payload[key])
    if isinstance(payload, dict) and key in payload:
        raise ClientError(422, [f"expected an array, got {_kind(payload[key])} @ $.{key}"])
    raise ClientError(422, [f'expected {{"{key}": [...]}} or an array @ $.{key}'])


def _worker_handler(
    mode: str | None, rules_dirs: tuple[str, ...], regex_timeout: float
) -> PoolHandler:
    """A grading worker's handler: its own ``Verifier``, built once in the worker process."""
    verifier = Verifier(default_registry(rules_dirs), mode=mode, regex_timeout=regex_timeout)
    gc.collect()
    gc.freeze()  # as in app_from_env: what is loaded now stays out of the collector's way
    return functools.partial(respond, verifier)


# --- the app -----------------------------------------------------------------------------------


def create_app(
    *,
    mode: str | None = None,
    rules_dirs: Sequence[str | Path] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    regex_timeout: float = DEFAULT_TIMEOUT,
    grade_workers: int = DEFAULT_GRADE_WORKERS,
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    server_name: str = DEFAULT_SERVER_NAME,
    judge: JudgeEndpoint | None = None,
    judge_deadline: float = DEFAULT_JUDGE_DEADLINE,
) -> Starlette:
    """The verify app. Rule files in ``rules_dirs`` are loaded now, once.

    ``mode`` overrides the rows' ``grading_mode``; an unknown one raises ``UnknownModeError``
    here, at start-up, not per request. ``grade_workers`` processes grade (started with the app,
    or on the first request); a request they have not answered within ``grade_timeout`` seconds
    gets a 503. ``grade_workers=0`` grades in this process. A body not received within
    ``body_timeout`` seconds gets a 408. ``server_name`` (Gym's instance name) names the
    session cookie. ``judge`` (off by default) names a model judge for the verdicts the mode
    flags: a flagged ``POST /verify`` waits for it up to ``judge_deadline`` seconds, and is
    answered with its rule verdict when the judge is late or down (``server._judging``).
    """
    verifier = Verifier(default_registry(tuple(rules_dirs)), mode=mode, regex_timeout=regex_timeout)
    judging = None if judge is None else ServeJudge(judge, verifier.registry, deadline=judge_deadline)
    pool: WorkerPool | None = None
    if grade_workers > 0:
        factory = functools.partial(
            _worker_handler, mode, tuple(str(d) for d in rules_dirs), regex_timeout
        )
        pool = WorkerPool(factory, size=grade_workers, timeout=grade_timeout, preload=[__name__])
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

    async def reply_to(route: str, body: bytes) -> tuple[int, bytes]:
        """The status and JSON reply to ``body`` on a grading route."""
        if pool is None:
            if len(body) <= INLINE_MAX_BYTES and b"output_regex" not in body:
                return respond(verifier, route, body)
            # A large body or sample regexes (the regex engine releases the GIL).
            return await anyio.to_thread.run_sync(respond, verifier, route, body)
        if route == "verify" and len(body) <= POOL_INLINE_MAX_BYTES and b"output_regex" not in body:
            return respond(verifier, route, body)
        try:
            return await pool.run(route, body)
        except WorkerTimeout:
            raise ClientError(
                503,
                f"grading took longer than {grade_timeout:g} s: the request was abandoned "
                "(and its grading process replaced)",
            ) from None
        except WorkerCrashed as exc:
            logger.warning("a grading process died on POST /%s: %s", route, exc)
            raise ClientError(
                503, f"the grading process died while grading the request ({exc})"
            ) from None

    async def verify_reply(body: bytes) -> tuple[int, bytes]:
        """``POST /verify``'s status and reply: graded, then read by the judge when one is set."""
        status, reply = await reply_to("verify", body)
        if judging is not None and status == 200:
            reply = await judging.judged(reply)
        return status, reply

    def grading_route(route: str) -> Handler:
        async def handle(request: Request) -> Response:
            length = request.headers.get("content-length")
            body = await read_body(length, request.scope, request.receive)
            status, reply = await (verify_reply(body) if route == "verify" else reply_to(route, body))
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
            status, reply = await verify_reply(await read_body(length, scope, receive))
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
        return _decode(body) if body.strip() else None

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
    app = create_app(
        mode=config.get("mode"),
        rules_dirs=tuple(config.get("rules_dirs", ())),
        max_body_bytes=int(config.get("max_body_bytes", DEFAULT_MAX_BODY_BYTES)),
        regex_timeout=float(config.get("regex_timeout", DEFAULT_TIMEOUT)),
        grade_workers=int(config.get("grade_workers", DEFAULT_GRADE_WORKERS)),
        grade_timeout=float(config.get("grade_timeout", DEFAULT_GRADE_TIMEOUT)),
        body_timeout=float(config.get("body_timeout", DEFAULT_BODY_TIMEOUT)),
        server_name=str(config.get("server_name", DEFAULT_SERVER_NAME)),
        **_judge_options(config.get("judge")),
    )
    # This process only serves: move everything loaded so far (modules, rule files, compiled
    # patterns) out of the collector's way, so full collections stay short under load.
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
