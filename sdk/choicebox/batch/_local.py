"""The local runner: grades spans in this process or a pool of worker processes."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import shutil
import signal
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from ._engine import Grader, _numbered_lines
from ._files import Span
from ._pipeline import CHUNK_BYTES, BatchResult, Graded, Job, Progress, grade_with

# Spans handed to the pool but not yet written, per worker: enough to keep every worker busy,
# few enough that a fast reader never buffers the file in memory.
_IN_FLIGHT_PER_WORKER: Final = 4


@attrs.frozen
class LocalRunner:
    """Grades in this process (``workers <= 1``) or in a pool of ``workers`` processes.

    Workers read their spans of the input themselves and write their output to files that are
    moved into the output: bulk bytes never cross the pipes, which move large messages slowly.
    """

    workers: int

    def grade(self, job: Job, spans: Iterator[Span]) -> Generator[Graded, None, None]:
        scratch = job.scratch
        shutil.rmtree(scratch, ignore_errors=True)  # left by a run that was killed
        ahead = list(itertools.islice(spans, 2))
        if self.workers <= 1 or len(ahead) < 2:
            # A file of one span is graded here too: a pool (each worker importing choicebox and
            # building its modes) costs more than grading a span.
            grader = job.grader()
            for span in itertools.chain(ahead, spans):
                data, records = grader.grade_lines(_numbered_lines(span.data, span.first_line))
                yield Graded(data, None, records, span.nbytes)
            return
        spans = itertools.chain(ahead, spans)
        throttle = _Throttle(self.workers * _IN_FLIGHT_PER_WORKER)
        scratch.mkdir()
        # forkserver, not fork: a process that already runs threads (a Ray driver, a web server,
        # a notebook) must not be forked mid-lock; workers start from a clean single-threaded
        # server.
        pool = multiprocessing.get_context("forkserver").Pool(
            self.workers, initializer=_init_worker, initargs=(job,)
        )
        try:
            ranges = (span._replace(data=b"") for span in spans)  # workers read their own
            for graded in pool.imap(_work, throttle.feed(ranges)):
                throttle.done_one()
                yield graded
            pool.close()
        finally:
            throttle.stop()
            pool.terminate()
            pool.join()
            shutil.rmtree(scratch, ignore_errors=True)


class _Worker:
    """A pool worker's state: its grader, the input file and the folder for its output."""

    def __init__(self, job: Job) -> None:
        self.grader: Grader = job.grader()
        self.fd = os.open(job.source, os.O_RDONLY)
        self.scratch = job.scratch

    def grade(self, span: Span) -> Graded:
        data = os.pread(self.fd, span.nbytes, span.offset)
        output, records = self.grader.grade_lines(_numbered_lines(data, span.first_line))
        path = os.path.join(self.scratch, f"{span.seq:012d}")
        with open(path, "wb") as handle:
            handle.write(output)
        return Graded(b"", path, records, span.nbytes)


# One per worker process, built once by the pool initializer.
_WORKER: _Worker | None = None


def _init_worker(job: Job) -> None:
    global _WORKER  # noqa: PLW0603  # the pool's only way to hand state to its workers
    # Ctrl-C goes to the whole process group: the parent handles it, workers just stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = _Worker(job)


def _work(span: Span) -> Graded:
    assert _WORKER is not None, "worker used without _init_worker"
    return _WORKER.grade(span)


class _Throttle:
    """Bounds the spans a pool's feeder thread may take ahead of the writer (imap reads eagerly)."""

    def __init__(self, limit: int) -> None:
        self._slots = threading.Semaphore(limit)
        self._stop = threading.Event()

    def feed(self, spans: Iterable[Span]) -> Iterator[Span]:
        for span in spans:
            while not self._slots.acquire(timeout=0.1):
                if self._stop.is_set():
                    return
            yield span

    def done_one(self) -> None:
        self._slots.release()

    def stop(self) -> None:
        self._stop.set()


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

    ``workers`` processes grade (default: one per CPU; 1 grades in this process). Raises
    ``BatchError`` when the input is missing or a ``.partial`` does not fit it,
    ``UnknownModeError`` for an unknown ``mode`` and ``RuleFileError`` for a bad rule file;
    row problems never raise, they become error rows. On ``KeyboardInterrupt`` the ``.partial``
    file keeps every row written so far, for ``resume``.
    """
    return grade_with(
        LocalRunner((os.cpu_count() or 1) if workers is None else workers),
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
