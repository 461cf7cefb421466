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
    """

    lines: tuple[Where, ...] = ("first", "last")
    text_lines: tuple[Where, ...] = ("first",)
    max_length: int = 200

    def __call__(self, context: Context) -> Extraction | None:
        return None  # it weighs in only under a policy that reads every statement

    def find(self, context: Context) -> list[Candidate]:
        text = context.folded
        found: list[Candidate] = []
        # The last line of the part a policy kept (the whole text, but for a fallback, the text
        # before another question).
        first, last = _line(text, first=True), _line(text, first=False, end=context.window[1])
        if first is None or last is None or first == last:
            return []  # an empty or one-line output: the whole output's own kinds read it
        for where in self.lines:
            if where == "after_rule":
                candidate = self._after_rule(context, text, first, last)
                if candidate is not None and not (found and found[-1].start == candidate.start):
                    found.append(candidate)
                continue
            start, end = first if where == "first" else last
            if found and found[-1].start == start:
                continue
            if end - start > self.max_length and not (where == "first" and _LEAD.match(text, start, end)):
                continue  # a paragraph, unless it opens with the answer and goes on with its reason
            candidate = self._read(context, text, start, end, where, texts=where in self.text_lines)
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
        lead = _LEAD.match(text, start, end) if letter is None and lone is None and where == "first" else None
        if lone is not None:
            # "**B**", "(B)", "B." (a lone letter on the last line is ``standalone_letter``'s)
            letter = lone["a"] or lone["b"] or lone["c"]
        elif (
            lead is not None
            and not _JUDGED_WRONG.match(text, lead.end(), end)
            and not _leads_again(context, text, end)
        ):
            # "**C** — the cycle oxidizes acetyl-CoA ...": the answer first, its reason after a
            # dash ("**A** — incorrect, ..." judges A and commits to nothing).
            letter = lead["a"] or lead["b"] or lead["c"] or lead["d"]
            how = f"{how}, its reason after it"
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
# A decorated letter opening its line, then a dash and the reason: "**C** — ...", "(B) – ...",
# "**D.** ...", "C — ..." (a bare letter needs the dash: "C. Rome" restates an option).
_LEAD: Final = re.compile(
    r"[*_ \t]*?(?:(?:\*\*|__)[ \t]*+(?:\((?P<a>[A-Z])\)|(?P<b>[A-Z])[.):]?)[ \t]*+(?:\*\*|__)(?:[ \t]*+(?:[—–:]|-{1,2}))?"
    r"|\((?P<c>[A-Z])\)[ \t]*+(?:[—–:]|-{1,2})|(?P<d>[A-Z])[ \t]++(?:[—–]|-{1,2}))[ \t]++(?=\w)"
)
# Where a line opens like that for any letter: a review of the options, one a line.
_LEADS: Final = re.compile(rf"(?m)^{_LEAD.pattern}")
# A reason that opens by judging the letter wrong: "**A** — incorrect, ...".
_JUDGED_WRONG: Final = re.compile(
    r"(?i:in?correct|wrong|false|not\b|no\b|never|unlikely|invalid|eliminat|ruled?\s++out|excluded)"
)
# A letter alone on its line, closed if bracketed: "**B**", "(B)", "[B]", "B.", "B)" ("[I_" of a
# formula cut off, "A word" and "I_2" are no payload).
_LONE: Final = re.compile(
    r"[*_`$ \t]*+(?:\((?P<a>[A-Z])\)|\[(?P<b>[A-Z])\]|(?P<c>[A-Z])[.):]?)[*_`$ \t.!]*+"
)


def _leads_again(context: Context, text: str, end: int) -> bool:
    """A later line, before any text about other questions, opens with an option's letter and its
    reason too: the options reviewed one a line ("**A** — ...", "**B** — ...")."""
    for lead in _LEADS.finditer(text, end, context.window[1]):
        if (lead["a"] or lead["b"] or lead["c"] or lead["d"]) in context.options:
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
