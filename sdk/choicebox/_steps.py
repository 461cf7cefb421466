"""Extraction steps: the building blocks of a grading mode's rule chain.

A step reads the model's text and either finds the letter it committed to, reports why it could
not (an ambiguous list, a letter that is not an option, a bad regex), or says nothing. A step kind
is an attrs class whose fields are the step's parameters (validated when a rule file loads) and
whose instances are called with a ``Context``. Built-in kinds are registered with
``register_step_kind`` exactly as a larger system registers its own, and rule files use them by
name.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

import attrs

from ._boxed import Box, BoxReading, find_boxes, read_box
from ._errors import ChoiceboxError
from ._letters import (
    Payload,
    localise_letters,
    match_option_text,
    normalise_option_text,
    read_payload,
)
from ._regex import DEFAULT_TIMEOUT, FLAG_NAMES, RegexTimeout, compile_pattern, flags_from_names

__all__ = [
    "Context",
    "Extraction",
    "FailureKind",
    "Step",
    "register_step_kind",
    "step_kinds",
]

FailureKind: TypeAlias = Literal[
    "empty",
    "no_answer",
    "ambiguous",
    "not_an_option",
    "refusal",
    "invalid_regex",
    "regex_timeout",
    "invalid_output",
    "unfinished_reasoning",
    "wrong_answer",
]
Which: TypeAlias = Literal["first", "last"]


class Context:
    """What a step sees: the text to grade and the options (letter to text) it may name."""

    __slots__ = (
        "_boxes",
        "_lowered",
        "_present",
        "_readings",
        "answer_prefix",
        "options",
        "regex_timeout",
        "text",
    )

    def __init__(
        self,
        text: str,
        options: Mapping[str, str],
        *,
        regex_timeout: float = DEFAULT_TIMEOUT,
        answer_prefix: str | None = None,
    ) -> None:
        self.text = text
        self.options = options
        self.regex_timeout = regex_timeout
        # A sample's own closing phrase ("Die Antwort ist"), from template_metadata.answer_prefix.
        self.answer_prefix = answer_prefix
        self._boxes: list[Box] | None = None
        self._readings: list[tuple[Box, BoxReading]] | None = None
        self._lowered: str | None = None
        self._present: dict[str, bool] = {}

    def lowered(self) -> str:
        """The text lowercased, computed once."""
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    def contains(self, word: str) -> bool:
        """Whether the lowercased text contains ``word``, remembered across steps."""
        present = self._present.get(word)
        if present is None:
            present = self._present[word] = word in self.lowered()
        return present

    def box_readings(self) -> list[tuple[Box, BoxReading]]:
        """The closed, non-empty boxes with what each says, in text order, computed once."""
        if self._readings is None:
            self._readings = [
                (box, reading)
                for box in self.boxes()
                if box.closed and (reading := read_box(box.content)).kind != "empty"
            ]
        return self._readings

    def boxes(self) -> list[Box]:
        """Every ``\\boxed{}``/``\\fbox{}`` of the text, scanned once however many steps ask."""
        if self._boxes is None:
            self._boxes = find_boxes(self.text)
        return self._boxes


@attrs.frozen
class Extraction:
    """A step's finding.

    With ``letter`` set it is an answer. Without, ``failure`` says what went wrong; ``final`` stops
    the chain (an ambiguous answer must not be rescued by a laxer step), otherwise the chain goes
    on and the failure is kept in case nothing better turns up. ``clean`` marks an answer given
    in the step's own strict format, which the ``format`` reward component reads.
    """

    letter: str | None
    failure: FailureKind | None = None
    detail: str = ""
    position: int = 0
    clean: bool = False
    final: bool = True


@runtime_checkable
class Step(Protocol):
    """A configured extraction step: called with the context, returns a finding or ``None``."""

    def __call__(self, context: Context, /) -> Extraction | None: ...


StepT = TypeVar("StepT", bound=type)
_KINDS: dict[str, type[Any]] = {}


class StepKindError(ChoiceboxError, ValueError):
    """A step kind cannot be registered."""


class ParameterError(ChoiceboxError, ValueError):
    """A step parameter is invalid; ``name`` is the parameter, so a rule file error can point
    at it. Step kinds raise it from their validators."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


