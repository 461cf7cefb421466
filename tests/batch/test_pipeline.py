"""The one file pipeline (choicebox.batch._pipeline) and the one metrics accumulator under it.

A runner only turns spans into graded bytes and records; whatever runner is used and however it
cuts its output, the pipeline must write the same files. And the records the workers send back
must be the records the metrics read off the written rows, since ``--resume`` counts the rows of
a ``.partial`` file by reading them.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Generator, Iterator
from multiprocessing.pool import AsyncResult
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from choicebox._modes import COMPONENTS
from choicebox.batch import Grader, _local, grade_file, partial_path, sidecar_paths
from choicebox.batch._engine import _numbered_lines
from choicebox.batch._files import Span, count_newlines, input_spans
from choicebox.batch._local import LocalRunner
from choicebox.batch._pipeline import Graded, Job, Runner, grade_with
from choicebox.metrics import (
    CategoryEntry,
    MetricsAccumulator,
    MetricsDocument,
    RowRecord,
    RunSummary,
    aggregate_metrics,
    category_breakdown,
    failure_analysis,
)
from choicebox.metrics._records import EXEMPLARS_PER_KIND, failed, failure_kind
from choicebox.render._records import _task_key, record_of

FIXTURES = Path(__file__).parents[1] / "fixtures"
EXAMPLE = Path(__file__).parents[2] / "examples" / "rollouts.jsonl"
SOURCES = [FIXTURES / "rollouts_mixed.jsonl", FIXTURES / "rollouts_errors.jsonl", EXAMPLE]
# Fields to count categories by: one of the input's and three that only the output has.
BY = ("metadata.subject", "grading_failure", "options_source", "reward_components.format")

# A mode that rewards format too: rewards of 0.25, 0.75 and 1.0, and a right answer (no failure
# kind) that still earns less than 1.
WEIGHTED = """\
version: 1
id: weighted_boxed
description: Boxed letters, rewarding the format a little.
extends: strict_single_letter_boxed
weights: {correctness: 0.75, format: 0.25}
"""


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "weighted_boxed.yaml").write_text(WEIGHTED, encoding="utf-8")
    return folder


def _mixed_file(tmp_path: Path, copies: int = 40) -> Path:
    """Every line of the fixtures (bad ones and blank ones too), many times, with new uuids."""
    lines: list[bytes] = []
    for copy in range(copies):
        for source in SOURCES:
            for raw in source.read_bytes().split(b"\n"):
                try:
                    row = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    lines.append(raw)
                    continue
                if isinstance(row, dict) and "uuid" in row:
                    row["uuid"] = f"{row['uuid']}-{copy % 7}"  # a few rollouts per task
                    if copy % 3 == 0:
                        row["response"] = "Hmm. \\boxed{B} \\boxed{B}"  # right answer, twice
                lines.append(orjson.dumps(row))
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


class _OneLineAtATime:
    """A runner that grades in this process and hands back one row per piece of output."""

    def grade(self, job: Job, spans: Iterator[Span]) -> Generator[Graded, None, None]:
        grader = job.grader()
        for span in spans:
            numbered = list(_numbered_lines(span.data, span.first_line))
            if not numbered:
                yield Graded(b"", None, [], span.nbytes)
            for position, line in enumerate(numbered):
                data, records = grader.grade_lines([line])
                done = span.nbytes if position == len(numbered) - 1 else 0
                yield Graded(data, None, records, done)


def _files(output: Path) -> dict[str, Any]:
    """The output and metrics files of a run, with the output's own name taken out."""
    aggregate_path, failures_path = sidecar_paths(output)
    aggregate = json.loads(aggregate_path.read_text())
    assert aggregate["summary"].pop("output") == str(output)
    return {
        "output": output.read_bytes(),
        "aggregate": aggregate,
        "failures": failures_path.read_bytes(),
    }


@pytest.mark.parametrize("mode", [None, "weighted_boxed"])
def test_every_runner_writes_the_same_files(tmp_path: Path, rules: Path, mode: str | None) -> None:
    source = _mixed_file(tmp_path)
    runners: dict[str, Runner] = {
        "here": LocalRunner(1),
        "pool": LocalRunner(2),
        "line by line": _OneLineAtATime(),
    }
    written = {}
    for name, runner in runners.items():
        output = tmp_path / f"{name}.jsonl"
        result = grade_with(
            runner, source, output, mode=mode, rules_dirs=[rules], by=BY, chunk_bytes=20_000
        )
        written[name] = _files(output)
        summary = written[name]["aggregate"]["summary"]
        assert (result.rows, result.errors) == (summary["rows"], summary["errors"])
        assert 0 < result.errors < result.rows
    assert written["pool"] == written["here"]
    assert written["line by line"] == written["here"]


