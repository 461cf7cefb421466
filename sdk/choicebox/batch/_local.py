"""Grading whole JSONL files in this process or a local pool of workers, resumable."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final, Protocol

import attrs
import orjson

from choicebox._errors import (
    BatchError,
)
from choicebox._modes import default_registry
from choicebox.batch._metrics import BatchMetrics

from ._engine import Chunk, ChunkResult, Grader, _numbered_lines
from ._records import record_of

# Input is graded in spans of about this many bytes (whole lines): a few hundred Gym rollouts.
CHUNK_BYTES: Final = 1 << 20
AGGREGATE_SUFFIX: Final = "_aggregate_metrics.json"
FAILURES_SUFFIX: Final = "_failure_analysis.json"
# Chunks handed to the pool but not yet written, per worker: enough to keep every worker busy,
# few enough that a fast reader never buffers the file in memory.
_IN_FLIGHT_PER_WORKER: Final = 4


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
        raise BatchError("no such input file", path=str(source))
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