def register_step_kind(name: str, *, replace: bool = False) -> Callable[[StepT], StepT]:
    """Class decorator registering an attrs class as the step kind ``name``.

    The class's attrs fields are the parameters a rule file may give (checked when the file
    loads); its instances must satisfy the ``Step`` protocol. ``replace`` allows taking over an
    existing name; without it a clash is an error, so nothing is shadowed silently.
    """

    def register(cls: StepT) -> StepT:
        is_attrs_class = attrs.has(cls)  # a plain bool: attrs.has would narrow cls's type
        if not is_attrs_class:
            raise StepKindError(f"step kind {name!r}: {cls.__name__} must be an attrs class")
        if "__call__" not in dir(cls):
            raise StepKindError(f"step kind {name!r}: {cls.__name__} instances must be callable")
        if name in _KINDS and not replace and _KINDS[name] is not cls:
            raise StepKindError(f"step kind {name!r} is already registered; pass replace=True")
        _KINDS[name] = cls
        return cls

    return register


def step_kinds() -> Mapping[str, type[Any]]:
    """The registered step kinds by name."""
    return dict(_KINDS)


def _answer(
    context: Context, letter: str, *, position: int, clean: bool, detail: str
) -> Extraction:
    if letter in context.options:
        return Extraction(letter, position=position, clean=clean, detail=detail)
    return Extraction(
        None,
        failure="not_an_option",
        detail=f"{detail}: {letter!r} is not one of the options {', '.join(context.options)}",
        position=position,
        final=False,
    )


def _from_payload(
    payload: Payload, *, position: int, clean: bool, detail: str
) -> Extraction | None:
    if payload.kind == "letter":
        assert payload.letter is not None
        return Extraction(
            payload.letter, position=position, clean=clean, detail=f"{detail} ({payload.how})"
        )
    if payload.kind == "ambiguous":
        return Extraction(
            None,
            failure="ambiguous",
            detail=f"{detail} lists several letters: {', '.join(payload.letters)}",
            position=position,
        )
    if payload.kind == "not_an_option":
        return Extraction(
            None,
            failure="not_an_option",
            detail=f"{detail} names {payload.letter!r}, which is not an option",
            position=position,
            final=False,
        )
    return None


# --- boxes ---------------------------------------------------------------------------------------

# Between two boxed letters, text made only of these says "one or the other": a hedge.
_HEDGE_RE: Final = re.compile(
    r"(?:[\s$,;/|&.:+\-()\[\]\\]|\b(?:or|and|either|maybe|perhaps|possibly|probably|likely|"
    r"vs|versus|also|could|might|may|be|both|nor|neither|then|so|the|answer|is|are|it|its|"
    r"else|unless|if|otherwise|not|rather|than|alternatively|one|of|these|those)\b)*",
    re.IGNORECASE,
)


def _box_hedge(context: Context, chosen_start: int, letter: str) -> tuple[str, ...]:
    """What the boxes joined to the chosen one by hedge words say, when it differs from it.

    ``\\boxed{A} or \\boxed{B}`` and ``\\boxed{A} or \\boxed{optB}`` are hedges whichever box a
    step reads; a box joined by real prose ("but on reflection the answer is") is a revision.
    """
    boxes = context.box_readings()
    index = next((i for i, (box, _) in enumerate(boxes) if box.start == chosen_start), None)
    if index is None:
        return ()
    said = [letter]
    for step in (-1, 1):
        current = index
        while 0 <= current + step < len(boxes):
            near = current + step
            left, right = (near, current) if step == -1 else (current, near)
            if _HEDGE_RE.fullmatch(context.text, boxes[left][0].end, boxes[right][0].start) is None:
                break
            reading = boxes[near][1]
            other = _letter_of(reading)
            if reading.kind == "letters":
                said.extend(reading.letters)
            elif other is not None:
                said.append(other.upper())
            else:
                said.append(match_option_text(reading.raw, context.options) or reading.raw)
            current = near
    distinct = tuple(dict.fromkeys(said))
    return distinct if len(distinct) > 1 else ()


def _letter_of(reading: BoxReading) -> str | None:
    if reading.kind in ("letter", "labelled") and reading.letters:
        return reading.letters[0]
    return None


def _labelled_is_option_text(reading: BoxReading, options: Mapping[str, str]) -> bool:
    """``\\boxed{E. coli}`` names the option whose text is "E. coli", not option E."""
    return reading.kind == "labelled" and match_option_text(reading.raw, options) is not None


