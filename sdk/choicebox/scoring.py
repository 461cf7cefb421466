"""Scoring primitives with the API of NeMo Evaluator's ``exact_match``, ``multichoice_regex`` & co.

Each function takes a :class:`ScorerInput` and returns a :class:`Score`, which also answers
``score["correct"]`` and ``score["extracted"]`` like the evaluator's result dicts, so a scorer
written against the evaluator keeps working. The behaviour follows the evaluator's documentation,
minus the faults of its released versions:

* ``multichoice_regex``'s default pattern reads a letter only when it stands alone, so
  ``Answer: Because ...`` is not an answer of B;
* ``numeric_match`` compares the last whole number by value, so 100 is not a match for 10 and
  ``42.0`` is one for ``42``;
* an empty or whitespace-only response never matches, not even an empty target.

``needs_judge`` flags a sample for the evaluator's judge pass; ``extract_json`` and
``validate_json_schema`` score structured output against a JSON Schema (the ``jsonschema``
library; the same reader as the ``json_answer`` step kind).

Refusal detection is deliberately not here: deciding *why* an answer failed is the job of the
failure analysis in :mod:`choicebox.metrics`, not of a scorer.

No grading function raises on any response or target string: malformed input is a wrong answer.
User regexes run through :func:`choicebox._regex.compile_pattern`, so they are time-bounded too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final, Literal, overload

import attrs

from ._errors import ParameterError
from ._json import last_json_object, schema_problem, schema_problems
from ._letters import localise_letters, normalise_option_text
from ._regex import RegexTimeout, compile_pattern

__all__ = [
    "JudgeFlag",
    "SchemaScore",
    "Score",
    "ScorerInput",
    "answer_line",
    "exact_match",
    "extract_json",
    "fuzzy_match",
    "multichoice_regex",
    "needs_judge",
    "numeric_match",
    "validate_json_schema",
]


def _freeze(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    # A copy behind a read-only view: the caller's dict can change later without changing a
    # frozen input, and scorers cannot write into it.
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}")
    return MappingProxyType(dict(metadata))


@attrs.frozen(kw_only=True)
class ScorerInput:
    """What a scorer grades: the model's ``response``, the ``target`` and per-sample metadata."""

    response: str = attrs.field(validator=attrs.validators.instance_of(str))
    target: str = attrs.field(validator=attrs.validators.instance_of(str))
    # Left out of the hash (a mapping proxy is unhashable) but not out of equality; equal inputs
    # still hash equal because their response and target are equal.
    metadata: Mapping[str, Any] = attrs.field(
        factory=dict,
        converter=_freeze,
        hash=False,
    )


_SCORE_KEYS: Final = ("correct", "extracted")


@attrs.frozen(kw_only=True)
class Score:
    """A scorer's verdict: whether the response is correct, and what was read out of it.

    It reads like the evaluator's ``{"correct": ..., "extracted": ...}`` dict: ``score["correct"]``
    works, and ``dict(score)`` gives that dict.
    """

    correct: bool
    extracted: str | None

    @overload
    def __getitem__(self, key: Literal["correct"]) -> bool: ...
    @overload
    def __getitem__(self, key: Literal["extracted"]) -> str | None: ...
    @overload
    def __getitem__(self, key: str) -> bool | str | None: ...
    def __getitem__(self, key: str) -> bool | str | None:
        if key == "correct":
            return self.correct
        if key == "extracted":
            return self.extracted
        raise KeyError(key)

    def keys(self) -> tuple[str, ...]:
        """The dict keys, so ``dict(score)`` and ``**score`` work."""
        return _SCORE_KEYS

    def __iter__(self) -> Iterator[str]:
        # Without this, iteration would fall back to __getitem__(0) and fail with a KeyError.
        return iter(_SCORE_KEYS)


_NO_MATCH: Final = Score(correct=False, extracted=None)


# ------------------------------------------------------------------------------- text matching

