"""The file pipeline every runner shares: resume, feed spans, append graded output, count, finish.

A runner only turns spans of the input into graded output (bytes and records), in input order:
the local runner in this process (alone or with a pool of workers), the Ray runner on a Ray
cluster. Everything else is done here, once: ``OUTPUT.partial`` is opened (and, with
``resume``, its complete rows counted and its torn tail cut off), the input is read in spans
from where the partial file ends, the runner's output is appended in order and its records
counted, and at the end the metrics files are written and the partial file is renamed to
``OUTPUT``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple, Protocol

import attrs

from choicebox._errors import BatchError
from choicebox._modes import COMPONENTS, default_registry
from choicebox.jsonl import UTF8_BOM
from choicebox.metrics import MetricsAccumulator, MetricsDocument, RowRecord, RunSummary

from ._engine import Grader
from ._files import (
    PartialOutput,
    SourceRecord,
    Span,
    Syncing,
    check_resumable,
    check_target,
    check_targets,
    default_output,
    input_problem,
    input_spans,
    partial_path,
    sidecar_paths,
    skip_rows,
    source_record_path,
    write_json,
)

# Input is graded in spans of about this many bytes (whole lines): a few hundred Gym rollouts.
CHUNK_BYTES: Final = 1 << 20


class Graded(NamedTuple):
    """Graded output of the input, in order: its lines (each newline-terminated), or the file
    holding them (moved into the output), their records, and the input bytes it completes."""

    data: bytes
    path: str | None
    records: Sequence[RowRecord]
    nbytes: int


@attrs.frozen(kw_only=True)
class Job:
    """What a runner grades: the input, where the output goes, and how rows are graded."""

    source: Path
    output: Path
    mode: str | None
    rules_dirs: tuple[str, ...]
    by: tuple[str, ...]

    @property
    def scratch(self) -> Path:
        """A folder beside the output for files a runner's workers hand back."""
        return self.output.with_name(f".{self.output.name}.chunks")

    def grader(self) -> Grader:
        return Grader(mode=self.mode, rules_dirs=self.rules_dirs, by=self.by)


class Runner(Protocol):
    """Turns spans of the input into graded output."""

    def grade(self, job: Job, spans: Iterator[Span]) -> Generator[Graded, None, None]:
        """The graded output of ``spans``, in input order; stops its workers when closed."""
        ...


class Progress(Protocol):
    """What a run reports to: started once, updated per graded span, closed at the end."""

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
    metrics: MetricsDocument

    @property
    def aggregate(self) -> dict[str, Any]:
        """The content of the aggregate metrics file."""
        return self.metrics.aggregate_json()

    @property
    def failure_analysis(self) -> dict[str, Any]:
        """The content of the failure analysis file."""
        return self.metrics.failure_json()


def grade_with(
    runner: Runner,
    input_path: str | Path,
    output_path: str | Path | None = None,
    *,
    mode: str | None = None,
    rules_dirs: Sequence[str | Path] = (),
    by: Sequence[str] = (),
    resume: bool = False,
    summary: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> BatchResult:
    """Grade every row of ``input_path`` into ``output_path`` with ``runner``; write the metrics
    beside it.

    Raises ``BatchError`` when the input is missing, the output directory is missing, an
    output file is the input or no regular file, or a ``.partial`` belongs to another input or
    mode; ``UnknownModeError`` for an unknown ``mode`` and ``RuleFileError`` for a bad rule file;
    row problems never raise, they become error rows. On ``KeyboardInterrupt`` the ``.partial``
    file keeps every row written so far, for ``resume``.
    """
    source = Path(input_path)
    problem = input_problem(source)
    if problem is not None:
        raise BatchError(problem, path=str(source))
    output = Path(output_path) if output_path is not None else default_output(source)
    check_targets(source, output)
    partial = partial_path(output)
    job = Job(
        source=source,
        output=output,
        mode=mode,
        rules_dirs=tuple(str(d) for d in rules_dirs),
        by=tuple(by),
    )
    # Fail fast on a bad mode or rule file, before any worker starts.
    registry = default_registry(job.rules_dirs)
    if mode:
        registry.get(mode)

    record = SourceRecord.of(source, mode)
    resuming = resume and os.path.lexists(partial)
    if resuming:
        check_resumable(partial, source_record_path(output), record)
    else:
        record.write(source_record_path(output))  # before the partial file: it names its input
    metrics = MetricsAccumulator(component_names=COMPONENTS, include_groups=False, by=job.by)
    with PartialOutput(partial, resume=resuming) as out, open(source, "rb") as handle:
        resumed = out.recover(metrics, job.by) if resuming else 0
        start = len(UTF8_BOM) if handle.read(len(UTF8_BOM)) == UTF8_BOM else 0
        handle.seek(start)
        skipped_bytes, skipped_lines = skip_rows(handle, resumed)
        if progress is not None:
            progress.start(source.stat().st_size, start + skipped_bytes, resumed)
        try:
            spans = input_spans(
                handle,
                offset=start + skipped_bytes,
                first_line=skipped_lines + 1,
                size=chunk_bytes,
            )
            # Closing the runner's output stops its workers now, not when a traceback is freed.
            with contextlib.closing(runner.grade(job, spans)) as graded:
                for piece in graded:
                    if piece.path is not None:
                        out.move_in(piece.path)
                    else:
                        out.write(piece.data)
                    metrics.add_records(piece.records)
                    if progress is not None:
                        progress.update(len(piece.records), piece.nbytes)
            syncing = out.sync_in_background()
        finally:
            if progress is not None:
                progress.close()

    info = RunSummary(input=str(source), output=str(output), mode=mode, extra=dict(summary or {}))
    return _finish(metrics, info, source, output, resumed=resumed, syncing=syncing)


def _finish(
    metrics: MetricsAccumulator,
    info: RunSummary,
    source: Path,
    output: Path,
    *,
    resumed: int,
    syncing: Syncing,
) -> BatchResult:
    """Write the metrics files while the output reaches the disk, then move the complete
    ``.partial`` output into place."""
    document = metrics.document(summary=info)
    aggregate_path, failures_path = sidecar_paths(output)
    write_json(aggregate_path, document.aggregate_json())
    write_json(failures_path, document.failure_json())
    syncing.wait()
    check_target(output, os.stat(source))  # again: it may have appeared while grading
    os.replace(partial_path(output), output)  # last: OUTPUT exists only once everything is written
    source_record_path(output).unlink(missing_ok=True)
    return BatchResult(
        output=output,
        aggregate_path=aggregate_path,
        failures_path=failures_path,
        rows=metrics.n_rows,
        errors=metrics.n_errors,
        resumed_rows=resumed,
        metrics=document,
    )