@register_step_kind("boxed_letter")
@attrs.frozen(kw_only=True)
class BoxedLetter:
    """The letter in a ``\\boxed{}`` or ``\\fbox{}``, in any wrapper.

    Reads a bare letter, a wrapped one (``\\text{}``, ``\\textbf{}``, ``(B)``, ``[B]``, ...) and,
    with ``labels``, a labelled choice (``C: text``). Empty and unclosed boxes are skipped, and so
    are boxes holding no letter. A box listing several letters, or boxes joined as a hedge
    (``\\boxed{A} or \\boxed{B}``), are ambiguous. ``which`` picks the first or last lettered box.
    """

    which: Which = "last"
    labels: bool = True
    lowercase: bool = True

    def __call__(self, context: Context) -> Extraction | None:
        lettered: list[tuple[int, int, BoxReading]] = []
        for box, reading in context.box_readings():
            if reading.kind in ("letters", "letter") or (
                reading.kind == "labelled"
                and self.labels
                and not _labelled_is_option_text(reading, context.options)
            ):
                lettered.append((box.start, box.end, reading))
        if not lettered:
            return None
        index = -1 if self.which == "last" else 0
        start, _, reading = lettered[index]
        if reading.kind == "letters":
            return Extraction(
                None,
                failure="ambiguous",
                detail=f"the box lists several letters: {', '.join(reading.letters)}",
                position=start,
            )
        letter = _letter_of(reading)
        assert letter is not None
        if letter.islower() and not self.lowercase:
            return Extraction(
                None,
                failure="no_answer",
                detail="lowercase boxed letter",
                position=start,
                final=False,
            )
        letter = letter.upper()
        hedge = _box_hedge(context, start, letter)
        if hedge:
            return Extraction(
                None,
                failure="ambiguous",
                detail=f"hedged boxes: {', '.join(hedge)}",
                position=start,
            )
        return _answer(
            context,
            letter,
            position=start,
            clean=len(lettered) == 1 and reading.kind == "letter",
            detail="boxed letter",
        )


@register_step_kind("boxed_option_text")
@attrs.frozen(kw_only=True)
class BoxedOptionText:
    """Option text inside the chosen box (``\\boxed{Square}``), mapped to its letter.

    ``match``: ``normalised`` compares case- and whitespace-folded text for equality;
    ``contains`` also accepts a box whose text contains exactly one option's text (word-bounded).
    An exact match always beats containment; more than one candidate is ambiguous.
    """

    which: Which = "last"
    match: Literal["normalised", "contains"] = "normalised"

    def __call__(self, context: Context) -> Extraction | None:
        readings = context.box_readings()
        if not readings:
            return None
        box, reading = readings[-1] if self.which == "last" else readings[0]
        raw = reading.raw
        exact = match_option_text(raw, context.options)
        if exact is not None:
            hedge = _box_hedge(context, box.start, exact)
            if hedge:
                return Extraction(
                    None,
                    failure="ambiguous",
                    detail=f"hedged boxes: {', '.join(hedge)}",
                    position=box.start,
                )
            return Extraction(exact, position=box.start, detail="option text in a box")
        if self.match != "contains":
            return None
        wanted = normalise_option_text(raw)
        hits = []
        for letter, option in context.options.items():
            norm = normalise_option_text(option)
            if norm and _word_bounded(norm).search(wanted):
                hits.append(letter)
        # An option whose text is part of a longer matching option (PCR in "Reverse
        # transcription PCR") is not a separate candidate.
        texts = {letter: normalise_option_text(context.options[letter]) for letter in hits}
        hits = [h for h in hits if not any(h != o and texts[h] in texts[o] for o in hits)]
        if len(hits) == 1:
            return Extraction(hits[0], position=box.start, detail="option text contained in a box")
        if len(hits) > 1:
            return Extraction(
                None,
                failure="ambiguous",
                detail=f"the box matches several options: {', '.join(hits)}",
                position=box.start,
            )
        return None


@functools.lru_cache(maxsize=4096)
def _word_bounded(text: str) -> re.Pattern[str]:
    """``text`` as a literal that must stand as whole words; compiled once per option text."""
    return re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")


# --- regexes -------------------------------------------------------------------------------------

