"""Grading: run a sample's template regex, then its mode's chain under the mode's resolution
policy, and build the verdict.

``grade`` never raises on anything a model wrote: every outcome, including an unreadable
response, a bad or runaway regex and an ambiguous answer, is a verdict with a failure kind.
The only errors it raises are the caller's (an unknown mode name). Every step it runs is linear
in the output's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from ._errors import WireFormatError
from ._modes import GradingMode, ModeRegistry, default_registry
from ._regex import DEFAULT_TIMEOUT, IGNORECASE, too_many_patterns
from ._rollout import ModelOutput, response_text
from ._samples import MCQASample
from .find import Context, Extraction, FailureKind, run_patterns
from .render import Verdict
from .resolve import REGEX_FAILURES, Ruling

__all__ = [
    "MAX_OUTPUT_CHARS",
    "TEMPLATE_STEP",
    "grade",
    "grade_many",
    "grade_output",
    "grade_text",
    "invalid_output_verdict",
    "judged_components",
    "reading_text",
    "template_regex_letter",
    "weighted_reward",
]

TEMPLATE_STEP: Final = "template_regex"
# The per-row budget every mode honours: an output longer than this is not read (a verdict of
# failure ``too_long``, reward 0), so no single output can hold a worker for long. Grading is
# linear in the length, and at this size the costliest mode (robust, on adversarial text) takes a
# few seconds; real outputs, reasoning included, are a few hundred kilobytes at most.
MAX_OUTPUT_CHARS: Final = 1_000_000


# --- reasoning blocks and refusals ---------------------------------------------------------------

# Both start with the caseless literal "<", which the regex engine finds at memchr speed.
_THINK_OPEN: Final = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE: Final = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)


# Format characters no reader sees (zero-width spaces and joiners, direction marks, word
# joiners, the BOM, soft hyphens): put between a letter and a separator ("A\u200b or B") they
# would hide a list of letters from the finders, so a mode may remove them first.
_INVISIBLE: Final = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


# Combining marks piled on a capital that stands alone ("A\u0301 or B"): a letter in disguise.
# Only after a lone capital, so that a decomposed word ("cafe\u0301") keeps its accent.
_MARKED_LETTER: Final = re.compile("(?<![A-Za-z])([A-Z])[\u0300-\u036f\u20d0-\u20ff]++")
# Either kind, looked for in one scan: most texts hold neither.
_EITHER: Final = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u0300-\u036f\u20d0-\u20ff]")


def reading_text(mode: GradingMode, text: str) -> str | None:
    """The text a mode's steps read: without invisible characters and marks piled on a lone
    letter (``strip_invisible``) and without reasoning blocks (``strip_reasoning``); ``None``
    when a reasoning block never closes."""
    if mode.strip_invisible and not text.isascii() and _EITHER.search(text):
        text = _MARKED_LETTER.sub(r"\1", _INVISIBLE.sub("", text))
    return _strip_reasoning(text) if mode.strip_reasoning else text


# The harmony format of gpt-oss: reasoning on the "analysis" channel, the answer on "final"
# ("<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>B").
# Decoded without its special tokens it reads "analysis...assistantfinalB".
_FINAL_CHANNEL: Final = re.compile(r"<\|channel\|>[ \t]*+final[ \t]*+(?:<\|constrain\|>[^<]{0,40})?<\|message\|>")
_ANALYSIS_CHANNEL: Final = re.compile(r"<\|channel\|>[ \t]*+analysis")
_BARE_FINAL: Final = "assistantfinal"
_BARE_ANALYSIS: Final = re.compile(r"\s*+analysis")
# s1's format: the same two parts as sections of a chat template.
_THINK_SECTION: Final = "<|im_start|>think"
_ANSWER_SECTION: Final = "<|im_start|>answer"


def _strip_reasoning(text: str) -> str | None:
    """The text after the last closed reasoning block, or after the last start of a final
    channel or answer section; ``None`` if a block, an analysis channel or a think section
    never closes."""
    if "<|im_start|>" in text:
        # s1's sections: "<|im_start|>think\n...<|im_start|>answer\nAnswer: ..."
        answer = text.rfind(_ANSWER_SECTION)
        if answer != -1:
            return _strip_reasoning(text[answer + len(_ANSWER_SECTION) :])
        if _THINK_SECTION in text:
            return None  # cut off while thinking
    if "<|channel|>" in text:
        final = None
        for final in _FINAL_CHANNEL.finditer(text):  # noqa: B007 - only the last one is wanted
            pass
        if final is not None:
            return _strip_reasoning(text[final.end() :])  # its closing "<|return|>" is blanked as others are
        if _ANALYSIS_CHANNEL.search(text) is not None:
            return None  # the reasoning was cut off before the final channel opened
    elif _BARE_FINAL in text and _BARE_ANALYSIS.match(text) is not None:
        return _strip_reasoning(text[text.rindex(_BARE_FINAL) + len(_BARE_FINAL) :])
    if "<" not in text:
        return text
    last_close = None
    for last_close in _THINK_CLOSE.finditer(text):  # noqa: B007 - only the last one is wanted
        pass
    if last_close is None:
        return None if _THINK_OPEN.search(text) is not None else text
    rest = text[last_close.end() :]
    if _THINK_OPEN.search(rest) is not None:
        return None  # a new block opened after the last close and never closed
    return rest


# A refusal opens the text or a sentence. Possessive blanks after the sentence end: a run of
# 20,000 newlines is passed over once.
_REFUSAL: Final = (
    r"\s*+(?:I['’]?m\s+sorry|I\s+am\s+sorry|I\s+apologi[sz]e|"
    r"I\s+(?:cannot|can['’]?t|won['’]?t|will\s+not|am\s+unable\s+to|['’]m\s+unable\s+to|"
    r"must\s+decline\s+to|do\s+not\s+feel\s+comfortable)\s+"
    r"(?:help|answer|assist|provide|comply|respond|choose|select|determine|pick)|"
    r"As\s+an\s+AI\b)"
)
# Two patterns where one would do: a pattern that may start at "^" cannot skip ahead to the
# sentence ends, so it is tried at every character; one that starts with a character class
# jumps between them. The sentence end is a newline, or [.!?] and a blank (``[.!?]\s++`` then
# ``\s*+`` consume the same blanks as ``\s*+`` alone).
_REFUSAL_AT_START: Final = re.compile(_REFUSAL, re.IGNORECASE)
_REFUSAL_AFTER_STOP: Final = re.compile(r"[.!?\n](?:(?<=\n)|(?=\s))" + _REFUSAL, re.IGNORECASE)
# Every refusal the pattern knows holds one of these: most outputs are ruled out by them alone.
_REFUSAL_WORDS: Final = (
    "sorry", "apologi", "cannot", "can't", "can’t", "cant", "won't", "won’t", "wont", "will not",
    "unable", "decline", "comfortable", "as an ai",
)  # fmt: skip


def _refusal_classes() -> bytes:
    """A ``bytes.translate`` table for ASCII text: what the opening of a refusal is made of.
    "." a sentence end, " " a blank (``str.isspace``), "i", "a", "s", "m" and "'" themselves in
    either case, "x" anything else."""
    table = bytearray(b"x" * 256)
    for chars, mark in ((".!?\n", "."), (" \t\r\f\v\x1c\x1d\x1e\x1f", " "), ("iI", "i"),
                        ("aA", "a"), ("sS", "s"), ("mM", "m"), ("'", "'")):  # fmt: skip
        for char in chars:
            table[ord(char)] = ord(mark)
    return bytes(table)


_REFUSAL_CLASSES: Final = _refusal_classes()
# What ``_REFUSAL_AFTER_STOP`` needs, in those classes: a sentence end, blanks, then "I'm", "Im",
# "I" and a blank, or "As". Fewer than one ASCII output in ten has it.
_OPENS_LIKE_A_REFUSAL: Final = re.compile(rb"\.[ .]*+(?:i['m .]|as)")


def _refusal_after_stop(head: str) -> bool:
    # The pattern tries every sentence end of the head: about 2.5 us on these outputs. An ASCII
    # head is first looked at by classes, at C speed; other text can hold blanks, letters and
    # case pairs (U+00A0, "İ", "ſ") that the pattern reads as such, so it is not.
    if head.isascii() and _OPENS_LIKE_A_REFUSAL.search(head.encode("ascii").translate(_REFUSAL_CLASSES)) is None:
        return False
    return _REFUSAL_AFTER_STOP.search(head) is not None


def _is_refusal(text: str) -> bool:
    # A refusal is short or says so up front; a long answer that mentions "I can't" is not one.
    head = text[:600] if len(text) > 600 else text
    # The patterns first: on the outputs that reach here (no letter found) they cost about 1 us
    # and the fourteen word scans about 3.5 us, and the words matter only when they match.
    if _REFUSAL_AT_START.match(head) is None and not _refusal_after_stop(head):
        return False
    return any(map(head.lower().__contains__, _REFUSAL_WORDS))


# --- grading -------------------------------------------------------------------------------------


def _components(letter: str | None, expected: str, *, clean: bool) -> dict[str, float]:
    answered = letter is not None
    return {
        "correctness": 1.0 if answered and letter == expected else 0.0,
        "format": 1.0 if answered and clean else 0.0,
        "unambiguous": 1.0 if answered else 0.0,
    }


def weighted_reward(mode: GradingMode, components: Mapping[str, float]) -> float:
    """The reward of ``components`` under the mode's weights: every verdict's, the rules' and
    a judge's (``choicebox.judge.apply_judgement``)."""
    weights = mode.weights
    if len(weights) == 1 and weights.get("correctness") == 1.0:
        return components["correctness"]
    return sum(weights.get(name, 0.0) * value for name, value in components.items())


