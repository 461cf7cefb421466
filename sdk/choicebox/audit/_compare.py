"""When two choice texts say the same thing: the comparison behind ``duplicate_choice`` and the
file-level duplicate-question check.

Texts compare after Unicode NFKC and with whitespace collapsed. Two refinements keep distinct
answers apart:

* **Numbers** compare by exact value (``decimal.Decimal``, never ``float``: ``1e400`` does not
  overflow, and two 20-digit integers that differ in the last digit stay different), but only a
  well-formed numeral is a number (``3,200`` is one, ``0,1,2`` and ``0400`` are not), and an
  integer never equals a decimal (``1`` and ``1.0`` differ on purpose in a question about types or
  precision). In a question about rounding the digits written are the answer, so numbers compare
  as text there.
* **Case** is ignored only where it is prose: ``Informal Codes`` and ``Informal codes`` are the
  same choice, but ``Bb`` and ``BB`` (genotypes), ``cTL`` and ``cTl`` (logic) or ``m`` and ``M``
  (two masses) are not. A case-only difference counts only between ordinary words, and never in a
  row that writes case-sensitive symbols.

This module is the audit's own: grading compares answers with ``choicebox._letters``, whose
tolerance serves a different purpose.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Final, TypeAlias

_SPACE: Final = re.compile(r"\s+")
_PUNCTUATION: Final = re.compile(r"[^\w\s]")

# Thousands groups must be well-formed (1,234,567 or 1 234 567, one separator throughout) and
# may not start with 0; anything else with a comma in it is a list ("0,1,2"), not a number.
_NUMERAL: Final = re.compile(
    r"(?P<sign>[-+]?) ?"
    r"(?:(?P<grouped>[1-9]\d{0,2}(?P<sep>[, ])\d{3}(?:(?P=sep)\d{3})*)|(?P<int>\d+))?"
    r"(?P<frac>\.\d*)?"
    r"(?P<exp>[eE][-+]?\d+)?"
)

# A question whose answer is a number of written digits: its choices differ in those digits.
_ROUNDING: Final = re.compile(
    r"\b(?:round(?:ed|ing)?|nearest|significant\s+(?:figures?|digits?)|decimal\s+places?"
    r"|sig\.?\s*figs?)\b",
    re.IGNORECASE,
)

_WORD: Final = re.compile(r"[^\W\d_]+")
# One-letter words that are prose in either case: the article and the pronoun.
_PROSE_LETTERS: Final = frozenset({"a", "A", "I"})

NumberKey: TypeAlias = tuple[int, str, int, bool]  # sign, digits, exponent, written as a decimal


def text_form(text: str, *, punctuation: bool = False) -> str:
    """``text`` in Unicode NFKC, whitespace collapsed, trimmed; without punctuation if asked.
    Case is kept: whether it matters is decided by the caller."""
    out = _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()
    if punctuation:
        out = _SPACE.sub(" ", _PUNCTUATION.sub(" ", out)).strip()
    return out


@functools.lru_cache(maxsize=1024)  # the configured phrases are compared with every choice
def bare_words(text: str) -> str:
    """``text`` as words alone: NFKC, case-folded, punctuation dropped, whitespace collapsed."""
    return text_form(text, punctuation=True).casefold()


def number_key(text: str) -> NumberKey | None:
    """The exact value of a well-formed numeral, and whether it is written as a decimal (with a
    point or an exponent); None when ``text`` is no such numeral.

    ``3.2`` and ``3.20``, or ``3200`` and ``3,200``, have the same key; ``1`` and ``1.0`` do not.
    """
    match = _NUMERAL.fullmatch(text)
    if match is None:
        return None
    whole = match["grouped"] or match["int"] or ""
    fraction = match["frac"] or ""
    if not (whole or fraction.strip(".")):
        return None  # a sign, a point or an exponent alone
    if match["int"] is not None and len(whole) > 1 and whole[0] == "0":
        return None  # "0400", "007": a code or a clock time, not a quantity
    if match["sep"]:
        whole = whole.replace(match["sep"], "")
    try:
        value = Decimal(f"{match['sign']}{whole or '0'}{fraction}{match['exp'] or ''}")
    except InvalidOperation:  # an exponent too large for any context
        return None
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # the numeral admits no inf or nan
    shown = "".join(map(str, digits)).lstrip("0")
    if not shown:
        return (0, "0", 0, bool(fraction or match["exp"]))
    stripped = shown.rstrip("0")
    return (sign, stripped, exponent + len(shown) - len(stripped), bool(fraction or match["exp"]))


def is_rounding_question(question: str | None) -> bool:
    """Whether the question asks for a rounded value or a number of digits."""
    return question is not None and _ROUNDING.search(question) is not None


def comparison_key(
    text: str, *, punctuation: bool = False, numeric: bool = True, exact_numbers: bool = False
) -> str:
    """A key equal for texts that say the same thing up to case, NFKC, spacing (and punctuation,
    if asked); numbers by value when ``numeric`` unless ``exact_numbers`` (a rounding question).

    The key ignores case; ``case_only_difference`` decides whether that was right for a pair.
    """
    form = text_form(text)
    if numeric and not exact_numbers:
        number = number_key(form)
        if number is not None:
            sign, digits, exponent, decimal = number
            return f"n:{sign}:{digits}:{exponent}:{int(decimal)}"
    if punctuation:
        form = text_form(form, punctuation=True)
    return "t:" + form.casefold()


def _shape(word: str) -> str:
    if word.islower():
        return "lower"
    if word.isupper():
        return "upper"
    if word[0].isupper() and word[1:].islower():
        return "title"
    return "mixed"


def case_sensitive_symbols(texts: Iterable[str]) -> bool:
    """Whether the texts write symbols whose case carries meaning: a word in mixed case that is
    not Title case (``Bb``, ``ddGg``, ``cTL``, ``SPx``, ``mRNA``), or a one-letter symbol used in
    both cases (``m`` and ``M``)."""
    singles: dict[str, set[str]] = {}
    for text in texts:
        for word in _WORD.findall(unicodedata.normalize("NFKC", text)):
            if len(word) > 1 and _shape(word) == "mixed":
                return True
            if len(word) == 1 and word not in _PROSE_LETTERS:
                singles.setdefault(word.casefold(), set()).add(word)
    return any(len(forms) > 1 for forms in singles.values())


def prose_case_difference(first: str, second: str) -> bool:
    """Whether two texts that are equal case-folded differ only in the case of ordinary words:
    every differing word has three letters or more, and the two forms are lower and Title case
    (``codes``/``Codes``), or, for words of four letters or more, either of them and UPPER case."""
    words, others = _WORD.findall(first), _WORD.findall(second)
    if len(words) != len(others):
        return True  # case folding changed the length (ß, ﬁ): the words are the same
    for word, other in zip(words, others, strict=True):
        if word == other:
            continue
        if min(len(word), len(other)) < 3:
            return False
        shapes = {_shape(word), _shape(other)}
        if "mixed" in shapes:
            return False
        if shapes != {"lower", "title"} and min(len(word), len(other)) < 4:
            return False
    return True
