"""The candidate an answer statement makes: a cue and the payload read after it, converted once
(``statement_of``), for every statement kind in ``statements``."""

from __future__ import annotations

import re
from typing import Final

from choicebox.find._payload import BRACKETED_LETTER, PayloadReading
from choicebox.find._values import numbered_option

from ._api import Candidate, Context, StatementKind
from ._several import listed_with_values, one_per_case, one_per_condition, rest_of_sentence

__all__ = ["may_give_option_text", "numbered_option_of", "option_by_text", "statement_of", "strictly"]

_KIND_OF: Final[dict[str, StatementKind]] = {
    "letter": "commitment",
    "hedge": "hedge",
    "retract": "retraction",
    "none": "no_option",
    "value": "value",
}
_STRICT_END: Final = re.compile(r"[\s*_`'\".!)\]]*+(?:\n|$)")


def strictly(context: Context, reading: PayloadReading) -> PayloadReading:
    """``payload: strict``: only a lone letter ending its line counts."""
    if reading.kind == "letter" and not reading.tail and _STRICT_END.match(context.folded, reading.end):
        return reading
    return PayloadReading("empty", (), reading.end)


def statement_of(
    context: Context,
    reading: PayloadReading,
    start: int,
    *,
    final: bool = False,
    part: bool = False,
    how: str,
    origin: str = "labelled",
    cue_end: int,
    layout: str = "",
) -> Candidate | None:
    """The candidate a cue (``text[start:cue_end]``) and its payload reading make. A letter read
    alone may open a list of letters each with a value, or one letter per condition: for every
    cue, those name several options."""
    kind = _KIND_OF.get(reading.kind)
    if kind is None:
        return None
    if reading.cited:
        how = f"{how} (an option cited by letter and text)"
    candidate = context.candidate(
        kind, start, reading.end, reading.letters, final=final, part=part or reading.part,
        value=reading.value or reading.tail, how=how, origin=origin,
        cue=context.folded[start:cue_end].strip(), layout=layout or reading.layout, payload=reading.form,
    )  # fmt: skip
    if candidate.kind == "commitment":
        equal = _ANOTHER_AS_GOOD.match(context.folded, reading.end)
        if equal is not None and equal["L"] in context.options and equal["L"] not in candidate.letters:
            # "I'd say B, but D is equally defensible": two options, neither chosen (rule 4)
            return candidate._replace(kind="hedge", letters=(*candidate.letters, equal["L"]), end=equal.end())
        candidate = listed_with_values(context, candidate, reading.end)
    if candidate.kind == "commitment":
        candidate = one_per_condition(context, candidate, reading.end)
    if candidate.kind == "commitment":
        candidate = one_per_case(context, candidate, reading.end)
    return candidate


def may_give_option_text(context: Context, low: str) -> bool:
    """Some option's first word stands in the text (``low``): it may give that option's text."""
    return any(low.find(words[0]) != -1 for words in context.features.citations().values())


# Another option said to be as good right after the payload: "B, but D is equally defensible".
_ANOTHER_AS_GOOD: Final = re.compile(
    r"[*_)\]]*+[ \t]*+[,;]?[ \t]*+(?:but|though|although|yet|and|while)[ \t]++(?:option[ \t]++)?[(\[]?(?P<L>[A-Z])[)\]]?"
    r"[ \t]++(?:is|seems|would[ \t]++be|could[ \t]++be|looks)[ \t]++(?:equally|just[ \t]++as|as)[ \t]++"
    r"(?:defensible|valid|plausible|likely|correct|good|right|reasonable|strong|possible)\b",
    re.IGNORECASE,
)
_ASIDE_AFTER: Final = re.compile(r"[ \t]*+\([^()\n]{1,24}\)[ \t]*+$")


def numbered_option_of(context: Context, candidate: Candidate) -> list[str] | None:
    """The option a value statement names by its number ("the answer is option 2"), as
    ``choicebox.find._values.numbered_option`` reads it from the statement's text before the value."""
    span = context.folded[candidate.start : candidate.end]
    at = span.rfind(candidate.value[:40])
    return numbered_option(span[:at] if at >= 0 else span, candidate.value, context.options, context.question)


def option_by_text(context: Context, candidate: Candidate) -> Candidate | None:
    """A value statement that gives exactly one option's whole text ("I'd go with Operant
    conditioning"), or names it by its number ("I'd go with option 2"), as a commitment to that
    option (rule 5); else ``None``, also when a letter follows in its sentence ("I'd go with 12 N,
    which is (D)"): a letter, given, beats the content, and is read as what it is."""
    numbered = numbered_option_of(context, candidate)
    hits = numbered if numbered is not None else context.features.matching_letters(candidate.value)
    if not hits and numbered is None:
        # the text, then its abbreviation or a short aside: "CT pulmonary angiography (CTPA)"
        aside = _ASIDE_AFTER.search(candidate.value)
        if aside is not None and aside.start() > 0:
            hits = context.features.matching_letters(candidate.value[: aside.start()])
    if len(hits) != 1:
        return None
    if BRACKETED_LETTER.search(context.folded, candidate.end, rest_of_sentence(context.folded, candidate.end)):
        return None
    form = "option's number" if numbered else "option's text"
    return candidate._replace(
        kind="commitment", letters=(hits[0],), how=f"{candidate.how} (an {form})", payload=form
    )
