"""The ``regex`` step kind: user and template patterns, run with a time bound."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias

import attrs

from choicebox._errors import ParameterError
from choicebox._letters import localise_letters, match_option_text
from choicebox._regex import (
    FLAG_NAMES,
    CompiledPattern,
    RegexTimeout,
    compile_pattern,
    flags_from_names,
)
from choicebox.find._payload import read_payload

from ._api import (
    REGEX_BUDGET_TIMEOUTS,
    Candidate,
    Context,
    Extraction,
    Which,
    _answer,
    _from_payload,
    candidate_of,
    register_step_kind,
)

# --- regexes -------------------------------------------------------------------------------------

# A capture is read like every payload (strict or lenient), or ``exact``: as written.
CaptureReading: TypeAlias = Literal["exact", "strict", "lenient"]


def _as_patterns(value: str | Sequence[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _check_patterns(instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    if not value:
        raise ParameterError("pattern", "needs at least one pattern")
    flags = flags_from_names(instance.flags)
    for source in value:
        compiled = compile_pattern(source, flags)
        if compiled.error is not None:
            raise ParameterError("pattern", compiled.error)


def _check_flags(instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    unknown = [f for f in value if f not in FLAG_NAMES]
    if unknown:
        raise ParameterError(
            "flags", f"unknown flags {unknown}; known flags: {', '.join(FLAG_NAMES)}"
        )


_LETTER_CAPTURE_RE: Final = re.compile(r"^[\s(\[*$]*([A-Za-z])[\s)\]*$.]*$")


@register_step_kind("regex")
@attrs.frozen(kw_only=True)
class RegexStep:
    """A regular expression whose capture holds the answer; patterns are tried in order.

    ``which`` picks the first or the last (rightmost) match; ``fallback`` walks on past matches
    whose capture names nothing usable. The capture is ``group`` when given, else the group named
    ``answer``, else the last group that took part in the match. It is read as every
    payload-reading kind reads it: ``payload: lenient`` (the default: wrappers, lists, labels,
    an option's text) or ``strict`` (a lone letter, or else an option's exact text; a single
    letter that runs on into a word, the ``d`` of "definitely" under ``ignorecase``, is no
    answer); or ``exact``: a capture of one letter is that letter as written, and one that is
    not an option stops the chain (the answer given is no option), as evaluation scripts that
    take the regex's letter do. Patterns run on a time-bounded engine.
    """

    flags: tuple[str, ...] = attrs.field(
        default=("ignorecase",), converter=tuple, validator=_check_flags
    )
    pattern: tuple[str, ...] = attrs.field(converter=_as_patterns, validator=_check_patterns)
    which: Which = "last"
    fallback: bool = False
    group: int | str | None = None
    payload: CaptureReading = "lenient"
    lowercase: bool = True

    def __call__(self, context: Context) -> Extraction | None:
        return run_patterns(
            self.pattern,
            flags_from_names(self.flags),
            context,
            which=self.which,
            fallback=self.fallback,
            group=self.group,
            payload=self.payload,
            lowercase=self.lowercase,
        )

    def find(self, context: Context) -> Sequence[Candidate]:
        """Every match of every pattern that names something, in text order."""
        found: list[Candidate] = []
        flags = flags_from_names(self.flags)
        for source in self.pattern:
            for extraction in _readings(
                source, flags, context, group=self.group, payload=self.payload, lowercase=self.lowercase
            ):
                found.append(candidate_of(extraction, context.step_id))
        found.sort(key=lambda c: c.start)
        return found


def run_patterns(
    patterns: Sequence[str],
    flags: int,
    context: Context,
    *,
    which: Which = "last",
    fallback: bool = True,
    group: int | str | None = None,
    payload: CaptureReading = "strict",
    lowercase: bool = True,
) -> Extraction | None:
    """Try ``patterns`` in order; the first answer wins, else the first problem met.

    The defaults are the template regex's (``template_metadata.output_regex``): the rightmost
    match whose capture is a letter or an option's exact text.
    """
    kept: Extraction | None = None
    for source in patterns:
        found = _run_pattern(
            source, flags, context, which=which, fallback=fallback, group=group, payload=payload,
            lowercase=lowercase,
        )  # fmt: skip
        if found is None:
            continue
        if found.letter is not None or found.final:
            return found
        kept = kept or found
    return kept


def _capture(match: Any, group: int | str | None) -> tuple[str | None, int]:
    if group is not None:
        try:
            return match.group(group), match.start(group)
        except (IndexError, KeyError):
            return None, match.start()
    if "answer" in match.re.groupindex:
        return match.group("answer"), match.start("answer")
    if match.lastindex:
        return match.group(match.lastindex), match.start(match.lastindex)
    return match.group(0), match.start()


def _run_pattern(
    source: str,
    flags: int,
    context: Context,
    *,
    which: Which,
    fallback: bool,
    group: int | str | None,
    payload: CaptureReading,
    lowercase: bool,
) -> Extraction | None:
    """One pattern: its chosen finding over the text."""
    compiled = compile_pattern(source, flags)
    if compiled.error is not None:
        return Extraction(None, failure="invalid_regex", detail=compiled.error, final=False)
    try:
        matches = _bounded_finditer(compiled, context)
    except RegexTimeout as exc:
        return Extraction(None, failure="regex_timeout", detail=str(exc), final=False)
    ordered = reversed(matches) if which == "last" else iter(matches)
    for match in ordered:
        found = _read_match(match, source, context, group=group, payload=payload, lowercase=lowercase)
        if found is not None or not fallback:
            return found
    return None


def _bounded_finditer(compiled: CompiledPattern, context: Context) -> list[Any]:
    """Every match of ``compiled``, within its own timeout and what is left of the row's regex
    budget; raises ``RegexTimeout`` when either runs out."""
    left = context.regex_left
    if left <= 0:
        raise RegexTimeout(f"the row's regex budget ({context.regex_timeout * REGEX_BUDGET_TIMEOUTS:g}s) is spent")
    start = time.perf_counter()
    try:
        return compiled.finditer(context.text, min(context.regex_timeout, left))
    finally:
        context.regex_left = left - (time.perf_counter() - start)


def _readings(
    source: str,
    flags: int,
    context: Context,
    *,
    group: int | str | None,
    payload: CaptureReading,
    lowercase: bool,
) -> list[Extraction]:
    """What every match of one pattern says, in text order (problems included)."""
    compiled = compile_pattern(source, flags)
    if compiled.error is not None:
        return [Extraction(None, failure="invalid_regex", detail=compiled.error, final=False)]
    try:
        matches = _bounded_finditer(compiled, context)
    except RegexTimeout as exc:
        return [Extraction(None, failure="regex_timeout", detail=str(exc), final=False)]
    found = []
    for match in matches:
        extraction = _read_match(match, source, context, group=group, payload=payload, lowercase=lowercase)
        if extraction is not None:
            found.append(extraction)
    return found


def _read_match(
    match: Any,
    source: str,
    context: Context,
    *,
    group: int | str | None,
    payload: CaptureReading,
    lowercase: bool,
) -> Extraction | None:
    captured, start = _capture(match, group)
    if captured is None:
        return None
    detail = f"pattern {source!r}"
    if payload == "exact":
        if len(captured) != 1 or not captured.isalpha() or (captured.islower() and not lowercase):
            return None
        letter = captured.upper()
        if letter not in context.options:
            return Extraction(
                None, failure="not_an_option", position=start,
                detail=f"{detail}: {letter!r} is not one of the options {', '.join(context.options)}",
            )  # fmt: skip
        return Extraction(letter, position=start, clean=True, detail=detail)
    if payload == "lenient":
        return _from_payload(
            read_payload(captured, context.options, lowercase=lowercase),
            position=start,
            clean=True,
            detail=detail,
        )
    text = context.text
    letter_match = _LETTER_CAPTURE_RE.match(localise_letters(captured))
    if letter_match is not None:
        end = start + len(captured)
        if end < len(text) and text[end].isalpha() and len(captured.strip()) == 1:
            return None  # the letter starts a word: "answer is definitely ..."
        letter = letter_match.group(1)
        if letter.islower() and not lowercase:
            return None
        return _answer(context, letter.upper(), position=start, clean=True, detail=detail)
    by_text = match_option_text(captured, context.options, punctuation=False, numeric=False)
    if by_text is not None:
        return Extraction(by_text, position=start, clean=True, detail=f"{detail} (option text)")
    return None
