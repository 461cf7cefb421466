"""NeMo Gym 0.7.0's real CLI with choicebox as its resources server, against Gym's own mcqa.

One ``gym env start`` serves both environments (the shipped ``examples/nemo_gym`` one, with
choicebox started by Gym from ``resources_servers/choicebox_mcqa/app.py``, and Gym's own
``mcqa``), each behind Gym's single-agent-turn environment server (the session protocol:
typed seed, cookie, verify, close), with one model server whose backend is a local stub
replaying recorded outputs (``gym_side/stub_model.py``). Then ``gym eval run --no-serve``
collects, two rollouts a task, one at a time (so each repeat gets its recorded output):

* Gym's example rows (``resources_servers/mcqa/data/example*.jsonl`` of the installed Gym) with
  both servers: the same rewards, and the same ``_aggregate_metrics.json`` (choicebox's has the
  statistics of its reward components on top);
* rows of our own with tricky outputs: every reward as recorded, including the documented
  deviations from Gym, and each server's aggregate metrics equal to what the other's code
  computes from the same verify responses;
* rows with unusable task data (choicebox only): masked, named, and the run completes.

About 60-90 s (Gym's start-up is 10-15 s, each ``gym eval run`` 4-8 s). Needs Gym's venv (see
``gym_side/env.py``); skipped without it. ``.ci/run`` runs it when the venv is there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

from choicebox.metrics import aggregate_metrics
from gym_side.compare import assert_same_as_gym
from gym_side.env import gym_venv, run_gym_python, site_packages
from gym_side.launch import free_port, gym_environ, head_server_yaml, stub_model, write_replies

pytestmark = pytest.mark.gym

HERE = Path(__file__).parents[1]  # the tests folder
FIXTURES = HERE / "fixtures" / "gym_e2e"
EXAMPLE = HERE.parent / "examples" / "nemo_gym"
REPLIES: dict[str, dict[str, Any]] = json.loads((FIXTURES / "replies.json").read_text("utf-8"))
REPEATS = 2
COMPONENTS = ("correctness", "format", "unambiguous")
CHOICEBOX_AGENT = "choicebox_mcqa_simple_agent"
MCQA_AGENT = "mcqa_simple_agent"

# Gym's own mcqa server beside choicebox's, and the model server whose backend is the stub.
COMPARISON = """\
mcqa:
  resources_servers:
    mcqa:
      entrypoint: app.py
      domain: knowledge
      grading_mode: null
mcqa_simple_agent:
  responses_api_agents:
    simple_agent:
      entrypoint: app.py
      resources_server: {type: resources_servers, name: mcqa}
      model_server: {type: responses_api_models, name: policy_model}
mcqa_environment:
  environment_servers:
    single_agent_turn_legacy:
      entrypoint: app.py
      resources_server: {type: resources_servers, name: mcqa}
      agent_server: {type: responses_api_agents, name: mcqa_simple_agent}
      max_concurrent_episodes: null
      queue_timeout_seconds: null
      default_episode_timeout_seconds: 600
      cleanup_timeout_seconds: 60
