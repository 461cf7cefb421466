"""Tests of ``choicebox grade`` (choicebox.cli.grade) and its engine (choicebox.batch)."""

from __future__ import annotations

import gc
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from choicebox.batch import (
    BatchError,
    default_output,
    grade_file,
    partial_path,
    sidecar_paths,
)
from choicebox.batch._files import SourceRecord, source_record_path
from choicebox.cli import grade as grade_command
from choicebox.cli import main
from choicebox.render import VERDICT_KEYS

FIXTURES = Path(__file__).parents[1] / "fixtures"
MIXED = FIXTURES / "rollouts_mixed.jsonl"
ERRORS = FIXTURES / "rollouts_errors.jsonl"
EXAMPLE = Path(__file__).parents[2] / "examples" / "rollouts.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _copy(src: Path, tmp_path: Path, name: str | None = None) -> Path:
    target = tmp_path / (name or src.name)
    shutil.copyfile(src, target)
    return target


def _many_rows(tmp_path: Path, n: int = 700) -> Path:
    """A file of ``n`` rows cycling through the example rollouts, with unique uuids."""
    base = _rows(EXAMPLE)
    path = tmp_path / "many.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            row = dict(base[i % len(base)])
            row["uuid"] = f"row-{i}"
            handle.write(json.dumps(row) + "\n")
            if i == 300:
                handle.write("{not json\n")
    return path


def _hand_made_partial(source: Path, output: Path, data: bytes, mode: str | None = None) -> None:
    """``OUTPUT.partial`` holding ``data``, recorded as graded from ``source`` (as a run does)."""
    SourceRecord.of(source, mode).write(source_record_path(output))
    partial_path(output).write_bytes(data)


def _verdicts(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row.get(key) for key in VERDICT_KEYS}


# --- the command --------------------------------------------------------------------------------


def test_grade_in_a_caller_s_process_leaves_its_collector_as_it_was(tmp_path: Path) -> None:
    # The command freezes what is loaded while it grades; a notebook or a test that calls it
    # must get a collector that frees its garbage afterwards.
    source = _copy(MIXED, tmp_path)
    frozen = gc.get_freeze_count()
    assert main(["grade", str(source), "--workers", "1", "-q"]) == 0
    assert gc.get_freeze_count() == frozen
    missing = tmp_path / "missing.jsonl"
    assert main(["grade", str(missing), "--workers", "1", "-q"]) == 2  # a failed run, too
    assert gc.get_freeze_count() == frozen


def test_grade_writes_one_row_per_input_row_in_order(tmp_path: Path) -> None:
    source = _copy(MIXED, tmp_path)
    assert main(["grade", str(source), "--workers", "1", "-q"]) == 0
    output = tmp_path / "rollouts_mixed_graded.jsonl"
    assert output == default_output(source)
    inputs, outputs = _rows(source), _rows(output)
    assert [r["uuid"] for r in inputs] == [r["uuid"] for r in outputs]
    for before, after in zip(inputs, outputs, strict=True):
        assert before == {k: v for k, v in after.items() if k in before}
        assert set(VERDICT_KEYS) <= set(after)
        assert after["reward"] == (
            1.0 if after["extracted_answer"] == after["expected_answer"] else 0.0
        )
    assert not partial_path(output).exists()


def test_grade_reads_responses_chat_completions_and_strings(tmp_path: Path) -> None:
    source = _copy(MIXED, tmp_path)
    main(["grade", str(source), "-o", str(tmp_path / "out.jsonl"), "--workers", "1", "-q"])
    outputs = _rows(tmp_path / "out.jsonl")
    assert isinstance(outputs[1]["response"], dict)
    assert "choices" in outputs[1]["response"]
    assert isinstance(outputs[2]["response"], str)
    assert all(row["extracted_answer"] is not None for row in outputs)
    assert all(row["grading_failure"] != "invalid_output" for row in outputs)


def test_rows_without_options_take_them_from_the_prompt(tmp_path: Path) -> None:
    source = _copy(MIXED, tmp_path)
    main(["grade", str(source), "-o", str(tmp_path / "out.jsonl"), "--workers", "1", "-q"])
    outputs = _rows(tmp_path / "out.jsonl")
    assert "options" in outputs[0]
    assert "options_source" not in outputs[0]
    assert all(row["options_source"] == "prompt" for row in outputs[1:])
    assert all("options" not in row for row in outputs[1:])


