"""An HTTP verify server with the routes and JSON of a NeMo Gym resources server.

NeMo Gym's agents call ``POST /verify`` on a resources server after each rollout; this app
answers it with choicebox's verdict, so a Gym setup can point its agent here instead of at the
``mcqa`` server. Rule files are read once, when the app is built; no route reads a file or a
pattern from a path a client names.

Error contract: malformed JSON is 400, a body over the size limit 413, a body that decodes but is
not a valid request 422 (``{"detail": ["message @ $.path", ...]}``), and an unknown grading mode
422 naming the known ones. A 500 means a bug in choicebox, never bad input.

Grading is CPU-bound. Small requests without sample regexes are graded inline on the event loop
(a thread hop costs more than the grading); a large body, a batch and any request carrying
``template_metadata.output_regex`` (row data, possibly catastrophic, bounded by the regex
timeout; the ``regex`` engine releases the GIL while matching) go to a worker thread, so one slow
request never stalls the others.
"""

from __future__ import annotations

import functools
import gc
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from choicebox._errors import MetricsError, UnknownModeError, WireFormatError
from choicebox._fastpath import grade_row_fast
from choicebox._grading import grade
from choicebox._modes import COMPONENTS, GradingMode, ModeRegistry, default_registry
from choicebox._regex import DEFAULT_TIMEOUT, MAX_PATTERNS_PER_ROW
from choicebox._rollout import response_text
from choicebox._samples import MCQASample
from choicebox.metrics import MetricsAccumulator

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_MAX_BODY_BYTES",
    "INLINE_MAX_BYTES",
    "MAX_OUTPUT_REGEXES",
    "Grader",
    "app_from_env",
    "create_app",
]

logger = logging.getLogger("choicebox.server")

DEFAULT_MAX_BODY_BYTES: Final = 16 * 2**20
INLINE_MAX_BYTES: Final = 64 * 2**10  # bodies up to this size are graded on the event loop
MAX_OUTPUT_REGEXES: Final = MAX_PATTERNS_PER_ROW  # the library-wide cap: 422 here, not skipped
CONFIG_ENV: Final = "CHOICEBOX_SERVE_CONFIG"  # how `choicebox serve` hands options to workers
TASK_KEY_FIELD: Final = "uuid"

_JSON: Final = "application/json"
_REQUIRED: Final = ("responses_create_params", "response")


class ClientError(Exception):
    """A request the client got wrong: ``status`` and the ``detail`` to send back."""

    def __init__(self, status: int, detail: str | list[str]) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


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


def _batch_json(results: list[dict[str, Any]]) -> Response:
    try:
        body = orjson.dumps({"responses": results})
    except orjson.JSONEncodeError:  # some item nests too deeply: encode item by item
        parts: list[bytes] = []
        for index, item in enumerate(results):
            try:
                parts.append(_dumps(item))
            except ClientError as exc:
                parts.append(
                    orjson.dumps({"error": exc.detail, "status": exc.status, "index": index})
                )
        body = b'{"responses":[' + b",".join(parts) + b"]}"
    return Response(body, media_type=_JSON)


def _error(status: int, detail: str | list[str]) -> Response:
    return _json({"detail": detail}, status)


