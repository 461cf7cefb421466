"""Tests of the audit checks (choicebox.audit): planted defects found, clean controls left alone."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from choicebox.audit._compare import number_key
from choicebox.audit._prompt import prompt_option_problems
from choicebox.audit._question import question_problems
from choicebox.audit._tidy import column_layout, tidy, untidy_problems

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"
DEFECTS = FIXTURES / "defects.jsonl"
CONTROLS = FIXTURES / "controls.jsonl"
EXAMPLES = Path(__file__).parents[2] / "examples" / "samples.jsonl"


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
    assert by_check["not_multiple_choice"].severity == "warning"
    assert by_check["markup_residue"].field == "options.A"
    for finding in by_check.values():
        assert finding.severity in ("error", "warning")
        assert finding.message
        assert "\n" not in finding.message


def test_one_report_row_per_input_row_with_line_and_uuid() -> None:
    results = list(audit_file(DEFECTS))
    assert [r.line for r in results] == list(range(1, 26))
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
        context="The function of the heart (the organ in the chest is to",
        choices=["pump blood", "digest food"],
        answer_index=0,
        style="qa",
    )
    stem = MultipleChoiceSample(
        context="The function of the heart (the organ in the chest is to",
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
        ("Plants absorb light. Which of the following?", "asks nothing"),
        ("Which of the following", "asks nothing"),
        ("Why?", "characters long"),
        ("Which function (of the heart is most important?", "never closed"),
        ("Which part of the cell (the nucleus) is largest?)", "never opened"),
        ('Which word means "glad?', "quotes"),
        ("The lawyer asks \u201cisn't it possible you were mistaken?", "quotes"),
        ("Evaluate $\\left( x + 1 \\right)$ and (2", "never closed"),
    ],
)
def test_truncated_questions(question: str, reason: str) -> None:
    problems = question_problems(question, _truncation_params())
    assert any(reason in p for p in problems), problems


@pytest.mark.parametrize(
    ("question", "setting", "reason"),
    [
        ("Which of the following describes the role of the", "dangling_words", "the word 'the'"),
        ("Which of the following describes mitochondria,", "mid_sentence_endings", "ends with ','"),
        ("Which organelle makes ATP in animal cel", "require_terminal_punctuation", "punctuation"),
    ],
)
def test_ending_checks_run_when_configured(question: str, setting: str, reason: str) -> None:
    assert question_problems(question, _truncation_params()) == []  # off by default
    value: Any = ["the", "of"] if setting == "dangling_words" else True
    problems = question_problems(question, {**_truncation_params(), setting: value})
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
        # completion and equation stems, lists and imperatives end without a question mark
        "A promise to keep an offer open, given for consideration, is a contract for",
        "If f(x, y) = 3x + 2y, then f(3, 5) =",
        "All of the following are mammals EXCEPT",
        "Encourage _________, cause unnecessary ________ or _____, and must not cause _______",
        # LaTeX sized delimiters, numbering glued to text, roman numerals
        "Solve $\\left\\{ x + y = 2, x - y = 0 \\right.$ for x.",
        "$\\left| x \\right|$ and $\\left[ 0, 1 \\right)$: which is larger?",
        "Which is polar? a) H_2,b) CH_4,c) H_2O",
        "Which apply? i ) a student ii ) a teacher",
        # inch marks, quotations over paragraphs, code
        'A room is 13\'6" by 18\'8". How many 9" tiles cover it?',
        'He wrote: "It rained. "Then it flooded." What happened?',
        'What does this print?\n```\nprint("(")\n```',
    ],
)
def test_complete_questions(question: str) -> None:
    assert question_problems(question, _truncation_params()) == []


def test_an_open_quotation_the_choices_close_is_no_defect() -> None:
    question = "Complete the analogy: \u201cVision is to the occipital lobe as hearing is to the"
    choices = ["temporal lobe.\u201d", "frontal lobe.\u201d", "parietal lobe.\u201d"]
    assert question_problems(question, _truncation_params(), choices) == []
    assert question_problems(question, _truncation_params(), ["temporal lobe"]) != []


def test_a_short_stem_that_the_choices_continue_is_no_defect() -> None:
    params = _truncation_params()
    assert question_problems("Inflation", params, ["discourages saving.", "raises wages."]) == []
    assert question_problems("Inflation", params, ["Savings", "Wages"]) != []


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
    assert config.checks["truncated_question"].params["dangling_phrases"]
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
    assert data["rows"] == 25
    assert data["checks"]["choice_repeats_label"] == {"severity": "warning", "count": 8, "rows": 2}
    assert data["worst_rows"][0] == {"line": 21, "errors": 3, "warnings": 0}
    text = summary.render()
    assert text.startswith("audited 25 rows: 24 with findings")
    assert "choice_repeats_label            8 warnings in 2 rows" in text
    assert "worst rows: line " in text


def test_summary_worst_rows_prefers_most_errors() -> None:
    summary = AuditSummary(worst=2)
    err = Finding("empty_choice", "error", "options.A", "m")
    warn = Finding("untidy_text", "warning", "options.A", "m")
    for line, findings in [(1, (warn,)), (2, (err,)), (3, (err, err)), (4, (err, warn))]:
        summary.add(Audit(findings=findings, line=line))
    assert summary.worst == [(3, 2, 0), (4, 1, 1)]


# --- rules tightened on real data (MMLU-Pro, NeMo Gym): each still finds its defect -------------


def _row(
    options: list[str], question: str = "Which one is right?", gold: str = "A"
) -> dict[str, Any]:
    return {
        "question": question,
        "options": [{chr(65 + i): text} for i, text in enumerate(options)],
        "expected_answer": gold,
    }


def _found(row: Any, check: str) -> list[str]:
    return [f.field for f in audit_row(row).findings if f.check == check]


@pytest.mark.parametrize(
    ("options", "duplicates"),
    [
        (["3.2", "5", "3.20"], ["options.C"]),
        (["3200", "3,200", "32"], ["options.B"]),
        (["0.5", ".5", "5"], ["options.B"]),
        (["1e400", "1.0E+400", "2e400"], ["options.B"]),
        (["1" + "0" * 400, "1" + "0" * 400 + "0", "1" + "0" * 400], ["options.C"]),
        (["Informal Codes", "Informal codes", "Formal codes"], ["options.B"]),
        (["Mercury", "MERCURY", "Venus"], ["options.B"]),
        # not the same: an integer and a decimal, lists, codes, values beyond float
        (["1", "1.0", "2"], []),
        (["0,1,2", "1,2", "12", "0,1"], []),
        (["0400", "400", "1600"], []),
        (["1e400", "-1e400", "1" + "0" * 400, "2e400"], []),
        (["12345678901234567890", "12345678901234567891"], []),
        (["1e99999999999999999999", "1e99999999999999999999 "], ["options.B"]),
    ],
)
def test_duplicate_choices_compare_numbers_exactly(
    options: list[str], duplicates: list[str]
) -> None:
    assert _found(_row(options), "duplicate_choice") == duplicates


def test_a_rounding_question_compares_numbers_as_written() -> None:
    options = ["300.6", "300.60", "301"]
    assert (
        _found(_row(options, "Round 300.5982 to the nearest hundredth."), "duplicate_choice") == []
    )
    assert _found(_row(options, "What is the mean of the data?"), "duplicate_choice") == [
        "options.B"
    ]


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Translate into predicate logic: Tom loves Eve.", ["Tl ⊃ El", "tL ⊃ eL", "Tl"]),
        ("Which is the offspring genotype?", ["Bb BB", "bb bb", "Bb bb"]),
        ("Which is the best symbolization? (Lxy: x loves y)", ["Lte", "lTE", "LTE"]),
        (
            "A moon of mass m orbits a planet of mass M. Which sets the period?",
            ["Mass m", "Mass M"],
        ),
        # a row that writes case-sensitive symbols: its prose-looking pair is left alone too
        ("The mRNA of gene B and the gene b differ. Which is true?", ["Codes", "codes", "Neither"]),
    ],
)
def test_case_only_differences_in_symbols_are_distinct_choices(
    question: str, options: list[str]
) -> None:
    assert _found(_row(options, question), "duplicate_choice") == []


def test_options_read_from_a_prompt_compare_as_whole_blocks() -> None:
    def rollout(second: str) -> dict[str, Any]:
        first = "diff --git a/x.py b/x.py\n-    return 1\n+    return 2\n\n # end"
        content = f"Pick the fix.\n<choices>\nA: {first}\nB: {second}\n</choices>"
        return {"responses_create_params": {"input": content}, "expected_answer": "A"}

    assert audit_row(rollout("diff --git a/x.py b/x.py\n-    return 1\n+    return 3\n\n # end")).ok
    same = rollout("diff --git a/x.py b/x.py\n-    return 1\n+    return 2\n\n # end")
    assert _found(same, "duplicate_choice") == ["responses_create_params.input"]


def test_the_file_level_duplicate_check_never_overflows() -> None:
    rows = [
        _row(["1e400", "2"], "Which is larger?", "A"),
        _row(["1e400", "2"], "Which is larger?", "B"),
    ]
    results = list(audit_rows(rows))
    assert results[1].checks == {"conflicting_duplicate_question"}
    same_gold = [
        _row(["1e400", "2"], "Which is larger?", "A"),
        _row(["2", "1.0e400"], "Which is larger?", "B"),
    ]
    assert all(r.ok for r in audit_rows(same_gold))  # 1e400 and 1.0e400 are the same gold


def test_part_markers_and_part_references_are_no_labels() -> None:
    shared = ["(a) 2.84 L (b) 7.57 L", "(a) 3.00 L (b) 8.00 L", "(a) 2.50 L (b) 7.00 L"]
    assert _found(_row(shared), "choice_repeats_label") == []
    parts = ["(I) and (II) only", "(II) only", "(III) only", "(I) only"]
    assert (
        _found(_row(parts, "Which hold? (I) x > 0 (II) y > 0 (III) z > 0"), "choice_repeats_label")
        == []
    )
    asked = ["a) 20 chromatids", "b) 10 chromatids"]
    assert (
        _found(
            _row(asked, "How many chromatids are there in a) prophase and b) anaphase?"),
            "choice_repeats_label",
        )
        == []
    )
    planted = ["A) Paris", "B) Lyon", "C) Nice"]
    assert _found(_row(planted), "choice_repeats_label") == ["options.A", "options.B", "options.C"]


def test_labels_of_an_earlier_lettering_are_reported_as_stale() -> None:
    options = ["(C) Increased", "(B) Decreased", "(A) Stayed the same", "(D) Fluctuated"]
    findings = [f for f in audit_row(_row(options)).findings if f.check == "choice_repeats_label"]
    assert [f.field for f in findings] == ["options.A", "options.B", "options.C", "options.D"]
    assert all("earlier lettering" in f.message for f in findings)


def test_all_of_the_above_rules_on_these_and_named_covers() -> None:
    assert audit_row(_row(["Iron", "Tin", "All of the above", "None of these"])).ok
    assert audit_row(_row(["Neon", "All of these", "Argon"])).ok
    assert audit_row(_row(["I only", "All of the above (I, II, III)", "II only"])).ok
    assert _found(_row(["None of the above", "Iron", "Tin"]), "all_of_the_above_not_last") == [
        "options.A"
    ]


def test_untidy_text_leaves_columns_patches_and_residue_alone() -> None:
    columns = ["Buy bonds    Increases", "Sell bonds    Decreases", "Buy bonds    Decreases"]
    assert audit_row(_row(columns)).ok
    nbsp = ["Fe(NO3)3\u00a0\u00a0iron(III) nitrate", "FeSO4\u00a0\u00a0iron(II) sulfate", "Fe2O3"]
    assert audit_row(_row(nbsp)).ok
    patch = "diff --git a/x b/x\n-  a = 1 \n+  a = 2\n \n"
    assert audit_row(_row([patch, patch.replace("2", "3")])).ok
    assert _found(_row(["Cocoa  butter", "Tea", "Juice"]), "untidy_text") == ["options.A"]
    residue = _row(["\tau_1 = 0.5 s", "tau_1 = 1 s", "2 s"])
    assert {f.check for f in audit_row(residue).findings} == {"markup_residue"}


@pytest.mark.parametrize(
    "text",
    [
        "32.2 ft\u0008ullet s^-2",
        "\tau_max = 0.5 \u00d7 10^-8 s",
        "\texttheta + (g/l) \texttheta = 0",
        "\u000bertH(\\omega)\u000bert",
        "\u000crac{1}{2}",
        "v^2 = (\nho^2 - x^2)(k/m)",
        "x \\lfloor 1/x \nfloor",
        "12 mCi\\textbullet hr",
        "\\textquotedblleftspoil\\textquotedblright",
        "0.9 sin(\\cyrchar\\cyromegat)",
        "f: U_5 \to U_5",
        "\u0007lpha = 30 degrees",
    ],
)
def test_markup_residue_is_found(text: str) -> None:
    assert _found(_row([text, "Other"]), "markup_residue") == ["options.A"]


@pytest.mark.parametrize(
    "text",
    [
        "\\textbf{bold} and \\texttt{code}",
        "first line\nhowever, the second",
        "name\tvalue",
        "def f():\n\treturn 1",
        "```\nceil = 3\nfloor(x)\n```",
        "~Mb\t/ ~Dh",
    ],
)
def test_text_without_markup_residue(text: str) -> None:
    assert _found(_row([text, "Other"]), "markup_residue") == []


def test_a_prompt_listing_multi_paragraph_options_verbatim_matches() -> None:
    patches = ["diff --git a/x b/x\n-a\n+b\n\n context", "diff --git a/x b/x\n-a\n+c\n\n context"]
    listed = "\n".join(f"{letter}: {p}" for letter, p in zip("AB", patches, strict=True))
    row = {
        "responses_create_params": {"input": f"Pick a fix.\n<choices>\n{listed}\n</choices>"},
        "options": [{"A": patches[0]}, {"B": patches[1]}],
        "expected_answer": "A",
    }
    assert _found(row, "prompt_options_mismatch") == []
    cut = {**row, "options": [{"A": patches[0][:20]}, {"B": patches[1]}]}
    assert _found(cut, "prompt_options_mismatch") == ["responses_create_params.input"]


def test_rows_of_other_tasks_get_one_note() -> None:
    free_text = {
        "responses_create_params": {"input": "Translate 'cat'."},
        "expected_answer": "chat",
    }
    texts = {**free_text, "options": ["a small shape", "a big black triangle"]}
    judged = {"responses_create_params": {"input": "Rate this essay."}, "reward": 1.0}
    for row in (free_text, texts, judged):
        result = audit_row(row)
        assert [(f.check, f.severity) for f in result.findings] == [
            ("not_multiple_choice", "warning")
        ]
    malformed = {**free_text, "options": "A: Carbon dioxide, B: Oxygen"}
    assert "unreadable_row" in audit_row(malformed).checks
    one_option = _row(["Paris"])
    assert "unreadable_row" in audit_row(one_option).checks
    off = AuditConfig.default().ignore(["not_multiple_choice"])
    assert audit_row(free_text, config=off).ok


def test_rollouts_without_gold_are_reported_once_per_file() -> None:
    rollout = {
        "responses_create_params": {"input": "Which is a mammal?\nA: Shark\nB: Dolphin"},
        "response": {"output_text": "B"},
        "reward": 1.0,
    }
    results = list(audit_rows([rollout, rollout, {**rollout, "expected_answer": "C"}]))
    assert [r.checks for r in results] == [
        {"gold_not_in_choices"},
        frozenset(),
        {"gold_not_in_choices"},
    ]
    assert "recorded rollout" in results[0].findings[0].message
    assert "recorded rollout" not in results[2].findings[0].message


_PIECES = st.sampled_from(
    [
        "1",
        "0",
        "9",
        "e",
        "E",
        "+",
        "-",
        ".",
        ",",
        " ",
        "\t",
        "\n",
        "\u0008",
        "\u00a0",
        "a",
        "B",
        "(",
        ")",
        '"',
        "A)",
        "(b)",
        "\\text",
        "ullet",
        "au",
        "ho",
        "all of the above",
        "```",
        "\\left.",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    question=_TEXTS,
    options=st.lists(_TEXTS, min_size=1, max_size=6),
    gold=st.sampled_from(["A", "B", "Z", None]),
)
def test_the_audit_never_raises_on_any_row(
    question: str, options: list[str], gold: str | None
) -> None:
    row = {**_row(options, question), "expected_answer": gold}
    for result in audit_rows([row, row, {**row, "options": None}]):
        for finding in result.findings:
            assert finding.message
            assert "\n" not in finding.message


def test_gzip_files_are_read_as_they_stream(tmp_path: Path) -> None:
    rows = DEFECTS.read_bytes()
    packed = tmp_path / "defects.jsonl.gz"
    packed.write_bytes(gzip.compress(rows))
    plain = [r.to_json() for r in audit_file(DEFECTS)]
    assert [r.to_json() for r in audit_file(packed)] == plain
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(gzip.compress(rows)[:-20])
    with pytest.raises(OSError, match="truncated") as caught:
        list(audit_file(truncated))
    assert caught.value.filename == str(truncated)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**450), max_value=10**450))
def test_numbers_compare_by_exact_value(n: int) -> None:
    assert number_key(str(n)) == number_key(f"{n:,}")
    assert number_key(str(n)) != number_key(str(n + 1))
    assert number_key(str(n)) != number_key(f"{n}.0")  # an integer is no decimal
    assert number_key(f"{n}.50") == number_key(f"{n}.5")


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=5))
def test_tidy_text_is_what_untidy_text_accepts(texts: list[str]) -> None:
    columns = column_layout(texts)
    for i, text in enumerate(texts):
        clean = tidy(text, choice=True, columns=i in columns)
        assert tidy(clean, choice=True, columns=i in columns) == clean
        assert untidy_problems(clean, choice=True, columns=i in columns) == []
        assert untidy_problems(tidy(text, choice=False), choice=False) == []


def test_the_ending_checks_are_switched_on_in_a_config_file() -> None:
    sample = MultipleChoiceSample(
        context="Which of the following describes the role of the",
        choices=["Ribosome", "Nucleus"],
        answer_index=0,
        style="qa",
    )
    assert audit(sample).ok
    config = AuditConfig.from_yaml(
        "checks:\n  truncated_question:\n    dangling_words: [the, of]\n"
        "    mid_sentence_endings: true\n    require_terminal_punctuation: true\n"
    )
    assert audit(sample, config=config).checks == {"truncated_question"}


def test_a_deeply_nested_gold_answer_is_a_finding_not_a_recursion_error() -> None:
    row = MCQASample.from_question("Which colour is the sky?", ["red", "blue"], "B").to_wire()
    gold: object = "B"
    for _ in range(1000):
        gold = [gold]
    row["expected_answer"] = gold
    result = audit_row(row)
    messages = " ".join(f.message for f in result.findings)
    assert "expected_answer" in messages
    assert len(messages) < 2000  # the nested value is shown shortened, not whole
