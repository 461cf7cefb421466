"""An answer given as a value: is it one option's content (LABELLING.md rule 5)?

"Same value; units and format may differ": a response writes "-1.32 × 10¹³ C", "$24.00",
"0.23 M" or "planning, organising, leading and controlling" where the options read
"$-1.32$ $10^{13} \\mathrm{C}$", "$24", ".23 M" and "planning, organising, leading, controlling".
``norm_text`` equality (markup and blanks dropped) misses all four. Here a value is read as what it
says:

- a *quantity*: one number, exact (``Decimal``, a ``Fraction`` for a fraction: "24.00" is "24", ".23" is "0.23", "2/6" and
  "\\frac{1}{3}" are "1/3", "1.5 × 10^3", "1.5e3", "1.5 10^{3}" and "1500" are one number), and its unit, the rest of the text normalised
  ("°F", "m^-1", "%"; an exponent is part of the unit, not a number);
- a *list*: items split at commas, semicolons and "and", each compared as a quantity or as text
  ("Statement 1 is True, Statement 2 is False" is the option "True, False").

Two quantities are the same value when their numbers are equal and their units are ("$24" and
"24": "$" is markup to ``norm_text``), or the option gives no unit and the value adds one the
question names ("2041 meters" for "2041" when the question asks for meters: the option leaves
the question's unit out). "13" is not "13.00000 amu": an output cut off at "m = 13." has given no
unit. Nothing is rounded: "0.227 M" is not "0.23 M", for a response
that computed 0.227 and stopped has not said 0.23.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Final, NamedTuple

from ._features import LATEX_FRACTION, LATEX_WRAPPER, norm_text, with_carets

__all__ = ["Quantity", "numbered_option", "quantity", "same_value", "value_letters"]


class Quantity(NamedTuple):
    number: Decimal | Fraction  # exact either way ("2/6" is "1/3", "0.5" is "1/2"; they compare exactly)
    unit: str  # ``norm_text`` of what is not the number: "°f", "m^-1", "$", "" for none


# LaTeX and Unicode that write the same number differently, made plain before numbers are read.
_PLAIN: Final = (
    ("−", "-"), ("–", "-"), ("\\times", "×"), ("\\cdot", "×"), ("·", "×"), ("\\,", ""), ("\\!", ""),
    ("{,}", ","), ("\\%", "%"), ("\\$", "$"), ("~", " "),
)  # fmt: skip
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
# What names the statement an item of a list judges: "Statement 1 is True, Statement 2 is False"
# is the option "True, False".
_STATEMENT_LABEL: Final = re.compile(r"statement\s*+(?P<n>\d{1,2}|[ivx]{1,4})\s*+(?:is\b|[:\-–—])?\s*+", re.IGNORECASE)
# A word of a question that may be the unit a value adds to an option giving the number alone
# ("in meters": "2041 meters" for "2041"; "order 7 up to isomorphism: Z_7", "less than 5",
# "5 thousand" and "1.5 kJ" for a question in joules add more than its unit).
_UNIT_WORD: Final = re.compile(r"[^\W\d_]{2,12}|[°%$€£]")  # not "x" of "2x": a variable
# Items of a list: "3, 7", "planning, organising, leading and controlling" (a comma needs a blank
# after it: "22,950" is one number).
_ITEM_SPLIT: Final = re.compile(r"\s*+[,;]\s++(?:and\s++)?|\s*+;|\s++and\s++")
_DIGIT: Final = re.compile(r"\d")
# What a list of several items holds (``_ITEM_SPLIT`` splits at nothing else).
_LIST_MARKS: Final = (",", ";", "and")
# An exponent in braces, "^{-1}", written "^-1", so that its sign is not read as a number's.
_BRACED_POWER: Final = re.compile(r"\^\s*+\{\s*+([-+]?\d{1,3})\s*+\}")
_HEDGE: Final = re.compile(
    r"(?:about|approximately|approx\.|roughly|around|nearly|exactly|precisely|~|≈|"
    # ... in the languages of the answer labels: "etwa 19,6 m/s", "environ 392 J", "około 5 kg"
    r"etwa|ungefähr|rund|environ|aproximadamente|cerca[ \t]++de|circa|około|около|примерно|khoảng|sekitar|yaklaşık)\s*+",
    re.IGNORECASE,
)
_DECIMAL_COMMA: Final = re.compile(r",\d")
# A decimal comma for sure: one or two digits after it, not three (a thousands group, "2,450")
# and not a list (its items stand after a blank): "2,45 m/s²", "9,8".
_SURE_DECIMAL_COMMA: Final = re.compile(r",(\d{1,2})(?![\d,.])")
# After a number, a subscript digit makes it a numeral in another base: "0.1₂".
_SUBSCRIPT_DIGITS: Final = frozenset("₀₁₂₃₄₅₆₇₈₉")


def _plain(text: str) -> str:
    text = with_carets(text)  # "10¹³" is "10^13"
    for old, new in _PLAIN:
        if old in text:
            text = text.replace(old, new)
    if "\\" in text:
        text = LATEX_FRACTION.sub(r"\1/\2", LATEX_WRAPPER.sub(r"\1", text))
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
    if found is None or text[found.end() : found.end() + 1] in _SUBSCRIPT_DIGITS:
        return None  # "0.1₂" is a binary numeral, not 0.1
    fraction = found["fraction"] or ""
    end = found.end()
    if _DECIMAL_COMMA.match(text, end):
        comma = _SURE_DECIMAL_COMMA.match(text, end)
        if comma is None or fraction or "," in (found["digits"] or "") or found["power"] or found["epower"] or found["denominator"]:
            return None  # "3,7,9", "1,234,5": a list or a slip, not one number and a unit
        fraction, end = f".{comma[1]}", comma.end()  # "2,45 m/s²" is 2.45 m/s²
    try:
        decimal = Decimal(f"{found['sign']}{(found['digits'] or '0').replace(',', '')}{fraction}")
        power = found["power"] or found["epower"]
        if power is not None:
            decimal = decimal.scaleb(int(power))
        number: Decimal | Fraction = decimal
        if found["denominator"]:
            denominator = Decimal(found["denominator"])
            if not denominator:
                return None  # "1/0" is no number
            number = Fraction(decimal) / Fraction(denominator)  # exact: "2/6" is "1/3"
    except InvalidOperation:  # pragma: no cover - the pattern only matches what Decimal reads
        return None
    before = norm_text(_HEDGE.sub("", text[: found.start()]))
    unit = norm_text(text[end:])
    if before:
        unit = f"{before} {unit}"  # a word before the number: no unit an option may leave out
    return Quantity(number, unit)


class _Item(NamedTuple):
    """One value as compared: its normalised text, and the text its quantity is read from (read
    only when the other side has one: most options are never read as numbers)."""

    text: str
    raw: str

    @property
    def quantity(self) -> Quantity | None:
        # Most options hold no digit: no number to read, at the cost of one C-speed scan.
        return quantity(self.raw) if _DIGIT.search(self.raw) else None


class _Facts(NamedTuple):
    """A text as a value: itself as one item, and its items when it lists several."""

    whole: _Item
    items: tuple[_Item, ...]  # empty unless it lists two or more
    factorial: bool


@functools.lru_cache(maxsize=65536)
def _item(text: str) -> _Item:
    label = _STATEMENT_LABEL.match(text)
    if label is not None:
        text = text[label.end() :]  # "Statement 1 is True" gives "True"
    return _Item(norm_text(text), text)


_ROMAN: Final = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6}


def _in_statement_order(items: list[str]) -> bool:
    """The items that name their statement name them in order: "Statement 2 is False, Statement
    1 is True" judges statement 1 second, and is compared with no option's list."""
    numbers = []
    for item in items:
        label = _STATEMENT_LABEL.match(item)
        if label is not None:
            numeral = label["n"].lower()
            numbers.append(int(numeral) if numeral.isdigit() else _ROMAN.get(numeral, 0))
    return numbers == list(range(1, len(numbers) + 1)) if numbers else True