_ARTICLES: Final = frozenset({"a", "an", "the"})


def _normalise_text(text: str) -> str:
    """Case-folded words without punctuation or articles, one space apart.

    Built on the option-text normaliser of the rule steps, so a scorer and a rule agree on what
    counts as the same text; only the article drop is added here.
    """
    words = [w for w in normalise_option_text(text, punctuation=True).split(" ") if w]
    content = [w for w in words if w not in _ARTICLES]
    # An answer that is only an article is a letter or a word in its own right ("A" is option A),
    # so it is kept rather than normalised away to nothing.
    return " ".join(content or words)


def exact_match(sample: ScorerInput) -> Score:
    """Normalised response equals normalised target (case, punctuation, articles, spacing ignored).

    ``extracted`` is the stripped response, or ``None`` when it is empty.
    """
    stripped = sample.response.strip()
    if not stripped:
        return _NO_MATCH
    response = _normalise_text(stripped)
    # Both sides must keep some words: "..." against "" is not an exact match of anything.
    correct = bool(response) and response == _normalise_text(sample.target)
    return Score(correct=correct, extracted=stripped)


def _correct_answers(sample: ScorerInput) -> list[str]:
    """The target plus ``metadata["correct_answers"]`` (one string or a list), as strings."""
    answers = [sample.target]
    extra = sample.metadata.get("correct_answers")
    if isinstance(extra, str):
        answers.append(extra)
    elif isinstance(extra, Iterable) and not isinstance(extra, (bytes, Mapping)):
        # JSON metadata may hold numbers ("correct_answers": [42]); they count as their text.
        answers.extend(
            str(a) for a in extra if isinstance(a, (str, int, float)) and not isinstance(a, bool)
        )
    return answers


def fuzzy_match(sample: ScorerInput) -> Score:
    """Some normalised correct answer occurs, as whole words, in the normalised response.

    The correct answers are the target and ``metadata["correct_answers"]``. Whole words: "cat"
    matches "the cat sat" but not "concatenate". ``extracted`` is the stripped response.
    """
    stripped = sample.response.strip()
    if not stripped:
        return _NO_MATCH
    # Padding both sides with a space turns "whole words" into a plain substring test, since
    # normalised text is words separated by single spaces.
    haystack = f" {_normalise_text(stripped)} "
    for answer in _correct_answers(sample):
        needle = _normalise_text(answer)
        if needle and f" {needle} " in haystack:
            return Score(correct=True, extracted=stripped)
    return Score(correct=False, extracted=stripped)


# ------------------------------------------------------------------------------ multiple choice


def _default_letter_pattern(letters: str) -> str:
    letter_class = "".join(re.escape(c) for c in dict.fromkeys(letters))
    # The lookahead is the fix for the released pattern: "Answer: Because" must not read as B,
    # so the letter may not run on into a word or a number.
    # A lowercase letter counts only when it is not the start of a phrase: "answer: b" reads B,
    # "Answer: a combination of B and C" does not read the article.
    lower_class = "".join(re.escape(c.lower()) for c in dict.fromkeys(letters))
    return (
        rf"(?i:Answer)\s*:\s*\(?([{letter_class}]|[{lower_class}](?![ \t]+[a-z]))\)?"
        r"(?![A-Za-z0-9])"
    )


