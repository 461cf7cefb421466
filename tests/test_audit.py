"""Tests of the audit checks (choicebox.audit): planted defects found, clean controls left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from choicebox import MCQASample, MultipleChoiceSample
from choicebox.audit import (
    Audit,
    AuditConfig,
    AuditConfigError,
    AuditSummary,
    Finding,
    audit,
    audit_checks,
    audit_file,
    audit_row,
    audit_rows,
)
from choicebox.audit._checks import question_problems
from choicebox.audit._prompt import prompt_option_problems

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
DEFECTS = FIXTURES / "defects.jsonl"
CONTROLS = FIXTURES / "controls.jsonl"
EXAMPLES = Path(__file__).parent.parent / "examples" / "samples.jsonl"


def _planted(path: Path) -> dict[int, str | None]:
    """Line -> the check planted there (rows that are no JSON object plant unreadable_row)."""
    out: dict[int, str | None] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row: Any = json.loads(raw)
        except ValueError:
            out[number] = "unreadable_row"
            continue
        if not isinstance(row, dict):
            out[number] = "unreadable_row"
            continue
        metadata = row.get("metadata") or (row.get("extra") or {}).get("metadata") or {}
        out[number] = metadata.get("planted")
    return out


def _truncation_params() -> dict[str, Any]:
    return dict(AuditConfig.default().checks["truncated_question"].params)


# --- the fixture set -----------------------------------------------------------------------------


def test_every_planted_defect_is_found() -> None:
    planted = _planted(DEFECTS)
    results = {r.line: r for r in audit_file(DEFECTS)}
    assert set(results) == set(planted)
    for line, check in planted.items():
        found = results[line].checks
        if check is None:
            assert not found, f"line {line}: unexpected {results[line].findings}"
        else:
            assert check in found, f"line {line}: {check} not found in {results[line].findings}"


def test_every_check_has_a_planted_defect() -> None:
    planted = {c for c in _planted(DEFECTS).values() if c}
    assert planted == {info.id for info in audit_checks()}


def test_no_finding_on_the_clean_controls() -> None:
    results = list(audit_file(CONTROLS))
    assert len(results) == len(CONTROLS.read_text(encoding="utf-8").splitlines())
    assert [r.to_json() for r in results if r.findings] == []


def test_findings_name_their_field_and_severity() -> None:
    results = {r.line: r for r in audit_file(DEFECTS)}
    by_check: dict[str, Finding] = {}
    for r in results.values():
        for f in r.findings:
            by_check.setdefault(f.check, f)
    assert by_check["gold_not_in_choices"].field in ("expected_answer", "answer_index")
    assert by_check["empty_choice"].field == "options.B"
    assert by_check["duplicate_choice"].field == "options.C"
    assert by_check["template_regex_invalid"].field == "template_metadata.output_regex[0]"
    assert by_check["conflicting_duplicate_question"].message.startswith("line 14 ")
    assert by_check["truncated_question"].severity == "warning"
    for finding in by_check.values():
        assert finding.severity in ("error", "warning")
        assert finding.message
        assert "\n" not in finding.message


def test_one_report_row_per_input_row_with_line_and_uuid() -> None:
    results = list(audit_file(DEFECTS))
    assert [r.line for r in results] == list(range(1, 20))
    assert results[4].uuid == "d-duplicate"
    assert results[16].uuid == "d-mc-truncated"  # context/choices rows keep uuid in extra
    row = results[4].to_json()
    assert set(row) == {"line", "uuid", "findings"}
    assert set(row["findings"][0]) == {"check", "severity", "field", "message"}


def test_examples_file_audits_with_its_planted_defects() -> None:
    summary = AuditSummary()
    checks: set[str] = set()
    for result in audit_file(EXAMPLES):
        summary.add(result)
        checks |= result.checks
    assert summary.rows == 15
    assert checks == {
        "choice_repeats_label",
        "prompt_options_mismatch",
        "gold_not_in_choices",
        "truncated_question",
        "conflicting_duplicate_question",
        "all_of_the_above_not_last",
    }


# --- audit(sample) -------------------------------------------------------------------------------


def test_audit_of_a_sample_never_changes_it() -> None:
    sample = MCQASample.from_question(
        "Which city is the capital of Peru?", ["A) Lima", "B) Quito"], "A", template="answer_is"
    )
    wire = sample.to_wire()
    result = audit(sample)
    assert result.checks == {"choice_repeats_label"}
    assert sample.to_wire() == wire


def test_audit_reads_both_families() -> None:
    qa = MultipleChoiceSample(
        context="The function of the heart is to",
        choices=["pump blood", "digest food"],
        answer_index=0,
        style="qa",
    )
    stem = MultipleChoiceSample(
        context="The function of the heart is to",
        choices=["pump blood", "digest food"],
        answer_index=0,
        style="continuation",
    )
    assert audit(qa).checks == {"truncated_question"}
    assert audit(stem).ok  # continuation stems end mid-sentence by design
    empty = MultipleChoiceSample(
        context="Which is a primary colour?", choices=["Red", " "], answer_index=0, style="qa"
    )
    assert audit(empty).checks == {"empty_choice"}


def test_audit_refuses_what_is_no_sample() -> None:
    with pytest.raises(TypeError):
        audit({"question": "x"})  # type: ignore[arg-type]


def test_audit_row_turns_decoding_problems_into_findings() -> None:
    row = {
        "question": "Which gas is inert?",
        "options": [{"A": "Neon"}, {"A": "Argon"}, {"B": "Oxygen"}],
        "expected_answer": "B",
        "uuid": 7,
    }
    result = audit_row(row)
    assert ("duplicate_choice", "options[1]") in {(f.check, f.field) for f in result.findings}
    assert ("unreadable_row", "uuid") in {(f.check, f.field) for f in result.findings}
    assert audit_row("just a string").checks == {"unreadable_row"}


def test_rows_without_options_read_them_from_the_prompt() -> None:
    row = {
        "responses_create_params": {
            "input": [{"role": "user", "content": "Which is a mammal?\nA: Shark\nB: Dolphin"}]
        },
        "expected_answer": "B",
    }
    assert audit_row(row).ok
    assert audit_row({**row, "expected_answer": "C"}).checks == {"gold_not_in_choices"}


def test_null_option_padding_is_no_empty_choice() -> None:
    row = json.loads(CONTROLS.read_text(encoding="utf-8").splitlines()[-1])
    assert {"E": None} in row["options"]
    assert audit_row(row).ok


# --- individual checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Which of the following describes the role of the", "the word 'the'"),
        ("Which of the following describes mitochondria,", "ends with ','"),
        ("Which organelle makes ATP in animal cel", "without punctuation"),
        ("Plants absorb light. Which of the following?", "asks nothing"),
        ("Which of the following", "asks nothing"),
        ("Why?", "characters long"),
        ("Which function (of the heart is most important?", "never closed"),
        ('Which word means "glad?', "quotes"),
    ],
)
def test_truncated_questions(question: str, reason: str) -> None:
    problems = question_problems(question, _truncation_params())
    assert any(reason in p for p in problems), problems


@pytest.mark.parametrize(
    "question",
    [
        "Which organelle makes ATP?",
        "Solve for x: 2x + 3 = 11",
        "Complete the sentence: The sky is ___",
        "Evaluate $\\int_0^1 x\\,dx$",
        "On which interval is 1/x decreasing: (0, 1] or [-1, 0)?",
        "Statements: 1) ice floats 2) water boils at 50 C. Which are true?",
        "Which of Newton's laws describes inertia?",
        "Name the gas: 'argon' or 'neon'.",
    ],
)
def test_complete_questions(question: str) -> None:
    assert question_problems(question, _truncation_params()) == []


def test_prompt_option_problems_name_each_difference() -> None:
    options = {"A": "Granite", "B": "Basalt", "C": "Marble"}
    assert prompt_option_problems("Pick one.\nA: Granite\nB: Basalt\nC: Marble", options) == []
    missing = prompt_option_problems("Pick one.\nA: Granite\nB: Basalt", options)
    assert missing == ["the prompt does not list C 'Marble'"]
    extra = prompt_option_problems("Q\nA: Granite\nB: Basalt\nC: Marble\nD: Slate", options)
    assert extra == ["the prompt lists D 'Slate', which `options` does not have"]
    text = prompt_option_problems("Q\nA) Granite\nB) Basalt\nC) Chalk", options)
    assert text == ["C reads 'Marble' in `options` but 'Chalk' in the prompt"]
    order = prompt_option_problems("Q\n(A) Granite\n(C) Marble\n(D) Basalt", {**options})
    assert any("does not list B" in p for p in order)
    spaced = prompt_option_problems("Q\nA:  Granite \nB: Basalt\nC: Marble\n\nAnswer.", options)
    assert spaced == []


def test_template_regex_mismatch_renders_the_instruction() -> None:
    base = MCQASample.from_question(
        "Which planet is red?", ["Venus", "Mars"], "B", template="answer_colon"
    )
    assert audit(base).ok  # the shipped template's regex reads its own 'Answer: LETTER'
    template = base.template
    assert template is not None
    wrong = attrs.evolve(base, template=attrs.evolve(template, output_regex=("ANSWER IS (\\w)",)))
    assert audit(wrong).checks == {"template_regex_mismatch"}
    narrow = attrs.evolve(base, template=attrs.evolve(template, output_regex=("Answer: ([A])",)))
    finding = audit(narrow).findings[0]
    assert "does not read B from 'Answer: B'" in finding.message


def test_all_of_the_above_may_close_the_list_together() -> None:
    sample = MCQASample(
        question="Which are metals?",
        options={"A": "Iron", "B": "None of the above", "C": "All of the above."},
        expected_answer="C",
    )
    assert audit(sample).ok
    early = MCQASample(
        question="Which are metals?",
        options={"A": "All of the above", "B": "Iron", "C": "Tin"},
        expected_answer="A",
    )
    assert audit(early).checks == {"all_of_the_above_not_last"}


def test_a_lone_dotted_initial_is_no_label() -> None:
    lone = MCQASample(
        question="Who wrote it?", options={"A": "A. Smith", "B": "J. Doe"}, expected_answer="A"
    )
    assert audit(lone).ok
    both = MCQASample(
        question="Who wrote it?", options={"A": "A. Smith", "B": "B. Doe"}, expected_answer="A"
    )
    assert audit(both).checks == {"choice_repeats_label"}


def test_conflicting_duplicates_compare_gold_text_not_letters() -> None:
    def row(options: list[str], gold: str) -> dict[str, Any]:
        return {
            "question": "Which is largest?",
            "options": [{chr(65 + i): t} for i, t in enumerate(options)],
            "expected_answer": gold,
        }

    same = list(audit_rows([row(["Sun", "Moon"], "A"), row(["Moon", "Sun"], "B")]))
    assert all(r.ok for r in same)  # reordered choices, same gold text
    conflict = list(audit_rows([row(["Sun", "Moon"], "A"), row(["Sun", "Moon"], "B")]))
    assert conflict[1].checks == {"conflicting_duplicate_question"}
    other_choices = [row(["Sun", "Moon"], "A"), row(["Earth", "Moon"], "B")]
    assert all(r.ok for r in audit_rows(other_choices))
    loose = AuditConfig.from_yaml(
        "checks:\n  conflicting_duplicate_question:\n    same_choices: false\n"
    )
    flagged = list(audit_rows(other_choices, config=loose))
    assert flagged[1].checks == {"conflicting_duplicate_question"}


# --- configuration -------------------------------------------------------------------------------


def test_every_check_is_documented_and_configured() -> None:
    config = AuditConfig.default()
    assert list(config.checks) == [info.id for info in audit_checks()]
    for info in audit_checks():
        assert "Bad:" in info.doc, info.id
        assert "Good:" in info.doc, info.id
        assert info.summary


def test_user_config_overrides_only_what_it_names(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(
        "version: 1\nchecks:\n  truncated_question:\n    severity: error\n    min_length: 30\n"
        "  untidy_text:\n    enabled: false\n",
        encoding="utf-8",
    )
    config = AuditConfig.load(path)
    assert config.checks["truncated_question"].severity == "error"
    assert config.checks["truncated_question"].params["min_length"] == 30
    assert config.checks["truncated_question"].params["dangling_words"]
    assert not config.enabled("untidy_text")
    assert config.enabled("empty_choice")
    sample = MultipleChoiceSample(
        context="Which organ pumps blood?", choices=["Heart", "Lung"], answer_index=0, style="qa"
    )
    assert audit(sample, config=config).findings == (
        Finding(
            "truncated_question",
            "error",
            "context",
            "the question looks truncated or malformed: it is only 24 characters long",
        ),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "checks:\n  empty_choice:\n    enabeld: true\n",
            "x.yaml:3:5: empty_choice.enabeld: unknown key 'enabeld'",
        ),
        (
            "checks:\n  no_such_check:\n    enabled: true\n",
            "x.yaml:2:3: checks: unknown check 'no_such_check'",
        ),
        (
            "checks:\n  truncated_question:\n    min_length: ten\n",
            "x.yaml:3:17: truncated_question.min_length",
        ),
        ("checks:\n  empty_choice:\n    severity: fatal\n", "x.yaml:3:15: empty_choice.severity"),
        (
            "checks:\n  template_regex_mismatch:\n    formats:\n      - instruction: '('\n",
            "x.yaml:4:7: template_regex_mismatch.formats: [0].instruction:",
        ),
        ("colour: blue\n", "x.yaml:1:1: unknown key 'colour'"),
        ("checks: [\n", "x.yaml:2:1: invalid YAML"),
        ("checks:\n  empty_choice: !!python/object:os.system {}\n", "x.yaml:2:17: empty_choice must be"),
    ],
)
def test_invalid_configs_name_file_line_and_column(text: str, message: str) -> None:
    with pytest.raises(AuditConfigError) as caught:
        AuditConfig.from_yaml(text, source="x.yaml")
    error = caught.value
    assert str(error).startswith(message), str(error)
    assert isinstance(error, ValueError)
    assert (error.path, error.line) == ("x.yaml", int(message.split(":")[1]))
    # The offending line follows, with a caret under the column (as a rule file error shows it).
    source = text.splitlines()
    assert error.line is not None
    assert error.column is not None
    if error.line <= len(source):
        assert str(error).splitlines()[1:] == [
            f"    {source[error.line - 1]}",
            "    " + " " * (error.column - 1) + "^",
        ]


def test_select_and_ignore() -> None:
    config = AuditConfig.default().select(["empty_choice", "gold_not_in_choices"])
    results = list(audit_file(DEFECTS, config=config))
    assert set().union(*(r.checks for r in results)) == {"empty_choice", "gold_not_in_choices"}
    ignored = AuditConfig.default().ignore(["unreadable_row"])
    assert not any("unreadable_row" in r.checks for r in audit_file(DEFECTS, config=ignored))
    with pytest.raises(AuditConfigError, match="unknown check 'nope'"):
        AuditConfig.default().select(["nope"])


# --- summary -------------------------------------------------------------------------------------


def test_summary_counts_checks_and_worst_rows() -> None:
    summary = AuditSummary(worst=2)
    for result in audit_file(DEFECTS):
        summary.add(result)
    data = summary.to_json()
    assert data["rows"] == 19
    assert data["checks"]["choice_repeats_label"] == {"severity": "warning", "count": 4, "rows": 1}
    assert data["worst_rows"][0] == {"line": 1, "errors": 1, "warnings": 0}
    text = summary.render()
    assert text.startswith("audited 19 rows: 18 with findings")
    assert "choice_repeats_label            4 warnings in 1 row" in text
    assert "worst rows: line " in text


def test_summary_worst_rows_prefers_most_errors() -> None:
    summary = AuditSummary(worst=2)
    err = Finding("empty_choice", "error", "options.A", "m")
    warn = Finding("untidy_text", "warning", "options.A", "m")
    for line, findings in [(1, (warn,)), (2, (err,)), (3, (err, err)), (4, (err, warn))]:
        summary.add(Audit(findings=findings, line=line))
    assert summary.worst == [(3, 2, 0), (4, 1, 1)]
