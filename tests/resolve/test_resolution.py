"""Find, then resolve: candidates, resolution policies, their YAML, and LABELLING's rules as
properties of ``robust`` (``choicebox.resolve._policies``, ``choicebox.resolve._conclusion``).

The tests of one step kind are in ``tests/find/kinds/``, those of one stage of the ``conclusion``
policy in ``tests/resolve/stages/``; here are those that take several of either."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from choicebox import Candidate, GradingMode, RuleFileError, default_registry, grade, grade_text
from choicebox._modes import ModeRegistry, parse_mode
from choicebox.find._features import features_of
from choicebox.resolve._policies import Ruling
from choicebox.testing import mcqa_sample
from rule_files import chain, robust_policy, robust_step

TEN = {letter: f"opt{letter}" for letter in "ABCDEFGHIJ"}


def _robust(text: str, options: dict[str, str] | None = None, question: str = "") -> object:
    opts = options or TEN
    return grade_text(text, opts, next(iter(opts)), default_registry().get("robust"), question=question)


def _parents() -> dict[str, GradingMode]:
    return {mode.id: mode for mode in ModeRegistry.with_builtins()}


# ------------------------------------------------------------------------------ what the verdict says


def test_a_verdict_carries_its_candidates_and_their_rulings() -> None:
    verdict = grade(mcqa_sample("ABCDEF", "F"), "The answer is (B) or (F). Checking again, the answer is (F).", mode="robust")
    assert verdict.extracted_answer == "F"
    outcomes = [(r.candidate.kind, r.candidate.letters, r.outcome) for r in verdict.candidates]
    assert outcomes == [("hedge", ("B", "F"), "superseded"), ("commitment", ("F",), "chosen")]
    assert all(isinstance(r, Ruling) and isinstance(r.candidate, Candidate) for r in verdict.candidates)
    assert verdict.candidates[1].candidate.step == "answer"


def test_under_first_step_a_ruling_holds_the_finders_own_statement(tmp_path: Path) -> None:
    """A statement is converted once: the policy rules on the candidate the finder found (its
    span, its cue and payload), not on one rebuilt from the finding."""
    (tmp_path / "picked.yaml").write_text(
        dedent("""\
            version: 1
            id: picked
            description: One answer statement, under Gym's first-step policy.
            chain:
              - {id: answer, kind: answer_statement, nouns: [answer], qualifiers: [correct], links: [is]}
            """),
        encoding="utf-8",
    )
    registry = ModeRegistry.with_builtins([tmp_path])
    text = "Some reasoning first. The answer is (B). That settles it."
    verdict = grade(mcqa_sample("ABCD", "B"), text, mode="picked", registry=registry)
    assert verdict.extracted_answer == "B"
    (ruling,) = verdict.candidates
    assert ruling.outcome == "chosen"
    statement = ruling.candidate
    assert text[statement.start : statement.end].lower().startswith("answer is (b")
    assert statement.cue  # what the finder recognised, which a rebuilt candidate would not know


def test_under_first_step_a_stated_letter_that_is_no_option_lets_the_chain_go_on(tmp_path: Path) -> None:
    (tmp_path / "picked.yaml").write_text(
        dedent("""\
            version: 1
            id: picked
            description: An answer statement, then a box, under Gym's first-step policy.
            chain:
              - {id: answer, kind: answer_statement, nouns: [answer], qualifiers: [correct], links: [is]}
              - {id: boxed, kind: boxed_letter}
            """),
        encoding="utf-8",
    )
    registry = ModeRegistry.with_builtins([tmp_path])
    sample = mcqa_sample("ABCD", "B")
    alone = grade(sample, "The answer is (K).", mode="picked", registry=registry)
    assert (alone.extracted_answer, alone.failure) == (None, "not_an_option")
    then_box = grade(sample, "The answer is (K). \\boxed{B}", mode="picked", registry=registry)
    assert (then_box.extracted_answer, then_box.step) == ("B", "boxed")


def test_candidates_stay_out_of_the_wire_row_and_of_equality() -> None:
    text = "The answer is (B) or (F). Checking again, the answer is (F)."
    verdict = grade(mcqa_sample("ABCDEF", "F"), text, mode="robust")
    assert "candidates" not in verdict.to_wire()
    same = grade(mcqa_sample("ABCDEF", "F"), "The answer is (F).", mode="robust")
    assert len(same.candidates) != len(verdict.candidates)
    assert (same.extracted_answer, same.reward) == (verdict.extracted_answer, verdict.reward)


def test_conflicting_is_distinct_from_ambiguous() -> None:
    run = _robust("The answer is (A)\nThe answer is (C)")
    assert (run.extracted_answer, run.failure) == (None, "conflicting")  # type: ignore[attr-defined]
    hedge = _robust("The answer is (A) or (C).")
    assert (hedge.extracted_answer, hedge.failure) == (None, "ambiguous")  # type: ignore[attr-defined]
    conflicting = [r.outcome for r in run.candidates]  # type: ignore[attr-defined]
    assert conflicting == ["conflicting", "conflicting"]


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("The answer is (C).\nWait, I made a mistake in the sign. The answer is (E).", "E"),
        ("The answer is (D) is incorrect. The correct answer is (I).", "I"),
        ("The answer is (D).\nMore checking.\nFinal Answer: The answer is (B)", "B"),
        ("The answer is (F).\nThe answer is (F).\nThe answer is (F).", "F"),
    ],
)
def test_the_concluding_commitment_wins(text: str, letter: str) -> None:
    verdict = _robust(text)
    assert verdict.extracted_answer == letter  # type: ignore[attr-defined]
    chosen = [r for r in verdict.candidates if r.outcome == "chosen"]  # type: ignore[attr-defined]
    assert [r.candidate.letters for r in chosen] == [(letter,)]


def test_a_value_that_equals_one_option_is_that_option() -> None:
    options = {"A": "2.5 x 10^3 J", "B": "3.5 x 10^3 J", "C": "25 J"}
    assert _robust("The answer is 2500 J.", options).extracted_answer == "A"  # type: ignore[attr-defined]
    assert _robust("The answer is 2500 J. The answer is (C).", options).extracted_answer == "C"  # type: ignore[attr-defined]
    assert _robust("The answer is 42 J.", options).extracted_answer is None  # type: ignore[attr-defined]


def test_a_value_read_over_a_letter_statement_keeps_the_letter() -> None:
    # "**B** is the right choice: <why>" is read twice: "(B) is the right choice" by option_verdict
    # and "choice: <why>" as a value by answer_statement. Merged, the value replaced the letter,
    # which no option's text matched: a committed answer read as none (rule 5: a letter, given,
    # beats the content).
    text = "Branching uses the arrow.\n\n**B** is the right choice: a branch is written with an arrow."
    assert _robust(text).extracted_answer == "B"  # type: ignore[attr-defined]


def test_a_final_statement_of_no_option_outweighs_a_letter_only_mentioned() -> None:
    text = (
        "M = 8,000. The largest option is 40 (D), which is far below our result.\n\n"
        "## Final Answer\nNone of the provided options matches the computed value."
    )
    options = {"A": "10", "B": "20", "C": "30", "D": "40"}
    verdict = _robust(text, options)
    assert (verdict.extracted_answer, verdict.failure) == (None, "no_answer")  # type: ignore[attr-defined]


def test_an_option_text_on_the_line_after_the_cue_is_that_option() -> None:
    text = "Translocation is the movement of nutrients. Theories explain it, in turn."
    options = {"A": "optA", "B": text, "C": "optC", "D": "optD"}
    assert _robust(f"Reasoning.\n\nSo the correct answer is:\n{text}", options).extracted_answer == "B"  # type: ignore[attr-defined]


def test_sample_features_are_computed_once_per_sample() -> None:
    options = {"A": "5 H, 160 uF", "B": "2 H, 60 uF", "C": "1 H, 10 uF"}
    features = features_of(options, "Find L and C.")
    assert features_of(dict(options), "Find L and C.") is features
    assert features.multipart() is True
    assert features_of({"A": "red", "B": "green", "C": "blue"}).multipart() is False


# ------------------------------------------------------------------------------ LABELLING as properties

_REASONING = st.lists(
    st.sampled_from(
        [
            "The force is 12 N. ", "We compare the options. ", "Option (B) is too large. ",
            "This is a unit conversion. ", "So the value is 4.5 m. ", "\n",
        ]
    ),
    max_size=5,
).map("".join)  # fmt: skip
_FINAL = st.sampled_from(
    ["The answer is ({}).", "Answer: {}", "Final answer: ({})", "\\boxed{{{}}}", "The correct option is {}."]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reasoning=_REASONING, final=_FINAL, letter=st.sampled_from("ABCDEFGHIJ"))
def test_an_empty_answer_statement_after_the_final_answer_changes_nothing(
    reasoning: str, final: str, letter: str
) -> None:
    text = reasoning + final.format(letter)
    before = _robust(text)
    assert before.extracted_answer == letter  # type: ignore[attr-defined]
    for tail in ("\nThe answer is ...", "\nThe answer is (", "\nAnswer:"):
        assert _robust(text + tail).extracted_answer == letter  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    reasoning=_REASONING,
    final=_FINAL,
    letter=st.sampled_from("ABCDEFGHIJ"),
    other=st.sampled_from("ABCDEFGHIJ"),
    bare=st.sampled_from(["\nThe answer is ({}).", "\nAnswer: {}", "\nThe answer is ({})"]),
)
def test_a_bare_different_letter_right_after_the_final_answer_commits_to_nothing(
    reasoning: str, final: str, letter: str, other: str, bare: str
) -> None:
    # LABELLING rule 2: a run of bare answer statements with different letters is unreconciled.
    text = reasoning + final.format(letter) + bare.format(other)
    verdict = _robust(text)
    if other == letter:
        assert verdict.extracted_answer == letter  # type: ignore[attr-defined]
    else:
        assert (verdict.extracted_answer, verdict.failure) == (None, "conflicting")  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ policies in YAML


def _mode(body: str) -> GradingMode:
    text = "version: 1\nid: m\ndescription: d\n" + dedent(body)
    return parse_mode(text, path="m.yaml", parents=_parents())[0]


def test_a_policy_is_named_or_configured_under_resolve() -> None:
    assert _mode("resolve: last_position\nchain:\n  - kind: boxed_letter\n").resolve == "last_position"
    configured = _mode(
        """\
        resolve:
          policy: conclusion
          fillers: [the, answer]
          correction_cues: [but]
          revision_cues: [however]
          part_words: [part]
        chain:
          - kind: boxed_letter
        """
    )
    assert configured.resolve == "conclusion"
    assert configured.policy.fillers == ("the", "answer")  # type: ignore[attr-defined]
    assert _mode("chain:\n  - kind: boxed_letter\n").resolve == "first_step"


def test_strategy_is_the_old_name_of_resolve() -> None:
    mode = _mode("strategy: last_position\nchain:\n  - kind: boxed_letter\n")
    assert mode.resolve == "last_position"
    revised = grade(mcqa_sample(), "\\boxed{A}, no: \\boxed{B}", mode=mode)
    assert revised.extracted_answer == "B"
    with pytest.raises(RuleFileError, match="not both"):
        _mode("strategy: first_step\nresolve: first_step\nchain:\n  - kind: boxed_letter\n")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("resolve: newest\nchain:\n  - kind: boxed_letter\n", "unknown resolution policy 'newest'"),
        ("resolve: {policy: conclusion, filers: [a]}\nchain:\n  - kind: boxed_letter\n", "unknown parameter 'filers'"),
        ("resolve: [first_step]\nchain:\n  - kind: boxed_letter\n", "resolve must name a policy"),
        ("chain:\n  - kind: boxed_letter\n    when: sometimes\n", "'when' may only be"),
        ("chain:\n  - kind: answer_line\n    payload: strict\n    last_capital: true\n", "last_capital reads lenient"),
        ("chain:\n  - kind: answer_line\n    payload: loose\n", "payload"),
    ],
)
def test_a_bad_policy_or_vocabulary_is_located(body: str, message: str) -> None:
    with pytest.raises(RuleFileError, match=message) as info:
        _mode(body)
    assert info.value.line is not None


def test_an_example_failure_must_be_a_failure_kind() -> None:
    body = "chain:\n  - kind: boxed_letter\nexamples:\n  - output: x\n    expected: null\n    failure: ambigous\n"
    with pytest.raises(RuleFileError, match="unknown failure 'ambigous'") as info:
        _mode(body)
    assert info.value.line == 9
    assert "conflicting" in info.value.reason
    body = "chain:\n  - kind: boxed_letter\nexamples:\n  - output: x\n    expected: A\n    failure: ambiguous\n"
    with pytest.raises(RuleFileError, match="expected letter has no failure"):
        _mode(body)


def test_a_fallback_step_runs_only_without_a_commitment() -> None:
    mode = _mode(
        """\
        resolve: last_position
        chain:
          - kind: boxed_letter
          - kind: standalone_letter
            id: lone
            when: no_commitment
        """
    )
    assert grade(mcqa_sample(), "\\boxed{C}\nB", mode=mode).extracted_answer == "C"
    assert grade(mcqa_sample(), "thinking\nB", mode=mode).extracted_answer == "B"


def test_the_payload_vocabulary_is_shared() -> None:
    mode = _mode(
        """\
        chain:
          - kind: regex
            pattern: 'Pick: (.+)'
            payload: strict
          - kind: tagged_answer
            payload: strict
        """
    )
    assert grade(mcqa_sample(), "Pick: B", mode=mode).extracted_answer == "B"
    assert grade(mcqa_sample(), "Pick: (B) or (C)", mode=mode).extracted_answer is None
    assert grade(mcqa_sample(), "<answer>B</answer>", mode=mode).extracted_answer == "B"
    assert grade(mcqa_sample(), "<answer>option B</answer>", mode=mode).extracted_answer is None
    lenient = _mode("chain:\n  - kind: regex\n    pattern: 'Pick: (.+)'\n")
    assert grade(mcqa_sample(), "Pick: (B) or (C)", mode=lenient).failure == "ambiguous"


NUMBERS = {"A": "5", "B": "7.20 degrees", "C": "500", "D": "12"}


def test_an_expression_holding_an_options_number_is_not_that_option() -> None:
    # "ln x + 1" and "x^x(1 + \ln x)" both hold a 1: the box states neither option's value.
    options = {"A": "x · x^(x−1)", "B": "x^x · ln x", "C": "x^x", "D": "ln x + 1"}
    output = "None of the given options is correct. The correct derivative is\n\n$$\\boxed{x^x(1 + \\ln x)}$$"
    verdict = grade_text(output, options, "A", default_registry().get("robust"))
    assert verdict.extracted_answer is None, verdict.detail


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("The answer is 5.", "A"),
        ("So $\\theta = \\boxed{7.20^\\circ}$.", "B"),  # units and format may differ (rule 5)
        ("The answer is 5 x 10^2.", "C"),
        ("Final answer: the maximum is 5, attained at x = 12.", None),  # two numbers: no one value
        # no value of 5: denied, bounded, scaled, a power, a factorial, a variable
        ("The answer is not 5.", None),
        ("The answer is 5 or more.", None),
        ("The answer is less than 5.", None),
        ("The answer is 5 thousand.", None),
        ("The answer is 5^2.", None),
        ("The answer is 5!", None),
        ("The answer is 5x.", None),
        # a term of an expression: "x^x(1 + ln x)" holds a 1 and is worth no 1
        ("The answer is 5 + \\ln x.", None),
        ("The derivative is $\\boxed{x^x(5 + \\ln x)}$", None),
        ("The answer is 2 \\times 5.", None),
        ("The answer is about -5.", None),  # a value, not option "5"
        ("The answer is 5 × 10^2.", "C"),  # a power of ten is no operator
    ],
)
def test_a_value_given_as_an_answer_is_one_number(output: str, letter: str | None) -> None:
    verdict = grade_text(output, NUMBERS, "A", default_registry().get("robust"))
    assert verdict.extracted_answer == letter, verdict.detail


# ------------------------------------------------------------------------------ options by number


@pytest.mark.parametrize(
    ("output", "options", "letter"),
    [
        ("So the final answer is option 3: 30.", {"A": "8", "B": "10", "C": "30", "D": "60"}, "C"),
        ("So the correct option is number 3, i.e. 0.2.", {"A": "0.9", "B": "0.1", "C": "0.2"}, "C"),
        ("Therefore, the answer is option number 2: the buyer bears the risk.",
         {"A": "The seller", "B": "The buyer", "C": "Neither"}, "B"),
        ("The answer is option 4.", {"A": "x", "B": "y", "C": "z", "D": "w"}, "D"),
        # the text after the number states another option's content: no single option
        ("So the correct option is number 3, i.e. 0.9.", {"A": "0.9", "B": "0.1", "C": "0.2"}, None),
        # the number is another option's content: "option 3" or the value 3?
        ("The answer is option 3.", {"A": "2", "B": "3", "C": "4", "D": "5"}, None),
        ("The answer is option 5.", {"A": "2", "B": "3", "C": "4", "D": "6"}, None),  # past the last
        # a number alone is a value, not a place in the list
        ("The answer is 3.", {"A": "2", "B": "3", "C": "4"}, "B"),
    ],
)  # fmt: skip
def test_an_option_named_by_its_number_is_that_option(output: str, options: dict[str, str], letter: str | None) -> None:
    verdict = _robust(output, options)
    assert verdict.extracted_answer == letter  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ formats shown


@pytest.mark.parametrize(
    "output",
    [
        "**Answer: G**\n\n*Reminder: responses should end with a line of the form `Final Answer: \\boxed{A}`, "
        "where A is replaced by the letter of the chosen option.*",
        "**Answer: G**\n\nUse the format `Answer: B` next time.",
        "The answer is (G). Write it as \\boxed{A}, where A is the letter of your choice.",
    ],
)
def test_an_answer_format_shown_is_no_answer_given(output: str) -> None:
    assert _robust(output).extracted_answer == "G"  # type: ignore[attr-defined]


def test_example_cues_name_what_shows_a_format(tmp_path: Path) -> None:
    text = "**Answer: G**\n\nNext time, use the format `Answer: B`."
    steps = [{"kind": "answer_statement", **robust_step("answer")}]
    assert chain(tmp_path, steps, resolve=robust_policy()).read(text, options=TEN) == "G"
    without = chain(tmp_path, steps, resolve={**robust_policy(), "example_cues": []})
    assert without.read(text, options=TEN) != "G"


# ------------------------------------------------------------------------------ round 24's forms

_SPEEDS = {"A": "9.8 m/s", "B": "19.6 m/s", "C": "39.2 m/s", "D": "4.9 m/s", "E": "0.0625", "F": "1/16"}


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        # hedges and supposed cases: no single option
        ("The best answer is **A** (or possibly C).", None),
        ("I'd say B, but D is equally defensible depending on the reading.", None),
        ("* If the question means integer division, the answer is C.\n* If it means true division, the answer is E.", None),
        ("So the answer is A.\n\nHmm, actually I'm not sure that's right. Let me withdraw that answer.", None),
        ("Therefore the probability is \\boxed{\\frac{1}{16}}.", None),  # two options hold that value
        # commitments in other words
        ("That leaves B as the only possibility.", "B"),
        ("Answer: The speed is about 19.6 m/s.", "B"),
        ("Antwort: Die Geschwindigkeit beträgt etwa 19,6 m/s.", "B"),
        ("C'est donc la réponse B, et non la D.", "B"),
        ("Poprawna jest odpowiedź B.", "B"),
        ("Portanto, a opção correta é a B: cerca de 19,6 m/s.", "B"),
        ("Правильный вариант — B.", "B"),
        ("Risp.: B", "B"),
        ("Gabarito: letra B.", "B"),
        ("[[ ## reasoning ## ]]\nA is wrong.\n\n[[ ## answer ## ]]\nB\n\n[[ ## completed ## ]]", "B"),
        ("{'prediction': 'B', 'rationale': 'A is too slow', 'confidence': 0.9,}", "B"),
        ("<response>\n<reasoning>A is wrong</reasoning>\n<letter>B</letter>\n</response>", "B"),
        ('```json\n{"answer": "19.6 m/s", "work": "v = g t"}\n```', "B"),
        ("The speed is about 19.58 m/s, which is closest to the option 19.6 m/s.", "B"),
    ],
)  # fmt: skip
def test_round_24s_forms(output: str, letter: str | None) -> None:
    assert _robust(output, _SPEEDS).extracted_answer == letter  # type: ignore[attr-defined]


def test_a_section_that_lists_another_questions_options_is_not_about_this_one() -> None:
    # A base model that never answers this question: its generated questions share this one's
    # words, but list options of their own; their answers are theirs (rule 7).
    options = {"A": "Overnight rate between banks", "B": "Rate the Fed charges banks at its discount window",
               "C": "Prime rate", "D": "Treasury bill yield"}  # fmt: skip
    text = (
        "Let's think step by step.\n\nQuestion: Which is a tool of fiscal policy?\nOptions:\n"
        "A. Open market operations\nB. Government spending\nC. The discount rate\nD. Reserve requirements\n"
        "Answer: The discount rate is monetary policy. The answer is (B).\n\n"
        "Question: Which is contractionary monetary policy?\nOptions:\nA. Lowering the discount rate\n"
        "B. Buying bonds\nC. Raising the reserve requirement\nD. Cutting taxes\nAnswer: The answer is (C)."
    )
    question = "Which of the following best describes the discount rate set by the Federal Reserve?"
    assert _robust(text, options, question=question).extracted_answer is None  # type: ignore[attr-defined]
