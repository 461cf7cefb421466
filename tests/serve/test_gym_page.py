"""The NeMo Gym page (``examples/nemo_gym/README.md``) run as written, from the page itself.

The page's bash blocks are read from the page and run in order, as one bash session, in a
temporary copy of ``examples/nemo_gym``: installing choicebox into a fresh venv from (a copy of)
this checkout, ``gym env start`` in the background, ``gym eval run --no-serve``, stopping the
servers, ``gym eval reverify`` and stopping the servers it leaves. Only the page's placeholders
(model, address, key, the choicebox path) and the venv locations are replaced
(``gym_side/page.py``); a page whose commands change is a test that runs the new ones. The
model is the stub (``gym_side/stub_model.py``), which speaks the OpenAI Responses API: Gym's
``openai_model`` server calls ``<base_url>/responses`` (``NeMoGymAsyncOpenAI.create_response``)
for the agent's ``/v1/responses``; its ``/v1/chat/completions`` route, which would call
``<base_url>/chat/completions``, is not on this path.

Between blocks the script waits at a checkpoint while the test looks at what runs in its session
(``gym_side/procs.py``): after a block that stops servers, nothing may be left. Gym's head server
gets a free port through ``env.yaml`` (``gym_side/launch.py``), so a server on 11000 or another
run does not collide with it.

About 3 minutes: the pip install (about 40 s), Gym's start (about 35 s), the collection (about
20 s) and the re-verification, which starts the servers again (about 50 s). Needs Gym's venv
(see ``gym_side/env.py``); skipped without it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

import choicebox
from gym_side import page
from gym_side.env import gym_venv
from gym_side.launch import free_port, gym_environ, stub_model, write_replies
from gym_side.procs import Process, in_session, kill_all, wait_until_gone
from project_copy import copy_project

pytestmark = pytest.mark.gym

EXAMPLE = page.ROOT / "examples" / "nemo_gym"
DEADLINE = 900  # seconds for the whole page: a hang fails the test instead of stalling the run
STOP_GRACE = 60  # seconds a stopped server may take to exit before it counts as left behind
# What the stub answers each task of the page's input, repeat after repeat: right, wrong, and
# outputs where choicebox and Gym's mcqa differ (a hedge, a lower-case letter, an `\fbox`).
OUTPUTS: dict[str, list[str]] = {
    "cbx-example-1": [
        "Mercury orbits closest to the Sun, so \\boxed{B}.",
        "\\boxed{A}",
        "\\boxed{A} or \\boxed{B}",
        "I think it is Mercury.",
    ],
    "cbx-example-2": ["\\boxed{C}", "\\boxed{c}", "\\boxed{D}", "\\fbox{C}"],
    "cbx-example-3": ["Answer: B", "Answer: A", "Mercury is a liquid metal.\nAnswer: B", "Tin?"],
}
DEFAULT_HEAD_PORT = 11000  # Gym's head server's port when the config names none
# The servers of choicebox_mcqa.yaml, by the directory Gym runs each one's app.py in.
SERVERS = {"choicebox_mcqa", "simple_agent", "single_agent_turn_legacy", "openai_model"}


@attrs.frozen(kw_only=True)
class Block:
    text: str
    seconds: float
    running: tuple[Process, ...]  # what ran in the session once the block was done


@attrs.frozen(kw_only=True)
class PageRun:
    work: Path
    blocks: tuple[Block, ...]
    left_at_end: tuple[Process, ...]
    log: str
    head_port: int

    def block(self, needle: str) -> Block:
        (found,) = [b for b in self.blocks if needle in b.text]
        return found

    def command(self, subcommand: str) -> list[str]:
        return page.gym_command(tuple(b.text for b in self.blocks), subcommand)

    def jsonl(self, path: str) -> list[dict[str, Any]]:
        lines = (self.work / path).read_text("utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@contextlib.contextmanager
def _holding(port: int) -> Iterator[None]:
    """A listener on ``port`` while the page runs, as another Gym or server would be (unless
    something holds the port already, which does as well)."""
    with socket.socket() as sock:
        with contextlib.suppress(OSError):
            sock.bind(("127.0.0.1", port))
            sock.listen()
        yield


def _servers(processes: tuple[Process, ...]) -> dict[str, int]:
    """Gym's servers among ``processes``: the directory each runs its app.py in -> its pid."""
    return {
        Path(p.cwd).name: p.pid for p in processes if p.command.endswith("app.py") and p.cwd
    }


