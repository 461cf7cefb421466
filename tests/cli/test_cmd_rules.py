"""Tests of ``choicebox rules list|check|test``, through ``choicebox.cli.main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from choicebox._modes import RULES_DIR_ENV
from choicebox.cli import main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rules"
BUILTIN_MODES = [
    "lenient_answer_colon",
    "lenient_answer_colon_md",
    "lenient_boxed",
    "mmlu_pro",
    "robust",
    "strict_single_letter_boxed",
]

_GOOD = """\
version: 1
id: {id}
description: First boxed letter wins.
chain:
  - kind: boxed_letter
    which: first
examples:
  - output: "First \\\\boxed{{C}}. Checking shows \\\\boxed{{D}}"
    expected: C
  - output: "nothing"
    expected: null
"""


@pytest.fixture(autouse=True)
def _no_user_rules_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RULES_DIR_ENV, raising=False)


def _rules_dir(tmp_path: Path, **files: str) -> Path:
    directory = tmp_path / "rules"
    directory.mkdir()
    for name, text in files.items():
        (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    return directory


# ------------------------------------------------------------------------------ rules list


def test_rules_list_prints_ids_and_descriptions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == BUILTIN_MODES
    robust = next(line for line in lines if line.startswith("robust "))
    assert "resolves them to the concluding commitment" in robust


def test_rules_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in rows] == BUILTIN_MODES
    by_id = {row["id"]: row for row in rows}
    assert by_id["lenient_boxed"]["extends"] == "strict_single_letter_boxed"
    assert by_id["robust"]["resolve"] == "conclusion"
    assert by_id["mmlu_pro"]["resolve"] == "first_step"
    assert all(row["builtin"] for row in rows)
    assert all(row["description"] and row["examples"] >= 5 for row in rows)
    assert by_id["lenient_boxed"]["steps"] == ["boxed_letter", "boxed_option_text"]


def test_rules_list_includes_a_rules_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(tmp_path, first_box=_GOOD.format(id="first_box"))
    assert main(["rules", "list", "--rules-dir", str(directory), "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["first_box"]["builtin"] is False
    assert rows["first_box"]["source"] == str(directory / "first_box.yaml")
    assert main(["rules", "list", "--rules-dir", str(directory)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("first_box"))
    assert "First boxed letter wins." in line


def test_rules_list_includes_the_env_var_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = _rules_dir(tmp_path, env_box=_GOOD.format(id="env_box"))
    monkeypatch.setenv(RULES_DIR_ENV, str(directory))
    assert main(["rules", "list"]) == 0
    assert "env_box" in [line.split()[0] for line in capsys.readouterr().out.splitlines()]


def test_rules_list_with_a_bad_rules_dir_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(tmp_path, bad="version: 1\nid: bad\n")
    assert main(["rules", "list", "--rules-dir", str(directory)]) == 1
    assert "bad.yaml" in capsys.readouterr().err


# ------------------------------------------------------------------------------ rules check


def test_rules_check_passes_on_a_good_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(
        tmp_path, first_box=_GOOD.format(id="first_box"), other=_GOOD.format(id="other_box")
    )
    assert main(["rules", "check", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "ok" in out
    assert "first_box" in out
    assert "other_box" in out


def test_rules_check_prints_the_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _GOOD.format(id="bad_box").replace("which: first", "wich: first")
    directory = _rules_dir(tmp_path, bad_box=bad)
    assert main(["rules", "check", str(directory)]) == 1
    err = capsys.readouterr().err
    assert f"{directory / 'bad_box.yaml'}:6:5: unknown parameter 'wich'" in err
    assert "    wich: first" in err
    assert "    ^" in err


def test_rules_check_refuses_a_shadowed_builtin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(tmp_path, robust=_GOOD.format(id="robust"))
    assert main(["rules", "check", str(directory)]) == 1
    assert "overrides: true" in capsys.readouterr().err


def test_rules_check_on_a_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "check", str(tmp_path / "missing")]) == 1
    assert "not a directory" in capsys.readouterr().err


def test_rules_check_on_an_empty_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(tmp_path)
    assert main(["rules", "check", str(directory)]) == 0
    assert "0 mode(s)" in capsys.readouterr().out


def test_rules_check_ignores_the_env_var(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x.yaml").write_text("version: 1\n", encoding="utf-8")
    monkeypatch.setenv(RULES_DIR_ENV, str(broken))
    directory = _rules_dir(tmp_path, first_box=_GOOD.format(id="first_box"))
    assert main(["rules", "check", str(directory)]) == 0


def test_rules_check_on_the_fixture_directories(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "check", str(FIXTURES / "good")]) == 0
    assert "first_box, first_box_or_line" in capsys.readouterr().out
    bad = FIXTURES / "bad"
    assert main(["rules", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad / 'bad_param.yaml'}:6:5: unknown parameter 'lables'" in err
    assert "\n        lables: [answer]\n" in err


# ------------------------------------------------------------------------------ rules test


def test_rules_test_on_the_fixture_directory(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "test", str(FIXTURES / "good")]) == 0
    assert "4 example(s) in 2 mode(s): 0 failed" in capsys.readouterr().out


def test_rules_test_runs_the_builtin_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "test"]) == 0
    out = capsys.readouterr().out
    assert "in 6 mode(s): 0 failed" in out
    assert "FAILED" not in out


def test_rules_test_runs_a_directorys_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(tmp_path, first_box=_GOOD.format(id="first_box"))
    assert main(["rules", "test", str(directory)]) == 0
    assert capsys.readouterr().out.strip() == "2 example(s) in 1 mode(s): 0 failed"


def test_rules_test_prints_failures_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = _GOOD.format(id="first_box").replace("expected: C", "expected: D")
    directory = _rules_dir(tmp_path, first_box=wrong)
    assert main(["rules", "test", str(directory)]) == 1
    out = capsys.readouterr().out
    assert f"{directory / 'first_box.yaml'}:8: first_box example #1 FAILED" in out
    assert "expected: D" in out
    assert "got:      C" in out
    assert "2 example(s) in 1 mode(s): 1 failed" in out


def test_rules_test_checks_the_failure_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _GOOD.format(id="first_box").replace(
        "expected: null", "expected: null\n    failure: ambiguous"
    )
    directory = _rules_dir(tmp_path, first_box=text)
    assert main(["rules", "test", str(directory)]) == 1
    out = capsys.readouterr().out
    assert "example #2 FAILED" in out
    assert "no_answer" in out


def test_rules_test_of_a_directory_that_extends_a_builtin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "version: 1\nid: boxed_or_line\ndescription: d\nextends: strict_single_letter_boxed\n"
        "chain:\n  - kind: answer_line\nexamples:\n"
        '  - output: "Answer: C"\n    expected: C\n'
        '  - output: "\\\\boxed{B}"\n    expected: B\n'
    )
    directory = _rules_dir(tmp_path, boxed_or_line=text)
    assert main(["rules", "test", str(directory)]) == 0
    assert "2 example(s) in 1 mode(s): 0 failed" in capsys.readouterr().out


def test_rules_test_with_a_broken_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = _rules_dir(tmp_path, bad="version: 1\nid: m\ndescription: d\nchain: []\n")
    assert main(["rules", "test", str(directory)]) == 1
    assert "bad.yaml:4:8" in capsys.readouterr().err


def test_rules_without_a_subcommand_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 2
    assert "list" in capsys.readouterr().err
