"""Tests of ``choicebox audit`` and ``choicebox fix`` (choicebox.cli.audit), through a parser
built here with the module's own ``register``."""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pytest

from choicebox.audit import audit_checks
from choicebox.cli import audit as audit_command

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"
DEFECTS = FIXTURES / "defects.jsonl"
CONTROLS = FIXTURES / "controls.jsonl"
EXAMPLES = Path(__file__).parents[2] / "examples" / "samples.jsonl"


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="choicebox")
    audit_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    status: int = args.handler(args)
    return status


def test_audit_examples_writes_one_report_row_per_input_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.jsonl"
    assert _main(["audit", str(EXAMPLES), "-o", str(report)]) == 1  # the examples hold errors
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in rows] == list(range(1, 16))
    assert rows[0] == {"line": 1, "uuid": "ex-0001", "findings": []}
    assert rows[7]["findings"][0]["check"] == "gold_not_in_choices"
    err = capsys.readouterr().err
    assert err.startswith("audited 15 rows: 6 with findings (3 errors, 6 warnings)")
    assert "conflicting_duplicate_question  1 error" in err
    assert "worst rows: line 7 (1 error, 0 warnings)" in err
    assert f"report: {report}" in err
    assert not (tmp_path / "report.jsonl.partial").exists()


def test_audit_without_output_prints_one_line_per_finding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _main(["audit", str(DEFECTS)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "line 1: error unreadable_row [$] the row is a JSON array, not an object: "
        "it cannot be a sample"
    )
    assert any(line.startswith("line 15: error conflicting_duplicate_question") for line in out)


def test_audit_of_clean_rows_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["audit", str(CONTROLS)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("audited 41 rows: 0 with findings")


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        _main(["audit", str(EXAMPLES), "--select", "choice_repeats_label,truncated_question"]) == 0
    )
    assert "gold_not_in_choices" not in capsys.readouterr().out


def test_ignore_and_unknown_ids(capsys: pytest.CaptureFixture[str]) -> None:
    ignored = ["gold_not_in_choices", "prompt_options_mismatch", "conflicting_duplicate_question"]
    assert _main(["audit", str(EXAMPLES), "--ignore", ",".join(ignored)]) == 0
    capsys.readouterr()
    assert _main(["audit", str(EXAMPLES), "--select", "empty_choice,nope"]) == 2
    assert "unknown check 'nope'" in capsys.readouterr().err


def test_checks_file_is_laid_over_the_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "checks.yaml"
    config.write_text(
        "checks:\n  truncated_question:\n    severity: error\n"
        "  gold_not_in_choices:\n    enabled: false\n",
        encoding="utf-8",
    )
    assert _main(["audit", str(EXAMPLES), "--checks", str(config)]) == 1
    out = capsys.readouterr().out
    assert "line 9: error truncated_question" in out
    assert "gold_not_in_choices" not in out


def test_bad_checks_file_exits_2_naming_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "checks.yaml"
    config.write_text("checks:\n  empty_choice:\n    severty: warning\n", encoding="utf-8")
    assert _main(["audit", str(EXAMPLES), "--checks", str(config)]) == 2
    assert capsys.readouterr().err.splitlines()[:3] == [
        f"choicebox audit: {config}:3:5: empty_choice.severty: unknown key 'severty'; "
        "empty_choice takes enabled, severity",
        "        severty: warning",
        "        ^",
    ]


def test_list_checks_documents_every_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["audit", "--list-checks"]) == 0
    out = capsys.readouterr().out
    for info in audit_checks():
        assert f"\n{info.id}  (" in "\n" + out
    assert "Bad:" in out
    assert "min_length: 10" in out
    assert "conflicting_duplicate_question  (error, enabled, file-level)" in out


def test_missing_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["audit"]) == 2
    assert _main(["audit", str(tmp_path / "absent.jsonl")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_fix_then_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixed = tmp_path / "fixed.jsonl"
    assert _main(["fix", str(EXAMPLES), "-o", str(fixed)]) == 0
    err = capsys.readouterr().err
    assert "line 6: options.A: stripped the copy of its own label 'A)'" in err
    assert "line 7: responses_create_params.input: re-rendered the prompt" in err
    assert "line 8: left unchanged: cannot be decoded:" in err
    assert err.rstrip().endswith(
        f"fixed 2 of 15 rows (6 changes) into {fixed}; 1 row needs attention and was "
        "written unchanged"
    )
    assert len(fixed.read_text(encoding="utf-8").splitlines()) == 15
    assert _main(["audit", str(fixed)]) == 1
    out = capsys.readouterr().out
    assert "choice_repeats_label" not in out
    assert "prompt_options_mismatch" not in out
    assert "gold_not_in_choices" in out  # not fixable: reported, not changed


def test_fix_quiet_and_bad_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixed = tmp_path / "fixed.jsonl"
    assert _main(["fix", str(DEFECTS), "-o", str(fixed), "-q"]) == 0
    err = capsys.readouterr().err
    assert "stripped" not in err
    assert "line 1: left unchanged: not a JSON object" in err
    assert _main(["fix", str(fixed), "-o", str(fixed)]) == 2
    assert _main(["fix", str(tmp_path / "absent.jsonl"), "-o", str(fixed)]) == 2
    with pytest.raises(SystemExit):
        _main(["fix", str(DEFECTS)])  # -o is required


def test_audit_reads_a_gzip_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = tmp_path / "controls.jsonl.gz"
    packed.write_bytes(gzip.compress(CONTROLS.read_bytes()))
    assert _main(["audit", str(packed)]) == 0
    assert capsys.readouterr().err.startswith("audited 41 rows: 0 with findings")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(CONTROLS.read_bytes())[:-30])
    assert _main(["audit", str(cut)]) == 2
    assert f"choicebox audit: {cut}: the gzip data ends early" in capsys.readouterr().err


def test_audit_survives_numbers_beyond_float(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "huge.jsonl"
    huge = ["1e400", "-1e400", "1" + "0" * 400, "1e99999999999999999999"]
    row = {
        "question": "Which number is the largest of these four?",
        "options": [{letter: text} for letter, text in zip("ABCD", huge, strict=True)],
        "expected_answer": "A",
    }
    rows.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    assert _main(["audit", str(rows)]) == 0
    assert capsys.readouterr().err.startswith("audited 2 rows: 0 with findings")
