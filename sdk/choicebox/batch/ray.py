"""Grading with Ray Data: ``pip install 'choicebox[ray]'``, and ``choicebox grade --engine ray``.

The grading itself is ``choicebox.batch.Grader.grade_lines``, the local engine's: this module
only moves lines in and out of Ray, so every output row is the one the local engine writes.
``grade_file_ray`` is ``choicebox.batch``'s one file pipeline (the ``.partial`` file, resume,
the metrics files) with ``RayRunner`` in place of the local runner.

``grade_dataset`` accepts a dataset in one of two shapes:

* **lines** (recommended): a column ``text`` holding one raw JSONL line per row (``str`` or
  ``bytes``) and, optionally, a column ``line`` with its 1-based line number, which error rows
  name (``0`` when there is none). Blank lines are skipped, as the local engine skips them.
  ``read_lines(path)`` builds this shape from a file with exact line numbers and bytes. Any
  nested JSON survives, because Ray never looks inside a line. (``ray.data.read_text`` works
  too, but it has no line numbers, drops blank lines and splits lines at ``\\r``, U+2028 and
  other characters that JSON strings may hold raw: prefer ``read_lines``.)
* **dict rows**: a dataset without a ``text`` column; each row is encoded to JSON and graded.
  Rows are graded as Arrow holds them (Arrow fills the keys a struct lacks in some rows with
  ``null``), so this shape is exact only for rows of one schema; error rows name line ``0``.

Either way the result has one row per graded input row, with the columns ``line`` (``int64``),
``text`` (the output JSON line, without its newline) and ``record`` (the pickled
``RowRecord`` tuple that ``choicebox.metrics.MetricsAccumulator.add_record`` counts). Set
``DataContext.get_current().execution_options.preserve_order = True`` to get rows in input
order; ``grade_file_ray`` does.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import attrs
import orjson

from choicebox._errors import BatchError
from choicebox._modes import default_registry
from choicebox.batch._engine import Grader
from choicebox.batch._files import Span, input_problem, input_spans
from choicebox.batch._pipeline import (
    CHUNK_BYTES,
    BatchResult,
    Graded,
    Job,
    Progress,
    grade_with,
)
from choicebox.metrics import RowRecord

if TYPE_CHECKING:
    import ray.data


# A pyarrow.Table: pyarrow has no type stubs, so it is imported at run time only (`_pyarrow`).
_Table: TypeAlias = Any

LINE: Final = "line"
TEXT: Final = "text"
RECORD: Final = "record"
# Rows per batch handed to a grader actor: a few hundred rollouts, about CHUNK_BYTES of input.
BATCH_ROWS: Final = 256
# At most this many blocks of spans: enough to read a large file in parallel.
_MAX_SPAN_BLOCKS: Final = 256
# Loggers grade_file_ray quiets while it runs, and the lowest level they still show.
_QUIET_LOGGERS: Final = {"ray.data": logging.WARNING, "ray.data._internal.progress": logging.ERROR}


def _pyarrow() -> Any:
    import pyarrow  # noqa: PLC0415  the optional ray extra installs it

    return pyarrow


def _encode_default(value: object) -> Any:
    """JSON for the values Arrow hands back that orjson does not know (``Decimal``, ``bytes``)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _to_arrow(batch: Any) -> _Table:
    pa = _pyarrow()
    if isinstance(batch, pa.Table):
        return batch
    if isinstance(batch, Mapping):  # batch_format="numpy": a dict of column arrays
        return pa.table({name: pa.array(list(column)) for name, column in batch.items()})
    return pa.Table.from_pandas(batch, preserve_index=False)  # batch_format="pandas"


def record_from_bytes(data: bytes) -> RowRecord:
    """The ``RowRecord`` of a ``record`` cell of ``grade_dataset``'s result."""
    return RowRecord(*pickle.loads(data))


