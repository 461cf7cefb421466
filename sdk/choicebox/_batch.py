"""Grading whole JSONL files: the engine under ``choicebox grade``, usable without argparse.

The file is streamed in spans of whole lines (about a megabyte each). Each span is decoded,
graded and encoded, in this process or in a pool of workers, and the encoded rows are appended
in input order to ``OUTPUT.partial``, which is renamed to ``OUTPUT`` once complete. A worker
reads its span from the input and writes its rows to a scratch file that the parent appends in
the kernel (``sendfile``): multiprocessing moves large messages slowly, so only the small
per-row metric records travel through its pipes. What is kept is per-task rewards (for pass@k)
and per-category tallies, never the rows, so memory stays flat however large the input is.

Every non-blank input line becomes exactly one output line: a graded row (NeMo Gym's
verify-response shape) or an error row ``{"error": "line N: ...", "uuid": ..., "line": N}``.
That one-to-one mapping is what makes ``resume`` exact: the complete lines already in
``OUTPUT.partial`` say how many input rows to skip.
"""

from __future__ import annotations

import functools
import hashlib
import math
import multiprocessing
import os
import re
import shutil
import signal
import threading
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import IO, Any, Final, NamedTuple, Protocol

import attrs
import numpy as np
import orjson

from ._errors import ChoiceboxError, UnknownModeError, WireFormatError
from ._fastpath import grade_row_fast
from ._grading import Verdict, grade
from ._metrics import (
    _MISSING,
    MISSING_CATEGORY,
    TASK_INDEX_KEY,
    CategoryStats,
    FailureAccumulator,
    MetricsAccumulator,
    _lookup,
    bootstrap_ci,
)
from ._modes import COMPONENTS, GradingMode, default_registry
from ._rollout import response_text
from ._wire import decode_mcqa, question_from_prompt

__all__ = [
    "AGGREGATE_SUFFIX",
    "CHUNK_BYTES",
    "FAILURES_SUFFIX",
    "BatchError",
    "BatchMetrics",
    "BatchResult",
    "Grader",
    "Progress",
    "RowRecord",
    "default_output",
    "grade_file",
    "options_from_prompt",
    "partial_path",
    "sidecar_paths",
]

# Input is graded in spans of about this many bytes (whole lines): a few hundred Gym rollouts.
CHUNK_BYTES: Final = 1 << 20
AGGREGATE_SUFFIX: Final = "_aggregate_metrics.json"
FAILURES_SUFFIX: Final = "_failure_analysis.json"
PREVIEW_CHARS: Final = 200
# Chunks handed to the pool but not yet written, per worker: enough to keep every worker busy,
# few enough that a fast reader never buffers the file in memory.
_IN_FLIGHT_PER_WORKER: Final = 4


class BatchError(ChoiceboxError, ValueError):
    """The run cannot start or continue: a missing input, a ``.partial`` that does not fit it."""


# --- options from the prompt ------------------------------------------------------------------

# One lettered option per line: `A: text`, `A) text`, `(A) text` or `A. text` (a period needs a
# space after it, so `A.B.` or `U.S.` never reads as an option). Matched line by line: a
# MULTILINE scan of the whole prompt costs four times as much on Gym's long one-line questions.
_OPTION_LINE: Final = re.compile(
    r"[ \t]*(?:\((?P<paren>[A-Z])\)|(?P<letter>[A-Z])(?P<sep>[:)])|(?P<dot>[A-Z])\.(?=[ \t]))"
    r"[ \t]*(?P<text>.*\S)"
)


def options_from_prompt(text: str) -> list[tuple[str, str]]:
    """The lettered options listed in ``text``: the last run of lines ``A``, ``B``, ``C``...

    A run starts at a line lettered ``A`` and continues while the next lettered line, in the same
    style, has the next letter; other lines in between (blank lines, wrapped text) are passed
    over. Fewer than two options is no list: ``[]``.
    """
    return list(_options_from_prompt(text))


