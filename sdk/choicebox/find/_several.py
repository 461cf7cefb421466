"""One statement that names several options though its payload reads as one letter: letters
listed each with a value ("The correct answers are A: 100 MHz, B: 50 kHz"), one letter per
condition ("(C) if the volume is fixed, but (D) if the pressure is"). ``statements._statement``,
which builds every cue's statement, applies both (rule 4 of the reading rules).
"""

from __future__ import annotations

import re
from typing import Final

from choicebox.find._payload import CONTRAST

from ._api import Candidate, Context

__all__ = ["SENTENCE_STOP", "listed_with_values", "one_per_condition", "rest_of_sentence"]

# Where a sentence stops: a full stop that is no decimal point, or a line's end.
SENTENCE_STOP: Final = re.compile(r"(?<!\d)\.(?!\d)|\.(?=\s)|\n")


def rest_of_sentence(text: str, start: int) -> int:
    """Where the sentence going on at ``start`` stops giving its payload: at its end, or at a
    contrast ("Operant conditioning, not (D)": what follows is excluded, not given)."""
    limit = min(len(text), start + 200)
    stop = SENTENCE_STOP.search(text, start, limit)
    end = stop.start() if stop else limit
    contrast = CONTRAST.search(text, start, end)
    return end if contrast is None else contrast.start()


def listed_with_values(context: Context, candidate: Candidate, end: int) -> Candidate:
    """"The correct answers are A: 100 MHz, B: 50 kHz, and C: 4": letters listed in one sentence,
    each labelling a value, name several options (rule 4), however the first one reads alone."""
    text = context.folded
    if _LABEL_MARK.match(text, end) is None:
        return candidate
    stop = rest_of_sentence(text, end)
    others = [m.group(1) for m in _LISTED_LABEL.finditer(text, end, stop) if m.group(1) in context.options]
    letters = tuple(dict.fromkeys((*candidate.letters, *others)))
    if len(letters) == 1:
        return candidate
    return candidate._replace(
        kind="hedge", letters=letters, end=stop, how=f"{candidate.how} (several letters, each with a value)"
    )


def one_per_condition(context: Context, candidate: Candidate, end: int) -> Candidate:
    """"The answer is (C) if the volume is fixed, but (D) if the pressure is": a letter under a
    condition with another letter for another case in its sentence names both (rule 4); a
    letter under a condition alone ("(C) if we ignore friction") stays the answer."""
    text = context.folded
    if _CONDITION_NEXT.match(text, end) is None:
        return candidate
    limit = min(len(text), end + 200)
    stop = SENTENCE_STOP.search(text, end, limit)
    others = [next(g for g in m.groups() if g) for m in _ALTERNATIVE.finditer(text, end, stop.start() if stop else limit)]
    letters = tuple(dict.fromkeys((*candidate.letters, *(x for x in others if x in context.options))))
    if len(letters) == 1:
        return candidate
    return candidate._replace(kind="hedge", letters=letters, how=f"{candidate.how} (one letter per condition)")


# The words that put a letter under a condition: "(C) if ...", "**(A)** when ...".
_CASE_WORDS: Final = r"(?i:(?:only[ \t]++)?(?:if|when|unless|provided|assuming))\b"
# A condition right after an answer's letter: "(C) if ...", "B, provided ...".
_CONDITION_NEXT: Final = re.compile(rf"[*_)\]]*+[ \t,]*+{_CASE_WORDS}")
# Another case's letter in the same sentence, under its own condition: "(D) if ...", "**B**
# otherwise", "...; C if ..." ("not (D)", "option D's derivation" name no other case; a bare
# letter counts only after a semicolon or "but" ("..., or A if we mean Gaul, but the question
# means today" settles it), never "I", the pronoun, nor under a counterfactual: "; A if it were
# incompressible, which no gas is").
_ALTERNATIVE: Final = re.compile(
    r"(?:\(([A-Z])\)|\*\*\(?([A-Z])\)?\*\*|\b(?i:option|choice)[ \t]++\(?([A-Z])\)?|"
    r"(?:;[ \t]*+(?:(?i:and|but|or)[ \t]++)?|\b(?i:but)[ \t]++)([A-HJ-Z])(?=[ \t]++(?!(?i:if[ \t]++\w++[ \t]++were)\b)))"
    rf"(?=[*_ \t,]*+(?:{_CASE_WORDS}|(?i:otherwise|in[ \t]++the[ \t]++other)\b))"
)
# The mark after a letter that labels a value: "A: 100 MHz", "(B) = 50 kHz".
_LABEL_MARK: Final = re.compile(r"[)\]]?[*_]*+[ \t]*+:")
# A further letter labelling a value in the same sentence: ", B: 50 kHz", "; and (C): 4" (not
# "I = 6 A": a variable).
_LISTED_LABEL: Final = re.compile(
    r"(?:[,;]|\band\b)[ \t]*+(?:and[ \t]++)?[*_]*+[(\[]?([A-Z])[)\]]?[*_]*+[ \t]*+:"
)
