"""Tests of the Ray engine (choicebox.batch.ray): it must write what the local engine writes."""

from __future__ import annotations

import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from ray.data import DataContext  # noqa: E402

from choicebox.batch import Grader, grade_file, partial_path, sidecar_paths  # noqa: E402
from choicebox.batch._engine import _numbered_lines  # noqa: E402
from choicebox.batch._files import SourceRecord, source_record_path  # noqa: E402
from choicebox.batch.ray import (  # noqa: E402
    RayGrader,
    grade_dataset,
    grade_file_ray,
    read_lines,
    record_from_bytes,
)
from choicebox.cli import main  # noqa: E402

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Ray's own DataContext warns about its deprecated settings; nothing here sets them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

MIXED = FIXTURES / "rollouts_mixed.jsonl"
ERRORS = FIXTURES / "rollouts_errors.jsonl"


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    context = DataContext.get_current()
    saved = (context.execution_options.preserve_order, context.enable_progress_bars)
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    yield
    context.execution_options.preserve_order, context.enable_progress_bars = saved
    ray.shutdown()


@pytest.fixture
def tricky(tmp_path: Path) -> Path:
    """Rows the local engine copes with and a naive line reader would not."""
    rows = MIXED.read_bytes().split(b"\n")
    path = tmp_path / "tricky.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                rows[0] + b"\r",  # a CRLF line
                b"",
                b"   ",  # blank lines still count in line numbers
                rows[1].replace(b'"uuid": "', '"uuid": "\u2028'.encode(), 1),  # raw U+2028
                b"{not json",
                b'{"uuid": "bad-\xff-byte"}',  # invalid UTF-8
                b"[1, 2]",
                rows[2],
            ]
        )
        # no newline at the end of the file
    )
    return path


def _ray_lines(path: Path, **kwargs: Any) -> tuple[list[int], bytes, list[Any]]:
    rows = grade_dataset(read_lines(path, chunk_bytes=512), **kwargs).take_all()
    text = b"".join(row["text"].encode("utf-8") + b"\n" for row in rows)
    return [row["line"] for row in rows], text, [record_from_bytes(row["record"]) for row in rows]


def test_ray_grader_pickles_and_grades_like_grader() -> None:
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs; ray[data] installs it

    grader = RayGrader(mode="lenient_boxed", rules_dirs=[], by=["metadata.subject"])
    clone = pickle.loads(pickle.dumps(grader))
    assert isinstance(clone, RayGrader)
    assert clone.__getstate__() == grader.__getstate__()
    line = MIXED.read_bytes().split(b"\n")[0]
    table = clone(pa.table({"line": [7], "text": [line]}))
    expected, records = Grader(mode="lenient_boxed", by=["metadata.subject"]).grade_lines(
        [(7, line)]
    )
    assert table.column("line").to_pylist() == [7]
    assert table.column("text").to_pylist()[0].encode() + b"\n" == expected
    assert [record_from_bytes(cell) for cell in table.column("record").to_pylist()] == records


@pytest.mark.parametrize("name", ["rollouts_mixed.jsonl", "rollouts_errors.jsonl", "tricky"])
def test_grade_dataset_equals_local_row_for_row(name: str, tricky: Path) -> None:
    path = tricky if name == "tricky" else FIXTURES / name
    local_data, local_records = Grader(by=["metadata.subject"]).grade_lines(
        _numbered_lines(path.read_bytes(), 1)
    )
    lines, data, records = _ray_lines(path, by=["metadata.subject"])
    assert data == local_data  # byte for byte, in order
    assert records == local_records
    assert lines == [number for number, _ in _numbered_lines(path.read_bytes(), 1)]


def test_grade_dataset_accepts_text_rows_and_dict_rows() -> None:
    question = "Which is a primary colour?\nA: red\nB: green-ish\nC: brown"
    rows = [
        {"uuid": f"u{i}", "question": question, "expected_answer": "A", "response": answer}
        for i, answer in enumerate(["\\boxed{A}", "\\boxed{C}", "no idea"])
    ]
    encoded = [orjson.dumps(row) for row in rows]
    local = _local_lines_of(encoded)
    as_text = grade_dataset(ray.data.from_items([{"text": e.decode()} for e in encoded]))
    as_dicts = grade_dataset(ray.data.from_items(rows))
    for ds in (as_text, as_dicts):
        got = [orjson.loads(row["text"]) for row in ds.take_all()]
        assert got == [orjson.loads(line) for line in local]


