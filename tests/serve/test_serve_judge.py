"""``choicebox serve --judge-url``: the real server in a subprocess, a real OpenAI-compatible judge
(``openai_stub``) on loopback. A flagged ``/verify`` is answered with the judge's reading; one
whose judge is late or down with its rule verdict, saying why; every other reply is untouched."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from test_serve import _start

import choicebox
from choicebox.server import load_gym_config
from openai_stub import StubState, openai_stub

OPTIONS = ["Granite", "Basalt", "Marble", "Pumice"]
FLOATS = "Rocks full of gas bubbles float, and pumice is full of them."


def _row(response: str) -> dict[str, object]:
    sample = choicebox.MCQASample.from_question("Which rock floats on water?", OPTIONS, "D")
    return {**sample.to_wire(), "grading_mode": "robust", "response": response}


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[str, StubState]]:
    with openai_stub(slow_seconds=20.0) as running:
        yield running


@pytest.fixture(scope="module")
def judged_server(stub: tuple[str, StubState]) -> Iterator[str]:
    url, _ = stub
    yield from _start("--judge-url", url, "--judge-model", "stub-judge", "--judge-deadline", "3", "--grade-workers", "0")


def test_a_flagged_verify_is_answered_with_the_judge_s_reading(judged_server: str) -> None:
    reply = httpx.post(f"{judged_server}/verify", json=_row(FLOATS), timeout=30).json()
    assert (reply["needs_judge"], reply["extracted_answer"], reply["grading_failure"]) == (True, None, "no_answer")
    assert (reply["judge_letter"], reply["judge_model"], reply["judge_failure"]) == ("D", "stub-judge", None)
    assert (reply["reward"], reply["mask_sample"]) == (1.0, False)


def test_a_verify_the_mode_does_not_flag_never_meets_the_judge(judged_server: str, stub: tuple[str, StubState]) -> None:
    _, state = stub
    before = state.calls
    for response in ("The answer is (D).", "The answer is (A) or (D)."):
        reply = httpx.post(f"{judged_server}/verify", json=_row(response), timeout=30).json()
        assert (reply["needs_judge"], reply["judge_model"]) == (False, None)
    assert state.calls == before


def test_a_judge_later_than_the_deadline_leaves_the_rule_verdict(judged_server: str) -> None:
    reply = httpx.post(f"{judged_server}/verify", json=_row(f"{FLOATS} [[stub:slow*always]]"), timeout=30).json()
    assert (reply["reward"], reply["extracted_answer"], reply["grading_failure"]) == (0.0, None, "no_answer")
    assert (reply["judge_letter"], reply["judge_failure"]) == (None, "timeout")


def test_a_judge_that_is_down_leaves_the_rule_verdict() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    for base in _start("--judge-url", f"http://127.0.0.1:{port}/v1", "--judge-model", "m", "--grade-workers", "0"):
        reply = httpx.post(f"{base}/verify", json=_row(FLOATS), timeout=60).json()
        assert (reply["reward"], reply["grading_failure"], reply["judge_failure"]) == (0.0, "no_answer", "unreachable")


def test_without_a_judge_a_flagged_verify_says_so_and_keeps_its_verdict() -> None:
    for base in _start("--grade-workers", "0"):
        reply = httpx.post(f"{base}/verify", json=_row(FLOATS), timeout=30).json()
        assert (reply["needs_judge"], reply["judge_model"], reply["reward"]) == (True, None, 0.0)


def test_gym_s_config_may_name_a_judge() -> None:
    config = load_gym_config({
        "NEMO_GYM_CONFIG_PATH": "mcqa",
        "NEMO_GYM_CONFIG_DICT": (
            "mcqa:\n  resources_servers:\n    choicebox_mcqa:\n      host: 127.0.0.1\n      port: 9001\n"
            "      judge_url: http://judge:8000/v1\n      judge_model: qwen\n      judge_deadline: 5\n"
        ),
    })  # fmt: skip
    arguments = config.serve_arguments()
    assert arguments[arguments.index("--judge-url") + 1] == "http://judge:8000/v1"
    assert arguments[arguments.index("--judge-model") + 1] == "qwen"
    assert arguments[arguments.index("--judge-deadline") + 1] == "5.0"
    assert "--judge-api" not in arguments