def _factorial(text: str) -> bool:
    stripped = text.rstrip()
    return stripped.endswith("!") and stripped[-2:-1].isdigit()


@functools.lru_cache(maxsize=65536)
def _facts(text: str) -> _Facts:
    factorial = _factorial(text)
    items: tuple[_Item, ...] = ()
    if any(map(text.__contains__, _LIST_MARKS)):
        split = [item for item in _ITEM_SPLIT.split(text.strip(" .")) if item]
        if len(split) >= 2 and _in_statement_order(split):
            items = tuple(map(_item, split))
    return _Facts(_item(text), items, factorial)


# A unit spelt out, and its symbol as ``norm_text`` writes it: "2 ohms" is "2 Ω", "0.5 mol/L" is
# "0.5 M" ("M" and "m" are one to ``norm_text``: a question's options never mix them).
_UNIT_SYMBOLS: Final = {
    **dict.fromkeys(("ohm", "ohms"), "ω"), **dict.fromkeys(("kiloohm", "kiloohms", "kohm", "kohms"), "kω"),
    **dict.fromkeys(("volt", "volts"), "v"), **dict.fromkeys(("amp", "amps", "ampere", "amperes"), "a"),
    **dict.fromkeys(("watt", "watts"), "w"), **dict.fromkeys(("joule", "joules"), "j"),
    **dict.fromkeys(("newton", "newtons"), "n"), "hertz": "hz",
    **dict.fromkeys(("sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("meter", "meters", "metre", "metres"), "m"),
    **dict.fromkeys(("gram", "grams"), "g"), **dict.fromkeys(("kilogram", "kilograms"), "kg"),
    **dict.fromkeys(("liter", "liters", "litre", "litres"), "l"),
    **dict.fromkeys(("mol/l", "moll^-1", "mol·l^-1", "moldm^-3", "molar"), "m"),
    **dict.fromkeys(("degreescelsius", "degreecelsius"), "°c"), "percent": "%",
}  # fmt: skip


def _same_item(value: _Item, option: _Item, units: frozenset[str]) -> bool:
    if value.text == option.text:
        return True
    mine = value.quantity
    if mine is None:
        return False
    theirs = option.quantity
    return theirs is not None and (
        (
            mine.number == theirs.number
            and (
                mine.unit == theirs.unit
                or _UNIT_SYMBOLS.get(mine.unit, mine.unit) == _UNIT_SYMBOLS.get(theirs.unit, theirs.unit)
                or (not theirs.unit and mine.unit in units)
            )
        )
        or _same_scaled(mine, theirs)
    )


# SI prefixes that stay unambiguous once units are casefolded ("m" is milli and mega, "g" giga and
# grams: neither is read as a prefix), and the base units they scale.
_PREFIXES: Final = {"k": 3, "c": -2, "µ": -6, "μ": -6, "u": -6, "n": -9}
_BASE_UNITS: Final = frozenset({"j", "w", "v", "a", "g", "m", "s", "n", "pa", "hz", "l", "mol", "ω", "ev"})


def _scaled(quantity: Quantity) -> tuple[Decimal | Fraction, str]:
    """The quantity in its base unit: 3.46 kJ is 3460 J ("3.46 × 10³ J" states "3.46 kJ")."""
    unit = _UNIT_SYMBOLS.get(quantity.unit, quantity.unit)
    power = _PREFIXES.get(unit[:1])
    if power is not None and unit[1:] in _BASE_UNITS:
        scale = Decimal(10) ** power
        number: Decimal | Fraction = (
            quantity.number * Fraction(scale) if isinstance(quantity.number, Fraction) else quantity.number * scale
        )
        return number, unit[1:]
    return quantity.number, unit


def _same_scaled(mine: Quantity, theirs: Quantity) -> bool:
    if (mine.unit, theirs.unit) in (("%", ""), ("", "%")):
        # a fraction for a percentage, or the other way: 0.3087 is 30.87% (rule 5: format differs)
        fraction, percent = (mine, theirs) if theirs.unit == "%" else (theirs, mine)
        # (a decimal only: "1/2" is no way of writing "50%" that a response uses)
        return isinstance(fraction.number, Decimal) and fraction.number * 100 == percent.number
    if not mine.unit or not theirs.unit or mine.unit == theirs.unit:
        return False
    (a, unit_a), (b, unit_b) = _scaled(mine), _scaled(theirs)
    return unit_a == unit_b and unit_a in _BASE_UNITS and a == b


def _states(value: _Facts, option: _Facts, units: frozenset[str]) -> bool:
    if value.factorial != option.factorial:
        return False  # "there are 100!" does not state "100" (``norm_text`` drops the mark)
    if _same_item(value.whole, option.whole, units):
        return True
    mine, theirs = value.items, option.items
    return bool(mine) and len(mine) == len(theirs) and all(_same_item(a, b, units) for a, b in zip(mine, theirs, strict=True))


@functools.lru_cache(maxsize=4096)
def question_units(question: str) -> frozenset[str]:
    """The words of ``question`` a value may add as its unit to an option that gives the number
    alone: "Find the maximum height in meters." lets "2041 meters" state "2041"."""
    return frozenset(_UNIT_WORD.findall(question.casefold()))


def same_value(value: str, option: str, question: str = "") -> bool:
    """Whether ``value`` states ``option``'s content: the same text, quantity or list of items
    (the module docstring); ``question`` gives the units an option may leave out."""
    return _states(_facts(value), _facts(option), question_units(question))


# A remark in brackets closing a value: "S phase (the synthesis phase of interphase)".
_TRAILING_REMARK: Final = re.compile(r"[ \t]*+\([^()\n]{3,120}\)[ \t.]*+$")
_ARTICLE: Final = re.compile(r"(?i:the|an?)[ \t]++")
_WORD: Final = re.compile(r"\w{2,}")
_NAMELESS_DIGIT: Final = re.compile(r"(?<![^\W\d_])\d")
# Words that make a remark doubt, deny, hedge or withdraw what it follows: "(or G1 phase)",
# "(probably not)", "(just kidding)", "(if the question meant ...)", "(wrongly)".
_DOUBTING: Final = re.compile(
    r"(?i:\b(?:or|not|no|nor|never|maybe|perhaps|possibly|probably|likely|unlikely|if|unless|but|though|"
    r"although|except|kidding|joking|wrong\w*|incorrect\w*|false|mistake\w*|unsure|doubt\w*|either|"
    r"else|otherwise|instead|rather|wait|actually|hmm)\b|n't\b|\?)"
)


def _remarked(value: str, options: Mapping[str, str]) -> list[str]:
    """"S phase (the synthesis phase of interphase)": one option's text, then a remark on it in
    brackets that neither doubts it nor uses another option's words ("S phase (or G2 phase)",
    "(probably not)", "(just kidding)", "(the one G1 precedes)"); the text holds no number (a
    number's remark may be its unit, "12 (in newtons)": numbers are compared as values; the
    digit of a name, "G2 phase", is none)."""
    remark = _TRAILING_REMARK.search(value)
    if remark is None or remark.start() == 0 or _DOUBTING.search(remark.group()):
        return []
    bare = _without_article(value[: remark.start()].strip())
    if _NAMELESS_DIGIT.search(bare):
        return []  # a number, compared as a value (a digit in a name, "G2 phase", is no number)
    named = [letter for letter, text in options.items() if norm_text(text) == norm_text(bare)]
    if len(named) != 1:
        return []
    own = set(_WORD.findall(options[named[0]].casefold()))
    others = {w for letter, text in options.items() if letter != named[0] for w in _WORD.findall(text.casefold())}
    return [] if set(_WORD.findall(remark.group().casefold())) & (others - own) else named


# Cyrillic and Greek capitals drawn like Latin ones: "В) Закон Кулона" typed with a Cyrillic В.
_LOOKALIKES: Final = dict(zip("АВСЕНКМОРТХΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABCEHKMOPTXABEZHIKMNOPTYX", strict=True))
_MARKED_LOOKALIKE: Final = re.compile(r"\(?([АВСЕНКМОРТХΑΒΕΖΗΙΚΜΝΟΡΤΥΧ])[.):][ \t]++(\S.*)", re.DOTALL)


def _disguised_citation(value: str, options: Mapping[str, str]) -> list[str]:
    """"В) Закон Кулона": a Cyrillic or Greek capital drawn like the Latin letter of the option
    whose exact text follows it. Both must agree: in a Cyrillic listing "В" is the third option
    (А, Б, В), so a lookalike alone, or before another option's text, names none."""
    marked = None if value.isascii() else _MARKED_LOOKALIKE.fullmatch(value.strip())
    if marked is None:
        return []
    letter = _LOOKALIKES[marked.group(1)]
    own = options.get(letter)
    return [letter] if own is not None and norm_text(own) == norm_text(marked.group(2)) else []


def _without_article(text: str) -> str:
    """``text`` without the article that opens it: "the Golgi apparatus" is "Golgi apparatus"."""
    article = _ARTICLE.match(text)
    return text if article is None else text[article.end() :]


def value_letters(value: str, options: Mapping[str, str], question: str = "") -> list[str]:
    """The letters of the options whose content ``value`` states (``same_value``). An option
    whose text the value is, once normalised, wins over those it states as a value: "5 m" is
    option "5 m", not also option "5"; so does one whose text the value is after its article
    ("the Golgi apparatus" is option "Golgi apparatus")."""
    wanted, factorial = norm_text(value), _factorial(value)
    exact = [
        letter
        for letter, text in options.items()
        if norm_text(text) == wanted and _factorial(text) == factorial
    ]
    if len(exact) == 1:
        # ... unless another option gives the same value in another form ("1/16" and "0.0625"):
        # then the value names both (rule 5)
        facts = _facts(options[exact[0]])
        same = [letter for letter, text in options.items() if letter != exact[0] and _states(facts, _facts(text), frozenset())]
        return exact + same
    if exact:
        return exact
    bare = _without_article(value)
    if bare is not value:
        wanted_bare = norm_text(bare)
        exact = [letter for letter, text in options.items() if norm_text(text) == wanted_bare]
        if exact:
            return exact
    remarked = _remarked(value, options)
    if remarked:
        return remarked
    disguised = _disguised_citation(value, options)
    if disguised:
        return disguised
    facts = _facts(value)
    if facts.whole.quantity is None and not facts.items and facts.whole.text == wanted:
        return []  # no number, no list, no statement label: the text compared was all there is
    units = question_units(question)
    return [letter for letter, text in options.items() if _states(facts, _facts(text), units)]


# An option named by its place in the list: "the answer is option number 2: the buyer ...",
# "the final answer is option 3: 30", "the correct option is number 3, i.e. 0.2". The word for an
# option (or "number") stands before the number, in the statement or in the value itself.
_NUMBERED_BEFORE: Final = re.compile(r"(?:\b(?:option|choice|alternative)[ \t]*+(?:number|no\.|#)?|\bnumber)[ \t]*+$", re.I)
_NUMBERED_VALUE: Final = re.compile(
    r"(?:(?:option|choice|alternative)[ \t]*+)?(?:(?:number|no\.|#)[ \t]*+)?(?P<n>[1-9]\d?)(?![\d.,/^]\d|[\d%])"
    r"(?:[ \t]*+(?:[:)\-–—]|,[ \t]*+(?:i\.e\.|that[ \t]++is|namely)?)[ \t]*+(?P<rest>.*))?[ \t.]*+",
    re.I | re.S,
)


def numbered_option(before: str, value: str, options: Mapping[str, str], question: str = "") -> list[str] | None:
    """The letter of the option that ``value`` names by its number (``before`` is the statement's
    text before the value), as a list of one; ``None`` when the value names no option by number;
    an empty list when it names none for sure: an option's content is that number at another
    place ("option 3" with "3" the second option's text), the number is past the last option, or
    the text after it states another option's content."""
    numbered = _NUMBERED_VALUE.fullmatch(value)
    if numbered is None or (_NUMBERED_BEFORE.search(before) is None and numbered.start("n") == 0):
        return None
    letters = list(options)
    n = int(numbered["n"])
    if n > len(letters):
        return []
    letter = letters[n - 1]
    if any(norm_text(text) == numbered["n"] and other != letter for other, text in options.items()):
        return []  # the number may be that option's content
    rest = (numbered["rest"] or "").strip()
    stated = value_letters(rest, options, question) if rest else []
    if stated and stated != [letter]:
        return []
    return [letter]
