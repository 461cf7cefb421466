"""Word lists given in rule files, turned into pattern pieces.

Rule files hold the vocabulary (answer labels, qualifiers, filler words, correction cues, recap
phrases, part markers) as lists of words and phrases: data, never regexes. An entry is matched
case-insensitively, word by word, a space standing for any run of blanks, with four small
conveniences that keep the lists short:

* ``a/b`` inside a word: either word (``to/for`` matches "to" and "for");
* a word ending in ``?`` may be left out (``all? the answers``);
* a word ending in ``*`` matches any word it starts (``recalculat*``: "recalculate", "recalculating"),
  and ``*`` alone any one word (``most *``: "most likely", "most accurate");
* ``...`` stands for up to 120 characters of one sentence (``we refer to ... for help.``).

Every other character is literal; a typographic apostrophe matches a straight one. The longest
entries are tried first, so "most likely" wins over "likely".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Final

import attrs

from choicebox._errors import ParameterError

__all__ = [
    "CLAUSE_ENDS",
    "NEGATIVE_QUESTION",
    "alternation",
    "last_words",
    "nonempty_words",
    "occurrences",
    "opens_line",
    "opens_sentence",
    "phrases",
    "required_words",
    "sentence_opening",
    "substring_list",
    "substrings",
    "valid_words",
    "whole_words",
    "word_before",
    "word_list",
]


def phrases(value: str | Sequence[str], name: str) -> tuple[str, ...]:
    """The list checked: non-empty strings, whitespace-collapsed and lowercased, in order."""
    items = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(item, str) and item.strip() for item in items):
        raise ParameterError(name, f"{name} must be a list of non-empty words or phrases")
    return tuple(dict.fromkeys(" ".join(item.lower().split()) for item in items))


def word_list(value: Any) -> tuple[str, ...]:
    """An attrs converter for a word-list parameter (a list, or one string); entries are
    whitespace-collapsed and lowercased. ``nonempty_words`` and ``valid_words`` check what it kept."""
    items = (value,) if isinstance(value, str) else tuple(value)
    return tuple(
        dict.fromkeys(" ".join(item.lower().split()) if isinstance(item, str) else item for item in items)
    )


def valid_words(instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    """An attrs validator: every entry a non-empty word or phrase that can match something."""
    name = attribute.alias or attribute.name
    for entry in value:
        if not isinstance(entry, str) or not entry:
            raise ParameterError(name, f"{name} must be a list of non-empty words or phrases")
        if all(word.endswith("?") for word in entry.split()):
            raise ParameterError(name, f"{entry!r} is all optional words: it would match nothing")


def nonempty_words(instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    """An attrs validator: ``valid_words``, and at least one of them."""
    valid_words(instance, attribute, value)
    if not value:
        name = attribute.alias or attribute.name
        raise ParameterError(name, f"{name} needs at least one entry")


def substring_list(value: Any) -> tuple[str, ...]:
    """An attrs converter for a list of literal substrings, kept as written (lowercased):
    ``"\\nq"`` is a newline and a q, not a word."""
    items = (value,) if isinstance(value, str) else tuple(value)
    return tuple(dict.fromkeys(item.lower() if isinstance(item, str) else item for item in items))


def substrings(instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    """An attrs validator: every entry a non-empty string."""
    if not all(isinstance(item, str) and item for item in value):
        name = attribute.alias or attribute.name
        raise ParameterError(name, f"{name} must be a list of non-empty strings")


def alternation(entries: Sequence[str]) -> str:
    """A non-capturing group matching any of ``entries`` (see the module docstring)."""
    ordered = sorted(entries, key=len, reverse=True)
    parts = [_entry(entry) for entry in ordered]
    return "(?:" + "|".join(parts) + ")" if parts else "(?!)"


def whole_words(entries: Sequence[str]) -> str:
    """``alternation`` of ``entries`` as whole words, in the scripts that space their words; an
    entry in one that does not (Chinese, Japanese) is found anywhere: "不对" in "这是不对的"."""
    unspaced = [entry for entry in entries if unicodedata.name(entry[:1], "").startswith(("CJK", "HIRAGANA", "KATAKANA"))]
    spaced = [entry for entry in entries if entry not in unspaced]
    parts = ([rf"\b{alternation(spaced)}\b"] if spaced else []) + ([alternation(unspaced)] if unspaced else [])
    return "(?:" + "|".join(parts) + ")" if parts else "(?!)"


def required_words(entries: Sequence[str]) -> tuple[str, ...] | None:
    """Literal words one of which every text matching ``entries`` contains (the longest word
    each entry cannot do without, with its alternatives), for a cheap substring test before a
    pattern runs; ``None`` when some entry has no such word."""
    words: list[str] = []
    for entry in entries:
        best: list[str] = []
        for word in entry.split():
            if word.endswith("?") or word in ("*", "...", "…"):
                continue
            choices = []
            for choice in word.split("/"):
                stem = choice[:-1] if choice.endswith("*") else choice
                pieces = stem.replace("’", "'").split("'")
                choices.append(max(pieces, key=len))
            if all(choices) and min(map(len, choices)) > min(map(len, best), default=0):
                best = choices
        if not best:
            return None
        words.extend(best)
    return tuple(dict.fromkeys(words))


def last_words(entries: Sequence[str]) -> frozenset[str] | None:
    """Every word a match of ``entries`` can end with (lowercase, alternatives spelt out), for a
    cheap test of the word before a position; ``None`` when an entry ends in a wildcard."""
    words: set[str] = set()
    for entry in entries:
        for word in reversed(entry.split()):
            optional = word.endswith("?")
            core = word[:-1] if optional else word
            if core in ("*", "...", "…") or core.endswith("*"):
                return None
            words.update(choice.replace("’", "'") for choice in core.split("/") if choice)
            if not optional:
                break
        else:
            return None
    return frozenset(words)


def occurrences(text: str, word: str, start: int = 0, stop: int | None = None) -> list[int]:
    """Where ``word`` occurs in ``text[start:stop]``: ``str.find`` at C speed, no pattern."""
    end = len(text) if stop is None else stop
    found = []
    at = text.find(word, start, end)
    while at != -1:
        found.append(at)
        at = text.find(word, at + 1, end)
    return found


def _entry(entry: str) -> str:
    pattern = ""
    gap = False  # whether the next word needs blanks before it
    for word in entry.split():
        optional = word.endswith("?") and len(word) > 1
        piece = _word(word[:-1] if optional else word)
        if optional:
            pattern += rf"(?:\s++{piece})?" if gap else rf"(?:{piece}\s++)?"
        else:
            pattern += (r"\s++" if gap else "") + piece
            gap = True
    return pattern


def _word(word: str) -> str:
    if word in ("...", "…"):
        return r"[^.\n]{0,120}?"
    if word == "*":
        return r"\w++"
    choices = [choice for choice in word.split("/") if choice] or [word]
    return "(?:" + "|".join(_literal(choice) for choice in choices) + ")"


def _literal(word: str) -> str:
    stem = word[:-1] if word.endswith("*") and len(word) > 1 else word
    # A typographic apostrophe is as good as a straight one: "it's" matches "it’s".
    literal = "['’]".join(re.escape(piece) for piece in stem.replace("’", "'").split("'"))
    return literal + r"\w*+" if stem is not word else literal


def opens_line(text: str, position: int, *, within: int | None = None) -> bool:
    """Only blanks and markdown (``#``, ``*``, ``_``, ``>``, a list dash) stand before
    ``position`` on its line (and, with ``within``, no more than that many characters)."""
    line_start = text.rfind("\n", 0, position) + 1
    if within is not None and position - line_start > within:
        return False
    return not text[line_start:position].strip(" \t#*_>-")


def sentence_opening(text: str, position: int, *, reach: int = 300, marks: tuple[str, ...] | None = None) -> int:
    """Where the sentence holding ``position`` opens (after a ".", ";" or newline, or after one of
    ``marks``), looked for no further back than ``reach`` characters, so that asking costs the
    same on any text."""
    lo = max(0, position - reach)
    if marks is None:  # the common call, on every statement: three searches, nothing built
        return max(text.rfind(".", lo, position), text.rfind(";", lo, position), text.rfind("\n", lo, position), lo - 1) + 1
    return max(lo - 1, *(text.rfind(mark, lo, position) for mark in marks)) + 1


def word_before(text: str, position: int) -> str:
    """The word right before ``position`` (within 24 characters), without its markup: "wrong" of
    "the **wrong** answer"; ``""`` when there is none."""
    words = text[max(0, position - 24) : position].split()
    return words[-1].strip("*_") if words else ""


def opens_sentence(low: str, at: int, *, ends: str = ".!?:\n") -> bool:
    """Only markup stands between ``at`` and the end of the sentence or line before it (or the
    text's start); with ``ends=CLAUSE_ENDS``, of the clause before it."""
    before = low[max(0, at - 8) : at].rstrip(" \t*_#>")
    return not before or before[-1] in ends


# What ends a clause, for ``opens_sentence``: "Следовательно, ответ (H)" opens one.
CLAUSE_ENDS: Final = ".!?:\n,;，。"

# A question that asks for what is not so ("Which is NOT sedimentary?"): an option marked or
# judged as what is so may be the one it does not ask for.
# "Except" asks so where it closes the question or a clause ("... are true EXCEPT:", "all except
# which?"), not in its content ("abolished slavery, except as punishment for a crime?").
NEGATIVE_QUESTION: Final = re.compile(
    r"\b(?:not|false|incorrect|inaccurate|untrue|least|wrong|exception|cannot|never|fails?)\b|n't\b"
    r"|\b(?-i:EXCEPT)\b|\bexcept\b(?=[ \t_*]*+(?:[:?.…,;]|$|which\b|one\b))",
    re.IGNORECASE,
)
