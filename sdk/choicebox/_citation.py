"""Option citations: a letter written together with that option's own text.

"D. Vitamin B12 deficiency", "(D) Vitamin B12 deficiency", "**D) Vitamin B12 deficiency**",
"Option D: Vitamin B12 deficiency", "D - Vitamin B12 deficiency" and "Vitamin B12 deficiency (D)"
all cite option D: the letter and the text agree, so the reader cannot mean another option
(LABELLING rules 5 and 10). A citation is a payload of its own. After an answer cue it extends the
statement to the end of the text; in a concluding sentence it commits without a cue (the
``option_citation`` step kind); several in a row restate the options and commit to none.

The option's text is matched word for word, ignoring case, blanks and markdown between words, so
a citation costs one anchored match per letter read, never a scan.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final, NamedTuple

__all__ = ["Citation", "citation_after", "citation_before", "option_patterns"]

# Between a letter and its text: "D. ", "D) ", "D: ", "D - ", "(D) ", "**D.** ", "D.**".
_JOINT: Final = re.compile(r"[*_]*+(?:[ \t]*+[.):：\-–—])?[*_]*+[ \t]++[*_]*+")
# Between an option's text and a bracketed letter after it: "Vitamin B12 deficiency (D)".
_LETTER_AFTER: Final = re.compile(r"[*_]*+[ \t]*+[*_]*+\(([A-Z])\)")
_MARKUP: Final = "*_`$"


class Citation(NamedTuple):
    """A cited option: its letter and where the citation (letter and text) ends."""

    letter: str
    end: int


def _pattern_of(text: str) -> re.Pattern[str] | None:
    """The option's words in order, with any blanks or markdown between them; None for a text
    with no word (an empty option cannot be cited)."""
    words = text.split()
    if not words:
        return None
    joint = r"[\s*_`$]*+"
    body = joint.join(re.escape(word) for word in words)
    # The text must end where a word ends: "12 N" does not cite inside "12 Newtons".
    tail = r"(?!\w)" if words[-1][-1:].isalnum() else ""
    return re.compile(body + tail, re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def option_patterns(options: tuple[tuple[str, str], ...]) -> Mapping[str, re.Pattern[str]]:
    """Each option letter's text pattern, compiled once per sample's options."""
    patterns = {}
    for letter, text in options:
        pattern = _pattern_of(text.strip().rstrip(".").strip())
        if pattern is not None:
            patterns[letter] = pattern
    return patterns


def citation_after(
    text: str, letter_end: int, letter: str, patterns: Mapping[str, re.Pattern[str]]
) -> int:
    """Where the citation ends when the letter read up to ``letter_end`` is followed by its own
    option's text ("D. Vitamin B12 deficiency"), else -1. The letter may have consumed its own
    closing bracket ("D)" or "(D)" read up to the bracket)."""
    pattern = patterns.get(letter)
    if pattern is None:
        return -1
    joint = _JOINT.match(text, letter_end, letter_end + 16)
    if joint is None:
        return -1
    match = pattern.match(text, joint.end())
    return -1 if match is None else match.end()


def citation_before(
    text: str, position: int, limit: int, patterns: Mapping[str, re.Pattern[str]]
) -> Citation | None:
    """The option whose text stands at ``position`` and is followed by its own letter in brackets
    ("Vitamin B12 deficiency (D)"), read no further than ``limit``."""
    while position < limit and text[position] in _MARKUP:
        position += 1
    for letter, pattern in patterns.items():
        match = pattern.match(text, position, limit)
        if match is None:
            continue
        after = _LETTER_AFTER.match(text, match.end(), limit)
        if after is not None and after.group(1) == letter:
            return Citation(letter, after.end())
    return None