def _by_index(rows: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(row["_ng_task_index"], row["_ng_rollout_index"]): row for row in rows}


def _choicebox_verdict(row: dict[str, Any]) -> dict[str, Any]:
    """What choicebox's verdict on the row's response is, as verify-response fields."""
    verdict = choicebox.grade(choicebox.MCQASample.from_wire(row), row["response"])
    return verdict.to_wire({})


def _recorded_verdict(row: dict[str, Any]) -> dict[str, Any]:
    """The verdict's fields as the verify response recorded them."""
    return {name: row.get(name) for name in _choicebox_verdict(row)}


_DEFAULT_SIGINT_THEN_BASH = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp('bash', ['bash', *sys.argv[1:]])"
)


def _run_page(work: Path, blocks: tuple[str, ...], head_port: int) -> PageRun:
    checkpoints = work / ".checkpoints"
    checkpoints.mkdir()
    (work / "page.sh").write_text(
        page.script(blocks, head_port=head_port, checkpoints=checkpoints), encoding="utf-8"
    )
    log_path = work / "page.log"
    deadline = time.monotonic() + DEADLINE
    done: list[Block] = []
    with log_path.open("wb") as log:
        shell = subprocess.Popen(
            # The page stops Gym with Ctrl-C (SIGINT): a run started in the background by a
            # shell without job control (`nohup ... &`) ignores SIGINT, and every process it
            # starts inherits that, which bash cannot undo. The shell starts with the default.
            [sys.executable, "-c", _DEFAULT_SIGINT_THEN_BASH, "page.sh"],
            cwd=work,
            env=gym_environ(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    session = shell.pid

    def ours(process: Process) -> bool:
        """A process the page started: not the shell, nor the sleep of its checkpoint loop."""
        return process.pid != session and not (
            process.name == "sleep" and process.parent == session
        )

    def fail(why: str) -> None:
        logs = [f"--- {p.name} ---\n{p.read_text('utf-8', 'replace')[-6000:]}" for p in
                sorted(work.glob("*.log"))]  # fmt: skip
        pytest.fail("\n".join([why, *logs]))

    try:
        started = time.monotonic()
        for i, text in enumerate(blocks):
            while not (checkpoints / str(i)).exists():
                if shell.poll() is not None:
                    fail(f"the page's block {i} failed (exit {shell.returncode}):\n{text}")
                if time.monotonic() > deadline:
                    fail(f"the page's block {i} did not finish in {DEADLINE} s:\n{text}")
                time.sleep(0.5)
            seconds = time.monotonic() - started
            if page.is_stop(text):
                running = wait_until_gone(session, ours, STOP_GRACE)
            else:
                running = in_session(session, ours)
            done.append(Block(text=text, seconds=seconds, running=tuple(running)))
            (checkpoints / f"{i}.go").touch()
            started = time.monotonic()
        if shell.wait(timeout=60) != 0:
            fail(f"the page's script exited with {shell.returncode}")
        left = wait_until_gone(session, ours, STOP_GRACE)
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait(timeout=10)
        kill_all(in_session(session))  # whatever a failure left: the test's own processes
    return PageRun(
        work=work,
        blocks=tuple(done),
        left_at_end=tuple(left),
        log=log_path.read_text("utf-8", "replace"),
        head_port=head_port,
    )


@pytest.fixture(scope="module")
def page_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PageRun]:
    gym = gym_venv()
    if not Path("/proc/self/stat").exists():
        pytest.skip("reading what a session left behind needs /proc")
    root = tmp_path_factory.mktemp("gym_page")
    work = root / "nemo_gym"
    shutil.copytree(EXAMPLE, work)  # a user's copy of the example directory
    project = copy_project(root / "choicebox")
    blocks = page.bash_blocks()
    collect = page.gym_command(blocks, "eval run")
    inputs = work / page.option(collect, "--input")
    rows = [json.loads(line) for line in inputs.read_text("utf-8").splitlines() if line.strip()]
    table = write_replies(root / "replies.json", [(row, OUTPUTS[row["uuid"]]) for row in rows])
    with stub_model(table) as stub_port, _holding(DEFAULT_HEAD_PORT):
        commands = page.commands(
            blocks,
            page.substitutions(
                gym_venv=gym,
                venvs=root / "gym-venvs",
                project=project,
                model_address=f"127.0.0.1:{stub_port}",
            ),
        )
        yield _run_page(work, commands, head_port=free_port())


# --- the tests -----------------------------------------------------------------------------------


def test_the_collected_rollouts_have_choicebox_verdicts(page_run: PageRun) -> None:
    collect = page_run.command("eval run")
    output = page.option(collect, "--output")
    rollouts = page_run.jsonl(output)
    inputs = page_run.jsonl(page.option(collect, "--input"))
    assert len(rollouts) == len(inputs) * int(page.option(collect, "--num-repeats"))
    assert page_run.jsonl(output.replace(".jsonl", "_failures.jsonl")) == []
    for row in rollouts:
        assert _choicebox_verdict(row) == _recorded_verdict(row), row["uuid"]
        assert row["mask_sample"] is False
        assert row["failure_kind"] is None
    # Not a vacuous agreement: right and wrong answers, and one choicebox-only verdict.
    assert {0.0, 1.0} <= {row["reward"] for row in rollouts}
    assert "ambiguous" in {row["grading_failure"] for row in rollouts}


def test_the_reverify_output_equals_the_collected_rewards(page_run: PageRun) -> None:
    collect, reverify = page_run.command("eval run"), page_run.command("eval reverify")
    collected = page.option(collect, "--output")
    assert page.option(reverify, "--rollouts") == collected  # it re-grades what was collected
    before = _by_index(page_run.jsonl(collected))
    out = page.option(reverify, "-o", "--output")
    after = _by_index(page_run.jsonl(out))
    assert sorted(before) == sorted(after)
    assert {k: _recorded_verdict(r) for k, r in before.items()} == {
        k: _recorded_verdict(r) for k, r in after.items()
    }
    assert page_run.jsonl(out.replace(".jsonl", "_failures.jsonl")) == []
    metrics = (page_run.work / collected.replace(".jsonl", "_aggregate_metrics.json")).read_text()
    again = (page_run.work / out.replace(".jsonl", "_aggregate_metrics.json")).read_text()
    (metrics_entry,), (again_entry,) = json.loads(metrics), json.loads(again)
    assert metrics_entry["key_metrics"] == again_entry["key_metrics"]


def test_the_started_servers_are_seen_so_that_nothing_left_means_something(
    page_run: PageRun,
) -> None:
    assert set(_servers(page_run.block("env start").running)) == SERVERS


def test_gyms_head_server_took_the_free_port_with_11000_held(page_run: PageRun) -> None:
    for log in ("env_start.log", page.option(page_run.command("eval reverify"), ">")):
        text = (page_run.work / log).read_text("utf-8", "replace")
        assert f"Uvicorn running on http://127.0.0.1:{page_run.head_port} " in text, log


def test_stopping_as_the_page_says_leaves_no_process_behind(page_run: PageRun) -> None:
    stops = [block for block in page_run.blocks if page.is_stop(block.text)]
    assert len(stops) == 2  # the servers of `env start`, then those `eval reverify` left
    nothing: list[dict[str, Any]] = []
    for block in stops:
        assert nothing == [attrs.asdict(p) for p in block.running], block.text
    assert nothing == [attrs.asdict(p) for p in page_run.left_at_end]


def test_reverify_leaves_the_four_servers_running_whose_pids_it_printed(
    page_run: PageRun,
) -> None:
    """What the page says of 0.7.0, and why its last block is a kill of the printed pids."""
    reverify = page_run.command("eval reverify")
    printed = (page_run.work / page.option(reverify, ">")).read_text("utf-8", "replace")
    running = _servers(page_run.block("eval reverify").running)
    assert set(running) == SERVERS
    for pid in running.values():
        assert f"'pid': {pid}," in printed


def test_timings(page_run: PageRun) -> None:
    """Not a requirement, a record: printed with -s."""
    for i, block in enumerate(page_run.blocks):
        first = next(line for line in block.text.splitlines() if line and line[0] != "#")
        print(f"\nblock {i}: {block.seconds:6.1f} s  {first[:80]}")