class Grader:
    """Turns verify requests (decoded JSON) into verify responses; no HTTP in here."""

    def __init__(
        self,
        registry: ModeRegistry,
        *,
        mode: str | None = None,
        regex_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.registry = registry
        # The server's mode, when set, overrides every row's grading_mode (as Gym's config does).
        self.mode: GradingMode | None = registry.get(mode) if mode is not None else None
        self.regex_timeout = regex_timeout
        self._modes: dict[str, GradingMode] = {}

    def _resolve(self, name: str) -> GradingMode:
        found = self._modes.get(name)
        if found is None:
            try:
                found = self.registry.get(name)
            except UnknownModeError as exc:
                raise ClientError(422, [f"{exc} @ $.grading_mode"]) from None
            self._modes[name] = found
        return found

    def _mode_for(self, name: str) -> GradingMode:
        return self.mode or self._resolve(name)

    def verify(self, row: Any) -> dict[str, Any]:
        """The verify response for ``row``; raises ``ClientError`` for an invalid request."""
        if not isinstance(row, dict):
            raise ClientError(422, [f"expected a JSON object, got {_kind(row)} @ $"])
        problems = [f"required field missing @ $.{key}" for key in _REQUIRED if key not in row]
        if not problems:
            verdict = grade_row_fast(
                row,
                self._mode_for,
                max_patterns=MAX_OUTPUT_REGEXES,
                regex_timeout=self.regex_timeout,
            )
            if verdict is not None:
                return verdict.to_wire(row)
        sample: MCQASample | None = None
        try:
            sample = MCQASample.from_wire(row)
        except WireFormatError as exc:
            problems.extend(p for p in exc.problems if p not in problems)
        response: Any = row.get("response")
        if problems and "response" in row:
            # Report the response's problems with the others; when there are none, grade reads
            # the response itself and an unreadable one comes back as an invalid_output verdict.
            try:
                response_text(response)
            except WireFormatError as exc:
                problems.extend(exc.problems)
        if sample is not None and sample.template is not None:
            count = len(sample.template.output_regex)
            if count > MAX_OUTPUT_REGEXES:
                problems.append(
                    f"at most {MAX_OUTPUT_REGEXES} patterns are accepted, got {count} "
                    "@ $.template_metadata.output_regex"
                )
        if problems or sample is None:
            raise ClientError(422, problems)
        mode = self.mode or self._resolve(sample.grading_mode)
        verdict = grade(sample, response, mode=mode, regex_timeout=self.regex_timeout)
        if verdict.failure == "invalid_output":
            # Not something a model wrote: the client sent a response that is no response.
            raise ClientError(422, verdict.detail.split("; "))
        return verdict.to_wire(row)

    def verify_many(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        """One verify response per row, in order; an invalid row gets an error entry instead."""
        out: list[dict[str, Any]] = []
        for index, row in enumerate(rows):
            try:
                out.append(self.verify(row))
            except ClientError as exc:
                out.append({"error": exc.detail, "status": exc.status, "index": index})
        return out

    def metrics(self, rows: Sequence[Any]) -> dict[str, Any]:
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise ClientError(
                    422, [f"expected a JSON object, got {_kind(row)} @ $.verify_responses[{i}]"]
                )
        metrics = MetricsAccumulator(component_names=COMPONENTS)
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


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _needs_thread(row: Any, size: int) -> bool:
    if size > INLINE_MAX_BYTES:
        return True
    meta = row.get("template_metadata") if isinstance(row, dict) else None
    return isinstance(meta, dict) and bool(meta.get("output_regex"))


Handler = Callable[[Request], Awaitable[Response]]


def _guarded(handler: Handler) -> Handler:
    """Client errors become their 4xx reply; anything else is logged and becomes a 500."""

    @functools.wraps(handler)
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except ClientError as exc:
            return _error(exc.status, exc.detail)
        except ClientDisconnect:
            return _error(400, "the client disconnected before the body was read")
        except Exception:
            logger.exception("unexpected error on %s %s", request.method, request.url.path)
            return _error(500, "internal server error")

    return run


def create_app(
    *,
    mode: str | None = None,
    rules_dirs: Sequence[str | Path] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    regex_timeout: float = DEFAULT_TIMEOUT,
) -> Starlette:
    """The verify app. Rule files in ``rules_dirs`` are loaded now, once.

    ``mode`` overrides the rows' ``grading_mode``; an unknown one raises ``UnknownModeError``
    here, at start-up, not per request.
    """
    grader = Grader(default_registry(tuple(rules_dirs)), mode=mode, regex_timeout=regex_timeout)
    limit = max_body_bytes
    too_large = f"request body exceeds the limit of {limit} bytes"

    async def read_json(request: Request) -> tuple[Any, int]:
        length = request.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise ClientError(400, "invalid Content-Length header")
            if int(length) > limit:
                raise ClientError(413, too_large)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ClientError(413, too_large)
            chunks.append(chunk)
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if not body.strip():
            raise ClientError(400, "malformed JSON: the body is empty")
        try:
            return orjson.loads(body), size
        except orjson.JSONDecodeError as exc:
            raise ClientError(400, f"malformed JSON: {exc}") from None

    async def read_optional_json(request: Request) -> None:
        length = request.headers.get("content-length")
        if length == "0":
            return
        size = 0
        chunks: list[bytes] = []
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ClientError(413, too_large)
            chunks.append(chunk)
        body = b"".join(chunks)
        if body.strip():
            try:
                orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                raise ClientError(400, f"malformed JSON: {exc}") from None

    def listed(payload: Any, key: str) -> list[Any]:
        if isinstance(payload, list):
            return payload
        if isinstance(payload, dict) and isinstance(payload.get(key), list):
            return list(payload[key])
        if isinstance(payload, dict) and key in payload:
            raise ClientError(422, [f"expected an array, got {_kind(payload[key])} @ $.{key}"])
        raise ClientError(422, [f'expected {{"{key}": [...]}} or an array @ $.{key}'])

    async def verify(request: Request) -> Response:
        row, size = await read_json(request)
        if _needs_thread(row, size):
            result = await anyio.to_thread.run_sync(grader.verify, row)
        else:
            result = grader.verify(row)
        return _json(result)

    async def verify_batch(request: Request) -> Response:
        payload, _ = await read_json(request)
        rows = listed(payload, "requests")
        results = await anyio.to_thread.run_sync(grader.verify_many, rows)
        return _batch_json(results)

    async def metrics(request: Request) -> Response:
        payload, _ = await read_json(request)
        rows = listed(payload, "verify_responses")
        return _json(await anyio.to_thread.run_sync(grader.metrics, rows))

    async def empty(request: Request) -> Response:
        await read_optional_json(request)
        return _json({})

    async def reverify_mode(request: Request) -> Response:
        return _json("stateless")

    modes = grader.registry.names()

    async def health(request: Request) -> Response:
        return _json({"status": "ok", "modes": modes})

    routes = [
        Route("/verify", _guarded(verify), methods=["POST"]),
        Route("/verify_batch", _guarded(verify_batch), methods=["POST"]),
        Route("/aggregate_metrics", _guarded(metrics), methods=["POST"]),
        Route("/seed_session", _guarded(empty), methods=["POST"]),
        Route("/close_session", _guarded(empty), methods=["POST"]),
        Route("/reverify_mode", _guarded(reverify_mode), methods=["GET"]),
        Route("/health", _guarded(health), methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    app.state.grader = grader
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
    )
    # This process only serves: move everything loaded so far (modules, rule files, compiled
    # patterns) out of the collector's way, so full collections stay short under load.
    gc.collect()
    gc.freeze()
    return app