"""
# Servers that run in Gym's own venv; choicebox_mcqa runs in one that has choicebox.
GYM_SERVERS = (
    "resources_servers/mcqa",
    "responses_api_agents/simple_agent",
    "responses_api_models/openai_model",
    "environment_servers/single_agent_turn_legacy",
)


@attrs.frozen
class Rows:
    """An input file for ``gym eval run`` and the key of each row in ``REPLIES``."""

    path: Path
    keys: tuple[str, ...]


@attrs.frozen
class Collected:
    """One ``gym eval run``: rollouts by (task, rollout index), the aggregate metrics file,
    the failures it recorded, and how long it took."""

    rollouts: dict[tuple[int, int], dict[str, Any]]
    metrics: dict[str, Any]
    failures: list[dict[str, Any]]
    seconds: float


@attrs.frozen
class GymRun:
    work: Path
    venv: Path
    choicebox_url: str
    rows: dict[str, Rows]
    runs: dict[tuple[str, str], Collected]
    start_seconds: float
    start_log: Path
    head_port: int


def _write_rows(path: Path, rows: list[dict[str, Any]], keys: list[str]) -> Rows:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Rows(path, tuple(keys))


def _prepare_rows(work: Path, venv: Path) -> dict[str, Rows]:
    """Gym's example rows (read from its install: nothing of them is copied into the project)
    and our fixture rows, as ``gym eval run`` inputs."""
    data = site_packages(venv) / "resources_servers" / "mcqa" / "data"
    rows, keys = [], []
    for stem, prefix in (("example", "example"), ("example_with_template_metadata", "template")):
        for line in (data / f"{stem}.jsonl").read_text("utf-8").splitlines():
            row = json.loads(line)
            rows.append(row)
            keys.append(f"{prefix}:{row['uuid']}")
    inputs = {"gym_examples": _write_rows(work / "gym_examples.jsonl", rows, keys)}
    for name in ("tricky", "bad"):
        own = [json.loads(x) for x in (FIXTURES / f"{name}.jsonl").read_text("utf-8").splitlines()]
        inputs[name] = _write_rows(work / f"{name}.jsonl", own, [r["uuid"] for r in own])
    return inputs


def _stub_table(work: Path, inputs: dict[str, Rows]) -> Path:
    replies = [
        (json.loads(line), REPLIES[key]["outputs"])
        for rows in inputs.values()
        for line, key in zip(rows.path.read_text("utf-8").splitlines(), rows.keys, strict=True)
    ]
    return write_replies(work / "replies_by_prompt.json", replies)


def _venvs(work: Path, venv: Path) -> Path:
    """Gym's uv_venv_dir layout: ``<type>/<impl>/.venv`` for every server, ready-made, so
    ``+skip_venv_if_present=true`` lets Gym start them without building anything."""
    root = work / "venvs"
    for server in GYM_SERVERS:
        (root / server).mkdir(parents=True)
        (root / server / ".venv").symlink_to(venv)
    ours = root / "resources_servers" / "choicebox_mcqa"
    ours.mkdir(parents=True)
    if sys.prefix != sys.base_prefix and (Path(sys.prefix) / "bin" / "activate").exists():
        (ours / ".venv").symlink_to(sys.prefix)  # the venv choicebox is installed in
    else:
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
             str(ours / ".venv")],
            check=True,
        )  # fmt: skip
    return root


def _wait_ready(gym: subprocess.Popen[bytes], log: Path, deadline: float) -> None:
    while "servers ready!" not in log.read_text("utf-8", "replace"):
        if gym.poll() is not None:
            pytest.fail(f"gym env start exited ({gym.returncode}):\n{_start_failure(log)}")
        if time.monotonic() > deadline:
            pytest.fail(f"Gym's servers were not ready in time:\n{_start_failure(log)}")
        time.sleep(0.5)


def _start_failure(log: Path) -> str:
    """The log's errors and its end: a server that dies on start says why early in the log (its
    lines carry no server prefix), long before the shutdown that fills the end."""
    text = log.read_text("utf-8", "replace")
    errors = [line for line in text.splitlines() if "Error" in line or "Errno" in line]
    return "errors:\n" + "\n".join(errors[:40]) + f"\n...\nend:\n{text[-6000:]}"


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in a session of its own, and whatever it left in that group
    (Ray's dashboard and runtime-env agents outlive Gym and ignore SIGTERM)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    time.sleep(1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _collect(work: Path, venv: Path, agent: str, rows: Rows, name: str) -> Collected:
    out = work / "out" / name
    started = time.monotonic()
    done = subprocess.run(
        [str(venv / "bin" / "gym"), "eval", "run", "--no-serve", "--agent", agent,
         "--input", str(rows.path), "--output", str(out / "rollouts.jsonl"),
         "--num-repeats", str(REPEATS), "--concurrency", "1"],
        cwd=work,
        env=gym_environ(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    if done.returncode != 0:
        pytest.fail(f"gym eval run ({name}) failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    rollouts = {}
    for line in (out / "rollouts.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        rollouts[(row["_ng_task_index"], row["_ng_rollout_index"])] = row
    (metrics,) = json.loads((out / "rollouts_aggregate_metrics.json").read_text("utf-8"))
    failures_path = out / "rollouts_failures.jsonl"
    failures = (
        [json.loads(x) for x in failures_path.read_text("utf-8").splitlines() if x.strip()]
        if failures_path.exists()
        else []
    )
    return Collected(rollouts, metrics, failures, seconds)


@pytest.fixture(scope="module")
def gym_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GymRun]:
    venv = gym_venv()
    work = tmp_path_factory.mktemp("gym")
    # The shipped resources-server directory and config, as a user copies them.
    shutil.copytree(EXAMPLE / "resources_servers", work / "resources_servers")
    shutil.copy(EXAMPLE / "choicebox_mcqa.yaml", work / "choicebox_mcqa.yaml")
    (work / "comparison.yaml").write_text(COMPARISON, encoding="utf-8")
    # Gym's head server on a free port, for every gym command run here (not 11000, which another
    # run or server may hold).
    head_port = free_port()
    (work / "env.yaml").write_text(head_server_yaml(head_port), encoding="utf-8")
    inputs = _prepare_rows(work, venv)
    table = _stub_table(work, inputs)
    venvs = _venvs(work, venv)

    with stub_model(table) as stub_port:
        yield from _start_gym(
            work, venv, inputs=inputs, venvs=venvs, stub_port=stub_port, head_port=head_port
        )


def _start_gym(
    work: Path, venv: Path, *, inputs: dict[str, Rows], venvs: Path, stub_port: int, head_port: int
) -> Iterator[GymRun]:
    choicebox_port = free_port()
    log = work / "gym_env_start.log"
    started = time.monotonic()
    with log.open("wb") as sink:
        gym = subprocess.Popen(
            [str(venv / "bin" / "gym"), "env", "start",
             "--config", "choicebox_mcqa.yaml", "--config", "comparison.yaml",
             "--model-type", "openai_model", "--model", "stub",
             "--model-url", f"http://127.0.0.1:{stub_port}/v1", "--model-api-key", "unused",
             "+skip_venv_if_present=true", f"+uv_venv_dir={venvs}",
             f"++choicebox_mcqa.resources_servers.choicebox_mcqa.port={choicebox_port}"],
            cwd=work,
            env=gym_environ(),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        _wait_ready(gym, log, time.monotonic() + 240)
        start_seconds = time.monotonic() - started
        runs = {}
        for server, agent in (("choicebox", CHOICEBOX_AGENT), ("mcqa", MCQA_AGENT)):
            for data in ("gym_examples", "tricky"):
                runs[(server, data)] = _collect(
                    work, venv, agent, inputs[data], f"{server}_{data}"
                )
        runs[("choicebox", "bad")] = _collect(
            work, venv, CHOICEBOX_AGENT, inputs["bad"], "choicebox_bad"
        )
        yield GymRun(
            work=work,
            venv=venv,
            choicebox_url=f"http://127.0.0.1:{choicebox_port}",
            rows=inputs,
            runs=runs,
            start_seconds=start_seconds,
            start_log=log,
            head_port=head_port,
        )
    finally:
        _stop_group(gym)


# --- helpers -------------------------------------------------------------------------------------


def _verdicts(run: Collected) -> dict[tuple[int, int], tuple[float, str | None]]:
    return {key: (row["reward"], row["extracted_answer"]) for key, row in run.rollouts.items()}


def _expected(rows: Rows, side: str) -> dict[tuple[int, int], tuple[float, str | None]]:
    out = {}
    for task, key in enumerate(rows.keys):
        entry = REPLIES[key]
        for rollout, (reward, letter) in enumerate(entry.get(side) or entry["choicebox"]):
            out[(task, rollout)] = (reward, letter)
    return out


def _gym_metric_input(run: Collected) -> list[dict[str, Any]]:
    """The rollouts as Gym's collection posts them to /aggregate_metrics (rollout_collection.py,
    ``_fetch_agent_metrics``): heavy fields dropped, ``response`` cut to its usage."""
    heavy = {
        "response",
        "responses_create_params",
        "ng_agent_observations",
        "ng_model_call_capture",
        "ng_trajectory",
    }
    out = []
    for key in sorted(run.rollouts):
        row = run.rollouts[key]
        entry = {k: v for k, v in row.items() if k not in heavy}
        response = row.get("response") or {}
        kept = {k: response[k] for k in ("usage", "incomplete_details") if response.get(k)}
        if kept:
            entry["response"] = kept
        out.append(entry)
    return out


def _reply_part(metrics: dict[str, Any]) -> dict[str, Any]:
    """The part of a ``_aggregate_metrics.json`` entry that is the server's reply."""
    keys = ("group_level_metrics", "agent_metrics", "key_metrics", "repeat_level_metrics")
    return {key: metrics.get(key, [] if key.endswith("level_metrics") else {}) for key in keys}