def test_bad_rows_become_error_rows_and_the_others_are_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(ERRORS, tmp_path)
    output = tmp_path / "out.jsonl"
    assert main(["grade", str(source), "-o", str(output), "--workers", "1", "-q"]) == 1
    rows = _rows(output)
    # Eight lines, one of them blank: seven output rows.
    assert len(rows) == 7
    assert [r.get("uuid") for r in rows] == [
        "q-0",
        None,
        "no-expected",
        "odd-mode",
        "no-response",
        None,
        "q-1",
    ]
    assert [r.get("line") for r in rows] == [None, 2, 3, 5, 6, 7, None]
    assert rows[1]["error"].startswith("line 2: invalid JSON")
    assert rows[1]["raw"] == '{"uuid": "broken", "responses_create_params": {"input": ['
    assert rows[2]["error"] == "line 3: required field missing @ $.expected_answer"
    assert rows[3]["error"].startswith("line 5: unknown grading mode 'no_such_mode'")
    assert rows[4]["error"] == "line 6: required field missing @ $.response"
    assert rows[5]["error"] == "line 7: expected a JSON object, got list @ $"
    assert {"error", "uuid", "line"} == set(rows[2])
    assert "reward" in rows[0]
    assert "reward" in rows[6]
    summary = json.loads(sidecar_paths(output)[0].read_text())["summary"]
    assert (summary["rows"], summary["errors"], summary["graded"]) == (7, 5, 2)
    assert "(5 errors)" in capsys.readouterr().err


def test_regrading_a_graded_file_gives_the_same_verdicts(tmp_path: Path) -> None:
    source = _copy(EXAMPLE, tmp_path)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    main(["grade", str(source), "-o", str(first), "--workers", "1", "-q"])
    main(["grade", str(first), "-o", str(second), "--workers", "1", "-q"])
    assert first.read_bytes() == second.read_bytes()
    # Stale verdict fields are replaced, not kept: grade a file whose verdicts are all wrong.
    stale = tmp_path / "stale.jsonl"
    rows = _rows(first)
    for row in rows:
        row.update(reward=0.5, extracted_answer="Z", grading_failure="bogus", extraction_step="x")
    stale.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["grade", str(stale), "-o", str(tmp_path / "third.jsonl"), "--workers", "1", "-q"])
    assert [_verdicts(r) for r in _rows(first)] == [
        _verdicts(r) for r in _rows(tmp_path / "third.jsonl")
    ]


def test_output_goes_to_partial_then_is_renamed(tmp_path: Path) -> None:
    """While grading, rows land in OUTPUT.partial; OUTPUT appears only when all are written."""
    source = _many_rows(tmp_path)
    output = tmp_path / "out.jsonl"
    seen: list[tuple[bool, bool]] = []

    class Watch:
        def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
            pass

        def update(self, rows: int, nbytes: int) -> None:
            seen.append((partial_path(output).exists(), output.exists()))

        def close(self) -> None:
            pass

    grade_file(source, output, workers=1, progress=Watch(), chunk_bytes=100_000)
    assert len(seen) > 2
    assert all(seen_partial and not seen_output for seen_partial, seen_output in seen)
    assert output.exists()
    assert not partial_path(output).exists()


class _Interrupt:
    """A progress sink that raises KeyboardInterrupt after ``after`` chunks, like a Ctrl-C."""

    def __init__(self, after: int) -> None:
        self.after = after

    def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
        pass

    def update(self, rows: int, nbytes: int) -> None:
        self.after -= 1
        if self.after == 0:
            raise KeyboardInterrupt

    def close(self) -> None:
        pass


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_run_leaves_partial_and_resume_completes_it(
    tmp_path: Path, workers: int
) -> None:
    source = _many_rows(tmp_path)
    fresh = tmp_path / "fresh.jsonl"
    main(
        ["grade", str(source), "-o", str(fresh), "--workers", "1", "-q", "--by", "metadata.subject"]
    )
    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        grade_file(source, output, workers=workers, progress=_Interrupt(2), chunk_bytes=100_000)
    assert not output.exists()
    assert 0 < len(_rows(partial_path(output))) < 701
    status = main(
        ["grade", str(source), "-o", str(output), "--resume", "-q", "--by", "metadata.subject"]
    )
    assert status == 1  # the bad line
    assert fresh.read_bytes() == output.read_bytes()
    for fresh_side, side in zip(sidecar_paths(fresh), sidecar_paths(output), strict=True):
        expected, actual = json.loads(fresh_side.read_text()), json.loads(side.read_text())
        expected.pop("summary", None)
        actual.pop("summary", None)
        assert expected == actual