def test_a_file_of_one_span_is_graded_without_starting_a_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing

    source = _mixed_file(tmp_path, copies=2)
    here = tmp_path / "here.jsonl"
    grade_with(LocalRunner(1), source, here, by=BY)

    def no_pool(*args: object) -> None:
        raise AssertionError("a pool was started for a file of one span")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    small = tmp_path / "small.jsonl"
    grade_with(LocalRunner(2), source, small, by=BY)  # one span: CHUNK_BYTES is 1 MiB
    assert _files(small) == _files(here)
    with pytest.raises(AssertionError, match="a pool was started"):
        grade_with(LocalRunner(2), source, tmp_path / "two.jsonl", by=BY, chunk_bytes=2_000)


def test_a_run_stopped_under_one_runner_resumes_under_another(tmp_path: Path) -> None:
    source = _mixed_file(tmp_path)
    fresh = tmp_path / "fresh.jsonl"
    grade_file(source, fresh, workers=1, by=BY)

    class Stop:
        updates = 0

        def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
            pass

        def update(self, rows: int, nbytes: int) -> None:
            self.updates += 1
            if self.updates == 3:
                raise KeyboardInterrupt

        def close(self) -> None:
            pass

    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        grade_with(LocalRunner(2), source, output, by=BY, progress=Stop(), chunk_bytes=20_000)
    assert not output.exists()
    assert partial_path(output).stat().st_size > 0
    result = grade_with(_OneLineAtATime(), source, output, by=BY, resume=True)
    assert result.resumed_rows > 0
    expected, actual = _files(fresh), _files(output)
    assert actual == expected


# --- records ------------------------------------------------------------------------------------


def _graded_lines(grader: Grader, path: Path) -> tuple[list[bytes], list[Any]]:
    data, records = grader.grade_lines(_numbered_lines(path.read_bytes(), 1))
    return data.splitlines(), records


def _with_exemplar_previews_only(records: list[RowRecord]) -> list[RowRecord]:
    """``records`` with a response preview only on the first failures of each kind, the ones
    that can become exemplars: the only previews the grader's records carry."""
    shown: Counter[str] = Counter()
    out = []
    for record in records:
        if failed(record):
            kind = failure_kind(record)
            shown[kind] += 1
            if shown[kind] > EXEMPLARS_PER_KIND:
                out.append(record._replace(preview=""))
                continue
        out.append(record)
    return out


@pytest.mark.parametrize("mode", [None, "weighted_boxed"])
def test_the_records_workers_send_are_the_records_read_off_the_written_rows(
    tmp_path: Path, rules: Path, mode: str | None
) -> None:
    """What a fresh run counts (records from the grader) is what a resumed run counts (records
    read back from the output): rows written from the input's bytes, rows re-encoded, error rows,
    rows with an input ``error`` field or stale verdict fields, categories the verdict writes."""
    source = _mixed_file(tmp_path, copies=3)
    rows = [orjson.loads(line) for line in EXAMPLE.read_bytes().splitlines()]
    extra = tmp_path / "extra.jsonl"
    extra.write_bytes(
        b"\n".join(
            orjson.dumps(row)
            for row in [
                {**rows[0], "error": "the rollout timed out"},  # graded all the same
                {**rows[1], "grading_failure": "bogus", "reward": 0.5, "extraction_step": "x"},
                {**rows[2], "options_source": "prompt"},
                {**rows[3], "uuid": 17, "metadata": {"subject": None}},
                # A rollout Gym masked: graded, but counted as coverage, not as a score.
                {**rows[4], "mask_sample": True, "failure_kind": "agent_timeout"},
            ]
        )
    )
    grader = Grader(mode=mode, rules_dirs=(str(rules),), by=BY)
    kinds = set()
    for path in (source, extra):
        written, records = _graded_lines(grader, path)
        assert len(written) == len(records)
        read_back = [record_of(orjson.loads(line), BY) for line in written]
        assert records == _with_exemplar_previews_only(read_back)
        kinds |= {r.categories[1] for r in records if r.reward is not None and not r.masked}
        masked = [record for record in records if record.masked]
        assert [record.failure for record in masked] == (
            ["agent_timeout"] if path == extra else []
        )
    assert kinds >= {"(missing)", "wrong_answer"}  # grading_failure is read from the verdict