def judged_components(letter: str | None, expected: str) -> dict[str, float]:
    """The reward components of a letter a model judge read: correct or not, answered, and never
    in the mode's own format (the rules found no answer in it). ``None`` (the judge read none, or
    failed) gives a letterless verdict's, the rules' own on every row a mode sends to a judge."""
    return _components(letter, expected, clean=False)


def _verdict(
    mode: GradingMode,
    expected: str,
    found: Extraction | None,
    step: str | None,
    *,
    primary: bool,
    errors: list[str],
    text: str = "",
    candidates: tuple[Ruling, ...] = (),
) -> Verdict:
    letter = found.letter if found is not None else None
    components = _components(letter, expected, clean=primary and found is not None and found.clean)
    reward = weighted_reward(mode, components)
    failure: FailureKind | None
    if letter is not None:
        failure = None if letter == expected else "wrong_answer"
        detail = found.detail if found is not None else ""
        if failure:
            detail = f"{detail}: answered {letter}, expected {expected}"
    elif found is not None and found.failure is not None:
        failure, detail = found.failure, found.detail
        if failure in _REFUSAL_MAY_EXPLAIN and _is_refusal(text):
            failure, detail = "refusal", "the model declined to answer"
    elif _is_refusal(text):
        failure, detail = "refusal", "the model declined to answer"
    else:
        failure, detail = "no_answer", "no step of the mode found an answer"
    return Verdict(
        reward=reward,
        reward_components=components,
        extracted_answer=letter,
        expected_answer=expected,
        mode=mode.id,
        step=step if letter is not None or (found is not None and found.final) else None,
        failure=failure,
        detail=detail,
        errors=tuple(errors),
        needs_judge=failure in mode.judge,
        candidates=candidates,
    )


