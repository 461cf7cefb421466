"""Gaming strategies side by side: which modes reward an output that commits to no single option.

A policy trained against a verifier finds whatever output earns reward without committing to one
option. This script writes twenty such outputs (every letter in its own box, one box per line,
an ``Answer:`` line per letter, the options restated, a commitment then withdrawn, reasoning cut
off with boxes in it, ...) as NeMo Gym verify rows, one per strategy and gold letter, from the
first row of ``examples/rollouts.jsonl`` (its prompt and response object, with the response text
and the gold replaced), and grades them with every built-in choicebox mode and, with
``--gym``, with NeMo Gym 0.7.0's own mcqa verifier in each of its modes (installed into a Python
3.13 venv on first use, as ``gym_side_by_side.py`` does). A strategy "earns" in a mode when some
gold letter gets a reward above 0; for a strategy that commits to nothing, any reward is a way to
game the mode.

Usage::

    python benchmarks/versus_gym/gaming.py [--gym] [--gym-venv DIR] [--python3.13 PATH]
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from gym_side_by_side import DEFAULT_PYTHON, DEFAULT_VENV, GYM_SIDE, ensure_gym

from choicebox.batch import Grader

LETTERS = "ABCD"
STRATEGIES: dict[str, str] = {
    "every letter boxed, one per line": "\n".join(f"\\boxed{{{x}}}" for x in LETTERS),
    "every letter boxed, one line": " ".join(f"\\boxed{{{x}}}" for x in LETTERS),
    "all letters in one box": "\\boxed{ABCD}",
    "a listed set in one box": "\\boxed{A, B, C, D}",
    "an answer tag per letter": "\n".join(f"<answer>{x}</answer>" for x in LETTERS),
    "an Answer: line per letter": "\n".join(f"Answer: {x}" for x in LETTERS),
    "a Final answer: line per letter": "\n".join(f"Final answer: {x}" for x in LETTERS),
    "a bold Answer: line per letter": "\n".join(f"**Answer:** {x}" for x in LETTERS),
    "one Answer: line listing all": "Answer: A, B, C, D",
    "'the answer is' per letter": " ".join(f"The answer is ({x})." for x in LETTERS),
    "a hedge between all": "The answer is A or B or C or D.",
    "a JSON list": json.dumps({"answer": list(LETTERS)}),
    "a JSON object per letter": "\n".join(json.dumps({"answer": x}) for x in LETTERS),
    "the options restated": "\n".join(f"{x}. option {x}" for x in LETTERS),
    "the options restated after a cue": "The answer is:\n" + "\n".join(f"({x}) option {x}" for x in LETTERS),
    "a commitment withdrawn": "The answer is (B). Actually, no, that is not right, and I am not sure which one is.",
    "reasoning cut off with boxes": "<think>It could be \\boxed{A}, or maybe \\boxed{B}, or \\boxed{C}",
    "boxes with zero-width joiners": "\n".join(f"\\boxed{{{x}\u200b}}" for x in LETTERS),
    "Answer: lines with zero-width spaces": "\n".join(f"Answer: {x}\u200b" for x in LETTERS),
    "a letter that is no option": "The answer is (F).",
}


def _template(examples: Path) -> dict[str, Any]:
    row: dict[str, Any] = json.loads(examples.read_text(encoding="utf-8").splitlines()[0])
    options = "\n".join(f"{x}: option {x}" for x in LETTERS)
    prompt = f"Answer with the letter of the right option.\nWhich one is right?\n{options}"
    row["responses_create_params"]["input"][0]["content"] = prompt
    row["options"] = [{x: f"option {x}"} for x in LETTERS]
    for key in ("metadata", "_ng_task_index", "_ng_rollout_index"):
        row.pop(key, None)
    return row


def _with_text(response: dict[str, Any], text: str) -> dict[str, Any]:
    out = copy.deepcopy(response)
    out.pop("usage", None)  # the example's usage lacks the token details Gym's model requires
    out["output"] = [item for item in out["output"] if item.get("type") == "message"][:1]
    out["output"][0]["content"] = [{"type": "output_text", "text": text, "annotations": []}]
    return out


def rows(template: dict[str, Any]) -> list[tuple[str, str, bytes]]:
    """(strategy, gold, verify row) for every strategy and gold letter."""
    out = []
    for name, text in STRATEGIES.items():
        for gold in LETTERS:
            row = copy.deepcopy(template)
            row["expected_answer"] = gold
            row["response"] = _with_text(template["response"], text)
            out.append((name, gold, json.dumps(row).encode()))
    return out


def choicebox_rewards(lines: list[bytes], mode: str) -> list[float]:
    graded, _ = Grader(mode=mode).grade_lines(enumerate(lines, start=1))
    return [float(json.loads(line).get("reward") or 0.0) for line in graded.split(b"\n") if line]


def gym_rewards(lines: list[bytes], modes: list[str], venv: Path, python: Path) -> dict[str, list[float]]:
    gym_python = ensure_gym(venv, python)
    with tempfile.TemporaryDirectory() as tmp:
        rows_path, out_path, script = Path(tmp, "rows.jsonl"), Path(tmp, "out.json"), Path(tmp, "gym_side.py")
        rows_path.write_bytes(b"\n".join(lines) + b"\n")
        script.write_text(GYM_SIDE, encoding="utf-8")
        cmd = [str(gym_python), str(script), str(rows_path), str(out_path), "0", ",".join(modes)]
        subprocess.run(cmd, check=True)
        result = json.loads(out_path.read_text(encoding="utf-8"))
    return {mode: [float(v.get("reward") or 0.0) for v in result[mode]["verdicts"]] for mode in modes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--gym", action="store_true", help="also run NeMo Gym 0.7.0's own verifier")
    parser.add_argument("--gym-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--python3.13", dest="python", type=Path, default=DEFAULT_PYTHON)
    args = parser.parse_args()

    examples = Path(__file__).parents[2] / "examples" / "rollouts.jsonl"
    cases = rows(_template(examples))
    lines = [line for _, _, line in cases]
    columns: dict[str, list[float]] = {}
    ours = ["robust", "strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon",
            "lenient_answer_colon_md", "mmlu_pro"]  # fmt: skip
    for mode in ours:
        columns[mode] = choicebox_rewards(lines, mode)
    if args.gym:
        gym_modes = ["strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon", "lenient_answer_colon_md"]
        for mode, rewards in gym_rewards(lines, gym_modes, args.gym_venv, args.python).items():
            columns[f"Gym {mode}"] = rewards

    names = list(columns)
    short = {name: name.replace("strict_single_letter_boxed", "strict_boxed").replace("lenient_answer_colon", "colon")
             for name in names}  # fmt: skip
    print(f"{'strategy (x: some gold letter earns a reward)':<44}" + "".join(f"{short[n]:>19}" for n in names))
    earned = dict.fromkeys(names, 0)
    for i, name in enumerate(STRATEGIES):
        marks = []
        for column in names:
            rewards = columns[column][i * len(LETTERS) : (i + 1) * len(LETTERS)]
            hit = any(r > 0 for r in rewards)
            earned[column] += hit
            marks.append("x" if hit else ".")
        print(f"{name:<44}" + "".join(f"{m:>19}" for m in marks))
    print(f"{'strategies that earn':<44}" + "".join(f"{earned[n]:>16}/{len(STRATEGIES)}" for n in names))
    # The mean over every strategy and gold letter: what a policy that games blindly earns.
    print(f"{'mean reward':<44}" + "".join(f"{sum(columns[n]) / len(columns[n]):>19.3f}" for n in names))


if __name__ == "__main__":
    sys.exit(main())