# What choicebox's verify responses carry beyond Gym's that Gym's own profiler counts as a number:
# the reward components and the judge flag (a bool, whose mean is the share of flagged rows).
OWN_NUMERIC_FIELDS = (*COMPONENTS, "needs_judge")


def _is_own_numeric_key(key: str) -> bool:
    return any(name in key.split("/") for name in OWN_NUMERIC_FIELDS)


def _assert_gym_keys_hold(gym: Any, ours: Any, path: str) -> None:
    """Every key of Gym's, with Gym's value (t bounds to 1e-12); ours may add only the
    statistics of choicebox's own numeric fields (``OWN_NUMERIC_FIELDS``)."""
    if isinstance(gym, dict):
        assert isinstance(ours, dict), path
        extra = [k for k in ours if k not in gym]
        assert all(_is_own_numeric_key(k) for k in extra), (path, extra)
        for key, value in gym.items():
            assert key in ours, f"{path}.{key} missing"
            _assert_gym_keys_hold(value, ours[key], f"{path}.{key}")
    elif isinstance(gym, list):
        assert isinstance(ours, list)
        assert len(ours) == len(gym), path
        for i, (g, o) in enumerate(zip(gym, ours, strict=True)):
            _assert_gym_keys_hold(g, o, f"{path}[{i}]")
    else:
        assert_same_as_gym(gym, ours, path)


