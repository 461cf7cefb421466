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
backtracks: a long C-level regex match holds the GIL, so a thread does not help). So the event
loop grades only what it can bound: a ``/verify`` body of at most ``SMALL_MAX_BYTES`` whose row
has no sample patterns, is graded in a built-in mode, and costs at most its mode's
``INLINE_CHARS`` (its output's characters and a quarter of its options' and question's: grading
is linear in them, and each mode's figure is about 3 ms at its worst rate measured, 2 us an
output character in ``robust``). Reading the row to find that out costs about as much as
decoding it. Everything else runs in a pool of worker
processes (``grade_workers``, default 2), so ``/health`` and the other requests are answered
while a slow row is graded, in two lanes: *small* requests (bodies up to ``SMALL_MAX_BYTES``
without sample patterns, in built-in modes: tens of milliseconds at worst) may use any worker and
have ``small_workers`` (default 1) of their own, so they never queue behind expensive ones;
*large* ones (batches and bodies past that size, sample patterns, modes from rule files) use the
shared workers. Each lane queues at most ``max_queue`` requests (1,024: the connections NeMo
Gym opens to a server) and ``QUEUED_BODIES`` bodies' worth of bytes, and no request that would
wait longer than ``grade_timeout`` at the lane's recent pace: such a request gets a 503 with
``Retry-After`` at once. A request not answered within ``grade_timeout`` seconds of asking (waiting
included) gets a 503, and a worker still on it is replaced; a request whose client disconnects
is dropped, from the queue or from its worker (which is replaced). No reply is longer than
``max_reply_bytes`` (twice the body limit by default): a batch or a metrics request whose reply
would be gets a 413. With ``grade_workers=0`` everything runs in this process: cheap requests
inline, others in a thread (no isolation from a slow row, no lanes). Reading a body is bounded
by ``body_timeout`` (408), and the detail of an error reply is bounded in size whatever the
request held.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple, TypeVar

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
from choicebox._reader import RowReading
from choicebox._regex import DEFAULT_TIMEOUT, MAX_PATTERNS_PER_ROW
from choicebox._rollout import response_text
from choicebox._wire import DEFAULT_GRADING_MODE
from choicebox.batch._engine import Grader
from choicebox.metrics import MetricsAccumulator
from choicebox.render import gym_verify_response, masked_response, output_row

from ._pool import (
    DEFAULT_MAX_WAITING,
    Lane,
    PoolFull,
    WorkerCrashed,
    WorkerOutOfMemory,
    WorkerPool,
    WorkerTimeout,
)
from ._pool import Handler as PoolHandler
from ._protocol import (
    SessionCookie,
    close_session_reply,
    request_problems,
    seed_session_reply,
)

__all__ = [
    "BODY_DEADLINE_EXTENSION",
    "CONFIG_ENV",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_GRADE_TIMEOUT",
    "DEFAULT_GRADE_WORKERS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_QUEUE",
    "DEFAULT_SMALL_WORKERS",
    "DEFAULT_WORKER_MEMORY",
    "INLINE_CHARS",
    "INLINE_MAX_CHARS",
    "MAX_DETAIL_CHARS",
    "MAX_DETAIL_PROBLEMS",
    "MAX_OUTPUT_REGEXES",
    "REPLY_FACTOR",
    "SMALL_MAX_BYTES",
    "Verifier",
    "app_from_env",
    "create_app",
]

logger = logging.getLogger("choicebox.server")

