"""Answer statements composed from their parts (``tests/statement_grammar.py``): every cue with every
layout, payload and context reads as the letter it states; every composition that names no single
option reads as none; restating the options earns nothing in any mode.

Hypothesis draws the compositions, so a run meets combinations nobody wrote down; the whole product
(665,184 positive and 19,284 negative compositions) is walked by
``python tests/statement_grammar.py MODE``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import choicebox
import statement_grammar as grammar
from choicebox import MCQASample

SAMPLE = MCQASample.from_question(
    "Which of the following is right?", list(grammar.OPTIONS.values()), "B"
)
LETTERS = sorted(grammar.OPTIONS)


def _read(text: str, mode: str = "robust") -> str | None:
    return choicebox.grade(SAMPLE, text, mode=mode).extracted_answer


# Every statement the grammar composes, per letter: cue x layout x payload (the option's text alone
# among the payloads), heading x payload, citation lead x form, verdict reference x tail; for A,
# no verdict ("**A** is correct": a capital A before a verb is read as English, a known miss).
_STATEMENTS: dict[str, list[str]] = {
    letter: [text for parts, text in grammar.statements(letter) if not (letter == "A" and parts[1] == "verdict")]
    for letter in LETTERS
}


@st.composite
def positive(draw: st.DrawFn) -> tuple[str, str]:
    """A response stating one letter: one of the grammar's statements, something before and after."""
    letter = draw(st.sampled_from(LETTERS))
    before = draw(st.sampled_from(sorted(grammar.BEFORES.values())))
    if draw(st.integers(0, 9)) == 0:  # a closing paragraph: nothing may follow it
        closing = draw(st.sampled_from(sorted(grammar.CLOSING_PAYLOADS)))
        return f"{before}{grammar.CLOSING_PAYLOADS[closing](letter, grammar.OPTIONS[letter])}", letter
    statement = draw(st.sampled_from(_STATEMENTS[letter]))
    after = draw(st.sampled_from(sorted(grammar.AFTERS.values())))
    return f"{before}{statement}{after}", letter


@settings(max_examples=400, deadline=None)
@given(positive())
def test_every_composition_reads_its_letter(case: tuple[str, str]) -> None:
    text, letter = case
    assert _read(text) == letter, text


@st.composite
def negative(draw: st.DrawFn) -> str:
    """A response whose statement names no single option, under any cue and layout."""
    a, b = draw(st.lists(st.sampled_from(LETTERS), min_size=2, max_size=2, unique=True))
    labelled = draw(st.booleans())  # a label and a dash, or any cue in any layout
    lead = draw(st.sampled_from(grammar.LABELS if labelled else grammar.CUES))
    joint = draw(st.sampled_from(grammar.DASH_LAYOUTS if labelled else grammar.LAYOUTS)).joint
    form = draw(st.sampled_from(sorted(grammar.NEGATIVE_PAYLOADS)))
    before = draw(st.sampled_from(sorted(grammar.BEFORES.values())))
    kind = draw(st.integers(0, 3))
    if kind in (1, 2):
        forms = grammar.TEXT_VERDICT_NEGATIVES if kind == 1 else grammar.CLOSING_NEGATIVES
        form = draw(st.sampled_from(sorted(forms)))
        return f"{before}{forms[form](grammar.OPTIONS[a], grammar.OPTIONS[b])}"
    statement = f"{lead}{joint}{grammar.NEGATIVE_PAYLOADS[form](a, b)}"
    if form in grammar.CONTRASTED_NEGATIVES and draw(st.booleans()):  # then exclude a third option
        third = draw(st.sampled_from([letter for letter in LETTERS if letter not in (a, b)]))
        contrast = draw(st.sampled_from(grammar.CONTRASTS))
        exclude = grammar.EXCLUDED[draw(st.sampled_from(sorted(grammar.EXCLUDED)))]
        statement = f"{statement}{contrast} {exclude(third, grammar.OPTIONS[third])}."
    return f"{before}{statement}"


@settings(max_examples=300, deadline=None)
@given(negative())
def test_no_single_option_reads_as_none(text: str) -> None:
    assert _read(text) is None, text


# ``mmlu_pro`` reproduces the MMLU-Pro paper's extraction, whose last resort is the last letter
# of the text: a listing earns the last option's reward there. It is a reporting mode, never a
# training one; the exception is held below so that it cannot spread to another mode unseen.
_LISTING_EXCEPTIONS = frozenset({"mmlu_pro"})
_STYLES = ["L. text", "(L) text", "L) text", "**L. text**", "Option L: text"]
_PLACES = ["alone", "after a cue", "at the end"]


