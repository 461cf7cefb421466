"""One statement that names several options though its payload reads as one letter: letters
listed each with a value ("The correct answers are A: 100 MHz, B: 50 kHz"), one letter per
condition ("(C) if the volume is fixed, but (D) if the pressure is"; "(B) if ..., otherwise
(A)"), one letter per case ("If ..., the answer is (B); if ..., the answer is (A)").
``statements._statement``, which builds every cue's statement, applies all three (rule 4 of the
reading rules).
"""

from __future__ import annotations

import re
from typing import Final

from choicebox.find._payload import BRACKETED_LETTER, CONTRAST

from ._api import Candidate, Context
from ._vocab import sentence_opening

__all__ = ["SENTENCE_STOP", "listed_with_values", "one_per_case", "one_per_condition", "rest_of_sentence"]

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
    sentence_end = stop.start() if stop else limit
    others = [next(g for g in m.groups() if g) for m in _ALTERNATIVE.finditer(text, end, sentence_end)]
    others += [next(g for g in m.groups() if g) for m in _OTHERWISE.finditer(text, end, sentence_end)]
    letters = tuple(dict.fromkeys((*candidate.letters, *(x for x in others if x in context.options))))
    if len(letters) == 1:
        return candidate
    return candidate._replace(kind="hedge", letters=letters, how=f"{candidate.how} (one letter per condition)")


def one_per_case(context: Context, candidate: Candidate, end: int) -> Candidate:
    """"If the landlord elected, the answer is (B); if he has not, the answer is (A)": an answer
    in a clause that opens with a condition, in a sentence of two or more such clauses, names the
    letters of all of them (rule 4); "If we ignore friction, the answer is (B)." stays B."""
    text = context.folded
    start = sentence_opening(text, candidate.start, marks=_SENTENCE_MARKS)
    limit = min(len(text), end + 300)
    stop = SENTENCE_STOP.search(text, end, limit)
    stop_at = stop.start() if stop else limit
    cases = [m.end() for m in _CASE_CLAUSE.finditer(text, start, stop_at) if not _COUNTERFACTUAL.match(text, m.end())]
    if len(cases) < 2 or not any(at <= candidate.start for at in cases):
        return candidate
    if not (_CASE_OPENS.match(text, start, candidate.start) or any(at <= candidate.start for at in cases[1:])):
        return candidate
    letters = [
        m.group(1) for m in BRACKETED_LETTER.finditer(text, start, stop_at) if not _RULED_OUT.match(text, m.end())
    ]  # not the letters a case rules out: "If the rule applies, (A) is wrong; if not, ... (B)"
    named = tuple(dict.fromkeys((*candidate.letters, *(x for x in letters if x in context.options))))
    if len(named) == 1:
        return candidate
    return candidate._replace(kind="hedge", letters=named, how=f"{candidate.how} (one letter per case)")


# What ends the sentence before a case: a full stop (not a decimal point), "!", "?", a line
# break; not ";", which joins the cases of one sentence.
_SENTENCE_MARKS: Final = (". ", "! ", "? ", "\n")


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
# Another case's letter after "otherwise" or "else": "(B) if the mailbox rule applies, otherwise (A)".
_OTHERWISE: Final = re.compile(
    r"\b(?i:otherwise|else)\b[ \t,:]*+(?:(?i:it(?:'s|’s|[ \t]++is)|the[ \t]++answer[ \t]++is)[ \t]++)?"
    r"(?:\(([A-Z])\)|\*\*\(?([A-Z])\)?\*\*|(?i:option|choice)[ \t]++\(?([A-Z])\)?)"
)
# A case supposed against the facts: "if this were a receipt-rule state".
_COUNTERFACTUAL: Final = re.compile(r"(?:[ \t]++[\w'’-]++){1,4}?[ \t]++were\b")
# A letter judged wrong right after it: "(A) is wrong", "(C) is ruled out", "(D) fails".
_RULED_OUT: Final = re.compile(
    r"[ \t*_]*+(?:(?i:is|are|would[ \t]++be)[ \t]++(?:(?i:wrong|incorrect|false|out|not|ruled|eliminated|excluded))|(?i:fails))\b"
)
# A sentence that opens with a condition: "If the landlord elected, ...", "When x > 0, ...".
_CASE_OPENS: Final = re.compile(r"[\s*_>-]*+(?:(?i:but|and|so)[ \t,]++)?(?i:if|when|unless|assuming|provided)\b")
# A clause that opens with a condition, at the sentence's start or after "; ", ", but", ...
_CASE_CLAUSE: Final = re.compile(
    r"(?:^|(?<=[.!?\n])|[;,])[\s*_>-]*+(?:(?i:but|and|whereas|while|so)[ \t,]++)?(?i:if|when|unless)\b"
)
# The mark after a letter that labels a value: "A: 100 MHz", "(B) = 50 kHz".
_LABEL_MARK: Final = re.compile(r"[)\]]?[*_]*+[ \t]*+:")
# A further letter labelling a value in the same sentence: ", B: 50 kHz", "; and (C): 4" (not
# "I = 6 A": a variable).
_LISTED_LABEL: Final = re.compile(
    r"(?:[,;]|\band\b)[ \t]*+(?:and[ \t]++)?[*_]*+[(\[]?([A-Z])[)\]]?[*_]*+[ \t]*+:"
)
