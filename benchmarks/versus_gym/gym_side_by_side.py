"""choicebox and NeMo Gym's own mcqa verifier, side by side on the same real rows, in one run.

NeMo Gym 0.7.0 is installed with pip into a Python 3.13 virtual environment (created on the
first run; nothing of Gym is part of this project) and its ``resources_servers/mcqa`` verifier is
loaded in process, the way its own tests call it: ``MCQAResourcesServer(config=..., server_client=
MagicMock(spec=ServerClient))`` and ``await server.verify(MCQAVerifyRequest.model_validate(row))``.
For each of Gym's modes (its three row modes and ``lenient_answer_colon_md``, set in the server
config as Gym's YAML would) it prints, per row, Gym's cost (``json.loads`` + request validation +
``verify``) next to choicebox's (``Grader.grade_lines``: decode + grade + encode), and then how
often the two extracted the same answer, with the most frequent differing (Gym, choicebox) pairs.
Gym's side drops null ``parallel_tool_calls``/``tool_choice`` from a prompt before validating it,
since 0.7.0 rejects its own recorded rollouts for them.
Differences are expected where choicebox deviates from Gym on purpose (the compatibility table in
the README); the pairs show which.

Usage::

    python benchmarks/versus_gym/gym_side_by_side.py FILE [FILE ...] [--rows 4000] [--repeat 3]
        [--gym-venv ~/.cache/choicebox/gym-0.7.0] [--python3.13 PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from choicebox.batch import Grader

GYM_VERSION = "0.7.0"
MODES = (
    "strict_single_letter_boxed",
    "lenient_boxed",
    "lenient_answer_colon",
    "lenient_answer_colon_md",
)
DEFAULT_VENV = Path.home() / ".cache" / "choicebox" / f"gym-{GYM_VERSION}"
DEFAULT_PYTHON = Path.home() / ".pyenv" / "versions" / "3.13.0" / "bin" / "python"

# Runs inside Gym's environment: times Gym's verifier and writes its verdicts, one per row.
GYM_SIDE = r"""
import asyncio, json, sys, time
from pathlib import Path
from unittest.mock import MagicMock

import resources_servers  # a namespace package in the nemo-gym wheel

sys.path.insert(0, str(Path(next(iter(resources_servers.__path__))) / "mcqa"))
from app import MCQAResourcesServer, MCQAResourcesServerConfig, MCQAVerifyRequest
from nemo_gym.server_utils import ServerClient

rows_path, out_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
modes = sys.argv[4].split(",")
lines = [line for line in open(rows_path, "rb").read().split(b"\n") if line.strip()]


def loaded(line):
    row = json.loads(line)
    # Gym 0.7.0 refuses its own recorded rollouts, whose prompts carry null `parallel_tool_calls`
    # and `tool_choice`; dropping the nulls lets them through (its defaults apply).
    params = row.get("responses_create_params")
    if isinstance(params, dict):
        for key in ("parallel_tool_calls", "tool_choice"):
            if key in params and params[key] is None:
                del params[key]
    return row


async def run():
    result = {}
    for mode in modes:
        config = MCQAResourcesServerConfig(
            host="127.0.0.1", port=0, entrypoint="app.py", name="mcqa", grading_mode=mode
        )
        server = MCQAResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
        best, verdicts = float("inf"), []
        for attempt in range(repeat + 1):  # the first pass warms up and is not timed
            verdicts = []
            start = time.perf_counter()
            for line in lines:
                try:
                    request = MCQAVerifyRequest.model_validate(loaded(line))
                except Exception as exc:  # Gym answers such a request with 422
                    verdicts.append({"rejected": type(exc).__name__})
                    continue
                out = await server.verify(request)
                verdicts.append({"extracted": out.extracted_answer, "reward": out.reward})
            elapsed = time.perf_counter() - start
            if attempt:
                best = min(best, elapsed)
        result[mode] = {"seconds": best, "verdicts": verdicts}
    json.dump(result, open(out_path, "w"))


asyncio.run(run())
"""


def ensure_gym(venv: Path, python: Path) -> Path:
    """The Gym environment's interpreter; installs nemo-gym there on the first run."""
    gym_python = venv / "bin" / "python"
    probe = [str(gym_python), "-c", "import nemo_gym, resources_servers"]
    if (
        gym_python.exists()
        and subprocess.run(probe, capture_output=True, check=False).returncode == 0
    ):
        return gym_python
    print(f"installing nemo-gym {GYM_VERSION} into {venv} (about 80 s) ...", file=sys.stderr)
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
    # The wheel declares Requires-Python >=3.13.14; the machine's 3.13.0 runs it fine.
    install = [str(gym_python), "-m", "pip", "install", "-q", "--ignore-requires-python"]
    subprocess.run([*install, f"nemo-gym=={GYM_VERSION}"], check=True)
    return gym_python


