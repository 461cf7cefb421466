"""Tidy text: what ``untidy_text`` reports and what ``choicebox fix`` writes, from one set of rules.

A text is tidy when it is in Unicode NFC, has ``\\n`` line ends, no whitespace at its ends or at
the ends of its lines, and (a one-line choice) single spaces between words. Three kinds of text
keep whitespace that looks untidy, because there it is content:

* **columns**: choices laid out as table rows (``Buy bonds    Increases    Inflation``) separate
  their cells with runs of spaces, tabs or no-break spaces; when two choices or more of a row
  have the same number of such gaps, they are columns and collapsing the gaps would merge cells;
* **multi-line choices** (a patch, a code block): their line whitespace is content, so only the
  Unicode form and line ends are judged;
* **markup residue** (``\\tau`` read as a tab and ``au``): the control characters are the only
  trace of a lost LaTeX command; ``markup_residue`` reports them, and the text is left as it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Final

from ._markup import has_markup_residue

# A gap: a run of horizontal whitespace, or any horizontal whitespace other than a plain space
# (tab, no-break space, thin space, ideographic space).
_GAP: Final = re.compile(r"[^\S\n]{2,}|[^\S \n]")
_HSPACE: Final = re.compile(r"[^\S\n]+")


def _gaps(text: str) -> int:
    inner = text.strip()
    return 0 if "\n" in inner else len(_GAP.findall(inner))


def column_layout(choices: Sequence[str]) -> frozenset[int]:
    """The positions of the choices laid out as table rows: the same number of gaps in two
    choices or more."""
    counts = [_gaps(text) for text in choices]
    shared = {n for n, times in Counter(c for c in counts if c).items() if times >= 2}
    return frozenset(i for i, n in enumerate(counts) if n in shared)


def untidy_problems(text: str, *, choice: bool, columns: bool = False) -> list[str]:
    """Why ``text`` is not in the form ``tidy`` writes (empty: it is, or it must stay as it is).

    ``choice`` judges the spacing inside a one-line text; ``columns`` says the text is one row
    of a table, whose gaps stay.
    """
    if has_markup_residue(text):
        return []
    problems: list[str] = []
    if unicodedata.normalize("NFC", text) != text:
        problems.append("is not in Unicode NFC")
    if "\r" in text:
        problems.append("has carriage returns")
    if choice and "\n" in text.strip():
        return problems  # a patch or a code block: its line whitespace is content
    if text != text.strip():
        problems.append("has leading or trailing whitespace")
    if any(line != line.rstrip() for line in text.split("\n")):
        problems.append("has trailing spaces on a line")
    if choice and not columns and _gaps(text):
        problems.append("has runs of spaces or tabs or non-breaking spaces")
    return list(dict.fromkeys(problems))


def tidy(text: str, *, choice: bool, columns: bool = False) -> str:
    """``text`` in the form ``untidy_problems`` accepts; a text with markup residue is returned
    unchanged."""
    if has_markup_residue(text):
        return text
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    if choice and "\n" in text.strip():
        return text
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip()
    if choice and not columns and "\n" not in text:
        text = _HSPACE.sub(" ", text)
    return text