PayloadKind: TypeAlias = Literal["letter", "option_text", "answer"]


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

    ``which`` picks the first or the last (rightmost) match. The capture is ``group`` when given,
    else the group named ``answer``, else the last group that took part in the match. ``payload``
    says how to read it: ``letter`` (a lone letter, or else an option's exact text), ``option_text``
    (an option's text), or ``answer`` (a free answer payload: wrappers, lists, labels). A single
    letter that runs on into a word (the ``d`` of "definitely" under ``ignorecase``) is no answer.
    Patterns run on a time-bounded engine.
    """

    flags: tuple[str, ...] = attrs.field(
        default=("ignorecase",), converter=tuple, validator=_check_flags
    )
    pattern: tuple[str, ...] = attrs.field(converter=_as_patterns, validator=_check_patterns)
    which: Which = "last"
    group: int | str | None = None
    payload: PayloadKind = "letter"
    lowercase: bool = True

    def __call__(self, context: Context) -> Extraction | None:
        return run_patterns(
            self.pattern,
            flags_from_names(self.flags),
            context,
            which=self.which,
            group=self.group,
            payload=self.payload,
            lowercase=self.lowercase,
        )


def run_patterns(
    patterns: Sequence[str],
    flags: int,
    context: Context,
    *,
    which: Which = "last",
    group: int | str | None = None,
    payload: PayloadKind = "letter",
    lowercase: bool = True,
) -> Extraction | None:
    """Try ``patterns`` in order; the first answer wins, else the first problem met."""
    kept: Extraction | None = None
    for source in patterns:
        found = _run_pattern(
            source, flags, context, which=which, group=group, payload=payload, lowercase=lowercase
        )
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
    group: int | str | None,
    payload: PayloadKind,
    lowercase: bool,
) -> Extraction | None:
    """One pattern: its best finding over the text."""
    compiled = compile_pattern(source, flags)
    if compiled.error is not None:
        return Extraction(None, failure="invalid_regex", detail=compiled.error, final=False)
    text = context.text
    try:
        matches = compiled.finditer(text, context.regex_timeout)
    except RegexTimeout as exc:
        return Extraction(None, failure="regex_timeout", detail=str(exc), final=False)
    ordered = reversed(matches) if which == "last" else iter(matches)
    for match in ordered:
        captured, start = _capture(match, group)
        if captured is None:
            continue
        detail = f"pattern {source!r}"
        if payload == "answer":
            found = _from_payload(
                read_payload(captured, context.options, lowercase=lowercase),
                position=start,
                clean=True,
                detail=detail,
            )
            if found is not None:
                return found
            continue
        if payload == "letter":
            letter_match = _LETTER_CAPTURE_RE.match(localise_letters(captured))
            if letter_match is not None:
                end = start + len(captured)
                if end < len(text) and text[end].isalpha() and len(captured.strip()) == 1:
                    continue  # the letter starts a word: "answer is definitely ..."
                letter = letter_match.group(1)
                if letter.islower() and not lowercase:
                    continue
                return _answer(context, letter.upper(), position=start, clean=True, detail=detail)
        by_text = match_option_text(captured, context.options, punctuation=False, numeric=False)
        if by_text is not None:
            return Extraction(by_text, position=start, clean=True, detail=f"{detail} (option text)")
    return None


# --- answer lines --------------------------------------------------------------------------------


def _labels(value: str | Sequence[str]) -> tuple[str, ...]:
    labels = (value,) if isinstance(value, str) else tuple(value)
    if not labels or not all(isinstance(x, str) and x.strip() for x in labels):
        raise ParameterError("labels", "labels must be non-empty strings")
    return labels


@register_step_kind("answer_line")
@attrs.frozen(kw_only=True)
class AnswerLine:
    """An ``Answer: X`` line: a label, a colon, and a payload to the end of the line.

    ``labels`` are literal phrases (data, never regexes: ``Answer``, ``Final answer``, ``答案``);
    ``markdown`` allows ``**Answer:** B`` and ``__Answer__: B`` decorations; ``which`` picks the
    first or last line; ``fallback`` walks back past lines whose payload names nothing usable.
    ``strict_payload`` accepts only a lone letter or an option's exact text (the legacy
    ``lenient_answer_colon`` reading); otherwise payloads are read leniently (``(B)``, ``$D$``,
    ``B) text``, ``option B``) and lists such as ``A/B`` are ambiguous. ``colon_optional`` makes
    the colon optional, for phrase labels such as ``the answer is`` or ``答えは``; ``word_start``
    requires the label to start a word. ``sample_prefix``
    also reads the payload after the sample's own ``answer_prefix`` (nemo-gym 0.7.0's localised
    closing phrases, e.g. ``答えは``), with the text NFKC-normalised.
    """

    labels: tuple[str, ...] = attrs.field(default=("answer",), converter=_labels)
    markdown: bool = False
    which: Which = "last"
    fallback: bool = False
    strict_payload: bool = False
    colon_optional: bool = False
    word_start: bool = False
    option_text: bool = True
    last_letter: bool = True
    lowercase: bool = True
    sample_prefix: bool = False
    # One pattern per label, each starting with the label's literal lowercase text, run over
    # lowercased text: a literal prefix lets the regex engine skip ahead at C speed, and a label
    # absent from the text (checked with ``in``) costs no regex run at all. The case-insensitive
    # alternation is for the rare text whose length lowercasing changes.
    _per_label: tuple[tuple[str, re.Pattern[str]], ...] = attrs.field(
        init=False, repr=False, eq=False
    )
    _folded: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _words: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _ascii_words: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        deco = r"[*_]{0,2}" if self.markdown else ""
        separator = r"\s*[:：]?" if self.colon_optional else r"\s*[:：]"
        after = r"[*_\s]*" if self.markdown else r"\s*"
        tail = rf"{deco}{separator}{after}([^\n]+)"
        lowered = sorted({label.lower() for label in self.labels}, key=len, reverse=True)
        # Each label is looked for by one of its words, chosen so that labels share words
        # ("answer" for "final answer" and "answer is"): one ``in`` test serves them all.
        counts = Counter(word for label in lowered for word in set(label.split()))
        per_label = tuple(
            (
                max(label.split(), key=lambda w: (len(w) >= 4, counts[w], len(w))),
                re.compile(re.escape(label) + tail),
            )
            for label in lowered
        )
        alternatives = "|".join(re.escape(label) for label in lowered)
        object.__setattr__(self, "_per_label", per_label)
        words = tuple(dict.fromkeys(word for word, _ in per_label))
        object.__setattr__(self, "_words", words)
        object.__setattr__(self, "_ascii_words", tuple(w for w in words if w.isascii()))
        object.__setattr__(self, "_folded", re.compile(rf"(?:{alternatives}){tail}", re.IGNORECASE))

    def _starts_word(self, text: str, position: int) -> bool:
        before = position - 1
        if self.markdown:
            while before >= 0 and position - before <= 2 and text[before] in "*_":
                before -= 1
        return before < 0 or not text[before].isalnum()

    def _scan(self, context: Context, start: int, stop: int) -> list[tuple[int, str]]:
        """(position, payload) of every labelled line starting in ``text[start:stop]``."""
        text = context.text
        # Reach past ``stop`` so a label near the end can take its payload from the next lines.
        reach = text.find("\n", min(len(text), stop + 256))
        end = len(text) if reach == -1 else reach
        whole = start == 0 and end == len(text)
        chunk = text if whole else text[start:end]
        lowered = context.lowered() if whole else chunk.lower()
        if len(lowered) == len(chunk):
            # Words in another script cannot occur in ASCII text: skip their tests there.
            words = self._ascii_words if lowered.isascii() else self._words
            present = dict.fromkeys(self._words, False)
            for word in words:
                present[word] = context.contains(word) if whole else word in lowered
            matches = [
                match
                for word, pattern in self._per_label
                if present[word]
                for match in pattern.finditer(lowered)
            ]
            if len(self._per_label) > 1:
                matches.sort(key=lambda m: m.start())
        else:
            matches = list(self._folded.finditer(chunk))
        found: list[tuple[int, str]] = []
        taken = -1
        for match in matches:
            position = start + match.start()
            if position >= stop:
                break
            if match.start() < taken:
                continue  # a shorter label inside a longer one's match ("answer" in "final answer")
            if self.word_start and not self._starts_word(text, position):
                continue
            taken = match.end(1)
            found.append((position, chunk[match.start(1) : match.end(1)]))
        return found

    def _payloads(self, context: Context, prefix: str | None) -> Iterator[tuple[int, str]]:
        """Labelled payloads in reading order: from the end backwards when ``which`` is last.

        Scanning backwards in growing chunks of whole lines makes the common case (the answer
        near the end) cost the same for a 2 KB and a 1 MB output, and the worst case linear.
        """
        text = context.text
        if prefix:
            found = self._scan(context, 0, len(text))
            found += [(m.start(), m.group(1)) for m in _prefix_regex(prefix).finditer(text)]
            found.sort()
            yield from (reversed(found) if self.which == "last" else found)
            return
        if self.which == "first":
            yield from self._scan(context, 0, len(text))
            return
        stop, size = len(text), 4096
        while stop > 0:
            start = max(0, stop - size)
            if start > 0:
                start = text.rfind("\n", 0, start) + 1
            yield from reversed(self._scan(context, start, stop))
            stop, size = start, size * 4

    def __call__(self, context: Context) -> Extraction | None:
        prefix = context.answer_prefix if self.sample_prefix else None
        if prefix:
            context = Context(
                unicodedata.normalize("NFKC", context.text),
                context.options,
                regex_timeout=context.regex_timeout,
            )
        kept: Extraction | None = None
        for position, payload in self._payloads(context, prefix):
            if self.strict_payload:
                found = self._strict(payload, context, position)
            else:
                found = _from_payload(
                    read_payload(
                        payload,
                        context.options,
                        option_text=self.option_text,
                        last_letter=self.last_letter,
                        lowercase=self.lowercase,
                    ),
                    position=position,
                    clean=True,
                    detail="answer line",
                )
            if not self.fallback:
                return found
            if found is None:
                continue
            if found.letter is not None:
                return found
            kept = kept or attrs.evolve(found, final=False)
        return kept

    def _strict(self, payload: str, context: Context, position: int) -> Extraction | None:
        candidate = payload.strip()
        while candidate.startswith("\\text{") and candidate.endswith("}"):
            candidate = candidate[6:-1].strip()
        if len(candidate) == 1 and candidate.isalpha():
            if candidate.islower() and not self.lowercase:
                return None
            return _answer(
                context, candidate.upper(), position=position, clean=True, detail="answer line"
            )
        letter = match_option_text(candidate, context.options, punctuation=False, numeric=False)
        if letter is not None:
            return Extraction(
                letter, position=position, clean=True, detail="answer line (option text)"
            )
        return None


@functools.lru_cache(maxsize=256)
def _prefix_regex(prefix: str) -> re.Pattern[str]:
    # The prefix is row data: escaped, so it is matched literally and can never be a pattern.
    literal = re.escape(unicodedata.normalize("NFKC", prefix).strip())
    return re.compile(rf"{literal}\s*[:：]?\s*([^\n]+)", re.IGNORECASE)


# --- whole-output readings -----------------------------------------------------------------------

Scope: TypeAlias = Literal["whole", "last_line"]


def _scoped(text: str, scope: Scope) -> tuple[str, int]:
    stripped = text.rstrip()
    if scope == "whole":
        return stripped.strip(), len(stripped) - len(stripped.lstrip())
    cut = stripped.rfind("\n")
    return stripped[cut + 1 :].strip(), cut + 1


def _line_before(text: str, position: int) -> str:
    """The last non-blank line that ends before ``position``, stripped."""
    before = text[max(0, position - 4096) : position].rstrip()
    return before[before.rfind("\n") + 1 :].strip()


def _listed(letter: str, other: str | None, position: int) -> Extraction | None:
    """A one-per-line list (``A`` / ``B`` / ``C``, or option texts) is no single answer."""
    if other is None or other == letter:
        return None
    return Extraction(
        None,
        failure="ambiguous",
        detail=f"the last lines list several choices: {other}, {letter}",
        position=position,
    )


_LISTING_RE: Final = re.compile(r"^\(?[A-Za-z][):.]\s+\S")


@register_step_kind("option_text")
@attrs.frozen(kw_only=True)
class OptionTextStep:
    """The whole output, or its last line, is exactly one option's text.

    ``punctuation`` ignores punctuation and ``numeric`` compares numbers by value (``12.0`` is
    ``12``, ``120`` is not). Two options with the same normalised text match nothing.
    """

    scope: Scope = "last_line"
    punctuation: bool = True
    numeric: bool = True

    def __call__(self, context: Context) -> Extraction | None:
        line, position = _scoped(context.text, self.scope)
        if not line or len(line) > 2000:
            return None
        letter = match_option_text(
            line, context.options, punctuation=self.punctuation, numeric=self.numeric
        )
        if letter is None:
            return None
        if self.scope == "last_line":
            previous = match_option_text(
                _line_before(context.text, position),
                context.options,
                punctuation=self.punctuation,
                numeric=self.numeric,
            )
            listed = _listed(letter, previous, position)
            if listed is not None:
                return listed
        return Extraction(letter, position=position, detail="the output is an option's text")


@register_step_kind("standalone_letter")
@attrs.frozen(kw_only=True)
class StandaloneLetter:
    """A letter standing alone: the whole output or its last line is ``B``, ``(B)``, ``**B.**``.

    With ``anywhere`` the last standalone capital option letter anywhere in the text counts
    (lm-eval's flexible fallback); it can be fooled by an echoed question, so no built-in mode
    uses it. A line that lists an option (``A: text``) is never read as an answer.
    """

    scope: Scope = "last_line"
    anywhere: bool = False
    lowercase: bool = False

    def __call__(self, context: Context) -> Extraction | None:
        if self.anywhere:
            for match in reversed(list(_STANDALONE_CAPITAL_RE.finditer(context.text))):
                if match.group(1) in context.options:
                    return Extraction(
                        match.group(1), position=match.start(), detail="last standalone letter"
                    )
            return None
        line, position = _scoped(context.text, self.scope)
        payload = self._lone(line, context)
        if payload is None:
            return None
        if payload.kind == "letter" and payload.letter is not None and self.scope == "last_line":
            previous = self._lone(_line_before(context.text, position), context)
            listed = _listed(
                payload.letter, previous.letter if previous is not None else None, position
            )
            if listed is not None:
                return listed
        return _from_payload(payload, position=position, clean=False, detail="a lone letter")

    def _lone(self, line: str, context: Context) -> Payload | None:
        """The payload of a line that is a lone letter (or a letter list), else ``None``."""
        if not line or len(line) > 24 or _LISTING_RE.match(line):
            return None
        payload = read_payload(
            line, context.options, option_text=False, last_letter=False, lowercase=self.lowercase
        )
        if payload.kind == "ambiguous" or (
            payload.kind == "letter" and len(line.strip("*_`$()[]{}.:!\\ \t")) == 1
        ):
            return payload
        return None


_STANDALONE_CAPITAL_RE: Final = re.compile(r"(?<![A-Za-z0-9])([A-Z])(?![A-Za-z0-9])")


def _tags(value: str | Sequence[str]) -> tuple[str, ...]:
    tags = (value,) if isinstance(value, str) else tuple(value)
    if not tags or not all(
        isinstance(t, str) and re.fullmatch(r"[A-Za-z_][\w\-]*", t) for t in tags
    ):
        raise ParameterError("tags", "tags must be XML-style names such as answer or final_answer")
    return tuple(t.lower() for t in tags)


@register_step_kind("tagged_answer")
@attrs.frozen(kw_only=True)
class TaggedAnswer:
    """The content of the last ``<answer>...</answer>``-style tag pair: a letter or option text.

    ``tags`` are the element names to read (``answer``, ``solution``, ``choice``); the content is
    read as an answer payload, so ``<answer>(B)</answer>``, ``<choice>option text</choice>`` and
    ``<answer>A or B</answer>`` (ambiguous) are all understood.
    """

    tags: tuple[str, ...] = attrs.field(default=("answer",), converter=_tags)

    def __call__(self, context: Context) -> Extraction | None:
        if "</" not in context.text:
            return None
        lowered = context.lowered()
        if len(lowered) != len(context.text):
            return None
        best: tuple[int, int, int] | None = None
        for tag in self.tags:
            close = lowered.rfind(f"</{tag}>")
            if close == -1:
                continue
            open_at = lowered.rfind(f"<{tag}>", 0, close)
            if open_at == -1:
                continue
            if best is None or open_at > best[0]:
                best = (open_at, open_at + len(tag) + 2, close)
        if best is None:
            return None
        position, start, end = best
        content = context.text[start:end]
        if len(content) > 2000:
            return None
        return _from_payload(
            read_payload(content, context.options, last_letter=False),
            position=position,
            clean=True,
            detail="a tagged answer",
        )
