"""``python -m choicebox.gym`` / ``choicebox gym``: reading NeMo Gym's config and serving there.

Without Gym: these tests set the two variables Gym sets for a server it starts, and run the
shipped ``examples/nemo_gym/resources_servers/choicebox_mcqa/app.py`` as Gym would. The real
thing is ``test_gym_e2e.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from choicebox import GymConfigError
from choicebox.cli import main
from choicebox.server import GymServerConfig, load_gym_config
from gym_side.launch import free_port

SERVER_DIR = Path(__file__).parents[2] / "examples" / "nemo_gym" / "resources_servers"
APP = SERVER_DIR / "choicebox_mcqa" / "app.py"


def _config(**settings: Any) -> dict[str, Any]:
    """A resolved global config as Gym writes it, with the choicebox_mcqa instance."""
    server = {"entrypoint": "app.py", "domain": "knowledge", "host": "127.0.0.1", "port": 18123}
    server.update(settings)
    return {
        "choicebox_mcqa": {"resources_servers": {"choicebox_mcqa": server}},
        "head_server": {"host": "127.0.0.1", "port": 11000},
        "dry_run": False,
    }


def _environ(config: dict[str, Any], name: str = "choicebox_mcqa") -> dict[str, str]:
    return {"NEMO_GYM_CONFIG_DICT": yaml.safe_dump(config), "NEMO_GYM_CONFIG_PATH": name}


def test_the_servers_settings_are_read_three_levels_down() -> None:
    config = load_gym_config(
        _environ(
            _config(
                grading_mode="lenient_boxed",
                rules_dirs="my_rules",
                regex_timeout=0.5,
                max_body_bytes=1024,
                num_workers=2,
                verified=False,  # Gym's own keys are left to Gym
            )
        )
    )
    assert config == GymServerConfig(
        name="choicebox_mcqa",
        host="127.0.0.1",
        port=18123,
        grading_mode="lenient_boxed",
        rules_dirs=("my_rules",),
        regex_timeout=0.5,
        max_body_bytes=1024,
        num_workers=2,
    )
    assert config.serve_arguments() == [
        "--host", "127.0.0.1", "--port", "18123", "--name", "choicebox_mcqa",
        "--mode", "lenient_boxed", "--rules-dir", "my_rules", "--regex-timeout", "0.5",
        "--max-body-bytes", "1024", "--workers", "2",
    ]  # fmt: skip
    plain = load_gym_config(_environ(_config(grading_mode=None)))
    assert (plain.grading_mode, plain.rules_dirs, plain.num_workers) == (None, (), None)
    assert "--mode" not in plain.serve_arguments()


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, r"\$NEMO_GYM_CONFIG_DICT is not set"),
        ({"NEMO_GYM_CONFIG_DICT": "{}"}, r"\$NEMO_GYM_CONFIG_PATH is not set"),
        (
            {"NEMO_GYM_CONFIG_DICT": "a: [1", "NEMO_GYM_CONFIG_PATH": "a"},
            "NEMO_GYM_CONFIG_DICT is not valid YAML",
        ),
        (_environ(_config(), name="other"), "has no server instance 'other'"),
        (
            _environ({"choicebox_mcqa": {"resources_servers": {}}}),
            "choicebox_mcqa.resources_servers: expected a mapping with one implementation",
        ),
        (
            _environ(_config(port="x")),
            r"choicebox_mcqa\.resources_servers\.choicebox_mcqa\.port: expected a port number",
        ),
        (_environ(_config(host=None)), r"\.host: expected a string"),
        (_environ(_config(grading_mode=3)), r"\.grading_mode: expected a name or null"),
        (_environ(_config(rules_dirs=[1])), r"\.rules_dirs: expected a directory"),
        (_environ(_config(regex_timeout=0)), r"\.regex_timeout: expected a positive number"),
        (_environ(_config(num_workers=True)), r"\.num_workers: expected a whole number"),
    ],
)
def test_bad_config_names_the_variable_or_key(environ: dict[str, str], message: str) -> None:
    with pytest.raises(GymConfigError, match=message):
        load_gym_config(environ)


def test_check_validates_the_mode_without_serving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in _environ(_config(grading_mode="lenient_answer_colon_md")).items():
        monkeypatch.setenv(key, value)
    assert main(["gym", "--check"]) == 0
    assert "choicebox_mcqa would serve on 127.0.0.1:18123" in capsys.readouterr().out
    for key, value in _environ(_config(grading_mode="telepathy")).items():
        monkeypatch.setenv(key, value)
    assert main(["gym", "--check"]) == 2
    assert "telepathy" in capsys.readouterr().err
    monkeypatch.delenv("NEMO_GYM_CONFIG_DICT")
    assert main(["gym"]) == 2
    assert "NEMO_GYM_CONFIG_DICT is not set" in capsys.readouterr().err


def _run_app(environ: dict[str, str]) -> subprocess.Popen[str]:
    # As Gym runs a server: from its directory, with the config in the environment.
    return subprocess.Popen(
        [sys.executable, "app.py"],
        cwd=APP.parent,
        env={**os.environ, **environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_the_shipped_app_honours_gyms_dry_run() -> None:
    config = _config()
    config["dry_run"] = True
    proc = _run_app(_environ(config))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "would serve on 127.0.0.1:18123" in out


def test_the_shipped_app_serves_on_the_port_gym_assigned() -> None:
    port = free_port()
    proc = _run_app(_environ(_config(port=port, grading_mode="lenient_answer_colon")))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                # Gym's readiness probe: any answer on / counts; choicebox's is Gym's.
                if httpx.get(f"{base}/", timeout=1).json() == {"status": "ok"}:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read() if proc.stdout else ""
                pytest.fail(f"app.py did not serve:\n{out}")
            time.sleep(0.05)
        row = {
            "responses_create_params": {"input": "Which is a noble gas?\nA: Argon\nB: Iron"},
            "response": {"output_text": "Answer: A"},
            "options": [{"A": "Argon"}, {"B": "Iron"}],
            "expected_answer": "A",
            "grading_mode": "strict_single_letter_boxed",
        }
        body = httpx.post(f"{base}/verify", json=row, timeout=10).json()
        # The config's grading_mode wins over the row's, as in Gym's mcqa server.
        assert (body["grading_mode"], body["reward"]) == ("lenient_answer_colon", 1.0)
        reply = httpx.post(f"{base}/seed_session", json={}, timeout=10)
        assert "ChoiceboxResourcesServer___choicebox_mcqa" in reply.cookies
    finally:
        proc.terminate()
        proc.wait(timeout=10)