# --- the tests -----------------------------------------------------------------------------------


def test_gym_started_choicebox_from_the_shipped_directory(gym_run: GymRun) -> None:
    log = gym_run.start_log.read_text("utf-8", "replace")
    assert "Starting `choicebox_mcqa` from venv" in log
    assert "Traceback" not in log
    # The server Gym started is choicebox, on the port the config assigned it.
    health = httpx.get(f"{gym_run.choicebox_url}/health", timeout=10).json()
    assert "strict_single_letter_boxed" in health["modes"]
    # Gym's head server took the free port env.yaml gave it, not 11000.
    assert f"Uvicorn running on http://127.0.0.1:{gym_run.head_port} " in log


def test_every_rollout_went_through_the_session_protocol(gym_run: GymRun) -> None:
    """single_agent_turn_legacy seeds a typed session (and refuses a seed without a cookie or
    with another id), verifies with the cookie and closes; any of that failing is a recorded
    failure. None are, and every rollout came through it."""
    for (server, data), run in gym_run.runs.items():
        assert run.failures == [], (server, data, run.failures[:2])
        assert len(run.rollouts) == REPEATS * len(gym_run.rows[data].keys)
        for row in run.rollouts.values():
            assert row["_ng_result_type"] == "single_agent_turn_legacy"
            assert row["_ng_environment_server"] == (
                "choicebox_mcqa_environment" if server == "choicebox" else "mcqa_environment"
            )


def test_the_session_routes_of_the_server_gym_started(gym_run: GymRun) -> None:
    seed = {
        "resources_session_id": "resources-session-e2e",
        "episode_id": {"rollout_id": "e2e-0", "attempt": 0},
        "task_id": {"taskset": "choicebox_mcqa", "task_id": "0"},
        "task_data": {},
    }
    reply = httpx.post(f"{gym_run.choicebox_url}/seed_session", json=seed, timeout=10)
    assert reply.json()["resources_session_id"] == "resources-session-e2e"
    # Named as Gym names its session cookies: <server class>___<instance name>.
    assert "ChoiceboxResourcesServer___choicebox_mcqa" in reply.cookies
    close = {"resources_session_id": "resources-session-e2e", "episode_id": seed["episode_id"]}
    closed = httpx.post(f"{gym_run.choicebox_url}/close_session", json=close, timeout=10)
    assert closed.json() == {"resources_session_id": "resources-session-e2e"}