class RayGrader:
    """A ``Dataset.map_batches`` UDF: one ``Grader`` (and rule registry) per Ray actor.

    ``ds.map_batches(RayGrader, fn_constructor_kwargs={"mode": ..., "rules_dirs": [...]},
    batch_format="pyarrow")`` grades a dataset of either shape in the module docstring; pyarrow,
    pandas and numpy batches are accepted, and a pyarrow table is returned. It pickles as its
    constructor arguments, so each process that unpickles it builds its own registry.
    """

    def __init__(
        self,
        *,
        mode: str | None = None,
        rules_dirs: Sequence[str | Path] = (),
        by: Sequence[str] = (),
    ) -> None:
        self._mode = mode
        self._rules_dirs = tuple(str(d) for d in rules_dirs)
        self._by = tuple(by)
        self._grader = Grader(mode=mode, rules_dirs=self._rules_dirs, by=self._by)

    def __getstate__(self) -> dict[str, Any]:
        return {"mode": self._mode, "rules_dirs": self._rules_dirs, "by": self._by}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]  # rebuild the registry in this process

    def numbered_lines(self, table: _Table) -> list[tuple[int, bytes]]:
        """The non-blank rows of ``table`` as ``(line number, raw JSON line)``."""
        names = table.column_names
        if TEXT in names:
            texts = table.column(TEXT).to_pylist()
            numbers = table.column(LINE).to_pylist() if LINE in names else [0] * len(texts)
            out = []
            for number, text in zip(numbers, texts, strict=True):
                if text is None:
                    continue
                raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
                if raw.strip():
                    out.append((int(number or 0), raw))
            return out
        return [
            (0, orjson.dumps(row, default=_encode_default, option=orjson.OPT_SERIALIZE_NUMPY))
            for row in table.to_pylist()
        ]

    def __call__(self, batch: Any) -> _Table:
        pa = _pyarrow()
        numbered = self.numbered_lines(_to_arrow(batch))
        data, records = self._grader.grade_lines(numbered)
        lines = data.split(b"\n")[:-1]  # output rows never hold a raw newline
        if len(lines) != len(numbered) or len(records) != len(numbered):
            raise AssertionError("grade_lines returned a row count unlike its input's")
        return pa.table(
            {
                LINE: pa.array([number for number, _ in numbered], pa.int64()),
                TEXT: pa.array([line.decode("utf-8") for line in lines], pa.string()),
                RECORD: pa.array(
                    [pickle.dumps(tuple(record), protocol=5) for record in records], pa.binary()
                ),
            }
        )


def _check_grading_options(mode: str | None, rules_dirs: tuple[str, ...]) -> None:
    """Fail in the driver, before Ray starts work, on a bad mode or rule file."""
    registry = default_registry(rules_dirs)
    if mode:
        registry.get(mode)


def grade_dataset(
    ds: ray.data.Dataset,
    *,
    mode: str | None = None,
    rules_dirs: Sequence[str | Path] = (),
    by: Sequence[str] = (),
    workers: int | None = None,
    batch_size: int = BATCH_ROWS,
) -> ray.data.Dataset:
    """``ds`` graded, lazily: columns ``line``, ``text`` and ``record`` (see the module docstring).

    ``workers`` is the number of grader actors (default: Ray's autoscaling pool). Raises
    ``UnknownModeError`` or ``RuleFileError`` at once for a bad ``mode`` or rule file.
    """
    import ray.data  # noqa: PLC0415  the optional ray extra

    dirs = tuple(str(Path(d).resolve()) for d in rules_dirs)  # workers may run elsewhere
    _check_grading_options(mode, dirs)
    compute = ray.data.ActorPoolStrategy(size=workers) if workers else None
    return ds.map_batches(
        RayGrader,
        fn_constructor_kwargs={"mode": mode, "rules_dirs": dirs, "by": tuple(by)},
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=compute,
    )


# --- files --------------------------------------------------------------------------------------


def _read_spans(batch: _Table) -> _Table:
    """The lines of the spans of a file in ``batch`` (path, offset, nbytes, first_line)."""
    pa = _pyarrow()
    numbers: list[int] = []
    texts: list[bytes] = []
    for span in batch.to_pylist():
        fd = os.open(span["path"], os.O_RDONLY)
        try:
            data = os.pread(fd, span["nbytes"], span["offset"])
        finally:
            os.close(fd)
        if len(data) != span["nbytes"]:
            raise OSError(f"{span['path']} changed while it was being graded")
        for number, raw in enumerate(data.split(b"\n"), start=span["first_line"]):
            if raw.strip():
                numbers.append(number)
                texts.append(raw)
    return pa.table({LINE: pa.array(numbers, pa.int64()), TEXT: pa.array(texts, pa.binary())})


def _span_items(path: Path, spans: Iterator[Span]) -> list[dict[str, Any]]:
    """``spans`` of ``path`` as Ray items: where each span is, not its bytes."""
    return [
        {"path": str(path), "offset": s.offset, "nbytes": s.nbytes, "first_line": s.first_line}
        for s in spans
    ]


def _dataset_of_spans(spans: list[dict[str, Any]]) -> ray.data.Dataset:
    import ray.data  # noqa: PLC0415  the optional ray extra

    items = ray.data.from_items(spans, override_num_blocks=min(len(spans), _MAX_SPAN_BLOCKS))
    return items.map_batches(_read_spans, batch_format="pyarrow", batch_size=1)


