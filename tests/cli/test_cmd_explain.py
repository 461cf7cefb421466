"""``choicebox explain``: the statements found, what the resolution did with each, the verdict."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from choicebox.cli import main


def _row(uuid: str, text: str, expected: str = "B", **extra: Any) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "responses_create_params": {"input": [{"role": "user", "content": "Which is it?"}]},
        "options": [{"A": "optA"}, {"B": "optB"}, {"C": "optC"}, {"D": "optD"}],
        "expected_answer": expected,
        "response": {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]},
        **extra,
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def test_explain_text_shows_each_statement_and_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--text", "The answer is (B) or (D). Rechecking, the answer is (D)."]) == 0
    out = capsys.readouterr().out
    assert "mode robust (resolve: conclusion)" in out
    assert "hedge" in out
    assert "superseded: revised by the concluding answer" in out
    assert "commitment" in out
    assert "chosen" in out
    assert "'answer is (B) or (D)'" in out
    assert "verdict: D" in out


def test_explain_says_why_there_is_no_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--text", "The answer is (A)\nThe answer is (C)"]) == 0
    out = capsys.readouterr().out
    assert out.count("conflicting") >= 3
    assert "failure: conflicting: a run of answers with different letters: A, C" in out


def test_explain_with_options_mode_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", "--text", "Answer: beta", "--options", "A=alpha", "B=beta", "--expected", "B", "--json"]
    assert main([*args, "--mode", "robust"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["verdict"]["extracted_answer"] == "B"
    assert shown["verdict"]["reward"] == 1.0
    assert [c["outcome"] for c in shown["candidates"]] == ["chosen"]
    assert main([*args, "--mode", "strict_single_letter_boxed"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["grading_failure"] == "no_answer"


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz"])
def test_explain_a_row_of_a_file_by_line_or_uuid(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / name, [_row("u-1", "\\boxed{C}"), _row("u-2", "Final answer: (B)", grading_mode="lenient_answer_colon_md")])
    assert main(["explain", str(path), "--line", "1"]) == 0
    out = capsys.readouterr().out
    assert "mode strict_single_letter_boxed" in out
    assert "verdict: C" in out
    assert main(["explain", str(path), "--uuid", "u-2", "--mode", "robust"]) == 0
    out = capsys.readouterr().out
    assert "verdict: B, reward 1" in out
    assert "[final]" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explain"], "give --text TEXT, or FILE"),
        (["explain", "--text", "x", "--options", "A"], "LETTER=TEXT"),
        (["explain", "--text", "x", "--expected", "Z"], "not one of the options"),
        (["explain", "--text", "x", "--mode", "nope"], "nope"),
    ],
)
def test_explain_names_a_bad_command_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) in (1, 2)
    assert message in capsys.readouterr().err


def test_explain_names_a_missing_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "rows.jsonl", [_row("u-1", "\\boxed{C}")])
    assert main(["explain", str(path), "--uuid", "u-9"]) == 2
    assert "rows.jsonl: no row with uuid 'u-9'" in capsys.readouterr().err
    assert main(["explain", str(path), "--line", "5"]) == 2
    assert "rows.jsonl: no line 5" in capsys.readouterr().err


def test_explain_shows_how_each_statement_was_composed(capsys: pytest.CaptureFixture[str]) -> None:
    """Cue, payload and layout of each statement, and the stage that ruled on it."""
    text = "So the final answer is:\nD. optD\n\nWait, the answer is (B) or (C)."
    assert main(["explain", "--text", text]) == 0
    out = capsys.readouterr().out
    assert "payload letter with its option's text, next line" in out
    assert "payload several letters, same line" in out
    assert "superseded: stage hedge" in out
    assert main(["explain", "--text", text, "--json"]) == 0
    statements = json.loads(capsys.readouterr().out)["candidates"]
    assert [(s["payload"], s["layout"]) for s in statements] == [
        ("letter with its option's text", "next line"),
        ("several letters", "same line"),
    ]
