"""``choicebox compare``: where two gradings of one file differ, and by how much."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from choicebox.cli import main
from choicebox.compare import RECORDED, ROW_MODE, compare_file, mcnemar_exact, render_html

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gym_e2e"
REPLIES: dict[str, dict[str, Any]] = json.loads((FIXTURES / "replies.json").read_text("utf-8"))


def _response(text: str) -> dict[str, Any]:
    return {
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ]
    }


def _gym_rollouts(tmp_path: Path) -> Path:
    """Rollouts as Gym's mcqa server graded them: our tricky rows and their recorded outputs,
    with the reward and extracted answer Gym gives (``test_gym_e2e.py`` checks those)."""
    lines = []
    for raw in (FIXTURES / "tricky.jsonl").read_text("utf-8").splitlines():
        row = json.loads(raw)
        entry = REPLIES[row["uuid"]]
        for rollout, text in enumerate(entry["outputs"]):
            reward, letter = (entry.get("gym") or entry["choicebox"])[rollout]
            lines.append(
                {
                    **row,
                    "_ng_rollout_index": rollout,
                    "response": _response(text),
                    "reward": reward,
                    "extracted_answer": letter,
                }
            )
    path = tmp_path / "gym_rollouts.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_recorded_gym_verdicts_against_choicebox(tmp_path: Path) -> None:
    comparison = compare_file(_gym_rollouts(tmp_path), before=RECORDED, after=ROW_MODE)
    assert comparison.rows == comparison.paired == 20
    changed = {key: n for key, n in comparison.pairs.items() if key[0] != key[1]}
    # The four documented deviations: a hedge, a lowercase and a fullwidth box letter, an
    # empty box after the answer, the last Answer: line.
    assert changed == {
        ("correct", "no answer"): 1,
        ("no answer", "correct"): 3,
        ("wrong", "correct"): 1,
    }
    assert sum(comparison.pairs.values()) == 20
    assert (comparison.gained, comparison.lost) == (4, 1)
    assert comparison.before_accuracy == 12 / 20
    assert comparison.after_accuracy == 15 / 20
    change = comparison.change
    assert change is not None
    assert change.value == pytest.approx(3 / 20)
    assert change.ci_lower <= change.value <= change.ci_upper
    assert change.resamples == 10_000
    assert comparison.mcnemar_p == pytest.approx(2 * 6 / 32)  # 2·P(X <= 1), X ~ Bin(5, 1/2)
    assert comparison.letters_changed == 5
    (hedge,) = comparison.exemplars[("correct", "no answer")]
    assert (hedge.before.letter, hedge.after.letter) == ("C", None)
    assert hedge.tail == r"\boxed{A} or \boxed{C}"
    assert hedge.after.detail is not None
    assert "hedged" in hedge.after.detail
    # The same file gives the same interval; another seed another one, around the same point.
    again = compare_file(_gym_rollouts(tmp_path))
    assert again.change == change
    other = compare_file(_gym_rollouts(tmp_path), seed=7).change
    assert other is not None
    assert other.value == change.value


def test_two_modes_and_ungraded_rows(tmp_path: Path) -> None:
    rows = [json.loads(x) for x in (FIXTURES / "tricky.jsonl").read_text("utf-8").splitlines()]
    limestone = next(r for r in rows if r["uuid"] == "cbx-e2e-limestone")
    lines = [
        {**limestone, "response": _response(r"\boxed{Marble}")},
        {**limestone, "response": _response(r"\boxed{C}")},
        {**limestone, "response": _response(r"\boxed{C}"), "mask_sample": True},
        {**limestone, "options": 3, "response": _response(r"\boxed{C}")},
    ]
    path = tmp_path / "two.jsonl"
    text = "".join(json.dumps(line) + "\n" for line in lines) + "{not json\n"
    path.write_text(text, encoding="utf-8")
    comparison = compare_file(path, before="strict_single_letter_boxed", after="lenient_boxed")
    assert comparison.rows == 5
    assert comparison.pairs == {
        ("no answer", "correct"): 1,  # option text in the box: lenient only
        ("correct", "correct"): 1,
        ("ungraded", "ungraded"): 3,  # masked, unreadable options, not JSON
    }
    assert comparison.paired == 2
    masked = comparison.exemplars.get(("ungraded", "ungraded"))
    assert masked is None  # the same on both sides is no change worth showing
    with pytest.raises(Exception, match="telepathy"):
        compare_file(path, after="telepathy")


def test_mcnemar_exact_matches_the_binomial_sum() -> None:
    for gained, lost in [(0, 0), (3, 0), (4, 1), (7, 9), (20, 2)]:
        n, low = gained + lost, min(gained, lost)
        exact = min(Fraction(1), 2 * Fraction(sum(math.comb(n, k) for k in range(low + 1)), 2**n))
        assert mcnemar_exact(gained, lost) == pytest.approx(float(exact), rel=1e-12)
    # A million discordant rows neither overflow nor underflow to nonsense.
    assert 0.0 < mcnemar_exact(500_000, 501_500) < 1.0
    assert mcnemar_exact(600_000, 400_000) == 0.0


def test_command_prints_the_table_and_writes_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _gym_rollouts(tmp_path)
    page = tmp_path / "compare.html"
    assert main(["compare", str(source), "--html", str(page), "--exemplars", "1"]) == 0
    out = capsys.readouterr().out
    assert "before: the verdicts recorded in the file" in out
    assert "after:  choicebox, each row's grading_mode" in out
    header, *table = out.split("\n\n")[1].splitlines()
    assert header.split() == ["before", "\\", "after", "correct", "wrong", "no", "answer", "ungraded"]
    assert table[0].split() == ["correct", "11", "0", "1", "0"]
    assert "accuracy 60.0% -> 75.0% on 20 rows graded on both sides: +15.0 points (95% CI" in out
    assert "4 rows turned correct, 1 turned not correct, p = 0.375" in out
    assert "no answer -> correct: 3 rows, e.g." in out
    assert "| \\boxed{A} or \\boxed{C}" in out
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html
    assert "no answer → correct: 3 rows" in html
    assert "\\boxed{A} or \\boxed{C}" in html


def test_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "missing.jsonl")]) == 2
    assert "choicebox compare:" in capsys.readouterr().err
    source = _gym_rollouts(tmp_path)
    assert main(["compare", str(source), "--after", "telepathy"]) == 2
    assert "telepathy" in capsys.readouterr().err


def test_the_page_escapes_what_the_model_wrote(tmp_path: Path) -> None:
    rows = [json.loads(x) for x in (FIXTURES / "tricky.jsonl").read_text("utf-8").splitlines()]
    row = {**rows[0], "response": _response("<script>alert(1)</script> \\boxed{A}")}
    row.update(reward=1.0, extracted_answer="C")
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    html = render_html(compare_file(path))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
