"""The local runner: grades spans in this process, with a pool of worker processes or alone."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import sys
import threading
from collections import deque
from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from ._engine import Grader, _numbered_lines
from ._files import Span
from ._pipeline import CHUNK_BYTES, BatchResult, Graded, Job, Progress, grade_with

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult

# Spans handed out but not yet written: enough that the workers never wait for work and that
# this process has spans of its own to grade while a worker starts up (a second or so of input),
# few enough (about a megabyte each) that memory stays small however large the input is.
_PENDING_MAX: Final = 16
# Spans queued per pool worker, so that it starts the next as soon as it hands one back: four,
# because a span reaches a worker, and its result this process, through the pool's threads, which
# wait for this process's grading to let go of the interpreter (two left the worker idle for 15%
# of a 200k-row run; four graded 100k rows about 10% faster).
_QUEUED_PER_WORKER: Final = 4


@attrs.frozen
class LocalRunner:
    """Grades in ``workers`` processes: this one, and a pool of ``workers - 1`` more.

    This process grades a span itself whenever the oldest span handed to the pool is not back
    yet: it has imported everything and built its modes already, so it grades from the start
    while the workers start up, and what it grades crosses no pipe. Pool workers read their
    spans of the input themselves and write their output to files that are moved into the
    output: bulk bytes never cross the pipes, which move large messages slowly.
    """

    workers: int

    def grade(self, job: Job, spans: Iterator[Span]) -> Generator[Graded, None, None]:
        scratch = job.scratch
        shutil.rmtree(scratch, ignore_errors=True)  # left by a run that was killed
        grader = job.grader()
        ahead = list(itertools.islice(spans, 2))
        if self.workers <= 1 or len(ahead) < 2:
            # A file of one span is graded here alone: a pool (each worker importing choicebox
            # and building its modes) costs more than grading a span.
            for span in itertools.chain(ahead, spans):
                yield _grade_here(grader, span)
            return
        spans = itertools.chain(ahead, spans)
        scratch.mkdir()
        import multiprocessing  # noqa: PLC0415  13 ms that a run of one worker does not need

        pool = multiprocessing.get_context(_start_method()).Pool(
            self.workers - 1, initializer=_init_worker, initargs=(job,)
        )
        try:
            yield from _share(pool, self.workers - 1, grader, spans)
            pool.close()
        finally:
            pool.terminate()
            pool.join()
            shutil.rmtree(scratch, ignore_errors=True)


def _start_method() -> str:
    """How pool workers start: forked, when this process runs no other thread (``choicebox
    grade``); a worker then starts in milliseconds with choicebox imported, instead of importing
    it anew for a fifth of a second or more. A process that runs threads (a Ray driver, a web
    server, a notebook) must not be forked mid-lock, and macOS forbids forking some of its
    frameworks: their workers start from a clean single-threaded forkserver."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    return "forkserver"


def _grade_here(grader: Grader, span: Span) -> Graded:
    data, records = grader.grade_lines(_numbered_lines(span.data, span.first_line))
    return Graded(data, None, records, span.nbytes)


def _share(
    pool: Any, pool_size: int, grader: Grader, spans: Iterator[Span]
) -> Generator[Graded, None, None]:
    """The graded ``spans`` in order, graded by ``pool`` and, while it is busy, here."""
    pending: deque[AsyncResult[Graded] | Graded] = deque()  # in input order
    in_pool = 0
    more = True
    while True:
        while more and in_pool < pool_size * _QUEUED_PER_WORKER and len(pending) < _PENDING_MAX:
            span = next(spans, None)
            if span is None:
                more = False
                break
            # Workers read their own bytes: only the span's place crosses the pipe.
            pending.append(pool.apply_async(_work, (span._replace(data=b""),)))
            in_pool += 1
        if not pending:
            return
        head = pending[0]
        if (
            not isinstance(head, Graded)
            and not head.ready()
            and more
            and len(pending) < _PENDING_MAX
        ):
            # The oldest span is still in a worker: grade the next one here meanwhile.
            span = next(spans, None)
            if span is not None:
                pending.append(_grade_here(grader, span))
                continue
            more = False
        pending.popleft()
        if not isinstance(head, Graded):
            in_pool -= 1
            yield head.get()
        else:
            yield head


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

    ``workers`` processes grade (default: one per CPU): this one and ``workers - 1`` more. Raises
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