def test_the_accumulator_makes_one_document_from_rows_or_from_records(tmp_path: Path) -> None:
    source = _mixed_file(tmp_path, copies=3)
    written, records = _graded_lines(Grader(by=BY), source)
    rows = [orjson.loads(line) for line in written]

    def fresh() -> MetricsAccumulator:
        return MetricsAccumulator(component_names=COMPONENTS, include_groups=False, by=BY)

    from_records, from_rows = fresh(), fresh()
    from_records.add_records(records)
    for row in rows:
        # The library groups by _ng_task_index or the key it is given: give it grade's.
        key = None if "error" in row else _task_key(row)
        from_rows.add(row, task_key=key if isinstance(key, str) else None)
    summary = RunSummary(input="in.jsonl", output="out.jsonl", mode=None)
    document = from_records.document(summary=summary)
    assert from_rows.document(summary=summary) == document
    errors = sum("error" in row for row in rows)
    assert (from_records.n_rows, from_records.n_errors) == (len(rows), errors)
    assert errors > 0

    # The one-shot functions are the same accumulator run over a list.
    graded = [row for row in rows if "error" not in row]
    by_uuid = aggregate_metrics(
        [{**row, "task": _task_key(row)} for row in graded],
        profile=False,
        component_names=COMPONENTS,
        include_groups=False,
        task_key_field="task",
    )
    assert by_uuid["agent_metrics"] == document.agent_metrics
    assert by_uuid["key_metrics"] == document.key_metrics
    subjects = category_breakdown(rows, "metadata.subject")
    assert (
        tuple(CategoryEntry.of(stats) for stats in subjects)
        == (document.categories["metadata.subject"])
    )
    assert failure_analysis(rows) == document.failure_json()


def test_the_metrics_files_read_back_as_the_document_they_were_written_from(
    tmp_path: Path,
) -> None:
    source = _mixed_file(tmp_path, copies=2)
    result = grade_file(source, tmp_path / "out.jsonl", workers=1, by=BY, summary={"run": 7})
    aggregate = orjson.loads(result.aggregate_path.read_bytes())
    failures = orjson.loads(result.failures_path.read_bytes())
    notes: list[str] = []
    document = MetricsDocument.from_json({**aggregate, "failure_analysis": failures}, notes=notes)
    assert notes == []
    assert document == result.metrics
    assert document.summary is not None
    assert document.summary.extra == {"run": 7}
    indent = orjson.OPT_INDENT_2
    assert orjson.dumps(document.aggregate_json(), option=indent) + b"\n" == (
        result.aggregate_path.read_bytes()
    )
    assert orjson.dumps(document.failure_json(), option=indent) + b"\n" == (
        result.failures_path.read_bytes()
    )


def test_only_intervals_of_graded_scores_import_numpy() -> None:
    """numpy costs 50-90 ms to import: a command that lists rules, or grades with 0/1 rewards
    (whose interval is read off the binomial distribution), must not pay it."""
    script = """
import sys
import choicebox.batch, choicebox.batch.ray, choicebox.cli, choicebox.metrics.report, choicebox.server
from choicebox.cli import main
main(["rules", "list"])
assert "numpy" not in sys.modules, "numpy was imported"
from choicebox.metrics import bootstrap_ci
interval = bootstrap_ci([0.0, 1.0, 1.0, 1.0])
assert 0.0 < interval.ci_lower < interval.value < interval.ci_upper == 1.0, interval
assert "numpy" not in sys.modules, "numpy was imported for 0/1 scores"
bootstrap_ci([0.0, 0.5, 1.0])
assert "numpy" in sys.modules
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_grading_a_file_on_one_worker_imports_only_what_grading_needs(tmp_path: Path) -> None:
    """Start-up is part of every run: numpy (an interval of 0/1 rewards needs none),
    multiprocessing (no pool), Ray and the rule-file example runner stay out of the process."""
    source = _mixed_file(tmp_path, copies=2)
    script = f"""
import sys
from choicebox.cli import main
status = main(["grade", {str(source)!r}, "-o", {str(tmp_path / "out.jsonl")!r},
               "--mode", "lenient_boxed", "--workers", "1", "-q"])
assert status in (0, 1), status
heavy = {{"numpy", "multiprocessing", "ray", "choicebox.testing"}} & set(sys.modules)
assert not heavy, heavy
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").stat().st_size > 0


class _NotBackYet(AsyncResult):  # type: ignore[type-arg]
    """A pool's result that is never ready before it is asked for."""

    def __init__(self, graded: Graded) -> None:  # no pool behind it
        self._graded = graded

    def ready(self) -> bool:
        return False

    def get(self, timeout: float | None = None) -> Graded:
        return self._graded