DEFAULT_MAX_BODY_BYTES: Final = 16 * 2**20
# A reply may be this many times the body limit (``max_reply_bytes`` unless given): a verify
# reply echoes its request, with about 1 KB of verdict.
REPLY_FACTOR: Final = 2
# Bodies up to this size without sample patterns, in built-in modes, are small requests: grading
# is linear in them, tens of milliseconds at worst (robust, 16 KiB of answer statements).
SMALL_MAX_BYTES: Final = 16 * 2**10
# A small /verify whose cost (Verifier.cost) is at most its mode's figure here is graded on the
# event loop: about 3 ms at the mode's worst rate measured, in ns an output character (the
# costliest of 26 shapes of answer statements, boxes and lines; ``benchmarks/serve_hostile.py
# --inline-survey`` times the costliest shapes at these bounds). A typical row costs a tenth of
# that rate. A mode from a rule file is never graded inline (its regex steps may each run to
# the regex timeout); a test holds that every built-in mode has a figure.
INLINE_CHARS: Final[Mapping[str, int]] = {
    "robust": 1_500,  # 1,925 ns ("## Final Answer" then a letter, line after line)
    "lenient_answer_colon_md": 4_000,  # 710 ns ("Answer: red" lines)
    "mmlu_pro": 4_500,  # 632 ns (stray capitals)
    "lenient_boxed": 6_000,  # 460 ns (\boxed{A: red})
    "strict_single_letter_boxed": 8_000,  # 322 ns (\boxed{A: red})
    "lenient_answer_colon": 16_000,  # 51 ns (as many as a small body holds)
}
INLINE_MAX_CHARS: Final = min(INLINE_CHARS.values())
# Reading the options and the question costs at most about a fifth of reading as many output
# characters (an 8,000-character option against answer lines): they count for a quarter.
SAMPLE_CHARS_PER_OUTPUT_CHAR: Final = 4
DEFAULT_GRADE_WORKERS: Final = 2  # grading processes per server process
DEFAULT_SMALL_WORKERS: Final = 1  # and the ones that take small requests only
DEFAULT_MAX_QUEUE: Final = DEFAULT_MAX_WAITING  # requests a lane queues before a 503
QUEUED_BODIES: Final = 16  # and the bytes of bodies it queues, in bodies of the largest size
# The data a grading process may grow to: decoding a 16 MiB body of empty objects takes about
# 350 MB, and a reply is at most 32 MiB; a request that needs more gets a 413.
DEFAULT_WORKER_MEMORY: Final = 2**30
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
        self,
        status: int,
        detail: str | list[str],
        *,
        issues: Sequence[Problem] = (),
        retry_after: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.issues = tuple(issues)
        self.retry_after = retry_after  # seconds, for a 503's Retry-After header


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


def _error(status: int, detail: str | list[str], retry_after: int | None = None) -> Response:
    headers = {}
    if status == 408:
        # The rest of the body may still come: the connection cannot carry another request.
        headers["connection"] = "close"
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    return Response(_error_body(detail), status_code=status, media_type=_JSON, headers=headers)