# Rollout files hold several rollouts of each prompt, usually next to each other.
@functools.lru_cache(maxsize=256)
def _options_from_prompt(text: str) -> tuple[tuple[str, str], ...]:
    best: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    style = ""
    match_line = _OPTION_LINE.match
    for line in text.split("\n"):
        match = match_line(line)
        if match is None:
            continue
        if match["paren"]:
            letter, this_style = match["paren"], "()"
        elif match["letter"]:
            letter, this_style = match["letter"], match["sep"]
        else:
            letter, this_style = match["dot"], "."
        if run and this_style == style and ord(letter) == ord(run[-1][0]) + 1:
            run.append((letter, match["text"]))
            continue
        if len(run) >= 2:
            best = run
        if letter == "A":
            run, style = [(letter, match["text"])], this_style
        else:
            run, style = [], ""
    return tuple(run if len(run) >= 2 else best)


# --- per-row records: what the metrics need of a graded row -----------------------------------


class RowRecord(NamedTuple):
    """What the metrics keep of one output row; small, so workers can send it back cheaply."""

    error: str | None
    uuid: str | None
    task: int | str | None
    reward: float
    extracted: str | None
    components: tuple[float | None, ...]
    failure: str | None
    preview: str
    categories: tuple[str, ...]


def _task_key(row: Mapping[str, Any]) -> int | str | None:
    """``_ng_task_index``, else ``uuid``, else a digest of the prompt text (kept short)."""
    index = row.get(TASK_INDEX_KEY)
    if isinstance(index, int) and not isinstance(index, bool):
        return index
    uuid = row.get("uuid")
    if uuid is not None:
        return f"uuid:{uuid}"
    prompt = question_from_prompt(row.get("responses_create_params"))
    if prompt is None:
        question = row.get("question")
        prompt = question if isinstance(question, str) else None
    if prompt is None:
        return None
    return (
        "prompt:" + hashlib.blake2b(prompt.encode("utf-8", "replace"), digest_size=16).hexdigest()
    )


def _category(row: Mapping[str, Any], field: str) -> str:
    value = _lookup(row, field)
    return MISSING_CATEGORY if value is _MISSING or value is None else str(value)


def _float(value: object) -> float | None:
    if type(value) is float:
        return value
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


def record_of(row: Mapping[str, Any], by: Sequence[str]) -> RowRecord:
    """The record of an output row, as written (a graded row or an error row)."""
    uuid = row.get("uuid")
    uuid_text = None if uuid is None else str(uuid)
    error = row.get("error")
    if error is not None:
        preview = str(error)[:PREVIEW_CHARS]
        return RowRecord(str(error), uuid_text, None, 0.0, None, (), None, preview, ())
    reward = _float(row.get("reward"))
    if reward is None or math.isnan(reward):
        raise BatchError(f"graded row has no numeric reward: {str(row)[:200]}")
    extracted = row.get("extracted_answer")
    failure = row.get("failure_kind")
    preview = ""
    if reward < 1.0:
        try:
            preview = response_text(row.get("response", ""))[:PREVIEW_CHARS]
        except WireFormatError:
            preview = ""
    return RowRecord(
        None,
        uuid_text,
        _task_key(row),
        reward,
        None if extracted is None else str(extracted),
        tuple([_float(row.get(name)) for name in COMPONENTS]),
        None if failure is None else str(failure),
        preview,
        tuple(_category(row, field) for field in by),
    )


# --- grading rows ---------------------------------------------------------------------------


class Chunk(NamedTuple):
    """A span of whole lines of the input.

    ``data`` holds its bytes, or is ``b""`` when a worker reads them itself from ``offset``;
    ``first_line`` is the 1-based number of its first line.
    """

    seq: int
    data: bytes
    offset: int
    nbytes: int
    first_line: int


class ChunkResult(NamedTuple):
    """A graded chunk: its output lines (newline-terminated), or the file holding them, and records."""

    data: bytes
    path: str | None
    records: list[RowRecord]
    nbytes: int


_ABSENT: Final = object()


class _NoResponse(Exception):
    """The row has nothing to grade."""


