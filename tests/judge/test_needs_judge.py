"""Which verdicts a mode sends to a judge: the ``judge:`` key of a rule file, and the
``needs_judge`` flag it puts on verdicts (the rule verdict itself unchanged)."""

from __future__ import annotations

import pytest

from choicebox import RuleFileError, default_registry, grade_text
from choicebox._modes import _NEVER_JUDGED, JUDGED_FAILURES, parse_mode
from choicebox.find import FAILURE_KINDS

OPTIONS = {"A": "Granite", "B": "Basalt", "C": "Marble", "D": "Pumice"}
_HEAD = "version: 1\nid: m\ndescription: d\nchain:\n  - kind: boxed_letter\n"


def test_every_failure_kind_is_either_judged_or_never_judged_with_a_reason() -> None:
    assert sorted([*JUDGED_FAILURES, *_NEVER_JUDGED]) == sorted(FAILURE_KINDS)
    assert not set(JUDGED_FAILURES) & set(_NEVER_JUDGED)


def test_robust_sends_no_answer_only_and_the_gym_modes_send_nothing() -> None:
    registry = default_registry()
    assert registry.get("robust").judge == {"no_answer"}
    for name in ("strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon",
                 "lenient_answer_colon_md", "mmlu_pro"):  # fmt: skip
        assert registry.get(name).judge == frozenset(), name


@pytest.mark.parametrize(
    ("text", "failure", "flagged"),
    [
        ("I'd pick the igneous rock that floats on water.", "no_answer", True),
        ("The answer is (A) or (B).", "ambiguous", False),
        ("Final answer: A\nFinal answer: C", "conflicting", False),
        ("The answer is (C).", "wrong_answer", False),
        ("", "empty", False),
    ],
)
def test_robust_flags_its_no_answer_rows_and_keeps_their_rule_verdict(
    text: str, failure: str, flagged: bool
) -> None:
    verdict = grade_text(text, OPTIONS, "D", default_registry().get("robust"))
    assert (verdict.failure, verdict.needs_judge) == (failure, flagged)
    assert (verdict.judge_letter, verdict.judge_model) == (None, None)
    if flagged:
        assert (verdict.reward, verdict.extracted_answer) == (0.0, None)
        assert verdict.wire_fields()["needs_judge"] is True


def test_a_gym_mode_never_flags_a_row() -> None:
    verdict = grade_text("I'd pick pumice.", OPTIONS, "D", default_registry().get("lenient_boxed"))
    assert verdict.failure == "no_answer"
    assert verdict.needs_judge is False


def test_a_mode_may_opt_hedges_and_conflicts_in() -> None:
    mode, _ = parse_mode(_HEAD + "judge: [no_answer, ambiguous, conflicting]\n", path="m.yaml")
    assert mode.judge == {"no_answer", "ambiguous", "conflicting"}
    hedge = grade_text(r"\boxed{A} or \boxed{B}", OPTIONS, "A", mode)
    assert (hedge.failure, hedge.needs_judge) == ("ambiguous", True)


def test_a_mode_inherits_its_parent_s_judge_list_unless_it_names_its_own() -> None:
    parents = {"robust": default_registry().get("robust")}
    child, _ = parse_mode(
        "version: 1\nid: child\ndescription: d\nextends: robust\n", path="c.yaml", parents=parents
    )
    assert child.judge == {"no_answer"}
    none, _ = parse_mode(
        "version: 1\nid: none\ndescription: d\nextends: robust\njudge: []\n", path="n.yaml",
        parents=parents,
    )  # fmt: skip
    assert none.judge == frozenset()


@pytest.mark.parametrize(
    ("value", "reason", "column"),
    [
        ("no_answer", "judge must be a list of failure kinds", 8),
        ("[no_answr]", "unknown failure kind 'no_answr'; a judge may read: no_answer,", 9),
        ("[no_answer, wrong_answer]", "wrong_answer is never sent to a judge: the rules read a letter", 20),
        ("[too_long]", "too_long is never sent to a judge", 9),
        ("[no_answer, no_answer]", "no_answer is listed twice", 20),
    ],
)
def test_a_bad_judge_list_is_a_located_error(value: str, reason: str, column: int) -> None:
    with pytest.raises(RuleFileError) as info:
        parse_mode(_HEAD + f"judge: {value}\n", path="m.yaml")
    assert info.value.reason.startswith(reason), info.value.reason
    assert (info.value.line, info.value.column) == (6, column)