def multichoice_regex(
    sample: ScorerInput, *, pattern: str | None = None, letters: str = "ABCD"
) -> Score:
    """The letter of the last ``Answer: X`` in the response, compared case-insensitively.

    ``letters`` are the allowed letters of the default pattern. A custom ``pattern`` replaces it;
    its first group (or the whole match, if it has no group) is the answer. An invalid or
    timed-out pattern gives an incorrect score with nothing extracted, never an exception.
    """
    if not sample.response.strip():
        return _NO_MATCH
    if pattern is None:
        if not letters:
            return _NO_MATCH
        source = _default_letter_pattern(letters)
        # Fullwidth "Ａｎｓｗｅｒ：Ｂ" and Arabic/Bengali option letters read as the rule steps
        # read them. Custom patterns see the raw text: they may match those scripts themselves.
        text = localise_letters(sample.response)
    else:
        source = pattern
        text = sample.response
    compiled = compile_pattern(source)
    if compiled.pattern is None:
        return _NO_MATCH
    try:
        matches = compiled.finditer(text)
    except RegexTimeout:
        return _NO_MATCH
    extracted: str | None = None
    for match in reversed(matches):  # the last answer wins: models revise earlier guesses
        captured = match.group(1) if compiled.pattern.groups else match.group(0)
        if captured is not None and captured.strip():
            extracted = captured.strip()
            break
    if extracted is None:
        return _NO_MATCH
    target = sample.target.strip()
    correct = bool(target) and extracted.casefold() == target.casefold()
    return Score(correct=correct, extracted=extracted)


# ---------------------------------------------------------------------------------- numbers

# A number token: optional sign, digits with optional thousands commas, optional decimals and
# exponent. It may not start inside a word or after a decimal point, and may not stop in the
# middle of digits, so "100" never yields "10" and "v1.2" yields nothing.
_NUMBER_TOKEN: Final = r"[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_IN_TEXT_RE: Final = re.compile(rf"(?<![\w.]){_NUMBER_TOKEN}(?![\d])")
_NUMBER_RE: Final = re.compile(_NUMBER_TOKEN)
_FRACTION_RE: Final = re.compile(rf"({_NUMBER_TOKEN})/({_NUMBER_TOKEN})")
_EXPONENT_RE: Final = re.compile(r"[eE]([-+]?\d+)$")
# Fraction("1e999999999") would build a billion-digit integer; numbers past these bounds are not
# compared by value (they are compared as text where the caller allows it).
_MAX_NUMBER_CHARS: Final = 400
_MAX_EXPONENT: Final = 400
_MINUS_SIGNS: Final = str.maketrans({"\u2212": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-"})


def _number_value(token: str) -> Fraction | None:
    """Exact value of a number token (``1,000``, ``-2.50``, ``1e3``); ``None`` if it is none."""
    token = token.strip()
    if len(token) > _MAX_NUMBER_CHARS or not _NUMBER_RE.fullmatch(token):
        return None
    exponent = _EXPONENT_RE.search(token)
    if exponent is not None and abs(int(exponent.group(1))) > _MAX_EXPONENT:
        return None
    try:
        return Fraction(token.replace(",", ""))
    except (ValueError, ZeroDivisionError):  # pragma: no cover - the regex admits only numbers
        return None


def _value(text: str) -> Fraction | None:
    """Exact value of a number or of a fraction ``a/b`` of numbers."""
    text = text.translate(_MINUS_SIGNS)
    if (match := _FRACTION_RE.fullmatch(text)) is not None:
        numerator, denominator = _number_value(match.group(1)), _number_value(match.group(2))
        if numerator is None or denominator is None or denominator == 0:
            return None
        return numerator / denominator
    return _number_value(text)


def numeric_match(sample: ScorerInput) -> Score:
    """The last number in the response equals the target number by value.

    ``extracted`` is the number as written (``"1,000"``); ``42.0`` matches a target of ``42``.
    A target that is no number matches nothing.
    """
    if not sample.response.strip():
        return _NO_MATCH
    text = sample.response.translate(_MINUS_SIGNS)
    last: str | None = None
    for match in _NUMBER_IN_TEXT_RE.finditer(text):
        last = match.group()
    if last is None:
        return _NO_MATCH
    extracted = _number_value(last)
    target = _value(sample.target.strip().strip("$").strip())
    correct = extracted is not None and target is not None and extracted == target
    return Score(correct=correct, extracted=last)


# -------------------------------------------------------------------------------- answer line

_ANSWER_LINE_RE: Final = re.compile(r"(?i)\banswer[*_]*[ \t]*:([^\n]*)")
_TEXT_WRAPPER_RE: Final = re.compile(
    r"\\(?:text|textbf|textit|mathrm|mathbf|boxed|mbox)\s*\{([^{}]*)\}"
)
_FRAC_RE: Final = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\w))\s*(?:\{([^{}]*)\}|(\w))")
_SIMPLE_OPERAND_RE: Final = re.compile(r"[\w.]+")
_LATEX_SPACING_RE: Final = re.compile(r"\\[,;:! ]|\\(?:left|right|displaystyle)\b|~")
_MARKDOWN_EDGE: Final = "*_` \t\r"
_NESTING_LIMIT: Final = 8  # unwrap passes; answers nest a few levels, the bound keeps it linear