def _listing(style: str, where: str) -> str:
    listing = grammar.option_listing(LETTERS, style=style)
    return {
        "alone": listing,
        "after a cue": f"The answer is:\n{listing}",
        "at the end": f"Let me restate the choices before deciding.\n\n{listing}",
    }[where]


def _rewards(text: str, mode: str) -> list[float]:
    rewards = []
    for gold in LETTERS:
        sample = MCQASample.from_question("Which of the following is right?", list(grammar.OPTIONS.values()), gold)
        rewards.append(choicebox.grade(sample, text, mode=mode).reward)
    return rewards


@pytest.mark.parametrize("mode", sorted(set(choicebox.default_registry().names()) - _LISTING_EXCEPTIONS))
@pytest.mark.parametrize("style", _STYLES)
@pytest.mark.parametrize("where", _PLACES)
def test_restating_the_options_earns_nothing(mode: str, style: str, where: str) -> None:
    """LABELLING rule 6: the options listed one per line cite every option and commit to none,
    wherever the listing stands, in every mode but the named exception."""
    assert _rewards(_listing(style, where), mode) == [0.0] * len(LETTERS)


@pytest.mark.parametrize("style", _STYLES)
def test_mmlu_pro_keeps_the_papers_last_letter(style: str) -> None:
    """The exception above, as it is: ``mmlu_pro`` rewards the last listed option only."""
    assert _rewards(_listing(style, "alone"), "mmlu_pro") == [0.0] * (len(LETTERS) - 1) + [1.0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # One option cited by letter and text after a predicate no vocabulary lists.
        ("The statement that is not true is C. Sound travels faster in a vacuum.", "C"),
        ("Everything points to Vitamin B12 deficiency (D).", "D"),
        # Citations of different options describe them: none commits.
        (
            "The example of positive feedback is (B). Operant conditioning. "
            "The example of negative feedback is (D). Vitamin B12 deficiency. The answer is (B).",
            "B",
        ),
        # Options restated one after another in one line, then the answer: the listing commits
        # to none, the answer stands.
        (
            "The effects are: (A) Light travels slower in glass than in air. (B) Operant conditioning. "
            "(C) Sound travels faster in a vacuum. The answer is (E).",
            "E",
        ),
        # Negated or supposed citations are mentions.
        ("The cause cannot be D. Vitamin B12 deficiency.", None),
        ("Let us consider whether it is D. Vitamin B12 deficiency.", None),
        # A letter with another option's text cites neither, but a stated letter beats the
        # content it is given with (LABELLING rule 5): the superlative pick reads D.
        ("The most likely cause is D. Operant conditioning.", "D"),
        # Without a cue, a letter with another option's text commits to nothing.
        ("Everything points to D. Operant conditioning.", None),
        # The cue's payload on a listing line is read only when it cites its own option.
        ("The answer is:\nE. 80%", None),
        # A closing paragraph of an option's text alone is a fallback's: a letter stated before it
        # beats it (rule 5), and a line right under a numbered list continues the list.
        ("The answer is (B).\n\nVitamin B12 deficiency", "B"),
        ("The answer is (B).\n\n**Vitamin B12 deficiency**", "B"),
        ("Reasoning first.\n\nVitamin B12 deficiency", "D"),
        ("Steps:\n11. Is it 11?\n12 N", None),
        pytest.param(
            "Reasoning first.\n\nVitamin B12 deficiency\n\nQuestion: Which gas?\nA. Oxygen\nB. Nitrogen\nAnswer: B",
            "D",
            marks=pytest.mark.xfail(
                strict=True,
                reason="not read yet: the scope ends at another question only after a statement the main steps found",
            ),
        ),
    ],
)
def test_citation_rules(text: str, expected: str | None) -> None:
    assert _read(text) == expected


def _contrasted() -> int:
    """Contrasted statements per letter: every cue x layout x payload x contrast x excluded form,
    the option's text alone only after the cues that may announce it."""
    cues = len(grammar.CUES) * (len(grammar.CONTRASTED_PAYLOADS) - 1) + len(grammar.TEXT_CUES)
    return cues * len(grammar.LAYOUTS) * len(grammar.CONTRASTS) * len(grammar.EXCLUDED)


