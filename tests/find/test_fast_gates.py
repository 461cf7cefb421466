"""The cheap tests that let the engine skip a search must never change what it finds.

Each gate is a necessary condition of a pattern (a literal every match holds) or a rewrite of a
pattern into faster ones: Hypothesis looks for a text where the gate and the full search differ.
The shortcuts of one step kind are tested in that kind's module (``tests/find/kinds/``).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import _grading
from choicebox.find import _features, _payload, _readable
from choicebox.find._features import SampleFeatures, _is_compound, _mostly_compound

# Texts made of the pieces the patterns look for, so that matches are common.
_STEM_PIECES = ["(a)", "(b)", "a)", "b)", "(i)", "(ii)", "Statement", " 1 |", " 2 |", " ", "\n", ".", "x"]
_ROMAN_PIECES = ["I", "II", "III", "(II)", "II.", " and ", " only", " ", "\n", "x", "(", ")"]
_REFUSAL_PIECES = [
    "I'm sorry", "I cannot help", "I can’t answer", "As an AI", "as an ai", ". ", "!\t", "?",
    "\n", " ", "x", "I", "I apologise", "I won't choose", ".\u2003", "\u2028",
    "im sorry", "I\nam sorry", "\x1c", "\x0b", "In", "A ", "aS aN Ai", "İ", "ı", "ſ", "\u00a0",
    "I am unable to help", "'m unable to pick", "do not feel comfortable respond", "m", "'",
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


@settings(max_examples=1500, deadline=None)
@given(_texts(_REFUSAL_PIECES))
def test_the_class_gate_lets_every_refusal_after_a_sentence_end_through(text: str) -> None:
    expected = _grading._REFUSAL_AFTER_STOP.search(text) is not None
    assert _grading._refusal_after_stop(text) is expected


# --- the robust engine's shortcuts ---------------------------------------------------------------

_LETTER_PIECES = [
    "A", "B", "I", "J", "Z", "a", "b", "e", " ", "\t", "\n", "(", ")", "[", "]", "{", "}", ".", "x",
    "Ab", "1", "*", "'", "_", " is ", " car", "=", "é", "The ", "!", "$", '"', "`", "b)", "ab", "\r",
    "π", "²", "’", "°", "É", "\u00a0", "\ud800", "option ", "Choice ", "xoption ",
]  # fmt: skip
_CAPITAL = re.compile(r"[A-Z](?![A-Za-z0-9])")


def _readable_reference(text: str, options: Collection[str], stop: int | None) -> bool:
    """``has_readable_letter`` as it was written before it searched text by classes (a
    pattern for the capitals, a find per bracket and per line end)."""
    n = len(text)
    end = n if stop is None else min(stop, n)

    def reads(at: int) -> bool:
        token = _payload.letter_token(text, at, min(n, at + _payload.MAX_PAYLOAD), strict_end=False)
        return token is not None and token[1] in options

    for match in _CAPITAL.finditer(text, 0, end):
        at = match.start()
        if (at == 0 or not text[at - 1].isalnum()) and match.group() in options and reads(at):
            return True
    for opener in "([{":
        at = text.find(opener, 0, end)
        while at != -1:
            after = at + 1
            while after < n and text[after] in " \t":
                after += 1
            if after < n and text[after].islower() and reads(at):
                return True
            if opener == "(" and after == at + 1 < n and text[after].islower() and text[after].upper() in options and text[after + 1 : after + 2] == ")":
                return True  # "(d)", which may cite option D
            at = text.find(opener, at + 1, end)
    for closer in (*")]}", "\n"):
        ends = [at for at in range(end) if text[at] == closer]
        if closer == "\n" and end == n:
            ends.append(n)
        skip = " \t" if closer != "\n" else _readable._LINE_END_DECORATION
        for at in ends:
            before = at - 1
            while before >= 0 and text[before] in skip:
                before -= 1
            if (
                before >= 0
                and text[before].islower()
                and (before == 0 or not text[before - 1].isalnum())
                and reads(before)
            ):
                return True
    # "option b is correct": a lowercase letter named as an option, by a pattern.
    for match in re.finditer(r"(?=([Oo]ption|[Cc]hoice) ([a-z]))", text):
        at, letter_at = match.start(), match.start(2)
        if (
            letter_at < end
            and match.group(2).upper() in options
            and (at == 0 or not text[at - 1].isalnum())
            and (letter_at + 1 == n or not text[letter_at + 1].isalnum())
        ):
            return True
    return False


@settings(max_examples=1500, deadline=None)
@given(
    _texts(_LETTER_PIECES),
    st.sets(st.sampled_from("ABCDEIJ")),
    st.one_of(st.none(), st.integers(0, 40)),
)
def test_has_readable_letter_reads_what_the_capital_scan_read(
    text: str, letters: set[str], stop: int | None
) -> None:
    options = sorted(letters)
    expected = _readable_reference(text, options, stop)
    assert _readable.has_readable_letter(text, options, stop) is expected


_SEP_PIECES = [" ", "\t", "\n", "or", "and", "nor", "vs", "versus", "/", ",", "*", "$", "B", "(C)", "is", "was", "not",
               "incorrect", "wrong", "seems", "would be", "for", "part", "(a)", "first", "question", "only"]  # fmt: skip


# Each payload pattern with the test read_at and letter_token make before running it.
_PAYLOAD_GATES = [
    (_payload._SEP, lambda char: _payload._may_start(char, _payload._SEP_STARTS)),
    (_payload._RETRACT_AFTER, lambda char: _payload._may_start(char, _payload._RETRACT_STARTS)),
    (_payload._MATHY_AFTER, lambda char: _payload._may_start(char, _payload._MATHY_STARTS)),
    (_payload._FOR_PART, lambda char: char in (" ", "\t")),
    (_payload._JUXTAPOSED_CLOSED, lambda char: char in (" ", "\t")),
    (_payload._JUXTAPOSED, lambda char: char in (" ", "\t", "(", "[")),
    (_payload._TAIL, lambda char: char in (".", ")", ":")),
    (_payload._LETTERS_IN_BRACKETS, lambda char: char == "("),
]


# Latin-1, and the characters that match others caselessly or are blanks outside it.
_GATE_CHARS = [chr(code) for code in range(256)] + list("\u017f\u0130\u212a\u2003\u2028\u3000≈’")


@settings(max_examples=200, deadline=None)
@given(_texts(_SEP_PIECES))
def test_payload_patterns_start_only_where_their_gates_let_them(rest: str) -> None:
    for char in _GATE_CHARS:
        for pattern, may_start in _PAYLOAD_GATES:
            if not may_start(char):
                assert pattern.match(char + rest) is None, (pattern.pattern, char + rest)
    assert _payload._NOT_LETTER.match(rest) is None or rest.startswith("not")
