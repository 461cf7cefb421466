"""Record NeMo Gym 0.7.0's ``/aggregate_metrics`` replies to ``cases.metrics_cases()``.

    python tests/gym_side/record.py      # with choicebox installed; Gym's venv as in env.py

Writes ``tests/fixtures/gym_metrics_expected.json``, which ``tests/serve/test_gym_metrics.py``
compares choicebox against on every run (and, when Gym is installed, re-derives live).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
FIXTURE = HERE.parent / "fixtures" / "gym_metrics_expected.json"


def inputs_digest(cases: list[dict[str, object]]) -> str:
    return hashlib.sha256(json.dumps(cases, sort_keys=True).encode()).hexdigest()


def main() -> None:
    sys.path.insert(0, str(HERE.parent))
    from gym_side.cases import metrics_cases
    from gym_side.env import GYM_VERSION, venv_path

    cases = metrics_cases()
    venv = venv_path()
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(HERE / "aggregate.py")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    replies = json.loads(done.stdout)
    document = {
        "gym_version": GYM_VERSION,
        "inputs_sha256": inputs_digest(cases),
        "replies": [{"name": c["name"], "reply": r} for c, r in zip(cases, replies, strict=True)],
    }
    FIXTURE.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE} ({len(replies)} cases)")


if __name__ == "__main__":
    main()