def test_grammar_size() -> None:
    """The product the coverage benchmark walks: every part combined with every other."""
    positives = sum(1 for _ in grammar.positives())
    negatives = sum(1 for _ in grammar.negatives())
    assert positives == 4 * (
        len(grammar.CUES) * len(grammar.LAYOUTS) * len(grammar.PAYLOADS)
        + len(grammar.HEADINGS) * len(grammar.HEADING_LAYOUTS) * len(grammar.PAYLOADS)
        + len(grammar.TEXT_CUES) * len(grammar.LAYOUTS) * len(grammar.TEXT_PAYLOADS)
        + len(grammar.HEADINGS) * len(grammar.HEADING_LAYOUTS) * len(grammar.TEXT_PAYLOADS)
        + len(grammar.LABELS) * len(grammar.DASH_LAYOUTS) * (len(grammar.PAYLOADS) + len(grammar.TEXT_PAYLOADS))
        + len(grammar.CITATION_LEADS) * len(grammar.CITATION_FORMS)
        + len(grammar.VERDICT_REFERENCES) * len(grammar.VERDICT_TAILS)
        + len(grammar.TEXT_VERDICT_SUBJECTS) * len(grammar.TEXT_VERDICT_TAILS)
        + _contrasted()
    ) * len(grammar.BEFORES) * len(grammar.AFTERS) + 4 * len(grammar.CLOSING_PAYLOADS) * len(grammar.BEFORES)
    assert negatives == 2 * (
        len(grammar.CUES) * len(grammar.LAYOUTS) * len(grammar.NEGATIVE_PAYLOADS)
        + len(grammar.LABELS) * len(grammar.DASH_LAYOUTS) * len(grammar.NEGATIVE_PAYLOADS)
        + len(grammar.VERDICT_REFERENCES) * len(grammar.VERDICT_JOINS) * len(grammar.VERDICT_TAILS)
        + len(grammar.TEXT_VERDICT_NEGATIVES)
        + len(grammar.CLOSING_NEGATIVES)
        + len(grammar.CUES) * len(grammar.LAYOUTS) * len(grammar.CONTRASTED_NEGATIVES) * len(grammar.CONTRASTS)
        * len(grammar.EXCLUDED)
    ) * len(grammar.BEFORES)


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("D. Vitamin B12 deficiency.", 3, 25),
        ("D. vitamin  **B12** deficiency", 3, 30),
        ("D. Vitamin B12 deficiencies", 3, -1),  # the last word must end there
        ("D. Vitamin B12", 3, -1),
    ],
)
def test_text_at_matches_the_options_words_in_order(text: str, position: int, expected: int) -> None:
    from choicebox.find._citation import text_at

    assert text_at(text, position, ("vitamin", "b12", "deficiency")) == expected


def test_text_ending_at_reads_the_words_backwards() -> None:
    from choicebox.find._citation import text_ending_at

    words = ("vitamin", "b12", "deficiency")
    text = "so: Vitamin B12 **deficiency** (D)"
    assert text_ending_at(text, text.index("(D)"), words) == text.index("Vitamin")
    assert text_ending_at("avitamin B12 deficiency (D)", 24, words) == -1



# 240 responses written for the project in the styles of other model families (chat and base
# models, R1-style reasoning, other languages), each with the letter its writer says it commits
# to. The rows ``robust`` still reads otherwise are listed with why; a fix makes its xfail fail.
_STYLES_FIXTURE = Path(__file__).parents[1] / "fixtures" / "answer_styles.jsonl"
_KNOWN_MISSES = {
    20: "'Response: Option B' then a rationale: 'Response:' is no answer label (its scan costs 6%)",
    55: "'C under one reading, D under another': a hedge across sentences",
}


# A second set, written later by another writer (chat models by family, base models continuing a
# few-shot prompt, thirteen languages), each row naming the family it imitates. The rows still read
# otherwise are known misses: the writer's own description of each says what is not read yet.
_STYLES_FIXTURE_2 = Path(__file__).parents[1] / "fixtures" / "answer_styles_2.jsonl"
_KNOWN_MISSES_2: frozenset[int] = frozenset()


# A third set, written blind by two helpers of a later session (two rounds of 100: twelve chat,
# reasoning and base families; then reasoning models, 2024-2025 chat models, small models, a
# policy's degenerate outputs mid-RL, nine languages), with their own questions; 60 commit to none.
_STYLES_FIXTURE_3 = Path(__file__).parents[1] / "fixtures" / "answer_styles_3.jsonl"
_KNOWN_MISSES_3 = {
    154: "'Option D is correct because ...' after 'Option X is incorrect because ...': a verdict "
    "followed by 'because' is left unread (it is a review's, as often as an answer's)",
}