def test_resume_redoes_a_torn_last_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _many_rows(tmp_path)
    fresh = tmp_path / "fresh.jsonl"
    main(["grade", str(source), "-o", str(fresh), "--workers", "1", "-q"])
    lines = fresh.read_bytes().splitlines(keepends=True)
    output = tmp_path / "out.jsonl"
    # 350 complete lines (the bad-JSON error row among them), then half of the next one.
    _hand_made_partial(source, output, b"".join(lines[:350]) + lines[350][:40])
    assert main(["grade", str(source), "-o", str(output), "--resume", "-q", "--workers", "2"]) == 1
    assert fresh.read_bytes() == output.read_bytes()
    assert len(lines) == len(_rows(output)) == 701
    assert "350 of them from the earlier run" in capsys.readouterr().err
    fresh_metrics = json.loads(sidecar_paths(fresh)[0].read_text())
    metrics = json.loads(sidecar_paths(output)[0].read_text())
    assert fresh_metrics["agent_metrics"] == metrics["agent_metrics"]
    assert fresh_metrics["summary"]["rows"] == metrics["summary"]["rows"] == 701


def test_resume_with_a_complete_line_that_is_invalid_json_redoes_it(tmp_path: Path) -> None:
    source = _copy(EXAMPLE, tmp_path)
    fresh = tmp_path / "fresh.jsonl"
    main(["grade", str(source), "-o", str(fresh), "--workers", "1", "-q"])
    lines = fresh.read_bytes().splitlines(keepends=True)
    output = tmp_path / "out.jsonl"
    _hand_made_partial(source, output, b"".join(lines[:5]) + b'{"reward": 1.0, "resp\n')
    assert main(["grade", str(source), "-o", str(output), "--resume", "-q", "--workers", "1"]) == 0
    assert fresh.read_bytes() == output.read_bytes()


def test_resume_without_partial_grades_from_the_start(tmp_path: Path) -> None:
    source = _copy(EXAMPLE, tmp_path)
    assert main(["grade", str(source), "--resume", "-q", "--workers", "1"]) == 0
    assert len(_rows(default_output(source))) == 20


def test_resume_refuses_a_partial_longer_than_the_input(tmp_path: Path) -> None:
    source = _copy(EXAMPLE, tmp_path)
    output = tmp_path / "out.jsonl"
    _hand_made_partial(source, output, b'{"reward": 1.0}\n' * 25)
    with pytest.raises(BatchError, match="more rows than the input"):
        grade_file(source, output, resume=True, workers=1)
    assert main(["grade", str(source), "-o", str(output), "--resume", "-q"]) == 2


def test_two_workers_write_the_same_file_as_one(tmp_path: Path) -> None:
    source = _many_rows(tmp_path, n=1100)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["grade", str(source), "-o", str(one), "--workers", "1", "-q"]) == 1
    assert main(["grade", str(source), "-o", str(two), "--workers", "2", "-q"]) == 1
    assert one.read_bytes() == two.read_bytes()
    assert (
        json.loads(sidecar_paths(one)[0].read_text())["agent_metrics"]
        == json.loads(sidecar_paths(two)[0].read_text())["agent_metrics"]
    )