class _SlowPool:
    """A pool whose results are back only once asked for: the busiest pool there is. What it
    grades has no records, to tell it from what this process grades."""

    def __init__(self, grader: Grader, source: Path) -> None:
        self.grader, self.source, self.handed = grader, source, 0

    def apply_async(self, _func: object, args: tuple[Span]) -> _NotBackYet:
        (span,) = args
        assert span.data == b"", "a worker reads its own bytes"
        self.handed += 1
        data = self.source.read_bytes()[span.offset : span.offset + span.nbytes]
        output, _ = self.grader.grade_lines(_numbered_lines(data, span.first_line))
        return _NotBackYet(Graded(output, None, [], span.nbytes))


def test_this_process_grades_the_next_spans_while_the_pool_is_busy(tmp_path: Path) -> None:
    source = _mixed_file(tmp_path, copies=3)
    grader = Grader(by=BY)
    with open(source, "rb") as handle:
        spans = list(input_spans(handle, offset=0, first_line=1, size=2_000))
    assert len(spans) > _local._PENDING_MAX + 4
    pool = _SlowPool(grader, source)
    graded = list(_local._share(pool, 1, grader, iter(spans)))
    # Every span once, in input order, whoever graded it.
    expected = [grader.grade_lines(_numbered_lines(s.data, s.first_line))[0] for s in spans]
    assert [piece.data for piece in graded] == expected
    assert [piece.nbytes for piece in graded] == [s.nbytes for s in spans]
    here = [piece for piece in graded if piece.records]
    assert 0 < len(here) < len(spans)
    assert pool.handed == len(spans) - len(here)


# Lines of every length around the point where counting switches from `find` to `count`.
_LINES = st.lists(
    st.one_of(st.integers(0, 40), st.integers(400, 3_000)).map(lambda n: b"x" * n),
    max_size=300,
)


@given(lines=_LINES, end=st.sampled_from([b"", b"\n", b"tail"]))
def test_count_newlines_counts_what_bytes_count_counts(lines: list[bytes], end: bytes) -> None:
    data = b"\n".join(lines) + end
    assert count_newlines(data) == data.count(b"\n")


@given(lines=_LINES, size=st.integers(1, 5_000))
def test_spans_are_numbered_by_the_lines_before_them(lines: list[bytes], size: int) -> None:
    data = b"\n".join(lines) + b"\n"
    spans = list(input_spans(io.BytesIO(data), offset=0, first_line=1, size=size))
    assert b"".join(span.data for span in spans) == data
    for span in spans:
        assert span.data.endswith(b"\n")
        assert span.first_line == data[: span.offset].count(b"\n") + 1


# --- the output reaches the disk before it is renamed into place ---------------------------------


def test_the_output_is_on_disk_before_it_is_renamed_and_the_metrics_are_written_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _mixed_file(tmp_path, copies=2)
    output = tmp_path / "out.jsonl"
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    aggregate, failures = (path.name for path in sidecar_paths(output))
    metrics_written = threading.Event()

    def fsync(fd: int) -> None:
        # The partial output, by a descriptor of its own: the run closes its own before waiting.
        assert os.path.samefile(f"/proc/self/fd/{fd}", partial_path(output))
        events.append("fsync starts")
        # A disk that is slow until the metrics are written: a run that wrote them only after
        # the fsync would leave this waiting out its minute, and fail below. No clock is raced.
        metrics_written.wait(timeout=60)
        real_fsync(fd)
        events.append("fsync ends")

    def replace(src: Any, dst: Any) -> None:
        events.append(f"replace {Path(dst).name}")
        real_replace(src, dst)
        if Path(dst).name == failures:
            metrics_written.set()

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    result = grade_file(source, output, workers=1)
    assert result.rows > 0
    assert events.count("fsync ends") == 1
    assert events.index("fsync ends") < events.index("replace out.jsonl") == len(events) - 1
    # The metrics files were written while the disk worked: before the fsync ended (the fsync
    # runs beside them, so whether it started before or after the first of them is a race).
    metrics = (f"replace {aggregate}", f"replace {failures}")
    written = [event for event in events[: events.index("fsync ends")] if event in metrics]
    assert written == list(metrics)
    assert output.exists()
    assert not partial_path(output).exists()


def test_a_failed_fsync_leaves_the_partial_output_and_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _mixed_file(tmp_path, copies=2)
    output = tmp_path / "out.jsonl"

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output error"):
        grade_file(source, output, workers=1)
    assert not output.exists()
    assert partial_path(output).stat().st_size > 0  # kept, for --resume


def test_without_a_thread_for_it_the_fsync_is_done_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _mixed_file(tmp_path, copies=2)
    output = tmp_path / "out.jsonl"

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    open_before = len(os.listdir("/proc/self/fd"))
    result = grade_file(source, output, workers=1)
    assert result.rows > 0
    assert output.exists()
    assert len(os.listdir("/proc/self/fd")) == open_before  # the duplicate descriptor is closed
