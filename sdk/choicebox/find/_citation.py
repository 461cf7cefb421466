"""Option citations: a letter written together with that option's own text.

"D. Vitamin B12 deficiency", "(D) Vitamin B12 deficiency", "**D) Vitamin B12 deficiency**",
"Option D: Vitamin B12 deficiency", "D - Vitamin B12 deficiency" and "Vitamin B12 deficiency (D)"
all cite option D: the letter and the text agree, so the reader cannot mean another option
(LABELLING rules 5 and 10). A citation is a payload of its own. After an answer cue it extends the
statement to the end of the text; in a concluding sentence it commits without a cue (the
``option_citation`` step kind); several in a row restate the options and commit to none.

The option's text is matched word for word, ignoring case, blanks and markdown between words, by
comparing slices (no pattern is compiled per sample: an RL run meets thousands of new questions),
so a citation costs one comparison per word of the letter's option, never a scan.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final, NamedTuple

__all__ = [
    "CITED_WORDS",
    "Citation",
    "OptionWords",
    "citation_after",
    "citation_before",
    "option_words",
    "text_at",
    "text_ending_at",
]

# Between a letter and its text: "D. ", "D) ", "D: ", "D - ", "D, ", "(D) ", "**D.** ", and
# "D (" before a bracketed text ("That corresponds to **I (840 gm)**").
_JOINT: Final = re.compile(
    r"[*_]*+(?:[ \t]*+[.,):：\-–—])?[*_]*+(?:[ \t]++[*_]*+(?:\([*_]*+)?|\([*_]*+)"
)
# Between an option's text and a bracketed letter after it: "Vitamin B12 deficiency (D)".
_LETTER_AFTER: Final = re.compile(r"[*_]*+[ \t]*+[*_]*+\(([A-Z])\)")
_MARKUP: Final = "*_`$"
# How many of an option's opening words a citation repeats (a longer option is cited by them).
CITED_WORDS: Final = 24


class Citation(NamedTuple):
    """A cited option: its letter and where the citation (letter and text) ends."""

    letter: str
    end: int


OptionWords = Mapping[str, tuple[str, ...]]


@functools.lru_cache(maxsize=4096)
def option_words(options: tuple[tuple[str, str], ...]) -> OptionWords:
    """Each option letter's text as its lowercased words, split once per sample's options (an
    option with no word cannot be cited)."""
    # A citation repeats the option's opening words; past CITED_WORDS a long option is cited by
    # them alone, so a comparison is bounded whatever the option.
    return {
        letter: words
        for letter, text in options
        if (words := tuple(text.strip().rstrip(".").lower().split()[:CITED_WORDS]))
    }


def text_at(text: str, position: int, words: tuple[str, ...], limit: int | None = None) -> int:
    """Where ``words`` end when they stand at ``position`` in order, ignoring case and any
    blanks or markdown between them, else -1. The last word must end a word: "12 N" does not
    stand in "12 Newtons"."""
    n = len(text) if limit is None else min(limit, len(text))
    at = position
    for index, word in enumerate(words):
        if index:
            while at < n and (text[at].isspace() or text[at] in _MARKUP):
                at += 1
        stop = at + len(word)
        if stop > n or text[at:stop].lower() != word:
            return -1
        at = stop
    if at < n and words[-1][-1:].isalnum() and (text[at].isalnum() or text[at] == "_"):
        return -1
    return at


def text_ending_at(text: str, end: int, words: tuple[str, ...]) -> int:
    """Where ``words`` start when they stand in order right before ``end`` (past blanks and
    markdown), else -1: ``text_at`` read backwards, for "Vitamin B12 deficiency (D)"."""
    at = end
    while at > 0 and (text[at - 1].isspace() or text[at - 1] in _MARKUP):
        at -= 1
    for index, word in enumerate(reversed(words)):
        if index:
            while at > 0 and (text[at - 1].isspace() or text[at - 1] in _MARKUP):
                at -= 1
        start = at - len(word)
        if start < 0 or text[start:at].lower() != word:
            return -1
        at = start
    if at > 0 and words[0][:1].isalnum() and text[at - 1].isalnum():
        return -1
    return at


def citation_after(text: str, letter_end: int, letter: str, options: OptionWords) -> int:
    """Where the citation ends when the letter read up to ``letter_end`` is followed by its own
    option's text ("D. Vitamin B12 deficiency"), else -1. The letter may have consumed its own
    closing bracket ("D)" or "(D)" read up to the bracket)."""
    words = options.get(letter)
    if words is None:
        return -1
    joint = _JOINT.match(text, letter_end, letter_end + 16)
    if joint is None:
        return -1
    return text_at(text, joint.end(), words)


def citation_before(text: str, position: int, limit: int, options: OptionWords) -> Citation | None:
    """The option whose text stands at ``position`` and is followed by its own letter in brackets
    ("Vitamin B12 deficiency (D)"), read no further than ``limit``."""
    if text.find("(", position, limit) == -1:
        return None  # no bracketed letter to follow the text
    while position < limit and text[position] in _MARKUP:
        position += 1
    if position >= limit:
        return None
    first = text[position].lower()
    for letter, words in options.items():
        if words[0][0] != first:
            continue  # the common case, decided without a call
        end = text_at(text, position, words, limit)
        if end == -1:
            continue
        after = _LETTER_AFTER.match(text, end, limit)
        if after is not None and after.group(1) == letter:
            return Citation(letter, after.end())
    return None