# A response that declines to answer may still contain a stray letter or a "no option" phrase.
_REFUSAL_MAY_EXPLAIN: Final = ("not_an_option", "invalid_regex", "regex_timeout", "no_answer")


def grade_text(
    text: str,
    options: Mapping[str, str],
    expected: str,
    mode: GradingMode,
    *,
    output_regex: tuple[str, ...] = (),
    answer_prefix: str | None = None,
    regex_timeout: float = DEFAULT_TIMEOUT,
    question: str = "",
) -> Verdict:
    """Grade already-extracted text against options; the engine under ``grade``.

    ``question`` (the sample's question, when known) lets the ``conclusion`` policy tell a
    multi-part question and text about other questions; other policies ignore it.

    At most ``MAX_PATTERNS_PER_ROW`` patterns of ``output_regex`` run; a sample with more runs
    none of them, and the verdict's ``errors`` say so.
    """
    errors: list[str] = []
    if len(text) > MAX_OUTPUT_CHARS:
        detail = f"the output is {len(text):,} characters, more than the {MAX_OUTPUT_CHARS:,} a mode reads"
        return _verdict(mode, expected, Extraction(None, failure="too_long", detail=detail), None, primary=False, errors=errors)
    read = reading_text(mode, text)
    if read is None or not read or read.isspace():
        unread = (
            Extraction(None, failure="unfinished_reasoning", detail="a reasoning block never closes")
            if read is None
            else Extraction(None, failure="empty", detail="the output is empty")
        )
        return _verdict(mode, expected, unread, None, primary=False, errors=errors)
    text = read
    context = Context(
        text, options, regex_timeout=regex_timeout, answer_prefix=answer_prefix, question=question
    )
    kept: Extraction | None = None

    # The sample's own regexes come first, as NeMo Gym's server does; a hit is final.
    too_many = too_many_patterns(output_regex)
    if too_many is not None:
        # Row data: like an invalid pattern, recorded and skipped (all of them, so no prefix of
        # the list decides), and the mode's chain grades.
        detail = f"{too_many}; none of them ran"
        errors.append(detail)
        kept = Extraction(None, failure="invalid_regex", detail=detail, final=False)
    elif output_regex:
        found = _template_reading(output_regex, context)
        if found is not None:
            if found.letter is not None:
                return _verdict(
                    mode, expected, found, TEMPLATE_STEP, primary=True, errors=errors, text=text
                )
            if found.failure in REGEX_FAILURES:
                errors.append(found.detail)
            kept = found

    resolution = mode.policy(context, mode.chain, errors)
    found, entry = resolution.found, resolution.entry
    step = entry.id if entry is not None else None
    if kept is not None and (
        found is None
        or (found.letter is None and not found.final and kept.failure not in REGEX_FAILURES)
    ):
        # Nothing better than the template regex's own finding (a letter that is no option).
        found, step, entry = kept, TEMPLATE_STEP, None
    return _verdict(
        mode,
        expected,
        found,
        step,
        primary=entry.primary if entry is not None else False,
        errors=errors,
        text=text,
        candidates=resolution.rulings,
    )