def read_lines(path: str | Path, *, chunk_bytes: int = CHUNK_BYTES) -> ray.data.Dataset:
    """The non-blank lines of the JSONL file ``path``: columns ``line`` and ``text`` (bytes).

    The driver finds spans of whole lines (reading the file once); Ray workers read the spans,
    so ``path`` must be readable on every node (a local file on a one-machine Ray, or a shared
    file system). Bytes are kept as they are; line numbers count blank lines, as the local
    engine's do.
    """
    source = Path(path).resolve()
    problem = input_problem(source)
    if problem is not None:
        raise BatchError(problem, path=str(source))
    with open(source, "rb") as handle:
        spans = _span_items(source, input_spans(handle, offset=0, first_line=1, size=chunk_bytes))
    if not spans:
        raise BatchError("the file is empty", path=str(source))
    return _dataset_of_spans(spans)


class _Bytes:
    """Turns the line numbers written so far into input bytes done, for ``Progress``."""

    def __init__(self, spans: list[dict[str, Any]]) -> None:
        self._spans = spans
        self._next = 0

    def done_through(self, line: int) -> int:
        """The bytes of the spans whose every line is at most ``line``, not counted before."""
        done = 0
        spans = self._spans
        while self._next < len(spans):
            following = self._next + 1
            if following < len(spans) and spans[following]["first_line"] - 1 > line:
                break
            if following == len(spans):
                break  # the last span is counted by rest()
            done += int(spans[self._next]["nbytes"])
            self._next = following
        return done

    def rest(self) -> int:
        done = sum(int(span["nbytes"]) for span in self._spans[self._next :])
        self._next = len(self._spans)
        return done


@attrs.frozen
class RayRunner:
    """Grades spans with ``workers`` grader actors on Ray (default: Ray's autoscaling pool).

    Starts a local Ray instance (or joins the one ``RAY_ADDRESS`` names) unless Ray is already
    initialised, and shuts down only one it started. The spans are read by Ray workers, so the
    input must be readable on every node (a local file on a one-machine Ray, or a shared file
    system).
    """

    workers: int | None = None

    def grade(self, job: Job, spans: Iterator[Span]) -> Generator[Graded, None, None]:
        import ray  # noqa: PLC0415  the optional ray extra
        from ray.data import DataContext  # noqa: PLC0415  the optional ray extra

        items = _span_items(job.source.resolve(), spans)  # workers may run elsewhere
        if not items:
            return
        dirs = tuple(str(Path(d).resolve()) for d in job.rules_dirs)
        done_bytes = _Bytes(items)
        started = False
        if not ray.is_initialized():
            ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            started = True
        context = DataContext.get_current()
        saved = (context.execution_options.preserve_order, context.enable_progress_bars)
        # Ray Data's INFO lines (and its notice that its bars are off) would interleave with the
        # run's progress; they stay in the session's ray-data.log. Warnings still show.
        quieted = {name: logging.getLogger(name) for name in _QUIET_LOGGERS}
        levels = {name: logger.level for name, logger in quieted.items()}
        try:
            for name, logger in quieted.items():
                logger.setLevel(max(_QUIET_LOGGERS[name], logger.getEffectiveLevel()))
            context.execution_options.preserve_order = True
            context.enable_progress_bars = False  # the run's progress reports, or nothing does
            graded = grade_dataset(
                _dataset_of_spans(items), mode=job.mode, rules_dirs=dirs, by=job.by,
                workers=self.workers,
            )  # fmt: skip
            last = 0
            for batch in graded.iter_batches(batch_format="pyarrow", batch_size=None):
                table = _to_arrow(batch)
                if not table.num_rows:
                    continue
                numbers = table.column(LINE).to_pylist()
                if numbers[0] <= last or any(a >= b for a, b in itertools.pairwise(numbers)):
                    raise BatchError("Ray returned rows out of input order")
                last = numbers[-1]
                texts = table.column(TEXT).to_pylist()
                records = [record_from_bytes(cell) for cell in table.column(RECORD).to_pylist()]
                data = ("\n".join(texts) + "\n").encode("utf-8")
                yield Graded(data, None, records, done_bytes.done_through(last))
            yield Graded(b"", None, (), done_bytes.rest())
        finally:
            context.execution_options.preserve_order, context.enable_progress_bars = saved
            for name, logger in quieted.items():
                logger.setLevel(levels[name])
            if started:
                ray.shutdown()


def grade_file_ray(
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
    """``choicebox.batch.grade_file`` on Ray (see ``RayRunner``): the same output file and
    metrics files, the same ``.partial`` file and ``resume``; ``workers`` is the number of grader
    actors."""
    return grade_with(
        RayRunner(workers),
        input_path,
        output_path,
        mode=mode,
        rules_dirs=rules_dirs,
        by=by,
        resume=resume,
        summary=summary,
        progress=progress,
        chunk_bytes=chunk_bytes,
    )
