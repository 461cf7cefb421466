"""The files of a grading run: the input read in spans, ``OUTPUT.partial`` written and resumed,
and the names of the output and its metrics files.

A run writes only files it creates itself, never through a symbolic link, and replaces only
regular files that are not its input: ``check_targets`` refuses the run otherwise, before any
work. ``OUTPUT.partial.source.json`` records which input (its size and a hash of all its bytes)
and which mode the partial file holds, so that ``resume`` refuses another's.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

import attrs
import orjson

from choicebox._errors import BatchError
from choicebox.jsonl import is_gzip
from choicebox.metrics import AGGREGATE_SUFFIX, FAILURES_SUFFIX, MetricsAccumulator
from choicebox.render._records import record_of

# --- names --------------------------------------------------------------------------------------


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


def source_record_path(output: str | Path) -> Path:
    """``OUTPUT.partial.source.json``: which input and mode ``OUTPUT.partial`` was graded from."""
    partial = partial_path(output)
    return partial.with_name(partial.name + ".source.json")


def write_json(path: Path, value: Any) -> None:
    """``value`` as indented JSON at ``path``, replacing it atomically (a regular file only)."""
    tmp = path.with_name(f".{path.name}.tmp")
    created = False
    try:
        with os.fdopen(create_new(tmp), "wb") as handle:
            created = True
            handle.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
        check_target(path)
        os.replace(tmp, path)
    except BaseException as exc:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None:
            # The file the user asked for, not the temporary one beside it.
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


# --- where a run may write ------------------------------------------------------------------


_KINDS: Final = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_targets(source: Path, output: Path) -> None:
    """Refuse, with a ``BatchError`` naming the path, a run whose output directory is missing or
    whose output files (``OUTPUT``, its ``.partial`` and record, the metrics files) are the input
    itself or anything but regular files: the run replaces them."""
    parent = output.parent
    if not parent.is_dir():
        problem = "is not a directory" if parent.exists() else "does not exist"
        raise BatchError(f"the output directory {problem}", path=str(parent))
    source_stat = os.stat(source)
    for target in (
        output,
        partial_path(output),
        source_record_path(output),
        *sidecar_paths(output),
    ):
        check_target(target, source_stat)


def check_target(target: Path, source_stat: os.stat_result | None = None) -> None:
    """Refuse ``target`` if it exists and is no regular file, or is the input (``source_stat``)."""
    try:
        found = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(found.st_mode):
        raise BatchError(
            f"exists and is {_kind(found.st_mode)}: choicebox grade writes a new file and renames "
            "it into place, so it replaces only regular files; remove it or choose another output",
            path=str(target),
        )
    if source_stat is not None and os.path.samestat(found, source_stat):
        raise BatchError(
            "is the input file: grading would replace it; choose another output", path=str(target)
        )


def create_new(path: Path) -> int:
    """A file descriptor (write-only) of a new, empty file at ``path``, where a stale regular
    file or a symbolic link (removed, not followed) may be; anything else there is refused."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(found.st_mode) or not (
            stat.S_ISREG(found.st_mode) or stat.S_ISLNK(found.st_mode)
        ):
            raise BatchError(f"exists and is {_kind(found.st_mode)}", path=str(path))
        os.unlink(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o666)


def input_problem(source: Path) -> str | None:
    """Why ``source`` cannot be graded as an input file, or ``None`` when it can."""
    if source.is_file():
        if is_gzip(source):
            # Grading splits the input by byte offsets (workers, --resume), which a compressed
            # stream has none of; read as it is, every line would be an error row.
            return f"compressed with gzip: grade reads plain JSON Lines (decompress it first: gunzip -k {source})"
        return None
    if not source.exists():
        return "no such input file"
    if source.is_dir():
        return "not a regular file: a directory"
    return "not a regular file: a device, pipe or socket (it could be read for ever)"


# --- which input a partial file holds --------------------------------------------------------

# The input is read in blocks of this size to be fingerprinted.
_FINGERPRINT_BLOCK: Final = 2**20