# A fourth set, written blind by two helpers of a later session: 2025-2026 families (Qwen3 with
# and without thinking, DeepSeek-V3/R1-0528, Llama-4, Gemma-3, Phi-4, Magistral, GPT-4.1/5, o3,
# Claude-4, Gemini-2.5, Kimi-K2, GLM-4.5, RL policies, harness formats, ten languages), then base
# models continuing a few-shot prompt, small instruct models and mid-size chat models; 64 commit
# to none. Read before this session's rules: 187/200, with 5 letters where none was committed
# and one wrong letter.
_STYLES_FIXTURE_4 = Path(__file__).parents[1] / "fixtures" / "answer_styles_4.jsonl"
_KNOWN_MISSES_4 = {
    121: "a value with no answer cue ('the stone hits the water with a speed of approximately 14 "
    "m/s'), then a note that names another option's value",
    167: "'So the required minimum diameter is about 50 mm (C).': a stray letter after its option's "
    "text is read only with a link or cue (it is as often a mention: 'We can discard 20 mm (A).')",
    168: "'I'm not confident in (C) anymore': doubt about the letter, then no pick; read as C",
    194: "'the answer is the Treaty of Versailles, signed on June 28, 1919.': a remark after a comma "
    "is not cut off (after a comma come contrasts and hedges as often)",
}


# A fifth set, written blind after the fourth's rules and held out while they were narrowed (42
# families evenly, base models and RL policies, twelve languages; 30 commit to none): 96/100 when
# first measured, as before those rules; two of its misses are read since (one letter per case).
_STYLES_FIXTURE_5 = Path(__file__).parents[1] / "fixtures" / "answer_styles_5.jsonl"
_KNOWN_MISSES_5 = {
    30: "'... I don't think I should present (E) as the answer — I'm withdrawing it.' more than "
    "withdrawal_reach characters after the answer",
}


# A sixth set, written blind by two helpers of a later session (220 rows: R1 and its distills,
# QwQ/Qwen3, Llama, Mistral, Phi, Gemma, OLMo, Granite, base models; then harness prompts,
# medical models, RL reasoners, seven more languages; 73 commit to none). Rows 0-119 read 116 when
# first measured; rows 120-219, held out while the first set's rules were written, 89 before and
# after them.
_STYLES_FIXTURE_6 = Path(__file__).parents[1] / "fixtures" / "answer_styles_6.jsonl"
_KNOWN_MISSES_6 = {
    189: "the closing sentence ends in option D's long text, with no letter ('The court should admit "
    "the statement as an excited utterance, because ...'): read so, options framed as mentions were "
    "read too ('The trap answer says that ...')",
    190: "the first sentence is option C's long text ('No, because the neighbor's use was permissive "
    "rather than adverse.'): read so, a review restating the options was read too",
}


# A seventh set, written blind after the sixth's rules and held out while they were reviewed
# (eighteen 2024-2025 families, small and base models, seven languages; 33 commit to none): 92/100
# when first measured, as before those rules.
_STYLES_FIXTURE_7 = Path(__file__).parents[1] / "fixtures" / "answer_styles_7.jsonl"
_KNOWN_MISSES_7 = {
    64: "the closing sentence ends in option A's text with no letter ('So utilitarianism judges an "
    "action by its consequences for overall happiness or well-being.')",
}


# An eighth set, written blind by four helpers (frontier open-weight models, gpt-oss's harmony
# format, small reasoners with think blocks and s1's sections, harness and base models, eleven
# languages; 32 commit to none): 93/100 when first measured (one wrong letter, one letter where
# none), 100/100 after the changes its first 75 rows showed (rows 25-49 were written after those
# changes and read 24/25 before any change for them).
_STYLES_FIXTURE_8 = Path(__file__).parents[1] / "fixtures" / "answer_styles_8.jsonl"
_KNOWN_MISSES_8: dict[int, str] = {}


# A ninth set, written blind by four helpers and held out (closed API models, RL policies and their
# reward hacks, domain-tuned and legacy models, fourteen languages and structured outputs; 29
# commit to none): 88/100 when first measured (one wrong letter, one letter where none).
_STYLES_FIXTURE_9 = Path(__file__).parents[1] / "fixtures" / "answer_styles_9.jsonl"
_KNOWN_MISSES_9 = {
    77: "the letter only inside a <think> block never closed: a reasoning block never supplies the "
    "answer (strip_reasoning), a policy cut off while thinking has not answered",
    98: "the letter only inside a closed <think> block, nothing after it: the same rule",
}