def test_metrics_files_have_gym_keys_and_pass_at_k_for_repeats(tmp_path: Path) -> None:
    source = _copy(MIXED, tmp_path)  # uuids q-0..q-3, each twice
    assert main(["grade", str(source), "--workers", "1", "-q"]) == 0
    aggregate_path, failures_path = sidecar_paths(default_output(source))
    assert aggregate_path.name == "rollouts_mixed_graded_aggregate_metrics.json"
    assert failures_path.name == "rollouts_mixed_graded_failure_analysis.json"
    aggregate = json.loads(aggregate_path.read_text())
    agent = aggregate["agent_metrics"]
    for key in (
        "mean/reward",
        "mean/correctness",
        "mean/format",
        "pass@1/accuracy",
        "pass@2/accuracy",
        "majority@2/accuracy",
    ):
        assert key in agent
    assert "pass@3/accuracy" not in agent  # four tasks of two rollouts each
    assert agent["mean/reward"] == pytest.approx(5 / 8)
    assert aggregate["key_metrics"]["mean/reward"] == agent["mean/reward"]
    ci = aggregate["accuracy_ci"]
    assert ci["value"] == pytest.approx(5 / 8)
    assert ci["ci_lower"] <= ci["value"] <= ci["ci_upper"]
    assert {k: aggregate["summary"][k] for k in ("rows", "errors")} == {"rows": 8, "errors": 0}
    failures = json.loads(failures_path.read_text())
    assert failures["total_failures"] == 3
    assert {"wrong_answer"} == set(failures["categories"])


def test_rollouts_gym_masked_keep_their_mask_and_count_as_coverage(tmp_path: Path) -> None:
    """A rollout Gym masked (its reward is no measurement: the agent timed out, the judge was
    down) is graded, but keeps Gym's mask_sample and failure_kind, and is in no score."""
    rows = _rows(MIXED)
    rows[0].update(mask_sample=True, failure_kind="agent_timeout", failure_reason="took 600 s")
    rows[1].update(mask_sample=False, failure_kind=None)
    source = tmp_path / "masked.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["grade", str(source), "--workers", "1", "-q"]) == 0
    output = default_output(source)
    written = _rows(output)
    assert (written[0]["mask_sample"], written[0]["failure_kind"]) == (True, "agent_timeout")
    assert written[0]["failure_reason"] == "took 600 s"
    assert written[0]["grading_failure"] is None or written[0]["reward"] < 1
    assert (written[1]["mask_sample"], written[1]["failure_kind"]) == (False, None)
    aggregate_path, failures_path = sidecar_paths(output)
    agent = json.loads(aggregate_path.read_text())["agent_metrics"]
    assert agent["coverage/masked_rollouts"] == 1
    assert agent["coverage/measured_rollouts"] == len(rows) - 1
    unmasked = [json.loads(line) for line in output.read_text().splitlines()[1:]]
    assert agent["mean/reward"] == sum(r["reward"] for r in unmasked) / len(unmasked)
    failures = json.loads(failures_path.read_text())
    assert failures["categories"]["agent_timeout"]["count"] == 1


def test_task_key_falls_back_to_ng_task_index_then_prompt(tmp_path: Path) -> None:
    source = _copy(EXAMPLE, tmp_path)  # _ng_task_index 0..9, two rollouts each
    main(["grade", str(source), "--workers", "1", "-q"])
    agent = json.loads(sidecar_paths(default_output(source))[0].read_text())["agent_metrics"]
    assert "pass@2/accuracy" in agent
    without = tmp_path / "noindex.jsonl"
    rows = _rows(source)
    for row in rows:
        del row["_ng_task_index"]
    without.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["grade", str(without), "--workers", "1", "-q"])
    agent2 = json.loads(sidecar_paths(default_output(without))[0].read_text())["agent_metrics"]
    assert agent["pass@2/accuracy"] == agent2["pass@2/accuracy"]  # same prompts, same tasks


def test_by_reports_categories_per_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(MIXED, tmp_path)
    main(
        [
            "grade",
            str(source),
            "--workers",
            "1",
            "-q",
            "--by",
            "metadata.subject",
            "--by",
            "metadata.level",
            "--by",
            "nope",
        ]
    )
    categories = json.loads(sidecar_paths(default_output(source))[0].read_text())["categories"]
    assert list(categories) == ["metadata.subject", "metadata.level", "nope"]
    subjects = {c["category"]: c for c in categories["metadata.subject"]}
    assert {
        "biology",
        "chemistry",
        "computer_science",
        "earth_science",
        "economics",
        "mathematics",
    } == set(subjects)
    assert subjects["biology"]["n_samples"] == 2
    assert [c["category"] for c in categories["metadata.level"]] == ["0", "1"]
    assert [(c["category"], c["n_samples"]) for c in categories["nope"]] == [("(missing)", 8)]
    for stats in categories["metadata.subject"]:
        assert stats["ci_lower"] <= stats["mean_reward"] <= stats["ci_upper"]
    err = capsys.readouterr().err
    assert "worst metadata.subject:" in err