@attrs.frozen(kw_only=True)
class SourceRecord:
    """The input and mode a ``.partial`` file was graded from: the input's path (to name it), its
    size and the SHA-256 of all of it. All of it, since an input edited anywhere (a row in the
    middle, the same size) would otherwise keep verdicts of rows it no longer has; hashing costs
    about 20 ms per 27 MB, a few per cent of grading them."""

    input: str
    size: int
    digest: str
    mode: str | None

    @classmethod
    def of(cls, source: Path, mode: str | None) -> SourceRecord:
        digest = hashlib.sha256()
        with open(source, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            while block := handle.read(_FINGERPRINT_BLOCK):
                digest.update(block)
        return cls(input=str(source.resolve()), size=size, digest=digest.hexdigest(), mode=mode)

    @classmethod
    def read(cls, path: Path) -> SourceRecord | None:
        """The record at ``path``; ``None`` if there is none or it is not one."""
        try:
            check_target(path)
            value = orjson.loads(path.read_bytes())
            return cls(**{field.name: value[field.name] for field in attrs.fields(cls)})
        except (OSError, BatchError, orjson.JSONDecodeError, KeyError, TypeError):
            return None

    def write(self, path: Path) -> None:
        write_json(path, attrs.asdict(self))

    def differences(self, now: SourceRecord) -> list[str]:
        """What differs between the run recorded and ``now``, in words; empty if nothing."""
        found = []
        if (self.size, self.digest) != (now.size, now.digest):
            found.append(
                f"it holds rows of {self.input} ({self.size:,} bytes), not of {now.input} "
                f"({now.size:,} bytes{', other rows' if self.size == now.size else ''})"
            )
        if self.mode != now.mode:
            found.append(f"it was graded with --mode {self.mode}, not {now.mode}")
        return found


def check_resumable(partial: Path, record_path: Path, now: SourceRecord) -> None:
    """Refuse to resume ``partial`` unless its record says it holds rows of the same input, graded
    in the same mode."""
    record = SourceRecord.read(record_path)
    if record is None:
        raise BatchError(
            f"cannot tell which input it holds ({record_path.name} is missing or unreadable): "
            "delete it, or run without --resume to start over",
            path=str(partial),
        )
    differences = record.differences(now)
    if differences:
        raise BatchError(
            "belongs to another run: "
            + "; ".join(differences)
            + ". Delete it, or run without --resume to start over",
            path=str(partial),
        )


# --- the input ----------------------------------------------------------------------------------


class Span(NamedTuple):
    """A span of whole lines of the input.

    ``data`` holds its bytes, or is ``b""`` when a worker reads them itself from ``offset``;
    ``first_line`` is the 1-based number of its first line.
    """

    seq: int
    data: bytes
    offset: int
    nbytes: int
    first_line: int


def input_spans(handle: IO[bytes], *, offset: int, first_line: int, size: int) -> Iterator[Span]:
    """The rest of ``handle`` (now at ``offset``) in spans of about ``size`` bytes, each ending at
    a line end."""
    index = 0
    while True:
        data = handle.read(size)
        if not data:
            return
        if not data.endswith(b"\n"):
            data += handle.readline()  # finish the line the block cut through
        yield Span(index, data, offset, len(data), first_line)
        index += 1
        offset += len(data)
        first_line += count_newlines(data)


# Below this many bytes per line on average, one `bytes.count` beats a `find` per line.
_FIND_PER_LINE_MIN: Final = 512


def count_newlines(data: bytes) -> int:
    """How many ``\n`` bytes ``data`` holds.

    ``bytes.count`` of one byte looks at every byte (0.6 ms a megabyte here); ``find`` jumps to
    the next newline with ``memchr``, a quarter of that on rollout rows of kilobytes, but it is
    one call per line. So lines are found one by one while they are long on average, and the
    rest is counted once they are not: never much slower than ``count``, and the input's
    reader counts every byte of a run.
    """
    find = data.find
    count = 0
    at = find(b"\n")
    while at >= 0:
        count += 1
        if not count & 63 and at < count * _FIND_PER_LINE_MIN:
            return count + data.count(b"\n", at + 1)
        at = find(b"\n", at + 1)
    return count


def skip_rows(handle: IO[bytes], rows: int) -> tuple[int, int]:
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


# --- the output ---------------------------------------------------------------------------------


class PartialOutput:
    """``OUTPUT.partial``, appended to in whole lines; opened without following a symbolic link.

    Fresh, it is created anew (a stale one removed); with ``resume`` the existing regular file is
    opened and ``recover`` counts its rows. Unbuffered: each graded span is one write (or one
    in-kernel copy), so a kill leaves at most one torn line for resume to cut off.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        if resume:
            # No O_APPEND: sendfile refuses such files; seek to the end instead.
            self._fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                os.close(self._fd)
                raise BatchError("is not a regular file", path=str(path))
        else:
            self._fd = create_new(path)
        os.lseek(self._fd, 0, os.SEEK_END)

    def recover(self, metrics: MetricsAccumulator, by: tuple[str, ...]) -> int:
        """Count the complete rows written so far, feed them to ``metrics``, cut off a torn tail.

        A row is complete when its line ends in a newline and holds a JSON object; the first
        line that is not (a write cut short by a kill) and everything after it is truncated, to
        be redone.
        """
        count = 0
        good = 0
        os.lseek(self._fd, 0, os.SEEK_SET)
        with os.fdopen(self._fd, "rb", closefd=False) as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break
                try:
                    row = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    break
                if not isinstance(row, dict):
                    break
                metrics.add_record(record_of(row, by))
                count += 1
                good += len(raw)
        if good != os.fstat(self._fd).st_size:
            os.ftruncate(self._fd, good)
        os.lseek(self._fd, good, os.SEEK_SET)
        return count

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def move_in(self, path: str) -> None:
        """Append the file at ``path`` (in the kernel where it can), then delete it."""
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            sent = 0
            try:
                while sent < size:
                    done = os.sendfile(self._fd, handle.fileno(), sent, size - sent)
                    if done == 0:
                        break
                    sent += done
            except OSError:
                pass  # no sendfile for these files: copy the rest through user space
            if sent < size:
                handle.seek(sent)
                while block := handle.read(1 << 20):
                    self.write(block)
        os.unlink(path)

    def sync(self) -> None:
        os.fsync(self._fd)

    def sync_in_background(self) -> Syncing:
        """Start flushing what was written to the disk in a thread; ``wait`` for it to finish.

        ``fsync`` lets go of the interpreter while the disk works (13 ms for the 27 MB output of
        12k rollout rows here), so the metrics can be worked out and written meanwhile; the
        output is renamed into place only after ``wait``.
        """
        return Syncing(os.dup(self._fd))

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> PartialOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Syncing:
    """An ``fsync`` of a file descriptor (which it closes) running in a thread of its own."""

    def __init__(self, fd: int) -> None:
        self._error: OSError | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._sync, args=(fd,), daemon=True
        )
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had: the fsync is done here, now
            self._thread = None
            self._sync(fd)

    def _sync(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as exc:  # raised again by wait(), in the thread that renames the output
            self._error = exc
        finally:
            os.close(fd)

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
