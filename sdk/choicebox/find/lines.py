"""The ``payload_line`` step kind: a line that holds nothing but an answer's payload, where a
response opens or closes.

Many responses state the answer as a line of its own, with no cue: they open with it and then
explain ("**D. Stack**", then "Explanation: ..."; a base model's " (D) Treaty of Versailles", then
the next few-shot question), or close with it ("C — Vitamin B12 deficiency."). Such a line is the
payload layout with an empty cue: it is read by the one payload reader (``read_at``, citations
included), and counts when the payload fills the line: a letter in any decoration, an option
cited by its letter and text, or, on the lines ``text_lines`` names (the first of several by
default), an option's exact text. A line next to a line that lists another option restates the
options (LABELLING rule 6), or lists another question's, and counts for nothing.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import attrs

from choicebox.find._payload import fills_line, lists_beside, read_at

from ._api import Candidate, Context, Extraction, register_step_kind
from ._features import words_of

__all__ = ["PayloadLine"]

Where = Literal["first", "last", "after_rule"]


@register_step_kind("payload_line")
@attrs.frozen(kw_only=True)
class PayloadLine:
    """A payload alone on the response's first or last non-empty line (see the module docstring).

    ``lines`` says which lines are read (``[first, last]`` by default; ``after_rule``: the first
    line under a horizontal rule, "---", where a summary of the reasoning ends and the answer
    starts, when it is the only such line that holds a payload); ``text_lines`` which of
    them may hold an option's text alone, no letter (``[first]``: a closing line that only
    repeats an option's text is a fallback's to read, after every statement that names a letter);
    ``max_length`` is the longest line looked at (a line is a payload, not a paragraph).
    ``leads`` also reads a bold letter that opens the first line, its reason after a dash
    ("**C** — the cycle oxidizes acetyl-CoA ...", however long the line), when the reason uses a
    word of that option's own text and ends a sentence; not when it judges, doubts or asks
    ("**A** — incorrect", "... I think", "...?"), another bold letter is led the same way on the
    line, the options are listed after it, or a later line opens like it (a review, one option a
    line; "**I** — ..." then "**II** — ..."). It is weak evidence: a mode reads it as a fallback
    (``when: no_commitment``).
    """

    lines: tuple[Where, ...] = ("first", "last")
    text_lines: tuple[Where, ...] = ("first",)
    max_length: int = 200
    leads: bool = False

    def __call__(self, context: Context) -> Extraction | None:
        return None  # it weighs in only under a policy that reads every statement

    def find(self, context: Context) -> list[Candidate]:
        text = context.folded
        found: list[Candidate] = []
        # The last line of the part a policy kept (the whole text, but for a fallback, the text
        # before another question).
        first, last = _line(text, first=True), _line(text, first=False, end=context.window[1])
        if first is None or last is None:
            return []
        if first == last:
            # A one-line output is the whole output's own kinds' to read, but for its lead.
            lead = _lead(context, text, *first) if self.leads and "first" in self.lines else None
            return [] if lead is None else [lead]
        for where in self.lines:
            if where == "after_rule":
                candidate = self._after_rule(context, text, first, last)
                if candidate is not None and not (found and found[-1].start == candidate.start):
                    found.append(candidate)
                continue
            start, end = first if where == "first" else last
            if found and found[-1].start == start:
                continue
            candidate = None
            if end - start <= self.max_length:  # a payload, not a paragraph
                candidate = self._read(context, text, start, end, where, texts=where in self.text_lines)
            if candidate is None and self.leads and where == "first":
                candidate = _lead(context, text, start, end)
            if candidate is not None:
                found.append(candidate)
        return found

    def _after_rule(
        self, context: Context, text: str, first: tuple[int, int], last: tuple[int, int]
    ) -> Candidate | None:
        """The payload alone on the first line under a horizontal rule, when no other line under
        a rule holds one (sections each headed by an option, "---\n**A. text**" ..., review the
        options one by one)."""
        if "---" not in text and "***" not in text and "___" not in text:
            return None  # most outputs: no rule at all
        found = []
        for rule in _RULE.finditer(text, 0, context.window[1]):
            start, end = _next_line(text, rule.end())
            if end == 0 or end - start > self.max_length or (start, end) in (first, last):
                continue
            candidate = self._read(context, text, start, end, "after_rule", texts=False)
            if candidate is not None:
                found.append(candidate)
        if len(found) != 1:
            return None
        return found[0]._replace(how="a payload alone on the first line under a rule", layout="under a rule")

    @staticmethod
    def _read(context: Context, text: str, start: int, end: int, where: Where, *, texts: bool) -> Candidate | None:
        citations = context.features.citations()
        how = f"a payload alone on the {where} line"
        letter = None
        if _MAY_CITE.match(text, start, end) or text[end - 1] in ")*.":
            # Only a line that opens with a letter or ends with one can cite an option.
            reading = read_at(text, start, end, lowercase=False, citations=citations)
            if reading.kind == "letter" and reading.cited and fills_line(text, reading.end, end):
                letter = reading.letters[0]  # "**D. Stack**", "(D) Treaty of Versailles"
        lone = _LONE.fullmatch(text, start, end) if letter is None and where == "first" else None
        if lone is not None:
            # "**B**", "(B)", "B." (a lone letter on the last line is ``standalone_letter``'s)
            letter = lone["a"] or lone["b"] or lone["c"]
        elif (
            letter is None and texts and end - start <= 2 * max(map(len, context.options.values()), default=0) + 16
            and (where == "first" or _PARAGRAPH_BREAK.search(text, max(0, start - 32), start))
        ):
            # A base model's answer as the option's text, then the next question: " 2.0 s"; or
            # reasoning that closes on a paragraph of the option's text alone: "...\n\n**Vitamin
            # B12 deficiency**" (a last line right under the one before continues it: "19. ...\n20").
            hits = context.features.matching_letters(text[start:end])
            if len(hits) == 1:
                letter, how = hits[0], f"{how}: an option's text"
        if letter is None or letter not in context.options:
            return None
        if lists_beside(text, start, end, letter, citations, any_letter=True) or _texts_beside(context, text, start, end):
            return None  # one line of a listing: the options restated, or another question's
        payload = "option's text" if how.endswith("text") else "letter"
        return context.candidate(
            "commitment", start, end, (letter,), how=how, origin="evaluation", layout=f"alone on the {where} line",
            payload=payload,
        )  # fmt: skip


# A horizontal rule, a line of its own: "---", "***", "___".
_RULE: Final = re.compile(r"(?m)^[ \t]*+(?:-{3,}|\*{3,}|_{3,})[ \t]*+$")
# How a line that cites an option opens: markup, "Option", a bracket, then a capital.
_MAY_CITE: Final = re.compile(r"[*_#> \t]*+(?:(?i:option|choice)[ \t]++)?[(\[]?[A-Z](?![\w'’])")
# A blank line, then the line that starts where the match must end.
_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t\r]*\n[ \t]*\Z")
# A bold letter opening its line, then a dash and the reason: "**C** — ...", "**(B)** – ...", or
# the bold going on over the reason, "**B — Abducens (CN VI).**" (a bare "F — the net force" or
# "A - T pairs" is a symbol; "**A.** Identify ..." a step's heading).
_BOLD_LETTER_DASH: Final = (
    r"(?:\*\*|__)[ \t]*+(?:\((?P<a>[A-Z])\)|(?P<b>[A-Z]))[ \t]*+(?:(?:\*\*|__)[ \t]*+)?(?:[—–]|--)"
)
_LEAD: Final = re.compile(rf"[ \t]*+{_BOLD_LETTER_DASH}[ \t]++(?=\w)")
# Where a line opens like that for any letter: a review of the options, one a line.
_LEADS: Final = re.compile(rf"(?m)^{_LEAD.pattern}")
# A reason that judges or denies: "**A** — incorrect, ...", "... the UK's capital, not Italy's".
_DENIES: Final = re.compile(
    r"(?i:\b(?:in?correct|wrong|false|not|no|never|unlikely|invalid|eliminat\w*|ruled?\s++out|excluded|"
    r"isn't|aren't|doesn't|don't|cannot|can't|unsure|maybe|perhaps|possibly|either|or|hmm|check|"
    r"recap|distractor|tempting|trap|think|guess|seems?|might|may|could|reconsider\w*|vs|versus)\b|n't\b|\?)"
)
# Another bold letter given the same way on the line: "**C** — citric acid vs. **D** — Calvin".
_BOLD_LEAD_IN_LINE: Final = re.compile(_BOLD_LETTER_DASH)
# A later line that opens with a letter and a mark, as a listing of options does: "- B: London".
_LISTED: Final = re.compile(r"(?m)^[ \t>*_-]*+\(?[A-Z]\)?[*_]*+[ \t]*+[.):—–-][ \t]")
# A line that opens with the roman numeral II: "**I.** Convert ..." was a step, not option I.
_ROMAN_TWO: Final = re.compile(r"(?m)^[ \t>#*_(]*+II\b")
# A letter alone on its line, closed if bracketed: "**B**", "(B)", "[B]", "B.", "B)" ("[I_" of a
# formula cut off, "A word" and "I_2" are no payload).
_LONE: Final = re.compile(  # (blanks inside the brackets too: "( A )")
    r"[*_`$ \t]*+(?:\([ \t]?(?P<a>[A-Z])[ \t]?\)|\[[ \t]?(?P<b>[A-Z])[ \t]?\]|(?P<c>[A-Z])[.):]?)[*_`$ \t.!]*+"
)


def _lead(context: Context, text: str, start: int, end: int) -> Candidate | None:
    """The letter opening the line ``text[start:end]``, its reason after a dash (see ``leads``)."""
    lead = _LEAD.match(text, start, end)
    if lead is None:
        return None
    letter = lead["a"] or lead["b"]
    features = context.features
    option_words = features.option_words()
    if letter not in context.options:
        return None
    others = frozenset().union(*(words for other, words in option_words.items() if other != letter))
    if (
        # its reason speaks of its option: a word of that option's text that no other option has
        not words_of(text[lead.end() : end]) & (option_words[letter] - others)
        or _DENIES.search(text, lead.end(), end)  # "**A** — incorrect, ...", "... not Italy's"
        or _BOLD_LEAD_IN_LINE.search(text, lead.end(), end)
        or text[end - 1] not in ".!)*_"  # its reason ends a sentence (not "... is zero, so")
        or _LISTED.search(text, end, context.window[1]) is not None  # the options listed, one a line
        or _leads_again(context, text, end)
        or (letter == "I" and _ROMAN_TWO.search(text, end, context.window[1]))  # "**I** — ..." then "**II**"
    ):
        return None
    return context.candidate(
        "commitment", start, lead.end(), (letter,), how="a letter opening the first line, its reason after it",
        origin="evaluation", layout="opening the first line", payload="letter",
    )  # fmt: skip


def _leads_again(context: Context, text: str, end: int) -> bool:
    """A later line, before any text about other questions, opens with an option's letter and its
    reason too: the options reviewed one a line ("**A** — ...", "**B** — ...")."""
    for lead in _LEADS.finditer(text, end, context.window[1]):
        if (lead["a"] or lead["b"]) in context.options:
            return True
    return False


def _texts_beside(context: Context, text: str, start: int, end: int) -> bool:
    """The line before or after is an option's text: the options are written out, one a line."""
    longest = max(map(len, context.options.values()), default=0) * 2 + 16
    features = context.features
    for lo, hi in (_previous_line(text, start), _next_line(text, end)):
        if 0 < hi - lo <= longest and features.matching_letters(text[lo:hi]):
            return True
    return False


def _previous_line(text: str, start: int) -> tuple[int, int]:
    """The non-empty line before ``start``, as (start, end) without its blanks; (0, 0) if none."""
    end = start
    while end > 0 and text[end - 1].isspace():
        end -= 1
    if end == 0:
        return 0, 0
    lo = text.rfind("\n", 0, end) + 1
    while lo < end and text[lo] in " \t":
        lo += 1
    return lo, end


def _next_line(text: str, end: int) -> tuple[int, int]:
    """The non-empty line after ``end``, as (start, end) without its blanks; (0, 0) if none."""
    n = len(text)
    lo = end
    while lo < n and text[lo].isspace():
        lo += 1
    if lo == n:
        return 0, 0
    hi = text.find("\n", lo)
    hi = n if hi == -1 else hi
    while hi > lo and text[hi - 1] in " \t\r":
        hi -= 1
    return lo, hi


def _line(text: str, *, first: bool, end: int | None = None) -> tuple[int, int] | None:
    """The first non-empty line of ``text``, or the last before ``end``, as (start, end) without
    its blanks."""
    lo, hi = _next_line(text, 0) if first else _previous_line(text, len(text) if end is None else end)
    return None if hi == 0 else (lo, hi)
