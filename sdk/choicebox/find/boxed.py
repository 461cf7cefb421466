"""Step kinds that read ``\\boxed{...}`` answers: a boxed letter, or a boxed option text."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import attrs

from choicebox._letters import (
    match_option_text,
    normalise_option_text,
    normalised_option,
)
from choicebox.find._boxed import Box, BoxReading
from choicebox.find._payload import read_at

from ._api import (
    Candidate,
    Context,
    Extraction,
    Leniency,
    Which,
    _answer,
    extraction_of,
    picked,
    register_step_kind,
)

# --- boxes ---------------------------------------------------------------------------------------

# Between two boxed letters, text made only of these says "one or the other": a hedge (also
# inside LaTeX's text wrappers: "\boxed{C} \text{ or } \boxed{H}").
_HEDGE_RE: Final = re.compile(
    r"(?:[\s$,;/|&.:+\-()\[\]\\{}]|\b(?:text|textrm|mathrm|quad|qquad)\b|"
    r"\b(?:or|and|either|maybe|perhaps|possibly|probably|likely|"
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
            if reading.kind == "hedge":
                said.extend(reading.letters)
            elif other is not None:
                said.append(other.upper())
            else:
                said.append(match_option_text(reading.raw, context.options) or reading.raw)
            current = near
    distinct = tuple(dict.fromkeys(said))
    return distinct if len(distinct) > 1 else ()


def _said(reading: BoxReading, options: Mapping[str, str]) -> tuple[str, ...]:
    """What one box says, for telling whether boxes joined as a hedge say different things."""
    if reading.kind == "hedge":
        return tuple(letter.upper() for letter in reading.letters)
    letter = _letter_of(reading)
    if letter is not None:
        return (letter.upper(),)
    return (match_option_text(reading.raw, options) or reading.raw,)


def _hedged(context: Context) -> dict[int, tuple[str, ...]]:
    """Box start -> the distinct things said by its hedge group, for boxes joined by hedge words
    to boxes that say something else, at least one of them a letter (boxes of values joined by
    "and" are values). One pass over the boxes and the gaps between them."""
    boxes = context.box_readings()
    hedged: dict[int, tuple[str, ...]] = {}
    group: list[int] = [0] if boxes else []
    for index in range(1, len(boxes) + 1):
        joined = index < len(boxes) and (
            _HEDGE_RE.fullmatch(context.text, boxes[index - 1][0].end, boxes[index][0].start) is not None
        )
        if joined:
            group.append(index)
            continue
        if len(group) > 1 and any(_letter_of(boxes[i][1]) or boxes[i][1].kind == "hedge" for i in group):
            said = tuple(
                dict.fromkeys(x for i in group for x in _said(boxes[i][1], context.options))
            )
            if len(said) > 1:
                for i in group:
                    hedged[boxes[i][0].start] = said
        group = [index]
    return hedged


_NUMBER_START: Final = frozenset("0123456789-+.$")
_BARE_BOX: Final = re.compile(r"\\(?:boxed|fbox)[ \t]++(?=[(\[]?[A-Za-z]\b)")


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

    Reads a bare letter and a wrapped one (``\\text{}``, ``\\textbf{}``, ``(B)``, ``[B]``, ...);
    ``payload: lenient`` (the default) also reads a labelled choice (``C: text``), ``strict`` does
    not. Empty and unclosed boxes are skipped, and so are boxes holding no letter. A box listing
    several letters, or boxes joined as a hedge (``\\boxed{A} or \\boxed{B}``), are ambiguous.
    ``which`` picks the first or last lettered box; ``lowercase`` accepts ``\\boxed{b}``.
    ``bare`` also reads ``\\boxed B`` (a box command followed by a bare letter, no braces).
    Reporting candidates (``find``), a box that holds no letter is a value (``\\boxed{27}``).
    """

    which: Which = "last"
    payload: Leniency = "lenient"
    lowercase: bool = True
    bare: bool = False

    def __call__(self, context: Context) -> Extraction | None:
        if self.bare:
            # A bare ``\boxed B`` is found only with the other statements (``find``): the
            # first-step answer is then picked from them, as for the statement kinds.
            candidate = picked(self.find(context), self.which)
            return None if candidate is None else extraction_of(candidate, context.options)
        lettered: list[tuple[int, int, BoxReading]] = []
        for box, reading in context.box_readings():
            if reading.kind in ("hedge", "letter") or (
                reading.kind == "labelled"
                and self.payload == "lenient"
                and not _labelled_is_option_text(reading, context.options)
            ):
                lettered.append((box.start, box.end, reading))
        if not lettered:
            return None
        index = -1 if self.which == "last" else 0
        start, _, reading = lettered[index]
        if reading.kind == "hedge":
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


    def find(self, context: Context) -> Sequence[Candidate]:
        """Every box, in text order: letters, hedges, and values (a box holding no letter)."""
        found: list[Candidate] = []
        readings = context.box_readings()
        if readings:
            hedged = _hedged(context)
            lettered = sum(1 for _, r in readings if r.kind in ("letter", "labelled", "hedge"))
            for box, reading in readings:
                candidate = self._candidate(context, box, reading, hedged, lettered)
                if candidate is not None:
                    found.append(candidate)
        if self.bare and "\\" in context.text:
            found += self._bare(context)
            found.sort(key=lambda c: c.start)
        return found

    def _candidate(
        self,
        context: Context,
        box: Box,
        reading: BoxReading,
        hedged: dict[int, tuple[str, ...]],
        lettered: int,
    ) -> Candidate | None:
        if box.start in hedged:
            return context.candidate("hedge", box.start, box.end, hedged[box.start], how="hedged boxes")
        if reading.kind == "hedge":
            letters = tuple(dict.fromkeys(x.upper() for x in reading.letters))
            return context.candidate("hedge", box.start, box.end, letters, how="a box listing several letters")
        letter = _letter_of(reading)
        if (
            letter is None
            or reading.raw[:1] in _NUMBER_START  # "40 g", "270 L", "-1": a value with its unit
            or (
                reading.kind == "labelled"
                and (self.payload == "strict" or _labelled_is_option_text(reading, context.options))
            )
        ):
            return context.candidate("value", box.start, box.end, value=reading.raw, how="a box holding no letter")
        if letter.islower() and not self.lowercase:
            return None
        return context.candidate(
            "commitment", box.start, box.end, (letter.upper(),), how="boxed letter",
            clean=lettered == 1 and reading.kind == "letter",
        )  # fmt: skip

    @staticmethod
    def _bare(context: Context) -> list[Candidate]:
        found = []
        text = context.folded
        for match in _BARE_BOX.finditer(text):
            reading = read_at(text, match.end(), min(len(text), match.end() + 12))
            if reading.kind == "letter":
                found.append(
                    context.candidate(
                        "commitment", match.start(), reading.end, reading.letters, how="a box command before a bare letter"
                    )
                )
        return found


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
        for letter in context.options:
            norm = normalised_option(context.options, letter)
            if norm and _word_bounded(norm).search(wanted):
                hits.append(letter)
        # An option whose text is part of a longer matching option (PCR in "Reverse
        # transcription PCR") is not a separate candidate.
        texts = {letter: normalised_option(context.options, letter) for letter in hits}
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

    def find(self, context: Context) -> Sequence[Candidate]:
        """Every box whose text is exactly one option's text."""
        found = []
        for box, reading in context.box_readings():
            letter = match_option_text(reading.raw, context.options)
            if letter is not None:
                found.append(
                    context.candidate("commitment", box.start, box.end, (letter,), how="option text in a box")
                )
        return found


@functools.lru_cache(maxsize=4096)
def _word_bounded(text: str) -> re.Pattern[str]:
    """``text`` as a literal that must stand as whole words; compiled once per option text."""
    return re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")