def _clean_answer(payload: str) -> str:
    """The answer of an ``Answer:`` line without markdown, ``$`` delimiters and a final period."""
    text = payload.strip(_MARKDOWN_EDGE)
    for _ in range(_NESTING_LIMIT):  # "**$42$.**" peels in several rounds
        before = text
        text = text.strip(_MARKDOWN_EDGE).strip("$").strip(_MARKDOWN_EDGE)
        if text.endswith(".") and not text.endswith(".."):
            text = text[:-1]
        if text == before:
            break
    return text


def _frac(match: re.Match[str]) -> str:
    numerator = match.group(1) if match.group(1) is not None else match.group(2)
    denominator = match.group(3) if match.group(3) is not None else match.group(4)
    parts = [
        p if _SIMPLE_OPERAND_RE.fullmatch(p) else f"({p})"
        for p in (numerator.strip(), denominator.strip())
    ]
    return f"{parts[0]}/{parts[1]}"


def _normalise_math(text: str) -> str:
    """A comparable form of a short math answer: ``$\\frac{1}{2}$`` and ``1/2`` agree.

    Drops ``$``, ``\\text{}``-like wrappers, LaTeX spacing and all whitespace, rewrites
    ``\\frac{a}{b}`` as ``a/b`` and case-folds. Deliberately small: it decides equality of
    short answers, it is not a computer algebra system.
    """
    text = unicodedata.normalize("NFKC", text).translate(_MINUS_SIGNS)
    text = text.replace("$", "").replace("\\%", "%")
    for _ in range(_NESTING_LIMIT):  # innermost braces first, so nested wrappers unwrap fully
        before = text
        text = _TEXT_WRAPPER_RE.sub(r"\1", text)
        text = _FRAC_RE.sub(_frac, text)
        if text == before:
            break
    text = _LATEX_SPACING_RE.sub("", text)
    return "".join(text.split()).casefold()


def _math_equal(extracted: str, target: str) -> bool:
    left, right = _normalise_math(extracted), _normalise_math(target)
    if not left or not right:
        return False
    left_value, right_value = _value(left), _value(right)
    if left_value is not None and right_value is not None:
        return left_value == right_value
    return left == right


def answer_line(sample: ScorerInput) -> Score:
    """The text after the last ``Answer:`` on a line, compared to the target as math.

    Markdown emphasis, ``$`` and a final period are stripped from the extracted text; numbers
    compare by value (``0.5`` equals ``\\frac{1}{2}``), other text case-insensitively after
    dropping spaces and ``\\text{}`` wrappers.
    """
    if not sample.response.strip():
        return _NO_MATCH
    extracted: str | None = None
    # The last *non-empty* answer line: "Answer:" alone on a line (the answer on the next) must
    # not hide an earlier complete one.
    for match in reversed(list(_ANSWER_LINE_RE.finditer(sample.response))):
        cleaned = _clean_answer(match.group(1))
        if cleaned:
            extracted = cleaned
            break
    if extracted is None:
        return _NO_MATCH
    return Score(correct=_math_equal(extracted, sample.target), extracted=extracted)


