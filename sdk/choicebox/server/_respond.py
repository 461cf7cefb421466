"""One grading request without HTTP: a body decoded, read, graded and encoded, every client
error as its 4xx reply, and no reply past its bound; what a grading process runs, and what the
event loop runs for a request it can bound (``INLINE_CHARS``).

Requests are read and graded by the batch engine's ``Grader``, so the server accepts exactly the
rows ``choicebox grade`` grades and gives the same verdicts. A verify request whose task data is
unusable is answered masked (``verify_row``), since Gym aborts a collection on a 4xx; a body
that is no verify request is a ``ClientError``. The detail of an error reply is bounded in size
whatever the request held (``bounded_detail``).
"""

from __future__ import annotations

import functools
import gc
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

import orjson

from choicebox._errors import MetricsError, WireFormatError
from choicebox._modes import ModeRegistry, default_registry
from choicebox._problems import Problem
from choicebox._reader import RowReading
from choicebox._regex import DEFAULT_TIMEOUT, MAX_PATTERNS_PER_ROW, too_many_patterns
from choicebox._rollout import response_text
from choicebox._wire import DEFAULT_GRADING_MODE
from choicebox.batch._engine import Grader
from choicebox.metrics import MetricsAccumulator
from choicebox.render import gym_verify_response, masked_response, output_row

from ._pool import Handler as PoolHandler
from ._pool import Lane
from ._protocol import request_problems

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "GRADING_ROUTES",
    "INLINE_CHARS",
    "INLINE_MAX_CHARS",
    "MAX_DETAIL_CHARS",
    "MAX_DETAIL_PROBLEMS",
    "MAX_OUTPUT_REGEXES",
    "REPLY_FACTOR",
    "ClientError",
    "NotInline",
    "Verifier",
    "VerifyJob",
    "bounded_detail",
    "decode",
    "dumps",
    "error_body",
    "listed",
    "respond",
    "verify_row",
    "worker_handler",
]

logger = logging.getLogger("choicebox.server")

DEFAULT_MAX_BODY_BYTES: Final = 16 * 2**20
# A reply may be this many times the body limit (``max_reply_bytes`` unless given): a verify
# reply echoes its request, with about 1 KB of verdict.
REPLY_FACTOR: Final = 2
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
MAX_DETAIL_CHARS: Final = 1000  # an error reply's message is cut to about this many characters
MAX_DETAIL_PROBLEMS: Final = 50  # and lists at most this many problems
MAX_OUTPUT_REGEXES: Final = MAX_PATTERNS_PER_ROW  # the library-wide cap: 422 here, not skipped
TASK_KEY_FIELD: Final = "uuid"
# The routes whose work is grading (or metrics over many rows), done by ``respond``.
GRADING_ROUTES: Final = ("verify", "verify_batch", "aggregate_metrics")


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


def dumps(content: Any) -> bytes:
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


def error_body(detail: str | list[str]) -> bytes:
    return dumps({"detail": bounded_detail(detail)})


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

    def warm(self) -> None:
        """Build every mode now: a mode is built on first use, ``robust`` in about 150 ms, which
        the first request in it would otherwise spend on the event loop."""
        for name in self.registry.names():
            self.registry.get(name)

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
        too_many = too_many_patterns(reading.output_regex)
        if too_many is not None:
            raise _row_error([Problem("wrong_value", too_many, "$.template_metadata.output_regex")])
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
            part = dumps(item)
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
        payload = decode(body)
        if route == "verify":
            reply = dumps(verify_row(verifier, payload, inline=inline))
        elif route == "verify_batch":
            reply = _batch_reply(verifier, listed(payload, "requests"), max_reply)
        elif route == "aggregate_metrics":
            reply = dumps(verifier.metrics(listed(payload, "verify_responses")))
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
        return exc.status, error_body(exc.detail)
    except (NotInline, MemoryError):
        raise  # a grading process that runs out of memory is replaced (``_pool``)
    except Exception as exc:
        if _out_of_memory(exc):
            raise MemoryError from exc
        logger.exception("unexpected error on POST /%s", route)
        return 500, error_body("internal server error")


def decode(body: bytes) -> Any:
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


def listed(payload: Any, key: str) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get(key), list):
        return list(payload[key])
    if isinstance(payload, dict) and key in payload:
        raise ClientError(422, [f"expected an array, got {_kind(payload[key])} @ $.{key}"])
    raise ClientError(422, [f'expected {{"{key}": [...]}} or an array @ $.{key}'])


def worker_handler(
    mode: str | None, rules_dirs: tuple[str, ...], regex_timeout: float, max_reply: int
) -> PoolHandler:
    """A grading worker's handler: its own ``Verifier``, built once in the worker process."""
    verifier = Verifier(default_registry(rules_dirs), mode=mode, regex_timeout=regex_timeout)
    verifier.warm()
    gc.collect()
    gc.freeze()  # as in app_from_env: what is loaded now stays out of the collector's way
    return functools.partial(respond, verifier, max_reply=max_reply)