# A tenth set, written blind by four helpers after the ninth's changes and held out (Chinese,
# Japanese and Korean chat models; reasoning models' final sections; tutoring and exam styles;
# messy outputs of small, quantized and badly templated models; 30 commit to none): 82/100 when
# first measured (one wrong letter, two letters where none).
_STYLES_FIXTURE_10 = Path(__file__).parents[1] / "fixtures" / "answer_styles_10.jsonl"
_KNOWN_MISSES_10 = {
    50: "'Only option F describes a process that ..., which makes it the one that is **not** a smooth "
    "ER function.': a verdict made of 'only option F' and 'the one that is' the question's criterion",
    95: "'### Final Answer' then '**H) 6.67 × 10⁻⁵', cut off inside the bold and the unit: a letter and a "
    "text that is not its option's, under a heading, reads as a line of another listing",
}


# An eleventh set, written blind by four helpers after the tenth's changes and held out (European
# languages; tool calls and structured outputs; numeric answers given as values; hedges and tricky
# commitments; 32 commit to none): 65/100 when first measured (one wrong letter, six letters where
# none), 89/100 after the changes they showed. The misses left are mostly values no cue announces.
_STYLES_FIXTURE_11 = Path(__file__).parents[1] / "fixtures" / "answer_styles_11.jsonl"
_KNOWN_MISSES_11 = {
    29: "a table's bold 'Result' row names the letter: 'Result' is no answer noun",
    35: "a tool call whose arguments are an escaped JSON string ('{\\\"choice\\\": \\\"E\\\"}')",
    36: "JSON cut off before its closing braces, the letter under a nested 'label' key",
    52: "a closing value as a LaTeX fraction after a conclusion ('So the probability is $\\frac{3}{28} \\approx 0.107$.')",
    53: "a bold closing sentence gives the value, then a remark follows on the last line",
    54: "a closing value with another writing of it in brackets ('4.186 × 10³ J (about 4.19 kJ)')",
    56: "a boxed expression that is an option's with its factors reordered",
    66: "a closing value linked by a verb that is no link ('the worker does 4200 joules of work')",
    69: "a bold closing sentence gives the value, then a remark follows on the last line",
    83: "'this is probably **B. Infectious mononucleosis**, most likely caused by ...': a citation that does not close its sentence",
    87: "'Option D (and only D), merge sort, guarantees ...': the question's criterion restated after the letter",
}


def _styles(path: Path, misses: Mapping[int, str] | frozenset[int]) -> list[Any]:
    params = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        name = f"{path.stem}-{row['id']}"
        if row["id"] in misses:
            reason = misses[row["id"]] if isinstance(misses, Mapping) else f"not read yet: {row['style']}"
            params.append(pytest.param(row, id=name, marks=pytest.mark.xfail(reason=reason, strict=True)))
        else:
            params.append(pytest.param(row, id=name))
    return params


@pytest.mark.parametrize(
    "row",
    _styles(_STYLES_FIXTURE, _KNOWN_MISSES)
    + _styles(_STYLES_FIXTURE_2, _KNOWN_MISSES_2)
    + _styles(_STYLES_FIXTURE_3, _KNOWN_MISSES_3)
    + _styles(_STYLES_FIXTURE_4, _KNOWN_MISSES_4)
    + _styles(_STYLES_FIXTURE_5, _KNOWN_MISSES_5)
    + _styles(_STYLES_FIXTURE_6, _KNOWN_MISSES_6)
    + _styles(_STYLES_FIXTURE_7, _KNOWN_MISSES_7)
    + _styles(_STYLES_FIXTURE_8, _KNOWN_MISSES_8)
    + _styles(_STYLES_FIXTURE_9, _KNOWN_MISSES_9)
    + _styles(_STYLES_FIXTURE_10, _KNOWN_MISSES_10)
    + _styles(_STYLES_FIXTURE_11, _KNOWN_MISSES_11),
)
def test_answer_styles_of_other_families(row: dict[str, Any]) -> None:
    options = [row["options"][letter] for letter in sorted(row["options"])]
    sample = MCQASample.from_question(row.get("question", "Which option is right?"), options, "A")
    assert choicebox.grade(sample, row["response"], mode="robust").extracted_answer == row["expected"], row["style"]


def test_a_sentence_opening_is_looked_for_within_reach() -> None:
    from choicebox.find._vocab import sentence_opening

    text = "First. If so; the answer would be C"
    assert sentence_opening(text, text.index("the")) == text.index(" the")
    assert sentence_opening(text, text.index("If")) == text.index(" If")
    long = "x" * 1000 + " the answer"
    assert sentence_opening(long, len(long), reach=300) == len(long) - 300