def read_rows(path: Path, limit: int) -> list[bytes]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    lines: list[bytes] = []
    with opener(path, "rb") as handle:
        for line in handle:
            if line.strip():
                lines.append(line.rstrip(b"\r\n"))
                if limit and len(lines) >= limit:
                    break
    return lines


def choicebox_side(
    lines: list[bytes], mode: str, repeat: int
) -> tuple[float, list[dict[str, Any]]]:
    grader = Grader(mode=mode)
    numbered = list(enumerate(lines, start=1))
    grader.grade_lines(numbered[:20])  # load the mode and any parser before timing
    best, out = float("inf"), b""
    for _ in range(repeat):
        start = time.perf_counter()
        parts = [grader.grade_lines(numbered[i : i + 256])[0] for i in range(0, len(lines), 256)]
        best = min(best, time.perf_counter() - start)
        out = b"".join(parts)
    verdicts = []
    for line in out.split(b"\n"):
        if line:
            row = json.loads(line)
            if "error" in row:
                verdicts.append({"rejected": row["error"]})
            else:
                verdicts.append({"extracted": row["extracted_answer"], "reward": row["reward"]})
    return best, verdicts


def _label(verdict: dict[str, Any]) -> str:
    return "rejected" if "rejected" in verdict else str(verdict["extracted"])


def compare(name: str, lines: list[bytes], gym: dict[str, Any], repeat: int) -> None:
    n = len(lines)
    floor = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for line in lines:
            json.loads(line)
        floor = min(floor, time.perf_counter() - start)
    print(f"\n{name}: {n} rows; json.loads alone {floor / n * 1e6:.1f} us/row")
    print(
        f"  {'mode':<28} {'Gym us/row':>10} {'choicebox':>10} {'faster':>7}  {'same answer':>14}  {'same reward':>14}"
    )
    for mode in MODES:
        seconds, ours = choicebox_side(lines, mode, repeat)
        theirs = gym[mode]["verdicts"]
        same = sum(_label(a) == _label(b) for a, b in zip(theirs, ours, strict=True))
        same_reward = sum(
            a.get("reward") == b.get("reward") for a, b in zip(theirs, ours, strict=True)
        )
        gym_us, our_us = gym[mode]["seconds"] / n * 1e6, seconds / n * 1e6
        print(
            f"  {mode:<28} {gym_us:10.1f} {our_us:10.1f} {gym_us / our_us:6.1f}x  "
            f"{same:>6}/{n} {same / n:5.1%}  {same_reward:>6}/{n} {same_reward / n:5.1%}"
        )
        pairs = Counter(
            (_label(a), _label(b))
            for a, b in zip(theirs, ours, strict=True)
            if _label(a) != _label(b)
        )
        for (g, c), count in pairs.most_common(4):
            print(f"      Gym {g:>8} -> choicebox {c:<8} {count:>6} rows")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--rows", type=int, default=4000, help="first N rows of each file (0: all)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timed passes")
    parser.add_argument("--gym-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--python3.13", dest="python", type=Path, default=DEFAULT_PYTHON)
    args = parser.parse_args()
    gym_python = ensure_gym(args.gym_venv, args.python)
    with tempfile.TemporaryDirectory() as scratch:
        side = Path(scratch) / "gym_side.py"
        side.write_text(GYM_SIDE)
        for path in args.files:
            lines = read_rows(path, args.rows)
            rows_file, out_file = Path(scratch) / "rows.jsonl", Path(scratch) / "gym.json"
            rows_file.write_bytes(b"\n".join(lines) + b"\n")
            env = {**os.environ, "PYTHONWARNINGS": "ignore"}
            command = [str(gym_python), str(side), str(rows_file), str(out_file), str(args.repeat)]
            # cwd: Gym's config loader (Hydra) writes an `outputs/` folder where it runs.
            subprocess.run([*command, ",".join(MODES)], check=True, env=env, cwd=scratch)
            compare(path.name, lines, json.loads(out_file.read_text()), args.repeat)


if __name__ == "__main__":
    main()
