"""choicebox's server against NeMo Gym 0.7.0's own models and session-contract checker.

A ``choicebox serve`` process is spoken to by ``gym_side/protocol.py`` running under Gym's
interpreter: Gym's pydantic models decide which seed and close bodies are typed requests and
whether choicebox's replies are valid responses, and Gym's
``check_resources_session_contract`` drives the session routes. Skipped without Gym's venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gym_side.env import gym_venv
from gym_side.launch import free_port

pytestmark = pytest.mark.gym

HERE = Path(__file__).parents[1]  # the tests folder
OPTIONS = [{"A": "Oxygen"}, {"B": "Nitrogen"}, {"C": "Argon"}]
EPISODE = {"rollout_id": "12-0", "attempt": 0}
SEED = {
    "resources_session_id": "resources-session-12",
    "episode_id": EPISODE,
    "task_id": {"taskset": "choicebox_mcqa", "task_id": "12"},
    "task_data": {"expected_answer": "B", "options": OPTIONS},
}


def _without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != key}


def _episode(**fields: Any) -> dict[str, Any]:
    return {**SEED, "episode_id": {**EPISODE, **fields}}


SEED_BODIES: list[Any] = [
    SEED,
    _episode(attempt=2),
    _episode(rollout_id="task.7_b-c"),
    _episode(rollout_id="12-a0"),
    _episode(rollout_id="12-a3"),  # the reserved attempt suffix
    _episode(rollout_id=".hidden"),
    _episode(rollout_id="line\n"),
    _episode(rollout_id=""),
    _episode(attempt=-1),
    _episode(attempt=True),  # pydantic's lax ints: a bool, an integral float, digits
    _episode(attempt=2.0),
    _episode(attempt="3"),
    _episode(attempt=2.5),
    _episode(attempt=None),
    _episode(rollout_id="ab-a10"),
    _episode(rollout_id="x-a1x"),
    _episode(rollout_id="a b"),
    _episode(surprise=1),
    {**SEED, "episode_id": {"rollout_id": "12-0"}},  # attempt defaults to 0
    {**SEED, "episode_id": "12-0"},
    {**SEED, "resources_session_id": ""},
    {**SEED, "extra": True},
    {**SEED, "task_data": [1]},
    {**SEED, "task_id": {"taskset": "choicebox_mcqa"}},
    {**SEED, "task_id": {"taskset": "", "task_id": "1"}},
    _without(SEED, "task_data"),
    {},
    {"responses_create_params": {"input": "Q?"}, "expected_answer": "B"},  # an agent's run body
]
CLOSE_BODIES: list[Any] = [
    {"resources_session_id": "resources-session-12", "episode_id": EPISODE},
    {"resources_session_id": "never-seeded", "episode_id": {"rollout_id": "1-0"}},
    {"resources_session_id": "", "episode_id": EPISODE},
    {"resources_session_id": "x", "episode_id": EPISODE, "extra": 1},
    {"resources_session_id": "x"},
    {},
]


def _response(text: str) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "created_at": 1.0,
        "model": "stub",
        "object": "response",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 40,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 47,
        },
    }


def _verify(text: str, **fields: Any) -> dict[str, Any]:
    prompt = "Which gas makes up most of the air?\nA: Oxygen\nB: Nitrogen\nC: Argon"
    return {
        "responses_create_params": {"input": [{"role": "user", "content": prompt}]},
        "response": _response(text),
        "options": OPTIONS,
        "expected_answer": "B",
        "uuid": "air-1",
        **fields,
    }


VERIFY_REQUESTS = [
    _verify(r"\boxed{B}"),
    _verify(r"\boxed{A}"),  # a wrong answer: a valid measurement, no failure_kind
    _verify("no answer at all"),
    _verify(r"\boxed{A} or \boxed{B}"),
    _verify("Answer: B", grading_mode="lenient_answer_colon"),
    _verify(r"\boxed{B}", options="A) Oxygen B) Nitrogen"),  # bad data: masked
    _verify(r"\boxed{B}", template_metadata={"output_regex": 3}),
    _verify(r"\boxed{B}", grading_mode="telepathy"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "choicebox", "serve", "--port", str(port), "--name",
         "choicebox_mcqa", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("choicebox serve did not come up")
            time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def report(server: str) -> dict[str, Any]:
    venv = gym_venv()
    checks = {
        "seed_bodies": SEED_BODIES,
        "close_bodies": CLOSE_BODIES,
        "verify_requests": VERIFY_REQUESTS,
    }
    script = HERE / "gym_side" / "protocol.py"
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(script), server],
        input=json.dumps(checks),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"protocol.py failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_gyms_session_contract_checker_passes(report: dict[str, Any]) -> None:
    assert report["contract"] is None


@pytest.mark.parametrize("index", range(len(SEED_BODIES)))
def test_seed_answers_typed_exactly_when_gym_reads_a_typed_request(
    report: dict[str, Any], index: int
) -> None:
    entry = report["seed"][index]
    assert entry["status"] == 200
    assert entry["reply_valid"], entry
    assert entry["cookie"], "environment servers refuse a seed without a session cookie"
    body = SEED_BODIES[index]
    if entry["gym_accepts"]:
        assert entry["reply"] == {
            "resources_session_id": body["resources_session_id"],
            "resources_tools": None,
            "sandbox_access": None,
        }
    else:
        assert entry["reply"] == {}


@pytest.mark.parametrize("index", range(len(CLOSE_BODIES)))
def test_close_accepts_exactly_gyms_close_requests(report: dict[str, Any], index: int) -> None:
    entry = report["close"][index]
    if entry["gym_accepts"]:
        assert entry["status"] == 200
        assert entry["reply_valid"]
    else:
        assert entry["status"] == 422


@pytest.mark.parametrize("index", range(len(VERIFY_REQUESTS)))
def test_verify_replies_are_gyms_verify_responses(report: dict[str, Any], index: int) -> None:
    entry = report["verify"][index]
    assert entry["status"] == 200
    assert entry["mcqa"] is None
    assert entry["base"] is None
    assert entry["single_agent_turn"] is None


def test_no_failure_kind_is_unregistered(report: dict[str, Any]) -> None:
    # Gym warns about failure kinds outside its vocabulary that are not '<server>:<kind>'.
    assert report["failure_kind_warnings"] == []