class Grader:
    """Decodes, grades and encodes raw JSONL lines with one registry (one per worker process).

    ``lean`` (the default) grades well-formed rows without building an ``MCQASample``, which
    costs as much as grading itself; ``lean=False`` decodes every row (the tests compare both).
    """

    def __init__(
        self,
        *,
        mode: str | None = None,
        rules_dirs: Sequence[str] = (),
        by: Sequence[str] = (),
        lean: bool = True,
    ) -> None:
        self._registry = default_registry(tuple(rules_dirs))
        self._override: GradingMode | None = self._registry.get(mode) if mode else None
        self._modes: dict[str, GradingMode] = {}
        self._by = tuple(by)
        self._lean_path = lean

    def _mode(self, name: str) -> GradingMode:
        mode = self._modes.get(name)
        if mode is None:
            mode = self._modes[name] = self._registry.get(name)
        return mode

    def grade_row(self, line: int, raw: bytes) -> dict[str, Any]:
        """The output row for one input line: graded, or an error row naming the line."""
        row, verdict, error = self._grade(line, raw)
        if error is not None:
            return error
        assert row is not None
        assert verdict is not None
        return _output_row(row, verdict)

    def _grade(
        self, line: int, raw: bytes
    ) -> tuple[dict[str, Any] | None, Verdict | None, dict[str, Any] | None]:
        """(row, verdict, None) for a graded line, or (None, None, error row)."""
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            error = {"error": f"line {line}: invalid JSON: {exc}", "line": line, "raw": text}
            return None, None, error
        if not isinstance(row, dict):
            problem = f"expected a JSON object, got {type(row).__name__} @ $"
            return None, None, _error_row(line, problem, None)
        uuid = row.get("uuid")
        try:
            verdict = self._lean(row) if self._lean_path else None
            if verdict is None:
                verdict = self._full(row)
        except _NoResponse:
            return None, None, _error_row(line, "no response to grade @ $.response", uuid)
        except WireFormatError as exc:
            return None, None, _error_row(line, "; ".join(exc.problems), uuid)
        except UnknownModeError as exc:
            return None, None, _error_row(line, f"{exc} @ $.grading_mode", uuid)
        except Exception as exc:  # a bug must not sink a million-row run; the row says what
            problem = f"internal error: {type(exc).__name__}: {exc}"
            return None, None, _error_row(line, problem, uuid)
        return row, verdict, None

    def _full(self, row: dict[str, Any]) -> Verdict:
        """Decode the row into a sample (every problem reported) and grade it."""

        def fallback(question: str) -> list[tuple[str, str]]:
            found = options_from_prompt(question)
            if not found:  # a `question` field without the options: look at the prompt too
                prompt = question_from_prompt(row.get("responses_create_params"))
                if prompt is not None and prompt != question:
                    found = options_from_prompt(prompt)
            return found

        sample = decode_mcqa(row, options_fallback=fallback)
        response = row.get("response")
        if response is None:
            raise _NoResponse
        return grade(sample, response, mode=self._override or self._mode(sample.grading_mode))

    def _lean(self, row: dict[str, Any]) -> Verdict | None:
        """Grade a well-formed row without building a sample; ``None`` if it needs ``_full``."""
        return grade_row_fast(row, self._mode_for, options_from_prompt=self._prompt_options)

    def _mode_for(self, name: str) -> GradingMode:
        return self._override or self._mode(name)

    @staticmethod
    def _prompt_options(row: dict[str, Any], question: str) -> Sequence[tuple[str, str]]:
        found = _options_from_prompt(question)
        if not found and "question" in row:  # a `question` field without the options
            prompt = question_from_prompt(row.get("responses_create_params"))
            if prompt is not None and prompt != question:
                found = _options_from_prompt(prompt)
        return found

    def grade_lines(self, lines: Iterable[tuple[int, bytes]]) -> tuple[bytes, list[RowRecord]]:
        """The output lines (each newline-terminated) for numbered input lines, and their records."""
        parts: list[bytes] = []
        records: list[RowRecord] = []
        by = self._by
        for line, raw in lines:
            row, verdict, out = self._grade(line, raw)
            if out is None:
                assert row is not None
                assert verdict is not None
                spliced = _spliced(raw, row, verdict)
                if spliced is not None:
                    parts.append(spliced)
                    records.append(_record(row, verdict, by))
                    continue
                out = _output_row(row, verdict)
            try:
                encoded = orjson.dumps(out)
            except (orjson.JSONEncodeError, TypeError) as exc:
                out = _error_row(line, f"cannot encode the graded row: {exc}", out.get("uuid"))
                encoded = orjson.dumps(out)
            parts.append(encoded)
            records.append(record_of(out, by))
        parts.append(b"")
        return b"\n".join(parts), records


