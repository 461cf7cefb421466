"""An answer given as a value: is it one option's content (LABELLING.md rule 5)?

"Same value; units and format may differ": a response writes "-1.32 × 10¹³ C", "$24.00",
"0.23 M" or "planning, organising, leading and controlling" where the options read
"$-1.32$ $10^{13} \\mathrm{C}$", "$24", ".23 M" and "planning, organising, leading, controlling".
``norm_text`` equality (markup and blanks dropped) misses all four. Here a value is read as what it
says:

- a *quantity*: one number, exact (``Fraction``: "24.00" is "24", ".23" is "0.23", "2/6" and
  "\\frac{1}{3}" are "1/3", "1.5 × 10^3", "1.5e3", "1.5 10^{3}" and "1500" are one number), and its unit, the rest of the text normalised
  ("°F", "m^-1", "%"; an exponent is part of the unit, not a number);
- a *list*: items split at commas, semicolons and "and", each compared as a quantity or as text.

Two quantities are the same value when their numbers are equal and their units are ("$24" and
"24": "$" is markup to ``norm_text``), or the option gives no unit and the value a short one
("2041 meters" for "2041"). "13" is not "13.00000 amu": an output cut off at "m = 13." has given
no unit. Nothing is rounded: "0.227 M" is not "0.23 M", for a response
that computed 0.227 and stopped has not said 0.23.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Final, NamedTuple

from ._features import LATEX_FRACTION, norm_text, with_carets

__all__ = ["Quantity", "quantity", "same_value", "value_letters"]


class Quantity(NamedTuple):
    number: Fraction  # exact: "2/6" is "1/3", "0.5" is "1/2"
    unit: str  # ``norm_text`` of what is not the number: "°f", "m^-1", "$", "" for none


# LaTeX and Unicode that write the same number differently, made plain before numbers are read.
_PLAIN: Final = (
    ("−", "-"), ("–", "-"), ("\\times", "×"), ("\\cdot", "×"), ("·", "×"), ("\\,", ""), ("\\!", ""),
    ("{,}", ","), ("\\%", "%"), ("\\$", "$"), ("~", " "),
)  # fmt: skip
_WRAPPER: Final = re.compile(r"\\(?:mathrm|text|mathbf|operatorname|rm)\s*+\{([^{}]{0,200})\}")
# A number: a sign, digits (thousands grouped by commas, or not), a decimal part, and a power of
# ten written "× 10^3", "x10^{-3}", "* 10^3", "e-3", or (the options' own quirk) "1.81 $10^{10}$"
# with the sign of multiplication lost. Not after "^" or a letter or digit: "m^-1", "H2O".
_NUMBER: Final = re.compile(
    r"(?<![\^\w.,])(?<!\^[-+])(?P<sign>[-+]?)\$?"
    r"(?P<digits>\d{1,3}(?:,\d{3})++(?!\d)|\d++|(?=\.\d))(?P<fraction>\.\d++)?"
    r"(?:[ \t$]*+(?:[×x*][ \t$]*+)?10[ \t]*+\^[ \t]*+(?P<power>[-+]?\d{1,3})"
    r"|[eE](?P<epower>[-+]?\d{1,3})(?!\w))?"
    r"(?:[ \t]*+/[ \t]*+(?P<denominator>\d++(?:\.\d++)?)(?![\d.]))?"
)
# Every match of ``_NUMBER`` holds a digit; none starts inside a run of digits, commas or blanks
# that another attempt already read, so a scan is linear in the text.
# A unit the value may add to an option that gives the number alone: "2041 meters" for "2041"
# ("order 7 up to isomorphism: Z_7" is more than a unit).
_UNIT: Final = re.compile(r"[a-zµμΩω°%/^\-\d.]{1,12}")
# Items of a list: "3, 7", "planning, organising, leading and controlling" (a comma needs a blank
# after it: "22,950" is one number).
_ITEM_SPLIT: Final = re.compile(r"\s*+[,;]\s++(?:and\s++)?|\s*+;|\s++and\s++")
# An exponent in braces, "^{-1}", written "^-1", so that its sign is not read as a number's.
_BRACED_POWER: Final = re.compile(r"\^\s*+\{\s*+([-+]?\d{1,3})\s*+\}")
_HEDGE: Final = re.compile(
    r"(?:about|approximately|approx\.|roughly|around|nearly|~|≈)\s*+", re.IGNORECASE
)


def _plain(text: str) -> str:
    text = with_carets(text)  # "10¹³" is "10^13"
    for old, new in _PLAIN:
        if old in text:
            text = text.replace(old, new)
    if "\\" in text:
        text = LATEX_FRACTION.sub(r"\1/\2", _WRAPPER.sub(r"\1", text))
    if "^" in text:
        text = _BRACED_POWER.sub(r"^\1", text)
    return text


@functools.lru_cache(maxsize=65536)
def quantity(text: str) -> Quantity | None:
    """``text`` as one number and its unit, or ``None`` when it holds no number or several."""
    text = _plain(text.strip())
    found = None
    for match in _NUMBER.finditer(text):
        if found is not None:
            return None  # a second number: a list or a compound, not one quantity
        found = match
    if found is None:
        return None
    try:
        number = Fraction(
            Decimal(
                f"{found['sign']}{(found['digits'] or '0').replace(',', '')}{found['fraction'] or ''}"
            )
        )
        denominator = (
            Fraction(Decimal(found["denominator"])) if found["denominator"] else Fraction(1)
        )
    except InvalidOperation:  # pragma: no cover - the pattern only matches what Decimal reads
        return None
    if not denominator:
        return None  # "1/0" is no number
    power = found["power"] or found["epower"]
    if power is not None:
        number *= Fraction(10) ** int(power)
    number /= denominator
    unit = norm_text(_HEDGE.sub("", text[: found.start()]) + " " + text[found.end() :])
    return Quantity(number, unit)


def _same_item(value: str, option: str) -> bool:
    if norm_text(value) == norm_text(option):
        return True
    mine, theirs = quantity(value), quantity(option)
    return (
        mine is not None
        and theirs is not None
        and mine.number == theirs.number
        and (
            mine.unit == theirs.unit or (not theirs.unit and _UNIT.fullmatch(mine.unit) is not None)
        )
    )


@functools.lru_cache(maxsize=65536)
def same_value(value: str, option: str) -> bool:
    """Whether ``value`` states ``option``'s content: the same text, quantity or list of items
    (the module docstring)."""
    if _factorial(value) != _factorial(option):
        return False  # "there are 100!" does not state "100" (``norm_text`` drops the mark)
    if _same_item(value, option):
        return True
    items = [item for item in _ITEM_SPLIT.split(value.strip(" .")) if item]
    if len(items) < 2:
        return False
    theirs = [item for item in _ITEM_SPLIT.split(option.strip(" .")) if item]
    return len(items) == len(theirs) and all(map(_same_item, items, theirs))


def _factorial(text: str) -> bool:
    text = text.rstrip()
    return text.endswith("!") and text[-2:-1].isdigit()


def value_letters(value: str, options: Mapping[str, str]) -> list[str]:
    """The letters of the options whose content ``value`` states (``same_value``)."""
    return [letter for letter, text in options.items() if same_value(value, text)]