def test_plain_progress_lines_when_stderr_is_no_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grade_command, "PLAIN_INTERVAL", 0.0)
    source = _many_rows(tmp_path)
    main(["grade", str(source), "--workers", "1"])
    err = capsys.readouterr().err
    progress = [line for line in err.splitlines() if line.startswith("choicebox grade: ")]
    assert len(progress) >= 3  # one per chunk, and one at the end
    assert "rows/s" in progress[0]
    assert "ETA" in progress[0]
    assert progress[-1].startswith("choicebox grade: done 701 rows (100%)")
    assert "accuracy" in err


def test_quiet_silences_progress_but_not_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grade_command, "PLAIN_INTERVAL", 0.0)
    source = _many_rows(tmp_path)
    main(["grade", str(source), "--workers", "1", "-q"])
    err = capsys.readouterr().err
    assert "choicebox grade:" not in err
    assert "graded 701 rows" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", str(tmp_path / "missing.jsonl"), "-q"]) == 2
    assert f"choicebox grade: {tmp_path / 'missing.jsonl'}: no such input file" in (
        capsys.readouterr().err
    )
    source = _copy(EXAMPLE, tmp_path)
    assert main(["grade", str(source), "--mode", "no_such_mode", "-q"]) == 2
    assert "unknown grading mode" in capsys.readouterr().err
    assert not default_output(source).exists()
    with pytest.raises(SystemExit) as exc:
        main(["grade", str(source), "--workers", "0"])
    assert exc.value.code == 2


def test_mode_override_applies_to_every_row(tmp_path: Path) -> None:
    source = _copy(ERRORS, tmp_path)
    output = tmp_path / "out.jsonl"
    main(["grade", str(source), "-o", str(output), "--mode", "robust", "--workers", "1", "-q"])
    rows = _rows(output)
    assert rows[3]["grading_mode"] == "robust"  # its own unknown mode is overridden
    assert all(r["grading_mode"] == "robust" for r in rows if "error" not in r)


