"""``choicebox grade --judge-url`` end to end against a real OpenAI-compatible server on loopback:
the fault table (every fault, what the row records, no row lost), the reward following the judge
on flagged rows only, the cache making a rerun cost 0 calls, an interrupted pass resumed, an
unreachable judge leaving every rule verdict in place, and calibration."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import choicebox
from choicebox.batch import grade_file, judge_file, judging_path, sidecar_paths
from choicebox.cli import main
from choicebox.judge import Judge, JudgeCache, JudgeEndpoint
from openai_stub import StubState, openai_stub

OPTIONS = ["Granite", "Basalt", "Marble", "Pumice"]
FLOATS = "Rocks full of gas bubbles float, and pumice is full of them."

# (response, judge_letter, judge_failure, reward): the fault table. Every row is flagged (robust
# finds no answer in it) except the last two, which the judge never sees.
TABLE: list[tuple[str, str | None, str | None, float]] = [
    (FLOATS, "D", None, 1.0),
    ("Dense rock sinks. Basalt came to mind, for no good reason.", "B", None, 0.0),
    ("Hard to say which.", None, None, 0.0),  # the judge reads NONE
    (f"{FLOATS} [[stub:429*2]]", "D", None, 1.0),  # rate limited twice, then the reply
    (f"{FLOATS} [[stub:500*2]]", "D", None, 1.0),  # two server errors, then the reply
    (f"{FLOATS} [[stub:slow*1]]", "D", None, 1.0),  # one reply too slow, then one in time
    (f"{FLOATS} [[stub:500*always]]", None, "http_error", 0.0),
    (f"{FLOATS} [[stub:429*always]]", None, "rate_limited", 0.0),
    (f"{FLOATS} [[stub:slow*always]]", None, "timeout", 0.0),
    (f"{FLOATS} [[stub:malformed]]", None, "bad_response", 0.0),
    (f"{FLOATS} [[stub:shapeless]]", None, "bad_response", 0.0),
    (f"{FLOATS} [[stub:reply=I think D]]", None, "not_a_letter", 0.0),
    (f"{FLOATS} [[stub:reply=d]]", None, "not_a_letter", 0.0),
    (f"{FLOATS} [[stub:reply=J]]", None, "not_an_option", 0.0),
    (f"{FLOATS} [[stub:400]]", None, "http_error", 0.0),
    (f"{FLOATS} [[stub:drop]]", None, "unreachable", 0.0),
]
DECIDED = "The answer is (D)."  # the rules decided it: not sent (but for calibration)
HEDGE = "The answer is (A) or (D). Pumice, probably."  # ambiguous: never sent, never rewarded


def _write_rows(path: Path, responses: list[str]) -> Path:
    sample = choicebox.MCQASample.from_question("Which rock floats on water?", OPTIONS, "D")
    with open(path, "wb") as handle:
        for number, response in enumerate(responses):
            row = {**sample.to_wire(), "uuid": f"row-{number}", "response": response}
            handle.write(orjson.dumps(row) + b"\n")
    return path


def _read(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture
def stub() -> Iterator[tuple[str, StubState]]:
    # A slow reply takes four times the client's timeout below; a normal one, milliseconds, and the
    # timeout leaves a loaded machine ample room for them.
    with openai_stub(slow_seconds=6.0) as running:
        yield running


def _grade(source: Path, output: Path, url: str, *extra: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main([
            "grade", str(source), "-o", str(output), "--mode", "robust", "--workers", "1", "-q",
            "--judge-url", url, "--judge-model", "stub-judge", "--judge-timeout", "1.5",
            "--judge-retries", "2", *extra,
        ])  # fmt: skip
    return status, err.getvalue()


def _quick_endpoint(**settings: Any) -> JudgeEndpoint:
    # Short waits between retries (their number is what the tests count).
    return JudgeEndpoint(**{"backoff": 0.01, "max_backoff": 0.02, **settings})


def test_the_fault_table_every_row_kept_with_what_its_judge_did(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, state = stub
    responses = [row[0] for row in TABLE] + [DECIDED, HEDGE]
    source = _write_rows(tmp_path / "rollouts.jsonl", responses)
    output = tmp_path / "graded.jsonl"
    status, summary = _grade(source, output, url)
    assert status == 0, summary
    rows = _read(output)
    assert [row["uuid"] for row in rows] == [f"row-{n}" for n in range(len(responses))]  # 0 rows lost
    for row, (response, letter, failure, reward) in zip(rows, TABLE, strict=False):
        assert row["response"] == response
        assert (row["judge_letter"], row["judge_failure"], row["reward"]) == (letter, failure, reward), response
        # The rule verdict stays what the rules said.
        assert (row["needs_judge"], row["extracted_answer"], row["grading_failure"]) == (True, None, "no_answer")
        assert row["judge_model"] == "stub-judge"
        assert row["correctness"] == reward
        assert row["format"] == 0.0
    decided, hedge = rows[len(TABLE) :]
    assert (decided["extracted_answer"], decided["needs_judge"], decided["judge_model"], decided["reward"]) == ("D", False, None, 1.0)
    assert (hedge["grading_failure"], hedge["needs_judge"], hedge["judge_model"], hedge["reward"]) == ("ambiguous", False, None, 0.0)
    assert "judge: on the flagged rows: decided 5, none 1, failed 10" in summary
    assert "; 4 rewards changed" in summary
    assert not judging_path(output).exists()
    report = orjson.loads(sidecar_paths(output)[0].read_bytes())["summary"]["judge"]
    assert (report["flagged"], report["decided"], report["none"], report["failed"]) == (16, 5, 1, 10)
    assert report["judge_failures"] == {
        "bad_response": 2, "http_error": 2, "not_a_letter": 2, "not_an_option": 1, "rate_limited": 1,
        "timeout": 1, "unreachable": 1,
    }  # fmt: skip
    assert report["cost"]["calls"] == state.calls
    assert report["cost"]["retries"] == state.calls - len(TABLE)
    assert report["cost"]["tokens"] > 0


def test_a_rerun_asks_the_judge_nothing_and_writes_the_same_rows(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, state = stub
    good = [row[0] for row in TABLE if row[2] is None]  # the rows the judge answered
    source = _write_rows(tmp_path / "rollouts.jsonl", [*good, DECIDED])
    output = tmp_path / "graded.jsonl"
    assert _grade(source, output, url)[0] == 0
    first, calls = output.read_bytes(), state.calls
    assert calls > len(good)  # the retries
    status, summary = _grade(source, output, url)
    assert status == 0
    assert state.calls == calls  # the second run made 0 calls
    assert f"judge: cost 0 calls (0 retries), {len(good):,} replies from the cache" in summary
    assert output.read_bytes() == first


def test_an_interrupted_judge_pass_leaves_the_rule_verdicts_and_resumes_from_the_cache(
    stub: tuple[str, StubState], tmp_path: Path
) -> None:
    url, state = stub
    responses = [f"{FLOATS} (row {n})" for n in range(40)]
    source = _write_rows(tmp_path / "rollouts.jsonl", responses)
    output = tmp_path / "graded.jsonl"
    cache_path = tmp_path / "cache.jsonl"
    grade_file(source, output, mode="robust", workers=1)
    rule_rows = output.read_bytes()
    endpoint = _quick_endpoint(url=url, model="stub-judge", concurrency=2)  # windows of 8 rows

    def stop_after_the_first_window(done: int, total: int) -> None:
        if done < total:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), Judge(endpoint, cache=JudgeCache(cache_path)) as judge:
        judge_file(output, judge, progress=stop_after_the_first_window)
    assert output.read_bytes() == rule_rows  # every rule verdict in place
    assert not judging_path(output).exists()
    asked = state.calls
    assert 0 < asked < len(responses)
    with Judge(endpoint, cache=JudgeCache(cache_path)) as judge:
        result = judge_file(output, judge)
    assert state.calls == len(responses)  # only the rest was asked
    assert (result.report.cost.cached, result.report.decided) == (asked, len(responses))
    assert all(row["reward"] == 1.0 for row in _read(output))


def test_an_unreachable_judge_keeps_every_rule_verdict_and_says_so(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    responses = [f"{FLOATS} (row {n})" for n in range(30)] + [DECIDED]
    source = _write_rows(tmp_path / "rollouts.jsonl", responses)
    plain = tmp_path / "plain.jsonl"
    assert main(["grade", str(source), "-o", str(plain), "--mode", "robust", "--workers", "1", "-q"]) == 0
    output = tmp_path / "graded.jsonl"
    status, summary = _grade(source, output, f"http://127.0.0.1:{port}/v1")
    assert status == 1
    assert "judge: UNREACHABLE (5 prompts in a row got no answer" in summary
    assert "every row it did not judge keeps its rule verdict; no row is lost" in summary
    judged, rules = _read(output), _read(plain)
    assert len(judged) == len(rules)
    judge_fields = {"judge_model", "judge_failure"}
    for after, before in zip(judged, rules, strict=True):
        assert {k: v for k, v in after.items() if k not in judge_fields} == {k: v for k, v in before.items() if k not in judge_fields}
    assert {row["judge_failure"] for row in judged[:30]} == {"unreachable"}
    report = orjson.loads(sidecar_paths(output)[0].read_bytes())["summary"]["judge"]
    # The breaker: after 5 prompts without an answer the rest were not sent (a few were in flight).
    assert report["cost"]["prompts"] < 30
    assert report["unreachable"].startswith("5 prompts in a row got no answer")


def test_calibration_sends_rows_the_rules_decided_and_reports_agreement(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, _ = stub
    agreeing = ["The answer is (D). Pumice is full of gas bubbles."] * 6
    disagreeing = ["The answer is (A). Granite, or maybe pumice?"]  # the stub reads two texts: NONE
    source = _write_rows(tmp_path / "rollouts.jsonl", [FLOATS, *agreeing, *disagreeing])
    output = tmp_path / "graded.jsonl"
    status, summary = _grade(source, output, url, "--judge-sample", "50")
    assert status == 0
    assert "calibration on 7 rows the rules decided: agreement 85.7% (95% Wilson CI" in summary
    report = orjson.loads(sidecar_paths(output)[0].read_bytes())["summary"]["judge"]
    calibration = report["calibration"]
    assert (calibration["sampled"], calibration["answered"], calibration["agreed"], calibration["judge_none"]) == (7, 7, 6, 1)
    assert 0.0 < calibration["ci_lower"] < 6 / 7 < calibration["ci_upper"] < 1.0
    rows = _read(output)
    # A calibration row records the judge and keeps its reward, whatever the judge said.
    assert [(row["judge_model"], row["reward"]) for row in rows[1:7]] == [("stub-judge", 1.0)] * 6
    assert (rows[7]["judge_letter"], rows[7]["reward"], rows[7]["needs_judge"]) == (None, 0.0, False)


def test_the_judge_options_are_checked_before_grading(tmp_path: Path) -> None:
    source = _write_rows(tmp_path / "rollouts.jsonl", [FLOATS])
    output = tmp_path / "graded.jsonl"
    for extra, words in (
        (["--judge-model", "m"], "--judge-model needs --judge-url"),
        (["--judge-url", "http://127.0.0.1:1/v1"], "--judge-url needs --judge-model"),
        (["--judge-url", "localhost:1", "--judge-model", "m"], "is no http(s) URL"),
        (["--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m", "--judge-prompt", str(tmp_path / "no.txt")], "cannot read the prompt template"),
        (["--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m", "--judge-cache", str(tmp_path)], "the judge cache"),
    ):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["grade", str(source), "-o", str(output), "-q", *extra]) == 2
        assert words in err.getvalue()
        assert not output.exists()  # refused before any grading


def test_a_gym_mode_sends_nothing_to_the_judge(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, state = stub
    source = _write_rows(tmp_path / "rollouts.jsonl", [FLOATS, DECIDED])
    output = tmp_path / "graded.jsonl"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["grade", str(source), "-o", str(output), "--mode", "lenient_boxed", "-q",
                       "--judge-url", url, "--judge-model", "stub-judge"])  # fmt: skip
    assert status == 0
    assert state.calls == 0
    assert "0 rows sent (0 flagged, 0 for calibration)" in err.getvalue()


def test_ctrl_c_in_the_judge_pass_keeps_the_rule_verdicts_and_the_replies_so_far(tmp_path: Path) -> None:
    responses = [f"{FLOATS} (fast {n})" for n in range(8)] + [f"{FLOATS} [[stub:slow*always]] ({n})" for n in range(8)]
    source = _write_rows(tmp_path / "rollouts.jsonl", responses)
    output = tmp_path / "graded.jsonl"
    cache = tmp_path / "cache.jsonl"
    with openai_stub(slow_seconds=30.0) as (url, _):
        child = subprocess.Popen(
            [sys.executable, "-m", "choicebox", "grade", str(source), "-o", str(output), "--mode", "robust",
             "--workers", "1", "--judge-url", url, "--judge-model", "stub-judge", "--judge-cache", str(cache),
             "--judge-concurrency", "2", "--judge-timeout", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        # Once the fast rows' replies are in the cache the pass waits on the slow ones: stop it.
        while child.poll() is None and (not cache.exists() or cache.read_bytes().count(b"\n") < 8):
            time.sleep(0.01)
        os.killpg(child.pid, signal.SIGINT)
        _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert "interrupted in the judge pass" in err
    rows = _read(output)
    assert len(rows) == len(responses)
    assert all(row["judge_model"] is None and row["needs_judge"] for row in rows)  # the rule verdicts
    assert not judging_path(output).exists()
    assert cache.read_bytes().count(b"\n") == 8