class Verifier:
    """Turns verify requests (decoded JSON) into verify responses: the batch engine's ``Grader``
    reads and grades; this class only maps its outcomes to HTTP (422 detail lists, the cap on
    sample patterns) and says what grading a request would cost."""

    def __init__(
        self,
        registry: ModeRegistry,
        *,
        mode: str | None = None,
        regex_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.registry = registry
        self.mode = mode
        # The server's mode, when set, overrides every row's grading_mode (as Gym's config does).
        self.grader = Grader(registry=registry, mode=mode, regex_timeout=regex_timeout)

    def verify(self, row: Any) -> dict[str, Any]:
        """The verify response for ``row``; raises ``ClientError`` for an invalid request."""
        return self.grade(self.read(row))

    def read(self, row: Any) -> VerifyJob:
        """``row`` read and checked, ready to grade; raises ``ClientError`` for an invalid
        request."""
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
        return VerifyJob(row, reading, text)

    def grade(self, job: VerifyJob) -> dict[str, Any]:
        """The verify response of a job ``read`` returned."""
        verdict = self.grader.grade_reading(job.reading, job.text)  # a text is its own response
        return output_row(job.row, verdict)

    def cost(self, job: VerifyJob) -> int:
        """What grading ``job`` costs, in characters of its output: those, and a quarter of its
        options' and question's (see ``INLINE_CHARS``)."""
        reading = job.reading
        sample = sum(map(len, reading.options.values())) + len(reading.question)
        return len(job.text) + sample // SAMPLE_CHARS_PER_OUTPUT_CHAR

    def lane(self, job: VerifyJob) -> Lane | None:
        """Where ``job``, from a small body, is graded: ``None`` for the event loop (its cost is
        within its mode's ``INLINE_CHARS``), else the pool's lane: ``large`` for sample
        patterns (each may run to the regex timeout) and modes from rule files (their regex
        steps likewise), whose cost no benchmark here measured."""
        reading = job.reading
        mode = self.mode or reading.grading_mode
        if reading.output_regex or not self.registry.is_builtin(mode):
            return "large"
        if self.cost(job) > INLINE_CHARS.get(mode, INLINE_MAX_CHARS):
            return "small"
        return None

    def calibrated(self, row: Any) -> bool:
        """Whether ``row`` is graded in a built-in mode without sample patterns, so that its
        cost is linear in its characters (what makes a small body a small request)."""
        if not isinstance(row, dict):
            return True  # answered with an error
        template = row.get("template_metadata")
        if isinstance(template, dict) and template.get("output_regex"):
            return False
        name = self.mode or row.get("grading_mode") or DEFAULT_GRADING_MODE
        # A mode that is no name, or an unknown one, is answered with its problem.
        return name not in self.registry or self.registry.is_builtin(name)

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


class VerifyJob(NamedTuple):
    """A verify request read and checked: the row, its reading and the text to grade."""

    row: dict[str, Any]
    reading: RowReading
    text: str


class NotInline(Exception):
    """Grading this request here would cost more than ``INLINE_CHARS`` allows: it goes to
    ``lane``."""

    def __init__(self, lane: Lane) -> None:
        super().__init__(lane)
        self.lane = lane


def verify_row(verifier: Verifier, row: Any, *, inline: bool = False) -> dict[str, Any]:
    """Gym's verify response for ``row``: the verdict with Gym's failure fields, or, for a
    verify request whose task data is unusable, a masked response naming every problem (Gym
    aborts a collection on a 4xx); a body that is no verify request still raises. ``inline``
    raises ``NotInline`` instead of grading a row that would cost more than its mode's
    ``INLINE_CHARS`` (reading it costs little: the same order as decoding it)."""
    try:
        job = verifier.read(row)
        if inline:
            lane = verifier.lane(job)
            if lane is not None:
                raise NotInline(lane)
        return gym_verify_response(verifier.grade(job))
    except ClientError as exc:
        if not exc.issues or request_problems(exc.issues):
            raise
        # The row is echoed as every verify response echoes it; the problems are bounded as an
        # error reply's are, since one may quote a huge value.
        return masked_response(row, bounded_detail(exc.detail))


def verify_rows(verifier: Verifier, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """:func:`verify_row` of each row, in order; a row that is no verify request gets an error
    entry ``{"error", "status", "index"}`` instead."""
    return [_batch_item(verifier, index, row) for index, row in enumerate(rows)]


def _batch_item(verifier: Verifier, index: int, row: Any) -> dict[str, Any]:
    try:
        return verify_row(verifier, row)
    except ClientError as exc:
        return {"error": bounded_detail(exc.detail), "status": exc.status, "index": index}


def _batch_reply(verifier: Verifier, rows: Sequence[Any], max_reply: int) -> bytes:
    """The ``/verify_batch`` reply, encoded row by row and given up as soon as it would pass
    ``max_reply`` bytes (a 413 naming the row), so neither grading nor the reply's memory goes
    past the bound whatever the rows are (a 1.9 MiB batch of ``0`` asked for a 77 MiB reply).
    Each row's JSON is copied into one buffer at once: orjson gives even a short reply a
    buffer of about 4 KB, so a list of them would hold 50 times the reply."""
    out = bytearray(_BATCH_OPEN)
    for index, row in enumerate(rows):
        item = _batch_item(verifier, index, row)
        try:
            part = _dumps(item)
        except ClientError as exc:  # an item that nests too deeply to be echoed
            part = orjson.dumps({"error": exc.detail, "status": exc.status, "index": index})
        if len(out) + len(part) + len(_BATCH_CLOSE) + 1 > max_reply:
            raise ClientError(
                413,
                f"the reply would be larger than the limit of {max_reply} bytes: it passed it "
                f"at row {index} of {len(rows)}; send fewer rows per request @ $.requests",
            )
        if index:
            out += b","
        out += part
    out += _BATCH_CLOSE
    return bytes(out)


_BATCH_OPEN: Final = b'{"responses":['
_BATCH_CLOSE: Final = b"]}"


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


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


# --- one grading request, without HTTP: what a worker process runs ---------------------------

# The routes whose work is grading (or metrics over many rows), done by ``respond``.
GRADING_ROUTES: Final = ("verify", "verify_batch", "aggregate_metrics")


def respond(
    verifier: Verifier,
    route: str,
    body: bytes,
    *,
    max_reply: int = DEFAULT_MAX_BODY_BYTES * REPLY_FACTOR,
    inline: bool = False,
) -> tuple[int, bytes]:
    """The status and JSON reply for the body of a request on one of ``GRADING_ROUTES``:
    decoding, grading and encoding, and every client error as its 4xx reply. No reply is longer
    than ``max_reply`` bytes: a request whose reply would be gets a 413 instead. ``inline``
    (``verify`` only) raises ``NotInline`` instead of grading a row that costs more than its
    mode's ``INLINE_CHARS``, so that the event loop grades only what is cheap."""
    try:
        payload = _decode(body)
        if route == "verify":
            reply = _dumps(verify_row(verifier, payload, inline=inline))
        elif route == "verify_batch":
            reply = _batch_reply(verifier, _listed(payload, "requests"), max_reply)
        elif route == "aggregate_metrics":
            reply = _dumps(verifier.metrics(_listed(payload, "verify_responses")))
        else:
            raise ValueError(f"not a grading route: {route!r}")
        if len(reply) > max_reply:
            raise ClientError(
                413,
                f"the reply would be {len(reply)} bytes, more than the limit of {max_reply}: "
                "send fewer rows per request @ $",
            )
        return 200, reply
    except ClientError as exc:
        return exc.status, _error_body(exc.detail)
    except (NotInline, MemoryError):
        raise  # a grading process that runs out of memory is replaced (``_pool``)
    except Exception as exc:
        if _out_of_memory(exc):
            raise MemoryError from exc
        logger.exception("unexpected error on POST /%s", route)
        return 500, _error_body("internal server error")


def _decode(body: bytes) -> Any:
    if not body.strip():
        raise ClientError(400, "malformed JSON: the body is empty")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith(_ORJSON_OUT_OF_MEMORY):
            raise MemoryError(str(exc)) from exc  # no fault of the JSON's
        raise ClientError(400, f"malformed JSON: {exc}") from None


# How orjson says that it could not allocate its buffer (it raises a JSONDecodeError).
_ORJSON_OUT_OF_MEMORY: Final = "Not enough memory"


def _out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` comes of a ``MemoryError`` (C extensions wrap it: orjson in a
    ``SystemError``)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, MemoryError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _listed(payload: Any, key: str) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get(key), list):
        return list(payload[key])
    if isinstance(payload, dict) and key in payload:
        raise ClientError(422, [f"expected an array, got {_kind(payload[key])} @ $.{key}"])
    raise ClientError(422, [f'expected {{"{key}": [...]}} or an array @ $.{key}'])


def _worker_handler(
    mode: str | None, rules_dirs: tuple[str, ...], regex_timeout: float, max_reply: int
) -> PoolHandler:
    """A grading worker's handler: its own ``Verifier``, built once in the worker process."""
    verifier = Verifier(default_registry(rules_dirs), mode=mode, regex_timeout=regex_timeout)
    gc.collect()
    gc.freeze()  # as in app_from_env: what is loaded now stays out of the collector's way
    return functools.partial(respond, verifier, max_reply=max_reply)


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
) -> Starlette:
    """The verify app. Rule files in ``rules_dirs`` are loaded now, once.

    ``mode`` overrides the rows' ``grading_mode``; an unknown one raises ``UnknownModeError``
    here, at start-up, not per request. ``grade_workers`` processes grade, and ``small_workers``
    more take small requests only (started with the app, or on the first request), each with
    at most ``worker_memory`` bytes of data; each lane queues at most ``max_queue`` requests,
    and a request not answered within ``grade_timeout`` seconds of asking gets a 503. ``grade_workers=0`` grades in this process. A body not
    received within ``body_timeout`` seconds gets a 408; a reply is at most ``max_reply_bytes``
    (``REPLY_FACTOR`` times ``max_body_bytes`` unless given). ``server_name`` (Gym's instance
    name) names the session cookie.
    """
    verifier = Verifier(default_registry(tuple(rules_dirs)), mode=mode, regex_timeout=regex_timeout)
    max_reply = REPLY_FACTOR * max_body_bytes if max_reply_bytes is None else max_reply_bytes
    pool: WorkerPool | None = None
    if grade_workers > 0:
        factory = functools.partial(
            _worker_handler, mode, tuple(str(d) for d in rules_dirs), regex_timeout, max_reply
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
                rows = _listed(_decode(body), "requests")
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

    def grading_route(route: str) -> Handler:
        async def handle(request: Request) -> Response:
            length = request.headers.get("content-length")
            body = await read_body(length, request.scope, request.receive)
            status, reply = await reply_to(route, body, request.receive)
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
            status, reply = await reply_to("verify", body, receive)
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
    )
    # This process only serves: move everything loaded so far (modules, rule files, compiled
    # patterns) out of the collector's way, so full collections stay short under load.
    gc.collect()
    gc.freeze()
    return app