def test_report_is_written_when_asked(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    source = _copy(EXAMPLE, tmp_path)
    report = tmp_path / "report.html"
    assert (
        main(
            [
                "grade",
                str(source),
                "-q",
                "--workers",
                "1",
                "--by",
                "metadata.subject",
                "--report",
                str(report),
            ]
        )
        == 0
    )
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "biology" in page


def test_console_script_runs_in_a_subprocess(tmp_path: Path) -> None:
    source = _copy(EXAMPLE, tmp_path)
    done = subprocess.run(
        [*_command(), "grade", str(source), "--workers", "2", "--by", "metadata.subject"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "graded 20 rows" in done.stderr
    assert "choicebox grade: done 20 rows" in done.stderr  # plain progress: stderr is a pipe
    assert len(_rows(default_output(source))) == 20
    assert all(p.exists() for p in sidecar_paths(default_output(source)))


@pytest.mark.parametrize(
    "entry",
    [
        "from choicebox.cli import run\nrun()",
        "import runpy\nrunpy.run_module('choicebox', run_name='__main__')",
    ],
    ids=["script", "python -m"],
)
def test_the_executable_freezes_before_the_interpreter_ends_and_keeps_the_status(
    tmp_path: Path, entry: str
) -> None:
    # What is alive at exit is frozen, out of the interpreter's last collection; atexit
    # handlers still run, and the command's status is the process's.
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'frozen at exit: {gc.get_freeze_count() > 0}\\n'))\n"
        f"sys.argv = ['choicebox', 'grade', {str(tmp_path / 'missing.jsonl')!r}]\n"
        f"{entry}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "no such input file" in done.stderr
    assert done.stderr.rstrip().endswith("frozen at exit: True")


def _command() -> list[str]:
    script = shutil.which("choicebox", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "choicebox"]


def _start_and_stop(args: list[str], partial: Path, sig: int) -> subprocess.CompletedProcess[str]:
    """Run the command; once ``partial`` has grown, send ``sig`` to its process group."""
    before = partial.stat().st_size if partial.exists() else 0
    child = subprocess.Popen(
        [*_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: the signal reaches its workers, nothing else
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if partial.exists() and partial.stat().st_size > before:
            os.killpg(child.pid, sig)
            break
        time.sleep(0.005)
    out, err = child.communicate(timeout=60)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def test_ctrl_c_and_kill_9_never_leave_output_and_resume_finishes_exactly(tmp_path: Path) -> None:
    source = _many_rows(tmp_path, n=30_000)
    output = tmp_path / "out.jsonl"
    partial = partial_path(output)
    args = ["grade", str(source), "-o", str(output), "--workers", "2"]

    stopped = _start_and_stop(args, partial, signal.SIGINT)
    if stopped.returncode != 130:
        pytest.skip(f"the run ended before it could be interrupted ({stopped.returncode})")
    assert "--resume" in stopped.stderr
    assert not output.exists()
    assert partial.exists()

    killed = _start_and_stop([*args, "--resume"], partial, signal.SIGKILL)
    if killed.returncode != -signal.SIGKILL:
        pytest.skip(f"the resumed run ended before it could be killed ({killed.returncode})")
    assert not output.exists()

    assert main([*args, "--resume", "-q"]) == 1
    fresh = tmp_path / "fresh.jsonl"
    main(["grade", str(source), "-o", str(fresh), "--workers", "2", "-q"])
    assert fresh.read_bytes() == output.read_bytes()
    assert not partial.exists()
    assert not any(p.name.endswith(".chunks") for p in tmp_path.iterdir())
    expected = json.loads(sidecar_paths(fresh)[0].read_text())
    actual = json.loads(sidecar_paths(output)[0].read_text())
    assert expected["agent_metrics"] == actual["agent_metrics"]
    assert expected["accuracy_ci"] == actual["accuracy_ci"]


def test_chunks_are_copied_in_user_space_where_sendfile_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from choicebox.batch import _local

    def refuse(*args: object) -> int:
        raise OSError("sendfile not supported here")

    source = _many_rows(tmp_path)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    grade_file(source, one, workers=1)
    monkeypatch.setattr(_local.os, "sendfile", refuse)
    grade_file(source, two, workers=2, chunk_bytes=50_000)
    assert one.read_bytes() == two.read_bytes()


def test_appending_the_verdict_to_the_input_bytes_equals_re_encoding_the_row() -> None:
    """The fast path (input bytes + verdict fields) writes what ``grade_row`` returns."""
    from choicebox.batch import Grader

    grader = Grader()
    lines = [
        (n, raw)
        for n, raw in enumerate(
            (FIXTURES / "rollouts_mixed.jsonl").read_bytes().splitlines(), start=1
        )
        if raw.strip()
    ]
    data, records = grader.grade_lines(lines)
    written = data.splitlines()
    assert len(written) == len(lines) == len(records)
    spliced = 0
    for (n, raw), out in zip(lines, written, strict=True):
        assert orjson.loads(out) == grader.grade_row(n, raw)
        if out.startswith(raw.rstrip()[:-1]):
            spliced += 1
    assert spliced > 0  # the fast path really ran


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_input_that_is_no_regular_file_is_named_for_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["grade", str(tmp_path), "-o", str(tmp_path / "out.jsonl")]) == 2
    assert "not a regular file: a directory" in capsys.readouterr().err
    assert main(["grade", "/dev/zero", "-o", str(tmp_path / "out.jsonl")]) == 2
    assert "not a regular file: a device, pipe or socket" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "absent.jsonl")]) == 2
    assert "no such input file" in capsys.readouterr().err


def test_a_compressed_input_is_refused_by_name_not_graded_as_error_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "rollouts.jsonl.gz"
    source.write_bytes(gzip.compress(EXAMPLE.read_bytes()))
    output = tmp_path / "out.jsonl"
    assert main(["grade", str(source), "-o", str(output)]) == 2
    err = capsys.readouterr().err
    assert str(source) in err
    assert "compressed with gzip" in err
    assert not output.exists()


def test_a_category_cannot_drive_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = json.loads(EXAMPLE.read_text(encoding="utf-8").splitlines()[0])
    row["metadata"] = {"category": "\x1b[2J\x1b[31mred"}
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps(row) + "\n", encoding="utf-8")
    main(["grade", str(source), "--by", "metadata.category", "--workers", "1"])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "\\x1b[2J\\x1b[31mred" in err
