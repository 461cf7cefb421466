"""The files of ``choicebox grade`` under misuse: a partial file of another input, an output that
is the input or no regular file, symbolic links, a byte order mark, bad lines that are not UTF-8
or are huge, a missing output directory, and a reader that closes the pipe."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from choicebox.batch import BatchError, grade_file, partial_path, sidecar_paths
from choicebox.batch._files import SourceRecord, source_record_path
from choicebox.cli import main
from choicebox.jsonl import RAW_FIELD_BYTES, UTF8_BOM, JsonlError, JsonlRow, iter_jsonl


def _row(uuid: str, expected: str = "A", answer: str = "A") -> str:
    row = {
        "question": f"Q{uuid}?",
        "options": [{"A": "alpha"}, {"B": "beta"}],
        "expected_answer": expected,
        "response": f"\\boxed{{{answer}}}",
        "responses_create_params": {"input": []},
        "uuid": uuid,
    }
    return json.dumps(row) + "\n"


def _write(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"".join(line.encode() if isinstance(line, str) else line for line in lines))
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _grade(*args: str | Path) -> int:
    return main(["grade", *map(str, args), "--workers", "1", "-q"])


class _StopAfterFirstSpan:
    """A progress sink that interrupts the run after its first graded span, like a Ctrl-C."""

    def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
        pass

    def update(self, rows: int, nbytes: int) -> None:
        raise KeyboardInterrupt

    def close(self) -> None:
        pass


def _interrupted(source: Path, output: Path, mode: str | None = None) -> None:
    with pytest.raises(KeyboardInterrupt):
        grade_file(
            source, output, mode=mode, workers=1, progress=_StopAfterFirstSpan(), chunk_bytes=300
        )
    assert partial_path(output).exists()


# --- resume belongs to one input -------------------------------------------------------------


def _same_length_inputs(tmp_path: Path) -> tuple[Path, Path]:
    a = _write(tmp_path / "a.jsonl", *(_row(f"a{i}") for i in range(8)))
    b = _write(tmp_path / "b.jsonl", *(_row(f"b{i}", expected="B") for i in range(8)))
    assert a.stat().st_size == b.stat().st_size
    return a, b


def test_resume_refuses_the_partial_of_another_input_of_the_same_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _same_length_inputs(tmp_path)
    output = tmp_path / "out.jsonl"
    _interrupted(a, output)
    kept = partial_path(output).read_bytes()
    assert _grade(b, "-o", output, "--resume") == 2
    err = capsys.readouterr().err
    assert f"{partial_path(output)}: belongs to another run" in err
    assert f"it holds rows of {a.resolve()}" in err
    assert "other rows" in err
    assert "run without --resume" in err
    assert not output.exists()
    assert partial_path(output).read_bytes() == kept  # nothing lost, nothing mixed
    # With its own input it resumes, and ends as a fresh run of that input does.
    assert _grade(a, "-o", output, "--resume") == 0
    assert _grade(a, "-o", tmp_path / "fresh.jsonl") == 0
    assert output.read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert not source_record_path(output).exists()


def test_resume_refuses_an_input_changed_in_the_middle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Same size, same first and last 64 KiB: only a row in the middle differs. The rows graded
    # before the change must not be kept as if they were this input's.
    rows = [_row(f"r{i:03d}") for i in range(2000)]
    source = _write(tmp_path / "in.jsonl", *rows)
    output = tmp_path / "out.jsonl"
    _interrupted(source, output)
    middle = len(rows) // 2
    rows[middle] = rows[middle].replace('"expected_answer": "A"', '"expected_answer": "B"')
    _write(source, *rows)
    assert source.stat().st_size == len("".join(rows).encode())
    assert _grade(source, "-o", output, "--resume") == 2
    assert "belongs to another run" in capsys.readouterr().err
    assert not output.exists()


def test_resume_refuses_a_partial_graded_in_another_mode(tmp_path: Path) -> None:
    a, _ = _same_length_inputs(tmp_path)
    output = tmp_path / "out.jsonl"
    _interrupted(a, output, mode="lenient_boxed")
    with pytest.raises(BatchError, match="graded with --mode lenient_boxed, not robust"):
        grade_file(a, output, mode="robust", resume=True, workers=1)
    with pytest.raises(BatchError, match="graded with --mode lenient_boxed, not None"):
        grade_file(a, output, resume=True, workers=1)


def test_resume_refuses_a_partial_it_cannot_trace(tmp_path: Path) -> None:
    a, _ = _same_length_inputs(tmp_path)
    output = tmp_path / "out.jsonl"
    partial_path(output).write_text(_row("stray"))  # no record beside it
    with pytest.raises(BatchError, match=r"cannot tell which input it holds \(out\.jsonl\.partial"):
        grade_file(a, output, resume=True, workers=1)
    source_record_path(output).write_text("{not json")
    with pytest.raises(BatchError, match="missing or unreadable"):
        grade_file(a, output, resume=True, workers=1)
    # Without --resume the stray partial file is simply replaced.
    assert _grade(a, "-o", output) == 0
    assert [r["uuid"] for r in _rows(output)] == [f"a{i}" for i in range(8)]


def test_resume_follows_the_input_bytes_not_its_name(tmp_path: Path) -> None:
    a, _ = _same_length_inputs(tmp_path)
    output = tmp_path / "out.jsonl"
    _interrupted(a, output)
    moved = tmp_path / "moved.jsonl"
    shutil.copyfile(a, moved)
    assert _grade(moved, "-o", output, "--resume") == 0
    assert [r["uuid"] for r in _rows(output)] == [f"a{i}" for i in range(8)]


def test_the_record_names_the_input_while_the_partial_exists(tmp_path: Path) -> None:
    a, _ = _same_length_inputs(tmp_path)
    output = tmp_path / "out.jsonl"
    _interrupted(a, output)
    record = SourceRecord.read(source_record_path(output))
    assert record == SourceRecord.of(a, None)
    assert record is not None
    assert record.input == str(a.resolve())
    assert record.size == a.stat().st_size


# --- never the input, never through a link, never over something that is no file -----------


def test_output_equal_to_the_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = _same_length_inputs(tmp_path)
    original = source.read_bytes()
    assert _grade(source, "-o", source) == 2
    assert f"{source}: is the input file" in capsys.readouterr().err
    linked = tmp_path / "hard.jsonl"
    os.link(source, linked)
    assert _grade(source, "-o", linked) == 2
    assert "is the input file" in capsys.readouterr().err
    assert source.read_bytes() == original


def test_the_input_as_the_partial_file_is_refused(tmp_path: Path) -> None:
    source = _write(tmp_path / "out.jsonl.partial", _row("x"))
    with pytest.raises(BatchError, match="is the input file"):
        grade_file(source, tmp_path / "out.jsonl", workers=1)
    assert _rows(source) == [json.loads(_row("x"))]


def test_a_symbolic_link_as_the_partial_file_is_refused_and_not_followed(tmp_path: Path) -> None:
    source, _ = _same_length_inputs(tmp_path)
    victim = _write(tmp_path / "victim.txt", "precious data\n")
    output = tmp_path / "out.jsonl"
    partial_path(output).symlink_to(victim)
    with pytest.raises(BatchError, match="exists and is a symbolic link"):
        grade_file(source, output, workers=1)
    with pytest.raises(BatchError, match="exists and is a symbolic link"):
        grade_file(source, output, workers=1, resume=True)
    assert victim.read_text() == "precious data\n"
    assert not output.exists()


def test_a_symbolic_link_where_a_temporary_file_goes_is_removed_not_followed(
    tmp_path: Path,
) -> None:
    source, _ = _same_length_inputs(tmp_path)
    victim = _write(tmp_path / "victim.txt", "precious data\n")
    output = tmp_path / "out.jsonl"
    for target in sidecar_paths(output):
        (tmp_path / f".{target.name}.tmp").symlink_to(victim)
    grade_file(source, output, workers=1)
    assert victim.read_text() == "precious data\n"
    assert all(stat.S_ISREG(os.lstat(target).st_mode) for target in sidecar_paths(output))


def _special_files(tmp_path: Path) -> list[Path]:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    found = [fifo, link, directory]
    device = tmp_path / "full.jsonl"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # what /dev/full is
    except PermissionError:
        pass  # not root: the other kinds still show the rule
    else:
        found.append(device)
    return found


def test_an_output_that_is_no_regular_file_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = _same_length_inputs(tmp_path)
    for special in _special_files(tmp_path):
        kind = os.lstat(special).st_mode
        assert _grade(source, "-o", special) == 2
        err = capsys.readouterr().err
        assert f"{special}: exists and is a " in err
        assert "replaces only regular files" in err
        assert os.lstat(special).st_mode == kind, special
        assert not partial_path(special).exists()
        assert not source_record_path(special).exists()


def test_a_metrics_file_that_is_no_regular_file_stops_the_run_before_it_starts(
    tmp_path: Path,
) -> None:
    source, _ = _same_length_inputs(tmp_path)
    output = tmp_path / "out.jsonl"
    aggregate, _ = sidecar_paths(output)
    os.mkfifo(aggregate)
    with pytest.raises(BatchError, match="exists and is a named pipe"):
        grade_file(source, output, workers=1)
    assert not partial_path(output).exists()
    assert stat.S_ISFIFO(os.lstat(aggregate).st_mode)


def test_a_missing_output_directory_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = _same_length_inputs(tmp_path)
    missing = tmp_path / "no" / "such" / "dir"
    assert _grade(source, "-o", missing / "out.jsonl") == 2
    err = capsys.readouterr().err
    assert f"choicebox grade: {missing}: the output directory does not exist" in err
    assert "Errno" not in err
    not_a_dir = _write(tmp_path / "file", "x")
    assert _grade(source, "-o", not_a_dir / "out.jsonl") == 2
    assert f"{not_a_dir}: the output directory is not a directory" in capsys.readouterr().err


# --- what is read: a byte order mark; what bad lines keep ------------------------------------


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    plain = _write(tmp_path / "plain.jsonl", _row("r1"), _row("r2"))
    marked = _write(tmp_path / "marked.jsonl", UTF8_BOM, _row("r1"), _row("r2"))
    assert _grade(plain, "-o", tmp_path / "plain_out.jsonl") == 0
    assert _grade(marked, "-o", tmp_path / "marked_out.jsonl") == 0
    assert (tmp_path / "plain_out.jsonl").read_bytes() == (
        tmp_path / "marked_out.jsonl"
    ).read_bytes()
    read = list(iter_jsonl(marked))
    assert all(isinstance(item, JsonlRow) for item in read)
    assert [item.line for item in read] == [1, 2]


def test_resume_of_a_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    lines = [_row(f"r{i}") for i in range(8)]
    marked = _write(tmp_path / "marked.jsonl", UTF8_BOM, *lines)
    output = tmp_path / "out.jsonl"
    _interrupted(marked, output)
    assert _grade(marked, "-o", output, "--resume") == 0
    assert [r["uuid"] for r in _rows(output)] == [f"r{i}" for i in range(8)]


def test_a_mark_later_in_the_file_is_an_error_row(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.jsonl", _row("r1"), UTF8_BOM, _row("r2"))
    assert _grade(source, "-o", tmp_path / "out.jsonl") == 1
    rows = _rows(tmp_path / "out.jsonl")
    assert rows[1]["error"].startswith("line 2: invalid JSON")
    assert isinstance(list(iter_jsonl(source))[1], JsonlError)


def _error_row(tmp_path: Path, bad: bytes) -> dict[str, Any]:
    source = _write(tmp_path / "in.jsonl", _row("ok1"), bad + b"\n", _row("ok2"))
    output = tmp_path / "out.jsonl"
    assert _grade(source, "-o", output) == 1
    rows = _rows(output)
    assert [r.get("uuid") for r in rows] == ["ok1", None, "ok2"]
    assert rows[1]["line"] == 2
    return rows[1]


def test_a_bad_line_that_is_not_utf8_is_kept_in_base64(tmp_path: Path) -> None:
    bad = b'{"broken": "\xff\xfe\xc0 not json'
    row = _error_row(tmp_path, bad)
    assert row["raw_encoding"] == "base64"
    assert base64.b64decode(row["raw"]) == bad
    assert row["raw_bytes"] == len(bad)


def test_a_bad_utf8_line_is_kept_as_text(tmp_path: Path) -> None:
    bad = '{"question": "Qué pasa", oops'.encode()
    row = _error_row(tmp_path, bad)
    assert (row["raw"], row["raw_encoding"], row["raw_bytes"]) == (bad.decode(), "utf-8", len(bad))


def test_a_huge_bad_line_is_not_copied_whole(tmp_path: Path) -> None:
    bad = b'{"x": "' + "é".encode() * 10_000_000  # 20 MB, cut inside a character at 4 KiB
    row = _error_row(tmp_path, bad)
    assert row["raw_encoding"] == "utf-8"
    assert row["raw_bytes"] == len(bad)
    assert bad.startswith(row["raw"].encode())
    assert RAW_FIELD_BYTES - 2 <= len(row["raw"].encode()) <= RAW_FIELD_BYTES
    assert (tmp_path / "out.jsonl").stat().st_size < 3 * RAW_FIELD_BYTES
    binary = b"\x80" * 10_000
    row = _error_row(tmp_path, binary)
    assert row["raw_encoding"] == "base64"
    assert base64.b64decode(row["raw"]) == binary[:RAW_FIELD_BYTES]
    assert row["raw_bytes"] == len(binary)


# --- a reader that goes away -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["rules", "list", "--json"], ["rules", "list"], ["audit", "--list-checks"], ["--help"]],
)
def test_a_closed_pipe_ends_the_command_quietly(args: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "choicebox", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # before the command writes: every write meets a closed pipe
    _, err = proc.communicate(timeout=60)
    assert err == b""
    assert proc.returncode in (141, 0)  # 0 when a write never happened (--help exits first)
    if args != ["--help"]:
        assert proc.returncode == 141


def test_a_metrics_file_that_cannot_be_written_is_named_not_its_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from choicebox.batch import _files

    target = tmp_path / "out_aggregate_metrics.json"

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device", str(src))

    monkeypatch.setattr(_files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left") as raised:
        _files.write_json(target, {"a": 1})
    assert raised.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []  # and the temporary file is gone