# -------------------------------------------------------------------------------------- judge

_FLAG_KEYS: Final = ("correct", "needs_judge")


@attrs.frozen(kw_only=True)
class JudgeFlag:
    """A sample left to a model judge: ``{"correct": False, "needs_judge": True}``, the
    evaluator's shape, read like a dict as ``Score`` is."""

    correct: Literal[False] = False
    needs_judge: Literal[True] = True

    def __getitem__(self, key: str) -> bool:
        if key in _FLAG_KEYS:
            return bool(getattr(self, key))
        raise KeyError(key)

    def keys(self) -> tuple[str, ...]:
        return _FLAG_KEYS

    def __iter__(self) -> Iterator[str]:
        return iter(_FLAG_KEYS)


def needs_judge(sample: ScorerInput) -> JudgeFlag:
    """Flag ``sample`` for the judge pass, as the evaluator's ``needs_judge`` does: not correct
    (yet), and to be read by a model judge. In choicebox a grading mode flags its verdicts itself
    (``judge:`` in its rule file); this is the primitive for scorers written against the evaluator."""
    if not isinstance(sample, ScorerInput):
        raise TypeError(f"needs_judge takes a ScorerInput, got {type(sample).__name__}")
    return JudgeFlag()


# -------------------------------------------------------------------------------- JSON schema

_SCHEMA_KEYS: Final = ("valid", "extracted", "score")


@attrs.frozen(kw_only=True)
class SchemaScore:
    """``validate_json_schema``'s result: ``{"valid", "extracted", "score"}`` as the evaluator
    returns it (read like a dict), and ``problems``, what the schema found wrong (not a key)."""

    valid: bool
    extracted: Mapping[str, Any] | None
    score: float
    problems: tuple[str, ...] = ()

    @overload
    def __getitem__(self, key: Literal["valid"]) -> bool: ...
    @overload
    def __getitem__(self, key: Literal["extracted"]) -> Mapping[str, Any] | None: ...
    @overload
    def __getitem__(self, key: Literal["score"]) -> float: ...
    @overload
    def __getitem__(self, key: str) -> object: ...
    def __getitem__(self, key: str) -> object:
        if key in _SCHEMA_KEYS:
            return getattr(self, key)
        raise KeyError(key)

    def keys(self) -> tuple[str, ...]:
        return _SCHEMA_KEYS

    def __iter__(self) -> Iterator[str]:
        return iter(_SCHEMA_KEYS)


def extract_json(response: str) -> dict[str, Any] | None:
    """The last JSON object in ``response``, in a fenced block or bare; ``None`` if it holds none.

    "Last" is the object that ends last; an object nested in another is part of it. Python's
    ``NaN`` and ``Infinity`` are not JSON, so an object holding them is not one.
    """
    if not isinstance(response, str):
        raise TypeError(f"extract_json takes a string, got {type(response).__name__}")
    found = last_json_object(response)
    return None if found is None else found.value


def validate_json_schema(response: str, schema: Mapping[str, Any]) -> SchemaScore:
    """Whether the last JSON object of ``response`` (``extract_json``) is valid under ``schema``.

    ``{"valid": True, "extracted": <the object>, "score": 1.0}`` when it is; ``valid`` False and
    ``score`` 0.0 when it is not (``extracted`` is the object) or there is none (``extracted``
    ``None``). A ``schema`` that is no JSON Schema raises ``ParameterError`` (the caller's
    mistake, not the model's); no response does.
    """
    problem = schema_problem(schema)
    if problem is not None:
        raise ParameterError("schema", problem)
    extracted = extract_json(response)
    if extracted is None:
        return SchemaScore(valid=False, extracted=None, score=0.0, problems=("no JSON object found",))
    problems = tuple(schema_problems(extracted, schema))
    return SchemaScore(valid=not problems, extracted=extracted, score=0.0 if problems else 1.0, problems=problems)
