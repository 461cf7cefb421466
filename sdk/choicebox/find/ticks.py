"""The ``ticked_option`` step kind: the one option ticked in a listing of the options.

Chat models often answer by going through the options one a line, or one a table row, and marking
each: "- A) Limestone – sedimentary ❌", ..., "- E) Basalt – igneous ✅", or "| E | Ming | Zhu
Yuanzhang | ✓ |", and then say no letter again. The tick is the commitment (LABELLING rule 10:
decoration does not matter): a careful reader takes the one ticked option as the answer. It counts
only in a listing (three option lines or more, of different letters) where exactly one line bears a
tick, at its end or before the explanation that follows a dash or a colon, and no cross beside it,
and every other line a cross: the options judged one by one, one kept. The ticked line must give
its option's own text after the letter ("E) Basalt", "| E | Ming |"): "A) Compute resistance ✓" in
a plan is a step done, not option A. Ticks on several lines ("✓" as a bullet), a line that names
another option, a tick in the middle of prose ("✓ matches my first estimate, but ...") and a
question that asks for what is not so ("Which is NOT sedimentary?": a tick may mark what is)
commit to none. It is a last resort (robust runs it only when no statement commits): a tick that
marks a property never outweighs an answer the response states.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from choicebox.find._citation import text_at
from choicebox.find._vocab import (
    NEGATIVE_QUESTION,
    substring_list,
    substrings,
    valid_words,
    word_list,
)

from ._api import Candidate, Context, PicksOne, picked, register_step_kind

__all__ = ["TickedOption"]

# An option's line: a list mark, a table's bar or markup, "Option"/"Choice", then its letter and
# what closes a label: "- A) ...", "| E | ...", "**Option D: ...**", "3. (C) ...".
_OPTION_LINE: Final = re.compile(
    r"[ \t>]*+(?:[-+*•|][ \t]*+|\d{1,2}[.)][ \t]++)?[*_]*+(?:(?i:option|choice)[ \t]++)?[*_]*+"
    r"[(\[]?(?P<L>[A-Z])(?:[)\].:]|[ \t]*+[|:–—-]|\*\*)"
)
# Where listing lines must stand: at most this many lines apart (a table's rule, an explanation).
_LISTING_GAP: Final = 4
# What may follow a tick on its line: nothing but markup and a table's bar, or an explanation after
# a dash or a colon ("✅ — This is the defining feature").
_AFTER_TICK: Final = re.compile(r"[\ufe0f*_ \t|)\].]*+(?:$|[-–—:][ \t])")
# A table's rule under its header: "|---|:---:|".
_TABLE_RULE: Final = re.compile(r"[ \t]*+\|?(?:[ \t]*+:?-{2,}:?[ \t]*+\|)++[ \t]*+(?::?-{2,}:?[ \t]*+)?")
# A cross, on a ticked line: the line is unsure, not ticked.
_CROSSES: Final = ("❌", "✗", "✘", "✖", "❎")
# Another option's label on the line: "A) ✅ / B) ✅".
_OTHER_LABEL: Final = re.compile(r"(?<![\w'’])[(\[]?([A-Z])[)\].:](?=[ \t]|$)")


@register_step_kind("ticked_option")
@attrs.frozen(kw_only=True)
class TickedOption(PicksOne):
    """The one option ticked in a listing of the options (see the module docstring).

    ``marks`` are the ticks (any of them on an option's line marks it); ``min_lines`` how many
    option lines of different letters make a listing. In a table whose header names the ticked
    cell's column with one of the ``selection_headers`` ("| Option | ... | Selected |"), the one
    tick commits with no cross on the other rows and with the option's text in other words
    ("| G | Thirteenth | Abolition of slavery | ✅ |").
    """

    marks: tuple[str, ...] = attrs.field(
        default=("✅", "✔", "✓", "☑", "🟢"), converter=substring_list, validator=substrings
    )
    min_lines: int = 3
    selection_headers: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)

    def pick(self, context: Context) -> Candidate | None:
        return picked(self.find(context), "last")  # it finds one candidate at most

    def find(self, context: Context) -> list[Candidate]:
        text = context.folded
        lo, hi = context.window
        if not any(mark in text for mark in self.marks):
            return []  # most outputs: no tick at all
        if NEGATIVE_QUESTION.search(context.question):
            return []
        listing: list[tuple[int, int, str]] = []  # (start, end, letter) of each option line
        ticked: list[tuple[int, int, str]] = []
        own_text = False  # the ticked line gives its option's own text
        crossed = 0  # option lines of the listing that bear a cross
        last_index = 0
        for line_index, (start, end) in enumerate(_lines(text, lo, hi)):
            match = _OPTION_LINE.match(text, start, end)
            if match is None or match["L"] not in context.options:
                continue
            if listing and line_index - last_index > _LISTING_GAP:
                listing, ticked, crossed = [], [], 0  # too far from the last one: a listing starts again
            last_index = line_index
            listing.append((start, end, match["L"]))
            line = text[match.end() : end]
            if any(mark in line for mark in self.marks):
                ticked.append((start, end, match["L"]))
                if not self._ticked(line, match["L"]):
                    return []  # a tick that may mean something else: no listing commits
                own_text = _gives_own_text(context, text, match.end(), end, match["L"])
            elif any(cross in line for cross in _CROSSES):
                crossed += 1
        letters = {letter for _, _, letter in listing}
        if len(letters) < self.min_lines or len(ticked) != 1:
            return []
        start, end, letter = ticked[0]
        if own_text and crossed == len(listing) - 1:
            how = "the one option ticked in a listing of the options"
        elif crossed == 0 and self._selection_column(text, listing[0][0], start, end):
            how = "the one option ticked in a table's selection column"
        else:
            return []
        return [
            context.candidate(
                "commitment", start, end, (letter,), how=how,
                origin="evaluation", layout="a line of a listing", payload="letter, ticked",
            )
        ]  # fmt: skip

    def _selection_column(self, text: str, table_start: int, start: int, end: int) -> bool:
        """The ticked row is a table's, and the header above the table (past its rule) names the
        tick's column with one of the ``selection_headers``."""
        row = text[start:end].strip()
        if not self.selection_headers or not row.startswith("|"):
            return False
        header_end = table_start - 1
        header_start = text.rfind("\n", 0, max(0, header_end)) + 1
        if _TABLE_RULE.fullmatch(text, header_start, max(header_start, header_end)):
            header_end = header_start - 1
            header_start = text.rfind("\n", 0, max(0, header_end)) + 1
        header = text[header_start:max(header_start, header_end)].strip()
        if not header.startswith("|"):
            return False
        names = [cell.strip(" \t*_`?").casefold() for cell in header.strip("|").split("|")]
        cells = row.strip("|").split("|")
        at = next(i for i, cell in enumerate(cells) if any(mark in cell for mark in self.marks))
        return at < len(names) and names[at] in self.selection_headers

    def _ticked(self, line: str, letter: str) -> bool:
        """The rest of an option's line ticks it: one tick, at the line's end or before its
        explanation, no cross, no other option's label."""
        if any(cross in line for cross in _CROSSES):
            return False
        if any(other != letter for other in _OTHER_LABEL.findall(line)):
            return False
        ticks = [(line.find(mark), mark) for mark in self.marks if mark in line]
        if sum(line.count(mark) for _, mark in ticks) != 1:
            return False
        at, mark = ticks[0]
        return _AFTER_TICK.match(line, at + len(mark)) is not None


def _gives_own_text(context: Context, text: str, start: int, end: int, letter: str) -> bool:
    """The option line's text after its label opens with the option's own words (past blanks,
    markup and a table's bars): "E) Basalt – igneous", "| E | Ming | Zhu Yuanzhang |"."""
    words = context.features.citations().get(letter)
    if not words:
        return False
    at = start
    while at < end and text[at] in " \t*_|:.)-–—":
        at += 1
    return text_at(text, at, words, end) != -1


def _lines(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``text[lo:hi]``."""
    out = []
    start = lo
    while start < hi:
        end = text.find("\n", start, hi)
        if end == -1:
            end = hi
        out.append((start, end))
        start = end + 1
    return out
