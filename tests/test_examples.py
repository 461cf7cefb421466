"""The bundled examples run as the README says, so they never rot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

import choicebox
from choicebox.cli import main
from gym_side import page as gym_page

EXAMPLES = Path(__file__).parents[1] / "examples"


def test_build_sample_prints_a_gym_row_that_decodes() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "build_sample.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    sample = choicebox.MCQASample.from_wire(orjson.loads(result.stdout))
    assert sample.expected_answer == "B"
    assert sample.answer_text == "Polymerase Chain Reaction (PCR)"


def test_the_bundled_rollouts_grade_without_error_rows(tmp_path: Path) -> None:
    output = tmp_path / "graded.jsonl"
    assert main(["grade", str(EXAMPLES / "rollouts.jsonl"), "-o", str(output), "-q"]) == 0
    source_rows = [line for line in (EXAMPLES / "rollouts.jsonl").read_bytes().splitlines() if line]
    graded = [orjson.loads(line) for line in output.read_bytes().splitlines()]
    assert len(graded) == len(source_rows)
    assert all("error" not in row and row["reward"] in (0.0, 1.0) for row in graded)


def test_the_bundled_samples_audit_with_their_planted_defects(tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"
    # The example data carries defects on purpose: errors make the exit status 1.
    assert main(["audit", str(EXAMPLES / "samples.jsonl"), "-o", str(report)]) == 1
    rows = [orjson.loads(line) for line in report.read_bytes().splitlines()]
    checks = {finding["check"] for row in rows for finding in row["findings"]}
    assert {"gold_not_in_choices", "prompt_options_mismatch", "choice_repeats_label"} <= checks


ROOT = Path(__file__).parents[1]
# The README and every page of the documentation site: their examples run as written.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(language: str, pages: list[Path] = PAGES) -> list[str]:
    fence = f"```{language}\n"
    return [
        part.split("```", 1)[0] for page in pages for part in page.read_text(encoding="utf-8").split(fence)[1:]
    ]


def _readme_blocks(language: str) -> list[str]:
    return _blocks(language)


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_the_python_blocks_of_the_readme_and_the_docs_run(index: int) -> None:
    code = _blocks("python")[index]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_readme_rule_file_error_is_what_rules_check_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (mode_file,) = [b for b in _readme_blocks("yaml") if b.startswith("version: 1\nid: my_mode")]
    (shown,) = [b for b in _readme_blocks("text") if "my_rules/my_mode.yaml" in b]
    rules = tmp_path / "my_rules"
    rules.mkdir()
    (rules / "my_mode.yaml").write_text(
        mode_file.replace("    labels: [answer", "    lables: [answer"), encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["rules", "check", "my_rules"]) == 1
    assert capsys.readouterr().err == shown


# The NeMo Gym page's commands: tests/serve/test_gym_page.py runs them (with Gym installed);
# without Gym this still holds them to what that test can run.
_GYM_PAGE_PLACES = {
    "gym_venv": Path("gym-venv"),
    "venvs": Path("gym-venvs"),
    "project": Path("choicebox-copy"),
    "model_address": "127.0.0.1:8000",
}


def test_the_nemo_gym_page_has_the_commands_its_test_runs_and_no_other_placeholder() -> None:
    blocks = gym_page.bash_blocks()
    commands = gym_page.commands(blocks, gym_page.substitutions(**_GYM_PAGE_PLACES))
    for subcommand in ("env start", "eval run", "eval reverify"):
        assert gym_page.gym_command(commands, subcommand)[:1] == ["$GYM"]
    assert [gym_page.is_stop(block) for block in commands].count(True) == 2


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        ("--model-api-key KEY", "--model-api-key ...", "still has '...'"),
        ("/path/to/choicebox", "choicebox", "no longer has '/path/to/choicebox'"),
        ("results/rollouts.jsonl -o", "ROLLOUTS.jsonl -o", "still has 'ROLLOUTS.jsonl'"),
    ],
)
def test_a_page_the_gym_page_test_cannot_run_as_written_is_an_error(
    before: str, after: str, message: str
) -> None:
    blocks = tuple(block.replace(before, after) for block in gym_page.bash_blocks())
    assert blocks != gym_page.bash_blocks()
    with pytest.raises(AssertionError, match=re.escape(message)):
        gym_page.commands(blocks, gym_page.substitutions(**_GYM_PAGE_PLACES))
