"""The cheap tests that let the engine skip a search must never change what it finds.

Each gate is a necessary condition of a pattern (a literal every match holds) or a rewrite of a
pattern into faster ones: Hypothesis looks for a text where the gate and the full search differ.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import _features, _grading
from choicebox._features import SampleFeatures, _is_compound, _mostly_compound

# Texts made of the pieces the patterns look for, so that matches are common.
_STEM_PIECES = ["(a)", "(b)", "a)", "b)", "(i)", "(ii)", "Statement", " 1 |", " 2 |", " ", "\n", ".", "x"]
_ROMAN_PIECES = ["I", "II", "III", "(II)", "II.", " and ", " only", " ", "\n", "x", "(", ")"]
_REFUSAL_PIECES = [
    "I'm sorry", "I cannot help", "I can’t answer", "As an AI", "as an ai", ". ", "!\t", "?",
    "\n", " ", "x", "I", "I apologise", "I won't choose", ".\u2003", "\u2028",
]  # fmt: skip
_OPTION_PIECES = ["5 H", ", ", "; ", ". ", " and ", "a) 2", "b) 1", "True", "False", "x", " ", "[0, 2]", ":"]


def _texts(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(_texts(_STEM_PIECES))
def test_stem_part_patterns_only_match_texts_holding_their_literals(text: str) -> None:
    for literals, pattern in _features._STEM_PARTS:
        if pattern.search(text) is not None:
            assert all(literal in text for literal in literals), (pattern.pattern, text)


@settings(max_examples=400, deadline=None)
@given(_texts(_ROMAN_PIECES))
def test_roman_context_only_matches_texts_holding_its_literal(text: str) -> None:
    if _features._ROMAN_CONTEXT.search(text) is not None:
        assert _features._ROMAN_LITERAL in text
    features = SampleFeatures({"H": "x", "I": "y"}, text)
    assert features.roman() is (_features._ROMAN_CONTEXT.search(text) is not None)


@settings(max_examples=400, deadline=None)
@given(_texts(_OPTION_PIECES))
def test_an_option_without_list_marks_can_have_no_parts(text: str) -> None:
    if any(mark in text for mark in _features._LIST_MARKS):
        return
    assert len([p for p in _features._COMPOUND_SPLIT.split(text) if p.strip()]) < 2
    assert len(_features._LABELLED_PARTS.findall(text)) < 2
    assert len([p for p in _features._LIST_SPLIT.split(text) if p.strip()]) < 2
    assert _is_compound(text) is False


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts(_OPTION_PIECES), min_size=3, max_size=10))
def test_mostly_compound_counts_as_the_full_count_does(values: list[str]) -> None:
    full = sum(1 for value in values if _is_compound(value)) >= 0.6 * len(values)
    assert _mostly_compound(values) is full


# The refusal pattern as one search, as it was written before it was split in two.
_ONE_PATTERN = re.compile(r"(?:^|[.!?]\s++|\n)" + _grading._REFUSAL, re.IGNORECASE)


@settings(max_examples=600, deadline=None)
@given(_texts(_REFUSAL_PIECES))
def test_refusal_patterns_find_what_the_one_pattern_finds(text: str) -> None:
    split = (
        _grading._REFUSAL_AT_START.match(text) is not None
        or _grading._REFUSAL_AFTER_STOP.search(text) is not None
    )
    assert split is (_ONE_PATTERN.search(text) is not None)