def _template_reading(patterns: tuple[str, ...], context: Context) -> Extraction | None:
    # Case-insensitive, rightmost match, as the seed specifies; an invalid pattern is recorded
    # and skipped rather than refused, since it is row data.
    return run_patterns(patterns, IGNORECASE, context)


def template_regex_letter(
    patterns: tuple[str, ...], text: str, options: Mapping[str, str]
) -> str | None:
    """The letter a sample's own ``output_regex`` patterns read from ``text``, exactly as
    grading reads them before the mode's chain (``None``: they read none, or there are more
    than ``MAX_PATTERNS_PER_ROW`` of them, which grading refuses to run)."""
    if too_many_patterns(patterns) is not None:
        return None
    found = _template_reading(patterns, Context(text, options))
    return found.letter if found is not None else None


def _resolve_mode(
    sample: MCQASample, mode: str | GradingMode | None, registry: ModeRegistry | None
) -> GradingMode:
    if isinstance(mode, GradingMode):
        return mode
    return (registry or default_registry()).get(mode or sample.grading_mode)


def grade(
    sample: MCQASample,
    output: ModelOutput,
    *,
    mode: str | GradingMode | None = None,
    registry: ModeRegistry | None = None,
    regex_timeout: float = DEFAULT_TIMEOUT,
) -> Verdict:
    """Decide which letter ``output`` chose on ``sample`` and what it earns.

    ``output`` is the model's text, a Responses object or a Chat Completions object (as
    mappings). ``mode`` overrides the sample's ``grading_mode``, as NeMo Gym's server config does.
    Raises only ``UnknownModeError`` for a mode name no registry knows.
    """
    resolved = _resolve_mode(sample, mode, registry)
    template = sample.template
    return grade_output(
        output,
        sample.options,
        sample.expected_answer,
        resolved,
        output_regex=template.output_regex if template is not None else (),
        answer_prefix=template.answer_prefix if template is not None else None,
        regex_timeout=regex_timeout,
        question=sample.question,
    )


def grade_output(
    output: object,
    options: Mapping[str, str],
    expected: str,
    mode: GradingMode,
    *,
    output_regex: tuple[str, ...] = (),
    answer_prefix: str | None = None,
    regex_timeout: float = DEFAULT_TIMEOUT,
    question: str = "",
) -> Verdict:
    """``grade`` from a sample's fields: what ``grade`` and the batch ``Grader`` both run.

    An ``output`` whose text cannot be found is an ``invalid_output`` verdict, never an error.
    """
    try:
        text = response_text(output)
    except WireFormatError as exc:
        return invalid_output_verdict(expected, mode, exc)
    return grade_text(
        text,
        options,
        expected,
        mode,
        output_regex=output_regex,
        answer_prefix=answer_prefix,
        regex_timeout=regex_timeout,
        question=question,
    )


def invalid_output_verdict(expected: str, mode: GradingMode, error: WireFormatError) -> Verdict:
    """The verdict on an output whose text cannot be found: ``error`` says why."""
    return Verdict(
        reward=0.0,
        reward_components=_components(None, expected, clean=False),
        extracted_answer=None,
        expected_answer=expected,
        mode=mode.id,
        failure="invalid_output",
        detail="; ".join(error.problems),
    )


def grade_many(
    rollouts: Iterable[tuple[MCQASample, ModelOutput]],
    *,
    mode: str | GradingMode | None = None,
    rules_dirs: Iterable[str | Path] = (),
    regex_timeout: float = DEFAULT_TIMEOUT,
) -> list[Verdict]:
    """Grade many (sample, output) pairs with one registry; verdicts in input order."""
    registry = default_registry(tuple(rules_dirs))
    return [
        grade(sample, output, mode=mode, registry=registry, regex_timeout=regex_timeout)
        for sample, output in rollouts
    ]
