"""The ``concluding_sentence`` step kind (``choicebox.find.statements``): a sentence that opens with a
concluding word and ends with a letter, "So, B.", "Therefore, (C).", "=> D".

What it reads, what it must not read (a letter that does not close the sentence, a lowercase letter,
an elimination, a supposition, several letters, a letter that is no option), and what each of its
parameters changes. The modes are rule files whose chain is this one step, with ``robust``'s words
unless a test changes them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox._modes import default_registry
from choicebox.find import statements
from rule_files import Built, one_kind, robust_step


def _step(tmp_path: Path, resolve: str = "first_step", **changed: Any) -> Built:
    return one_kind(tmp_path, "concluding_sentence", resolve=resolve, **{**robust_step("conclusion"), **changed})


@pytest.fixture(scope="module")
def concluding(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("concluding_sentence"))


@pytest.mark.parametrize(
    "output",
    [
        "So, B.",
        "so, B",
        "Therefore, (B).",
        "Thus option B",
        "So it's B.",
        "Reasoning first. So, B.",
        "LCM = 36\n\n=> B",
        "In conclusion: **B**.",
        "Thus B. optB",  # the letter and its option's text
        "So, A. Then, after more work. Thus, B.",  # the last
        "Counting the carbons gives six. So B it is.",  # the idiom that closes the clause
        "So it must be B.",
        "It is not A, nor C or D, so it must be B.",  # a clause after a comma concludes too
        "A and C fail; therefore, (B).",
        "So B rather than D.",  # a contrast after the letter closes its clause
        "A and C fail. By elimination, B.",  # what an elimination concludes with
    ],
)
def test_it_reads_the_letter_closing_a_concluding_sentence(concluding: Built, output: str) -> None:
    assert concluding.outcome(output) == ("B", None)


@pytest.mark.parametrize(
    "output",
    [
        "So, b.",  # a lowercase letter
        "So, B is wrong.",  # the letter does not close the sentence: an elimination
        "So B is the answer",
        "So, not B.",
        "If so, B.",  # "so" does not open the sentence
        "So, E.",  # no option
        "So, A or B.",  # several letters
        "B, so to speak.",
        "So B it is possible to rule out.",  # "it is" that does not close the clause
        "If the dose were doubled, so it must be B.",  # a clause that concludes from a condition
        "A fails, so B is wrong too.",
        "C fails. By elimination, B or D.",  # two letters left
        "A and C fail. That leaves B. But B fails too.",  # a step of an elimination
    ],
)
def test_it_reads_no_answer_unless_a_concluding_word_opens_and_a_letter_closes(concluding: Built, output: str) -> None:
    assert concluding.outcome(output) == (None, "no_answer")


_CONCLUSION_PIECES = ["so", "So", "thus", "in conclusion", "in\nconclusion", ". ", ".", ":", "\n", "**", "_", " ", "\t",
                      "B", ",", "it's", "soon", "x"]  # fmt: skip


def _texts(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(_texts(_CONCLUSION_PIECES))
def test_conclusion_openings_are_where_its_pattern_matches_after_every_opening(text: str) -> None:
    step = next(entry.step for entry in default_registry().get("robust").chain if entry.id == "conclusion")
    low = text.lower()
    positions = [0, *(m.end() for m in re.compile(statements._OPENING).finditer(low))]
    expected = [m.span() for m in (step._pattern.match(low, at) for at in positions) if m is not None]
    assert [m.span() for m in step._openings(low, 0)] == expected


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_words_are_the_concluding_words(tmp_path: Path, concluding: Built) -> None:
    assert concluding.read("So, B.") == "B"
    thus_only = _step(tmp_path, words=["thus"])
    assert thus_only.read("So, B.") is None
    assert thus_only.read("Thus, B.") == "B"


def test_parameter_window_is_how_far_from_the_end_it_reads(tmp_path: Path, concluding: Built) -> None:
    padded = "So, B." + " Some more words here to pad." * 3
    assert concluding.read(padded) == "B"
    narrow = _step(tmp_path, window=20)
    assert narrow.read(padded) is None
    assert narrow.read("x" * 100 + ". So, B.") == "B"


def test_parameter_which_picks_the_first_or_the_last_sentence(tmp_path: Path, concluding: Built) -> None:
    output = "So, A. Then, after more work. Thus, C."
    assert concluding.read(output) == "C"
    assert _step(tmp_path, which="first").read(output) == "A"


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("All four results line up with one option: 42 paths; 6 paths → **B**", "B"),
        ("Comparing: 0.5 ⇒ (C)", "C"),
        ("The values match => [D]", "D"),
        ("Reactant A → B", None),  # a reaction, an implication: no decorated letter
        ("If P then Q, so A → C.", None),
        ("Step 2 → **B** is ruled out, and so is → (C) here", None),  # the letters do not close their clause
        ("Mapping each value: 12 N → (A), 24 N → (B), 36 N → (C)", None),  # a mapping of values
        ("Our value is 30 N.\n- If friction is ignored → **D**\n- If friction is included → **B**", None),
        ("Our value is 30 N. If friction is ignored → **D**", None),
        ("(a) 19 cm³ → **(A)**\n\n(b) 57.8 erg/cm³, the closest.", None),  # not on the last line
    ],
)
def test_a_concluding_sign_concludes_where_it_stands_before_a_decorated_letter(
    concluding: Built, output: str, letter: str | None
) -> None:
    assert concluding.read(f"Work it out.\n\n{output}") == letter