def _output_row(row: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    out = verdict.to_wire(row)
    if "options" not in row:
        out["options_source"] = "prompt"
    else:
        out.pop("options_source", None)
    return out


def _spliced(raw: bytes, row: dict[str, Any], verdict: Verdict) -> bytes | None:
    """The output line as the input's own bytes with the verdict's fields appended.

    Re-encoding a 5 KB rollout costs more than grading it. The output row is the input row with
    the verdict's fields set: fields the row lacks go at its end, and fields it already has with
    the same value (a data row's ``expected_answer`` and ``grading_mode``) stay where they are,
    so the input's bytes can be kept. ``None`` when that does not hold (a re-graded row with a
    different verdict, or a line that does not end with its object).
    """
    if "options_source" in row and "options" in row:
        return None  # the output drops it: a key removed is no append
    fields = verdict.wire_fields()
    if "options" not in row:
        fields["options_source"] = "prompt"
    for key in fields.keys() & row.keys():
        value = row[key]
        if type(value) is not type(fields[key]) or value != fields[key]:
            return None
        del fields[key]
    body = raw.rstrip()
    if not body.endswith(b"}"):
        return None
    if not fields:
        return body
    return body[:-1] + (b"," if row else b"") + orjson.dumps(fields)[1:]


def _record(row: Mapping[str, Any], verdict: Verdict, by: Sequence[str]) -> RowRecord:
    """``record_of`` for a graded row, read from its verdict instead of the output dict."""
    uuid = row.get("uuid")
    preview = ""
    if verdict.reward < 1.0:
        try:
            preview = response_text(row.get("response", ""))[:PREVIEW_CHARS]
        except WireFormatError:
            preview = ""
    components = verdict.reward_components
    return RowRecord(
        None,
        None if uuid is None else str(uuid),
        _task_key(row),
        verdict.reward,
        verdict.extracted_answer,
        tuple([components.get(name) for name in COMPONENTS]),
        verdict.failure,
        preview,
        tuple(_category(row, field) for field in by),
    )


def _error_row(line: int, problem: str, uuid: object) -> dict[str, Any]:
    row: dict[str, Any] = {"error": f"line {line}: {problem}"}
    if uuid is not None:
        row["uuid"] = uuid
    row["line"] = line
    return row


def _numbered_lines(span: bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of ``span`` with their numbers (the span starts at ``first_line``)."""
    for number, raw in enumerate(span.split(b"\n"), start=first_line):
        if raw.strip():
            yield number, raw


class _Worker:
    """A pool worker's state: its grader, the input file and the folder for its output."""

    def __init__(self, grader: Grader, source: str, scratch: str) -> None:
        self.grader = grader
        self.fd = os.open(source, os.O_RDONLY)
        self.scratch = scratch

    def grade(self, chunk: Chunk) -> ChunkResult:
        # Bulk bytes never cross the pipes (multiprocessing moves large messages slowly):
        # the worker reads its span of the input and writes its output to a file.
        span = chunk.data or os.pread(self.fd, chunk.nbytes, chunk.offset)
        data, records = self.grader.grade_lines(_numbered_lines(span, chunk.first_line))
        path = os.path.join(self.scratch, f"{chunk.seq:012d}")
        with open(path, "wb") as handle:
            handle.write(data)
        return ChunkResult(b"", path, records, chunk.nbytes)


# One per worker process, built once by the pool initializer.
_WORKER: _Worker | None = None


def _init_worker(
    mode: str | None, rules_dirs: tuple[str, ...], by: tuple[str, ...], source: str, scratch: str
) -> None:
    global _WORKER  # noqa: PLW0603  # the pool's only way to hand state to its workers
    # Ctrl-C goes to the whole process group: the parent handles it, workers just stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = _Worker(Grader(mode=mode, rules_dirs=rules_dirs, by=by), source, scratch)


def _work(chunk: Chunk) -> ChunkResult:
    assert _WORKER is not None, "worker used without _init_worker"
    return _WORKER.grade(chunk)


# --- metrics ----------------------------------------------------------------------------------


def _ci_of(values: Counter[float]) -> dict[str, Any]:
    keys = list(values)
    scores = np.repeat(np.asarray(keys, dtype=np.float64), [values[k] for k in keys])
    return attrs.asdict(bootstrap_ci(scores))


class BatchMetrics:
    """Streams row records into the run's metrics; memory grows with tasks and categories only."""

    def __init__(self, by: Sequence[str] = ()) -> None:
        self.by = tuple(by)
        self.rows = 0
        self.errors = 0
        self.no_answer = 0
        # The component means are tallied here rather than by the accumulator: a Counter per
        # component is cheaper per row than its exact running sums, and as exact (see aggregate).
        self._acc = MetricsAccumulator(include_groups=False)
        self._components: list[Counter[float]] = [Counter() for _ in COMPONENTS]
        self._failures = FailureAccumulator(max_exemplars=3)
        self._rewards: Counter[float] = Counter()
        self._categories: list[dict[str, Counter[float]]] = [{} for _ in self.by]

    @property
    def graded(self) -> int:
        return self.rows - self.errors

    def add(self, record: RowRecord) -> None:
        index = self.rows
        self.rows += 1
        if record.error is not None:
            self.errors += 1
            self._failures.add(
                {"error": record.error, "uuid": record.uuid, "response_preview": record.preview},
                index,
            )
            return
        reward = record.reward
        row: dict[str, Any] = {"reward": reward, "extracted_answer": record.extracted}
        task = record.task
        if isinstance(task, int):
            row[TASK_INDEX_KEY] = task
            self._acc.add(row)
        else:
            self._acc.add(row, task_key="" if task is None else task)
            task = index
        for counts, value in zip(self._components, record.components, strict=False):
            if value is not None:
                counts[value] += 1
        if reward < 1.0 or record.failure is not None:
            row["failure"] = record.failure
            row["uuid"] = record.uuid
            row["response_preview"] = record.preview
        self._failures.add(row, task)
        self._rewards[reward] += 1
        if record.extracted is None:
            self.no_answer += 1
        for tally, category in zip(self._categories, record.categories, strict=True):
            per_category = tally.get(category)
            if per_category is None:
                per_category = tally[category] = Counter()
            per_category[reward] += 1

    def _agent_metrics(self, agent: Mapping[str, Any]) -> dict[str, Any]:
        """``agent`` with ``mean/<component>`` after ``mean/reward``, as NeMo Gym orders them."""
        out = {"mean/reward": agent["mean/reward"]}
        for name, counts in zip(COMPONENTS, self._components, strict=True):
            n = counts.total()
            if n:
                # The exact sum, rounded once, then divided: what math.fsum(values) / n gives.
                exact = sum(
                    (Fraction(value) * count for value, count in counts.items()), Fraction()
                )
                out[f"mean/{name}"] = float(exact) / n
        out.update((key, value) for key, value in agent.items() if key not in out)
        return out

    def categories(self) -> dict[str, list[dict[str, Any]]]:
        """Per ``--by`` field, mean reward and its 95% interval per category, sorted by name."""
        out: dict[str, list[dict[str, Any]]] = {}
        for field, tally in zip(self.by, self._categories, strict=True):
            stats = []
            for category in sorted(tally):
                ci = _ci_of(tally[category])
                stats.append(
                    attrs.asdict(
                        CategoryStats(
                            category=category,
                            n_samples=tally[category].total(),
                            mean_reward=ci["value"],
                            ci_lower=ci["ci_lower"],
                            ci_upper=ci["ci_upper"],
                        )
                    )
                )
            out[field] = stats
        return out

    def aggregate(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        """The ``_aggregate_metrics.json`` document."""
        result = self._acc.result()
        return {
            "agent_metrics": self._agent_metrics(result["agent_metrics"]) if self.graded else {},
            "key_metrics": result["key_metrics"],
            "accuracy_ci": _ci_of(self._rewards) if self._rewards else None,
            "categories": self.categories(),
            "summary": {
                **summary,
                "rows": self.rows,
                "graded": self.graded,
                "errors": self.errors,
                "no_answer_rate": self.no_answer / self.graded if self.graded else None,
            },
        }

    def failure_analysis(self) -> dict[str, Any]:
        return self._failures.result()


# --- files ------------------------------------------------------------------------------------


def default_output(input_path: str | Path) -> Path:
    """``<INPUT stem>_graded.jsonl`` beside the input."""
    path = Path(input_path)
    return path.with_name(f"{path.stem}_graded.jsonl")


def partial_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".partial")


def sidecar_paths(output: str | Path) -> tuple[Path, Path]:
    """``<OUTPUT stem>_aggregate_metrics.json`` and ``<OUTPUT stem>_failure_analysis.json``."""
    output = Path(output)
    return (
        output.with_name(output.stem + AGGREGATE_SUFFIX),
        output.with_name(output.stem + FAILURES_SUFFIX),
    )


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    os.replace(tmp, path)


def _read_partial(path: Path, metrics: BatchMetrics) -> int:
    """Count the complete rows of ``path``, feed them to ``metrics``, cut off a torn tail.

    A row is complete when its line ends in a newline and holds a JSON object; the first line
    that is not (a write cut short by a kill) and everything after it is truncated, to be redone.
    """
    count = 0
    good = 0
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError:
                break
            if not isinstance(row, dict):
                break
            metrics.add(record_of(row, metrics.by))
            count += 1
            good += len(raw)
    if good != path.stat().st_size:
        os.truncate(path, good)
    return count


def _skip_rows(handle: IO[bytes], rows: int) -> tuple[int, int]:
    """Read past ``rows`` non-blank lines; the bytes and the lines (blank ones too) passed."""
    skipped_bytes = lines = 0
    remaining = rows
    while remaining:
        raw = handle.readline()
        if not raw:
            raise BatchError(
                f"the .partial file holds more rows than the input has ({rows}); "
                "it belongs to another input: delete it or run without --resume"
            )
        lines += 1
        skipped_bytes += len(raw)
        if raw.strip():
            remaining -= 1
    return skipped_bytes, lines


def _chunks(
    handle: IO[bytes], *, offset: int, first_line: int, size: int, keep_data: bool
) -> Iterator[Chunk]:
    """The rest of ``handle`` in spans of about ``size`` bytes, each ending at a line end."""
    index = 0
    while True:
        data = handle.read(size)
        if not data:
            return
        if not data.endswith(b"\n"):
            data += handle.readline()  # finish the line the block cut through
        yield Chunk(index, data if keep_data else b"", offset, len(data), first_line)
        index += 1
        offset += len(data)
        first_line += data.count(b"\n")


class Progress(Protocol):
    """What ``grade_file`` reports to: started once, updated per chunk, closed at the end."""

    def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None: ...

    def update(self, rows: int, nbytes: int) -> None: ...

    def close(self) -> None: ...


@attrs.frozen(kw_only=True)
class BatchResult:
    """What a finished run wrote and counted."""

    output: Path
    aggregate_path: Path
    failures_path: Path
    rows: int
    errors: int
    resumed_rows: int
    aggregate: Mapping[str, Any]
    failure_analysis: Mapping[str, Any]


class _Throttle:
    """Bounds the chunks a pool's feeder thread may take ahead of the writer (imap reads eagerly)."""

    def __init__(self, limit: int) -> None:
        self._slots = threading.Semaphore(limit)
        self._stop = threading.Event()

    def feed(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        for chunk in chunks:
            while not self._slots.acquire(timeout=0.1):
                if self._stop.is_set():
                    return
            yield chunk

    def done_one(self) -> None:
        self._slots.release()

    def stop(self) -> None:
        self._stop.set()


def _graded_chunks(
    source: Path,
    chunks: Iterator[Chunk],
    *,
    workers: int,
    scratch: Path,
    mode: str | None,
    rules_dirs: tuple[str, ...],
    by: tuple[str, ...],
) -> Generator[ChunkResult, None, None]:
    if workers <= 1:
        grader = Grader(mode=mode, rules_dirs=rules_dirs, by=by)
        for chunk in chunks:
            data, records = grader.grade_lines(_numbered_lines(chunk.data, chunk.first_line))
            yield ChunkResult(data, None, records, chunk.nbytes)
        return
    throttle = _Throttle(workers * _IN_FLIGHT_PER_WORKER)
    scratch.mkdir()
    # forkserver, not fork: a process that already runs threads (a Ray driver, a web server, a
    # notebook) must not be forked mid-lock; workers start from a clean single-threaded server.
    pool = multiprocessing.get_context("forkserver").Pool(
        workers,
        initializer=_init_worker,
        initargs=(mode, rules_dirs, by, str(source), str(scratch)),
    )
    try:
        for result in pool.imap(_work, throttle.feed(chunks)):
            throttle.done_one()
            yield result
        pool.close()
    finally:
        throttle.stop()
        pool.terminate()
        pool.join()
        shutil.rmtree(scratch, ignore_errors=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _append_file(fd: int, path: str) -> None:
    """Append the file at ``path`` to ``fd`` (in the kernel where it can), then delete it."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        sent = 0
        try:
            while sent < size:
                done = os.sendfile(fd, handle.fileno(), sent, size - sent)
                if done == 0:
                    break
                sent += done
        except OSError:
            pass  # no sendfile for these files: copy the rest through user space
        if sent < size:
            handle.seek(sent)
            while block := handle.read(1 << 20):
                _write_all(fd, block)
    os.unlink(path)


def grade_file(
    input_path: str | Path,
    output_path: str | Path | None = None,
    *,
    mode: str | None = None,
    rules_dirs: Sequence[str | Path] = (),
    workers: int | None = None,
    by: Sequence[str] = (),
    resume: bool = False,
    summary: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> BatchResult:
    """Grade every row of ``input_path`` into ``output_path`` and write the metrics beside it.

    Raises ``BatchError`` when the input is missing or a ``.partial`` does not fit it,
    ``UnknownModeError`` for an unknown ``mode`` and ``RuleFileError`` for a bad rule file;
    row problems never raise, they become error rows. On ``KeyboardInterrupt`` the ``.partial``
    file keeps every row written so far, for ``resume``.
    """
    source = Path(input_path)
    if not source.is_file():
        raise BatchError(f"no such input file: {source}")
    output = Path(output_path) if output_path is not None else default_output(source)
    partial = partial_path(output)
    dirs = tuple(str(d) for d in rules_dirs)
    by = tuple(by)
    # Fail fast on a bad --mode or rule file, and build the registry once before forking.
    registry = default_registry(dirs)
    if mode:
        registry.get(mode)
    if workers is None:
        workers = os.cpu_count() or 1

    metrics = BatchMetrics(by)
    resumed = 0
    if resume and partial.exists():
        resumed = _read_partial(partial, metrics)
    total_bytes = source.stat().st_size
    scratch = output.with_name(f".{output.name}.chunks")
    shutil.rmtree(scratch, ignore_errors=True)  # left by a run that was killed
    with open(source, "rb") as handle:
        skipped_bytes, skipped_lines = _skip_rows(handle, resumed)
        chunks = _chunks(
            handle,
            offset=skipped_bytes,
            first_line=skipped_lines + 1,
            size=chunk_bytes,
            keep_data=workers <= 1,
        )
        results = _graded_chunks(
            source, chunks, workers=workers, scratch=scratch, mode=mode, rules_dirs=dirs, by=by
        )
        if progress is not None:
            progress.start(total_bytes, skipped_bytes, resumed)
        try:
            # Unbuffered: each chunk is one write (or one in-kernel copy), whole lines only, so
            # a kill leaves at most one torn line for resume to cut off.
            # No O_APPEND on resume: sendfile refuses such files; seek to the end instead.
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | (0 if resumed else os.O_TRUNC), 0o666)
            try:
                os.lseek(fd, 0, os.SEEK_END)
                for result in results:
                    if result.path is not None:
                        _append_file(fd, result.path)
                    else:
                        _write_all(fd, result.data)
                    for record in result.records:
                        metrics.add(record)
                    if progress is not None:
                        progress.update(len(result.records), result.nbytes)
                os.fsync(fd)
            finally:
                os.close(fd)
        finally:
            results.close()  # stops the pool now, not when the traceback is collected
            if progress is not None:
                progress.close()

    info = {"input": str(source), "output": str(output), "mode": mode, **(summary or {})}
    return finish(metrics, info, partial, output, resumed)


def finish(
    metrics: BatchMetrics, info: Mapping[str, Any], partial: Path, output: Path, resumed: int
) -> BatchResult:
    """Write the metrics files, then move the complete ``.partial`` output into place."""
    aggregate = metrics.aggregate(info)
    failures = metrics.failure_analysis()
    aggregate_path, failures_path = sidecar_paths(output)
    _write_json(aggregate_path, aggregate)
    _write_json(failures_path, failures)
    os.replace(partial, output)  # last: OUTPUT exists only once everything is written
    return BatchResult(
        output=output,
        aggregate_path=aggregate_path,
        failures_path=failures_path,
        rows=metrics.rows,
        errors=metrics.errors,
        resumed_rows=resumed,
        aggregate=aggregate,
        failure_analysis=failures,
    )