def _local_lines_of(encoded: list[bytes]) -> list[bytes]:
    data, _ = Grader().grade_lines((0, line) for line in encoded)
    return data.split(b"\n")[:-1]


def _comparable(path: Path, output: Path) -> dict[str, Any]:
    document: dict[str, Any] = orjson.loads(path.read_bytes())
    assert document["summary"]["output"] == str(output)
    document["summary"]["output"] = "OUTPUT"
    return document


@pytest.mark.parametrize("source", [MIXED, ERRORS])
def test_grade_file_ray_writes_what_grade_file_writes(source: Path, tmp_path: Path) -> None:
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    local = grade_file(source, local_out, workers=1, by=["metadata.subject"])
    result = grade_file_ray(source, ray_out, by=["metadata.subject"], chunk_bytes=700)
    assert ray_out.read_bytes() == local_out.read_bytes()
    assert not partial_path(ray_out).exists()
    for ours, theirs in zip(sidecar_paths(ray_out), sidecar_paths(local_out), strict=True):
        if ours.name.endswith("_aggregate_metrics.json"):
            assert _comparable(ours, ray_out) == _comparable(theirs, local_out)
        else:
            assert ours.read_bytes() == theirs.read_bytes()
    assert (result.rows, result.errors) == (local.rows, local.errors)


def test_grade_file_ray_resumes_from_a_partial(tmp_path: Path) -> None:
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    grade_file(ERRORS, local_out, workers=1)
    lines = local_out.read_bytes().split(b"\n")
    SourceRecord.of(ERRORS, None).write(source_record_path(ray_out))  # as a run writes it
    partial_path(ray_out).write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:10])  # torn
    result = grade_file_ray(ERRORS, ray_out, resume=True)
    assert result.resumed_rows == 3
    assert ray_out.read_bytes() == local_out.read_bytes()
    assert _comparable(sidecar_paths(ray_out)[0], ray_out) == _comparable(
        sidecar_paths(local_out)[0], local_out
    )


def test_cli_engine_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = shutil.copyfile(ERRORS, tmp_path / "in.jsonl")
    out, local_out = tmp_path / "out.jsonl", tmp_path / "local.jsonl"
    status = main(["grade", str(source), "-o", str(out), "--engine", "ray", "-q"])
    assert status == 1  # the file has error rows
    assert main(["grade", str(source), "-o", str(local_out), "--workers", "1", "-q"]) == 1
    assert out.read_bytes() == local_out.read_bytes()
    err = capsys.readouterr().err
    assert f"into {out}" in err


def test_a_run_stopped_locally_resumes_on_ray_and_matches_a_fresh_run(tmp_path: Path) -> None:
    """One pipeline under both runners: a ``.partial`` file one runner left, the other resumes."""
    source = tmp_path / "in.jsonl"
    source.write_bytes((MIXED.read_bytes().rstrip(b"\n") + b"\n") * 30 + ERRORS.read_bytes())
    fresh = tmp_path / "fresh.jsonl"
    expected = grade_file(source, fresh, workers=1, by=["metadata.subject", "grading_failure"])

    class Stop:
        def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
            pass

        def update(self, rows: int, nbytes: int) -> None:
            raise KeyboardInterrupt

        def close(self) -> None:
            pass

    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        grade_file(source, output, workers=1, progress=Stop(), chunk_bytes=4_000)
    result = grade_file_ray(
        source, output, by=["metadata.subject", "grading_failure"], resume=True, chunk_bytes=4_000
    )
    assert 0 < result.resumed_rows < result.rows
    assert output.read_bytes() == fresh.read_bytes()
    assert sidecar_paths(output)[1].read_bytes() == sidecar_paths(fresh)[1].read_bytes()
    assert _comparable(sidecar_paths(output)[0], output) == _comparable(
        sidecar_paths(fresh)[0], fresh
    )
    # The typed documents agree too, but for the output's name.
    assert result.metrics.categories == expected.metrics.categories
    assert result.metrics.failure_analysis == expected.metrics.failure_analysis
    assert result.metrics.agent_metrics == expected.metrics.agent_metrics
