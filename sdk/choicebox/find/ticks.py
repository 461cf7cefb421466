"""The ``ticked_option`` step kind: the one option ticked in a listing of the options.

Chat models often answer by going through the options one a line, or one a table row, and marking
each: "- A) Limestone – sedimentary ❌", ..., "- E) Basalt – igneous ✅", or "| E | Ming | Zhu
Yuanzhang | ✓ |", and then say no letter again. The tick is the commitment (LABELLING rule 10:
decoration does not matter): a careful reader takes the one ticked option as the answer. It counts
only in a listing (three option lines or more, of different letters) where exactly one line bears a
tick; ticks on several lines ("✓" as a bullet, or "true" marked against every true statement of a
"which is NOT" question) commit to none, and a tick outside a listing is left to the other kinds.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from choicebox.find._vocab import substring_list, substrings

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


@register_step_kind("ticked_option")
@attrs.frozen(kw_only=True)
class TickedOption(PicksOne):
    """The one option ticked in a listing of the options (see the module docstring).

    ``marks`` are the ticks (any of them on an option's line marks it); ``min_lines`` how many
    option lines of different letters make a listing.
    """

    marks: tuple[str, ...] = attrs.field(
        default=("✅", "✔", "✓", "☑", "🟢"), converter=substring_list, validator=substrings
    )
    min_lines: int = 3

    def pick(self, context: Context) -> Candidate | None:
        return picked(self.find(context), "last")  # it finds one candidate at most

    def find(self, context: Context) -> list[Candidate]:
        text = context.folded
        lo, hi = context.window
        if not any(mark in text for mark in self.marks):
            return []  # most outputs: no tick at all
        listing: list[tuple[int, int, str]] = []  # (start, end, letter) of each option line
        ticked: list[tuple[int, int, str]] = []
        line_index = last_index = 0
        for line_index, (start, end) in enumerate(_lines(text, lo, hi)):
            match = _OPTION_LINE.match(text, start, end)
            if match is None or match["L"] not in context.options:
                continue
            if listing and line_index - last_index > _LISTING_GAP:
                listing, ticked = [], []  # too far from the last one: a listing starts again
            last_index = line_index
            listing.append((start, end, match["L"]))
            line = text[match.end() : end]
            if any(mark in line for mark in self.marks):
                ticked.append((start, end, match["L"]))
        letters = {letter for _, _, letter in listing}
        if len(letters) < self.min_lines or len(ticked) != 1:
            return []
        start, end, letter = ticked[0]
        return [
            context.candidate(
                "commitment", start, end, (letter,), how="the one option ticked in a listing of the options",
                origin="evaluation", layout="a line of a listing", payload="letter, ticked",
            )
        ]  # fmt: skip


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