def test_gym_example_data_gets_gyms_rewards(gym_run: GymRun) -> None:
    rows = gym_run.rows["gym_examples"]
    expected = _expected(rows, "choicebox")
    assert _verdicts(gym_run.runs[("choicebox", "gym_examples")]) == expected
    assert _verdicts(gym_run.runs[("mcqa", "gym_examples")]) == expected


def test_gym_example_data_gets_gyms_aggregate_metrics(gym_run: GymRun) -> None:
    """Same data, same rewards: every key of Gym's ``_aggregate_metrics.json`` is in
    choicebox's with Gym's value; choicebox adds its components' statistics."""
    ours = _reply_part(gym_run.runs[("choicebox", "gym_examples")].metrics)
    gyms = _reply_part(gym_run.runs[("mcqa", "gym_examples")].metrics)
    assert ours["key_metrics"] == gyms["key_metrics"]
    _assert_gym_keys_hold(gyms, ours, "$")
    extra = set(ours["agent_metrics"]) - set(gyms["agent_metrics"])
    assert {"mean/correctness", "std/format", "mean_across_repeats/mean/unambiguous"} <= extra


def test_tricky_outputs_get_the_recorded_rewards_and_the_documented_deviations(
    gym_run: GymRun,
) -> None:
    rows = gym_run.rows["tricky"]
    assert _verdicts(gym_run.runs[("choicebox", "tricky")]) == _expected(rows, "choicebox")
    assert _verdicts(gym_run.runs[("mcqa", "tricky")]) == _expected(rows, "gym")
    deviations = [key for key in rows.keys if "gym" in REPLIES[key]]
    assert len(deviations) == 4  # each one a row of the README's compatibility table


def test_each_servers_aggregate_metrics_are_the_others_on_the_same_verify_responses(
    gym_run: GymRun,
) -> None:
    """Different rewards, same arithmetic: Gym's code over choicebox's verify responses gives
    choicebox's file, and choicebox's code over Gym's verify responses gives Gym's file."""
    ours = gym_run.runs[("choicebox", "tricky")]
    script = HERE / "gym_side" / "aggregate.py"
    case = [{"name": "choicebox tricky", "verify_responses": _gym_metric_input(ours)}]
    (gyms_of_ours,) = json.loads(run_gym_python(gym_run.venv, script, json.dumps(case)))
    assert_same_as_gym(_reply_part(gyms_of_ours), _reply_part(ours.metrics))

    theirs = gym_run.runs[("mcqa", "tricky")]
    ours_of_theirs = json.loads(json.dumps(aggregate_metrics(_gym_metric_input(theirs))))
    assert_same_as_gym(_reply_part(theirs.metrics), _reply_part(ours_of_theirs))


def test_bad_task_data_is_masked_and_the_collection_completes(gym_run: GymRun) -> None:
    run = gym_run.runs[("choicebox", "bad")]
    rows = gym_run.rows["bad"]
    for (task, rollout), row in run.rollouts.items():
        entry = REPLIES[rows.keys[task]]
        if "masked" in entry:
            assert row["mask_sample"] is True
            assert row["reward"] == 0.0
            assert row["failure_kind"] == "choicebox:invalid_row"
            assert f"@ {entry['masked']}" in row["failure_reason"]
        else:
            assert row["mask_sample"] is False
            assert row["failure_kind"] is None
            reward, letter = entry["choicebox"][rollout]
            assert (row["reward"], row["extracted_answer"]) == (reward, letter)
    agent = run.metrics["agent_metrics"]
    assert {k: v for k, v in agent.items() if k.startswith("coverage/")} == {
        "coverage/measured_rollouts": 4,
        "coverage/masked_rollouts": 8,
        "coverage/measured_tasks": 2,
        "coverage/fully_masked_tasks": 4,
    }
    assert agent["mean/reward"] == 0.5  # over the four measured rollouts only
    assert run.metrics["key_metrics"]["coverage/masked_rollouts"] == 8


def test_timings(gym_run: GymRun) -> None:
    """Not a requirement, a record: printed with -s (``_wait_ready`` bounds the start)."""
    collect = {f"{s}/{d}": round(r.seconds, 1) for (s, d), r in gym_run.runs.items()}
    print(f"\ngym env start ready in {gym_run.start_seconds:.1f} s; gym eval run: {collect}")
