"""Letters and option texts: localising and folding letters, finding a listed run of letters,
matching an option by its text, and normalising option texts and numbers.

Everything here is shared by the rule steps and the public scoring primitives, so the same text
is read the same way wherever it is read. All functions are linear in their input and never raise.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Collection, Mapping
from decimal import Decimal, InvalidOperation
from typing import Final

__all__ = [
    "OptionTexts",
    "ambiguous_letters",
    "canonical_number",
    "fold_letters",
    "localise_letters",
    "match_option_text",
    "normalise_option_text",
    "normalised_option",
]

# Letters of other scripts that answer formats use for A-D (as NeMo Gym's reference maps them).
_LOCAL_LETTERS: Final = {
    "أ": "A", "ب": "B", "ج": "C", "د": "D",  # Arabic
    "অ": "A", "ব": "B", "ড": "C", "ঢ": "D",  # Bengali
}  # fmt: skip
_LOCAL_CLASS: Final = "".join(_LOCAL_LETTERS)
# Only a standalone mapped character is a letter: inside a word (الجواب holds ج and ب) it is not.
_LOCAL_RE: Final = re.compile(rf"(?<!\w)[{_LOCAL_CLASS}](?!\w)")
_LOCAL_ANY: Final = re.compile(f"[{_LOCAL_CLASS}]")
_FULLWIDTH_RE: Final = re.compile("[\uff01-\uff5e]")


def localise_letters(text: str) -> str:
    """Fullwidth forms to ASCII, and standalone Arabic/Bengali option letters to Latin ones."""
    if _FULLWIDTH_RE.search(text):
        text = _FULLWIDTH_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if _LOCAL_ANY.search(text):
        text = _LOCAL_RE.sub(lambda m: _LOCAL_LETTERS[m.group()], text)
    return text


# End-of-text tokens some models write out ("Final answer: I<EOS_TOKEN>", harmony's "Answer: B<|return|>"):
# blanks to a reader.
_SPECIAL_TOKEN_RE: Final = re.compile(
    r"<(?:EOS_TOKEN|eos|/s|s|\|(?:endoftext|im_end|im_start|eot_id|end_of_text|end|return|call|"
    # a chat template's turn markers leaked into the output (Llama 3's headers, Gemma's turns)
    r"start_header_id|end_header_id|eom_id|begin_of_text|user|assistant|system)\|)>"
    r"|</?(?:start|end)_of_turn>|\[/?INST\]",
    re.IGNORECASE,
)
_FULLWIDTH_TABLE: Final = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


def fold_letters(text: str) -> str:
    """``text`` as answer finders read it, of the same length so positions stay valid.

    End-of-text tokens become blanks, fullwidth forms ASCII, and standalone Arabic/Bengali option
    letters Latin ones. Returns ``text`` itself when nothing changes.
    """
    folded = text
    if ("<" in folded or "INST]" in folded) and _SPECIAL_TOKEN_RE.search(folded):
        folded = _SPECIAL_TOKEN_RE.sub(lambda m: " " * len(m.group()), folded)
    if not folded.isascii():
        # Each rewrite only when its characters occur: ``translate`` looks up every character.
        if _FULLWIDTH_RE.search(folded):
            folded = folded.translate(_FULLWIDTH_TABLE)
        if _LOCAL_ANY.search(folded):
            folded = _LOCAL_RE.sub(lambda m: _LOCAL_LETTERS[m.group()], folded)
    return folded


_PUNCT_RE: Final = re.compile(r"[^\w\s]")
_SPACE_RE: Final = re.compile(r"\s+")
# Possessive: a run of digits is taken whole, so "1" * 10_000 + "x" fails in one pass.
_NUMBER_RE: Final = re.compile(r"[-+]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?")
# Beyond these a "number" is compared as text: exact decimal arithmetic on it would be costly.
MAX_NUMBER_CHARS: Final = 400
MAX_EXPONENT: Final = 400


def canonical_number(candidate: str) -> str | None:
    """The canonical text of a decimal number literal, or ``None`` when it is none or too large.

    Exact (``Decimal``, never ``float``: no overflow, no rounding), for any Unicode decimal
    digits; integral values print as integers (``12.0`` and ``1.2e1`` are ``12``), others as
    plain decimals.
    """
    if len(candidate) > MAX_NUMBER_CHARS or _NUMBER_RE.fullmatch(candidate) is None:
        return None
    _mantissa, marker, exponent = candidate.lower().partition("e")
    if marker and abs(int(exponent)) > MAX_EXPONENT:
        return None
    try:
        value = Decimal(candidate)
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimal literals
        return None
    if value == value.to_integral_value():
        return str(int(value))
    # ``format(..., "f")`` is exact (``normalize`` would round to the context's 28 digits); a
    # value that is not integral has a fractional part, so only its trailing zeros go.
    return format(value, "f").rstrip("0")


def normalise_option_text(text: str, *, punctuation: bool = False, numeric: bool = False) -> str:
    """Case-folded, whitespace-collapsed text; optionally without punctuation, numbers canonical.

    ``numeric`` makes ``"12.0"``, ``"12"`` and ``"+12"`` compare equal, and leaves ``"120"`` apart.
    """
    # Short texts (option texts, box contents, answer payloads) recur across steps and calls.
    if len(text) <= 256:
        return _normalised(text, punctuation, numeric)
    return _normalise(text, punctuation, numeric)


@functools.lru_cache(maxsize=2048)
def _normalised(text: str, punctuation: bool, numeric: bool) -> str:
    return _normalise(text, punctuation, numeric)


def _normalise(text: str, punctuation: bool, numeric: bool) -> str:
    out = _SPACE_RE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()
    if numeric:
        canonical = canonical_number(out.replace(",", "").replace(" ", ""))
        if canonical is not None:
            return canonical
    if punctuation:
        out = _SPACE_RE.sub(" ", _PUNCT_RE.sub(" ", out)).strip()
    return out


# --- ambiguity -----------------------------------------------------------------------------------

_STANDALONE_RE: Final = re.compile(r"(?<![A-Za-z0-9])([A-Za-z])(?![A-Za-z0-9])")
# Brackets and markdown may wrap each listed letter: "(A) or (B)", "$A$/$B$", "A) B) C)". An
# opening bracket alone does not separate: "B (C is wrong)" names B.
# Possessive runs: the groups' character sets are disjoint from what follows them, so nothing is
# given back and a gap of 20,000 "$" is one pass, not a quadratic search.
_SEPARATOR_RE: Final = re.compile(
    r"(?P<close>[)\]$*]*+)\s*+"
    r"(?P<sep>(?:[/|&,;]|\bor\b|\band\b|\bvs\.?|\bversus\b)\s*+(?:\b(?:or|and)\b\s*+)?)?"
    r"(?P<open>[(\[$*]*+)",
    re.IGNORECASE,
)


def _separates(text: str, start: int, end: int) -> bool:
    match = _SEPARATOR_RE.fullmatch(text, start, end)
    return match is not None and (not match["open"] or bool(match["close"] or match["sep"]))


def ambiguous_letters(payload: str, allowed: Collection[str]) -> tuple[str, ...]:
    """The distinct letters of a choice list such as ``A/B``, ``A or B``, ``B, C and D``.

    Two standalone allowed letters that differ and stand next to each other with only a separator
    between them make a list. Returns the letters in order, or ``()`` when there is no list.
    """
    hits = [
        (m.start(), m.end(), m.group(1).upper())
        for m in _STANDALONE_RE.finditer(payload)
        if m.group(1).isupper() and m.group(1) in allowed
    ]
    listed: list[str] = []
    for (_, end, a), (start, _, b) in itertools.pairwise(hits):
        if a != b and _separates(payload, end, start):
            for letter in (a, b):
                if letter not in listed:
                    listed.append(letter)
    return tuple(listed)


class OptionTexts(dict[str, str]):
    """A sample's options (letter to text) that remember each text normalised.

    An output is compared with the options once per box, answer line or payload it holds, and
    ``normalise_option_text`` caches only short texts: a long option was normalised again for
    every box (an 8,000-character option and 546 ``\\boxed{A: red}`` in a 16 KiB request: 2 s).
    A grading context holds its options as one of these, so each text is normalised at most
    once per output and way of normalising. The memo is keyed by the text itself, so a changed
    option is never read stale; it lives as long as the mapping (one output's grading).
    """

    __slots__ = ("_normalised",)

    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self._normalised: dict[tuple[str, bool, bool], str] = {}

    def normalised(self, text: str, punctuation: bool, numeric: bool) -> str:
        """``normalise_option_text(text, ...)``, computed once for this sample."""
        key = (text, punctuation, numeric)
        out = self._normalised.get(key)
        if out is None:
            out = self._normalised[key] = normalise_option_text(
                text, punctuation=punctuation, numeric=numeric
            )
        return out


def normalised_option(
    options: Mapping[str, str], letter: str, *, punctuation: bool = False, numeric: bool = False
) -> str:
    """Option ``letter``'s text through ``normalise_option_text``, once per sample when
    ``options`` is an ``OptionTexts``."""
    text = options[letter]
    if isinstance(options, OptionTexts):
        return options.normalised(text, punctuation, numeric)
    return normalise_option_text(text, punctuation=punctuation, numeric=numeric)


def match_option_text(
    text: str,
    options: Mapping[str, str],
    *,
    punctuation: bool = True,
    numeric: bool = True,
) -> str | None:
    """The one letter whose option text equals ``text`` after normalisation, else ``None``.

    Two options with the same normalised text make the answer ambiguous, so neither is returned.
    With ``options`` an ``OptionTexts``, each option is normalised once however often it is asked.
    """
    wanted = normalise_option_text(text, punctuation=punctuation, numeric=numeric)
    if not wanted:
        return None
    hits = []
    size = len(wanted)
    for letter, option in options.items():
        # An ASCII option without digits only shrinks when normalised (blanks and punctuation
        # collapse, case folds in place): one shorter than the wanted text cannot equal it, and
        # is not normalised at all. Most options of a long output are skipped this way.
        if len(option) < size and option.isascii() and _DIGIT_RE.search(option) is None:
            continue
        if normalised_option(options, letter, punctuation=punctuation, numeric=numeric) == wanted:
            hits.append(letter)
    return hits[0] if len(hits) == 1 else None


_DIGIT_RE: Final = re.compile(r"\d")
