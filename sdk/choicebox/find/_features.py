"""What a sample's question and options say about how its answers read, computed once per sample.

The finders and the resolution policy ask the same questions of every output graded against a
sample: what each option's text is once normalised, which words the options use, whether the
question asks for several things at once (so one letter per part is no single answer), whether
"I" may be a roman numeral. The answers depend only on the sample, so they are computed lazily,
on first use, and kept per sample: an RL run grades thousands of rollouts of each question and
pays for them once, and an output that never asks (most of them) never pays at all.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from typing import Final

from ._citation import OptionWords, option_words

__all__ = ["SampleFeatures", "features_of", "norm_text", "words_of"]

# --- normalised text and words -------------------------------------------------------------------

LATEX_FRACTION: Final = re.compile(r"\\[dt]?frac\s*+\{([^{}]{0,200})\}\s*+\{([^{}]{0,200})\}")
# A command that only sets its argument in a font: "\mathrm{kg}", "\rm{kg}" are "kg".
LATEX_WRAPPER: Final = re.compile(r"\\(?:mathrm|text|mathbf|operatorname|rm)\s*+\{([^{}]{0,400})\}")
_NOISE: Final = re.compile(r"[\s$*_`~{}\\]++")


# A run of superscript characters, an exponent: "²", "⁻¹", "¹⁰".
_SUPERSCRIPT: Final = re.compile("[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_FROM_SUPERSCRIPT: Final = str.maketrans("⁺⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "+-0123456789")


def _caret(exponent: re.Match[str]) -> str:
    return "^" + exponent.group().translate(_FROM_SUPERSCRIPT)


def with_carets(text: str) -> str:
    """``text`` with its superscript exponents written after a caret: "10⁻¹" is "10^-1"."""
    if text.isascii() or _SUPERSCRIPT.search(text) is None:
        return text
    return _SUPERSCRIPT.sub(_caret, text)


@functools.lru_cache(maxsize=65536)
def norm_text(text: str) -> str:
    """Text as compared with an option's: NFKC, case-folded, LaTeX fractions and wrappers
    unwrapped, superscripts written as exponents, blanks and markup dropped (``605 °F`` and
    ``605°F``, ``\\frac{1}{2}`` and ``1/2``, ``mm²`` and ``mm^2`` compare equal)."""
    text = with_carets(text)  # "mm²" is "mm^2" (NFKC would make it "mm2")
    folded = unicodedata.normalize("NFKC", text).casefold()
    if "\\" in folded:
        folded = LATEX_FRACTION.sub(r"\1/\2", folded)
        folded = LATEX_WRAPPER.sub(r"\1", folded)
    return _NOISE.sub("", folded).strip(".,;:!?()[]")


_WORD: Final = re.compile(r"[a-z]{3,}|\d+(?:\.\d+)?")


@functools.lru_cache(maxsize=65536)
def words_of(text: str) -> frozenset[str]:
    """The content words of a text (3+ letters, or numbers), lowercased."""
    return frozenset(_WORD.findall(text.lower()))


# --- multi-part questions ------------------------------------------------------------------------

# The stem asks for several things: "(a) ... (b)", "a) ... b)", "(i) ... (ii)", "Statement 1 |".
# Each pattern with literals every match of it holds: a stem without them is not searched (a
# search without a literal prefix costs about 10 us on a 2 KB question).
_STEM_PARTS: Final = (
    (("(b)",), re.compile(r"\(a\)[\s\S]*?\(b\)|(?:^|[\s.?])\(b\)\s")),
    (("a)", "b)"), re.compile(r"(?:^|[\s.;:,?])a\)[\s\S]*?(?:^|[\s.;:,?])b\)")),
    (("(i)", "(ii)"), re.compile(r"\(i\)[\s\S]*?\(ii\)")),
    (("Statement", "|"), re.compile(r"Statement\s*+1\s*+\|[\s\S]*?Statement\s*+2\s*+\|")),
)
_COMPOUND_SPLIT: Final = re.compile(r",\s|;\s|\.\s|\s+and\s+")
_LABELLED_PARTS: Final = re.compile(r"(?:^|[,;]\s*+)(?:\(?[a-e]\)|[A-Za-z][\w ]{0,30}:)\s")
_DIGIT: Final = re.compile(r"\d")
_ALPHA: Final = re.compile(r"[A-Za-z]")
_TUPLE: Final = re.compile(r"\s*+\$?\s*+[\[(][^\[\]()]*+[\])]\s*+\$?\s*+")
_LIST_SPLIT: Final = re.compile(r",\s|;\s")
_ROMAN_CONTEXT: Final = re.compile(r"\(II\)|\bII\.|\bIII\b|\bII\s+(?:and|only)|\bI\s+and\s+II\b")
# Every alternative of _ROMAN_CONTEXT holds it: most questions are ruled out at memchr speed.
_ROMAN_LITERAL: Final = "II"
_LONG_WORD: Final = re.compile(r"[a-z]{5,}")


# Every way of listing several values below needs one of these (a split point of
# _COMPOUND_SPLIT or _LIST_SPLIT, or a second start of _LABELLED_PARTS).
_LIST_MARKS: Final = (",", ";", ".", "and")


@functools.lru_cache(maxsize=65536)
def _is_compound(option: str) -> bool:
    """An option that gives several values ("5 H, 160 uF", "a) 2 bits, b) 1 bit", "False, True")."""
    if not any(map(option.__contains__, _LIST_MARKS)):
        return False  # one part: nothing below can find two
    if _TUPLE.fullmatch(option):
        return False  # "[0, 2]", "(1, 7)": one value
    parts = [part for part in _COMPOUND_SPLIT.split(option) if part.strip()]
    numbered = sum(1 for part in parts if _DIGIT.search(part))
    if len(parts) >= 2 and numbered and numbered >= len(parts) - 1:
        return True
    if len(_LABELLED_PARTS.findall(option)) >= 2:
        return True
    short = [part for part in _LIST_SPLIT.split(option) if part.strip()]
    return len(short) >= 2 and all(len(p.split()) <= 2 and _ALPHA.search(p) for p in short)


def _mostly_compound(values: list[str]) -> bool:
    """At least 60% of ``values`` are compound; stops as soon as the answer is known."""
    needed = 0.6 * len(values)
    compound = simple = 0
    for value in values:
        if _is_compound(value):
            compound += 1
            if compound >= needed:
                return True
        else:
            simple += 1
            if len(values) - simple < needed:
                return False
    return compound >= needed


class SampleFeatures:
    """Lazily computed facts about one sample's question and options (see the module docstring)."""

    __slots__ = (
        "_all_words",
        "_citations",
        "_multipart",
        "_normalised",
        "_option_union",
        "_option_words",
        "_question_words",
        "_roman",
        "options",
        "question",
    )

    def __init__(self, options: Mapping[str, str], question: str) -> None:
        self.options = options
        self.question = question
        self._normalised: dict[str, str] | None = None
        self._option_words: dict[str, frozenset[str]] | None = None
        self._all_words: frozenset[str] | None = None
        self._option_union: frozenset[str] | None = None
        self._question_words: frozenset[str] | None = None
        self._multipart: bool | None = None
        self._roman: bool | None = None
        self._citations: OptionWords | None = None

    def _norm(self, letter: str, text: str) -> str:
        """Option ``letter``'s text through ``norm_text``, computed the first time it is asked for."""
        known = self._normalised
        if known is None:
            known = self._normalised = {}
        own = known.get(letter)
        if own is None:
            own = known[letter] = norm_text(text)
        return own

    def citations(self) -> OptionWords:
        """Each option's text as the words a citation repeats (``choicebox.find._citation``)."""
        if self._citations is None:
            self._citations = option_words(tuple(self.options.items()))
        return self._citations

    def option_words(self) -> dict[str, frozenset[str]]:
        if self._option_words is None:
            self._option_words = {letter: words_of(t) for letter, t in self.options.items()}
        return self._option_words

    def option_union(self) -> frozenset[str]:
        """The words of every option."""
        if self._option_union is None:
            self._option_union = frozenset().union(*self.option_words().values())
        return self._option_union

    def all_words(self) -> frozenset[str]:
        """The words of the question and of every option: what text about this question uses."""
        if self._all_words is None:
            self._all_words = self.option_union() | words_of(self.question)
        return self._all_words

    def echoes(self, text: str, letter: str) -> bool:
        """``text`` repeats option ``letter``'s text: half its words are the option's, or, for a
        text without words, it is the option's text."""
        own = self.options.get(letter)
        if own is None:
            return False
        words = words_of(text)
        if not words:
            return norm_text(text) == norm_text(own)
        return len(words & self.option_words()[letter]) >= 0.5 * len(words)

    def foreign(self, text: str, letter: str) -> bool:
        """Option-like ``text`` after letter ``letter`` that belongs to no option of this sample
        ("B. They possess an exoskeleton" where no option says so): another question's option."""
        words = words_of(text)
        if len(words) < 3:
            return False
        own = self.option_words().get(letter)
        if own is not None and len(words & own) >= 0.3 * len(words):
            return False
        return len(words & self.option_union()) < 0.2 * len(words)

    def question_words(self) -> frozenset[str]:
        """The question's long words (5+ letters): how a section of text is matched to it."""
        if self._question_words is None:
            self._question_words = frozenset(_LONG_WORD.findall(self.question.lower()))
        return self._question_words

    def multipart(self) -> bool:
        """The question asks for several things: most options are compound, or the stem has parts."""
        if self._multipart is None:
            values = list(self.options.values())
            if len(values) >= 3 and _mostly_compound(values):
                self._multipart = True
            else:
                stem = self.question.split("\nA:")[0]
                self._multipart = any(
                    all(map(stem.__contains__, literals)) and pattern.search(stem) is not None
                    for literals, pattern in _STEM_PARTS
                )
        return self._multipart

    def roman(self) -> bool:
        """"I" is an option letter and the question numbers statements I, II, III."""
        if self._roman is None:
            self._roman = (
                "I" in self.options
                and _ROMAN_LITERAL in self.question
                and _ROMAN_CONTEXT.search(self.question) is not None
            )
        return self._roman

    def matching_letters(self, value: str) -> list[str]:
        """The letters whose option text equals ``value`` once both are normalised."""
        wanted = norm_text(value)
        if not wanted:
            return []
        size = len(wanted)
        # On ASCII text ``norm_text`` only drops characters, so an ASCII option shorter than the
        # value cannot equal it: most options of most values are ruled out without normalising
        # them (a first line such as "Let's think step by step." is asked about on every output).
        return [
            letter
            for letter, text in self.options.items()
            if not (len(text) < size and text.isascii()) and self._norm(letter, text) == wanted
        ]


@functools.lru_cache(maxsize=4096)
def _cached(options: tuple[tuple[str, str], ...], question: str) -> SampleFeatures:
    return SampleFeatures(dict(options), question)


def features_of(options: Mapping[str, str], question: str = "") -> SampleFeatures:
    """The features of a sample, shared by every output graded against the same sample."""
    return _cached(tuple(options.items()), question)
