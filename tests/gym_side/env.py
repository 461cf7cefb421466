"""Where NeMo Gym 0.7.0 lives for the tests, and how a test gets it.

Gym needs Python 3.13 and about 150 packages (1.4 GB), so it gets a venv of its own, cached
across runs: ``$CHOICEBOX_GYM_VENV``, default ``~/.cache/choicebox/gym-0.7.0``. A test that
needs Gym skips when the venv is missing, unless ``CHOICEBOX_GYM_INSTALL=1`` asks it to build
one (``python3.13 -m venv`` + ``pip install nemo-gym==0.7.0``, about 80 s with a warm pip cache;
it needs the network).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

GYM_VERSION = "0.7.0"
_DEFAULT = Path.home() / ".cache" / "choicebox" / f"gym-{GYM_VERSION}"


def venv_path() -> Path:
    return Path(os.environ.get("CHOICEBOX_GYM_VENV", _DEFAULT))


def _python313() -> str | None:
    for candidate in (
        os.environ.get("CHOICEBOX_PYTHON313"),
        "/root/.pyenv/versions/3.13.0/bin/python",
        shutil.which("python3.13"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def install(venv: Path) -> None:
    """Build Gym's venv: 0.7.0 declares Python >= 3.13.14, hence --ignore-requires-python."""
    python = _python313()
    if python is None:
        raise RuntimeError("no Python 3.13 found (set CHOICEBOX_PYTHON313)")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--ignore-requires-python",
         f"nemo-gym=={GYM_VERSION}"],
        check=True,
    )  # fmt: skip


def gym_venv() -> Path:
    """The Gym venv, built first if asked to; skips the calling test when there is none."""
    venv = venv_path()
    if not (venv / "bin" / "gym").exists():
        if os.environ.get("CHOICEBOX_GYM_INSTALL") != "1":
            pytest.skip(
                f"NeMo Gym {GYM_VERSION} is not installed at {venv} "
                "(set CHOICEBOX_GYM_INSTALL=1 to build it, or CHOICEBOX_GYM_VENV)"
            )
        install(venv)
    return venv


def site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python3.*/site-packages")
    return found


def run_gym_python(venv: Path, script: Path, stdin: str, timeout: float = 300) -> str:
    """Run ``script`` with Gym's interpreter; its stdout, or a failure showing its stderr."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(script)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"{script.name} failed under Gym's Python:\n{done.stderr[-4000:]}")
    return done.stdout
