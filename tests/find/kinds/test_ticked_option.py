"""The ``ticked_option`` step kind (``choicebox.find.ticks``): the one option ticked in a listing of
the options ("- E) Basalt – igneous ✅" among the others crossed out).

What it reads (list items, table rows, bold option lines, any of its ticks), what it must not read
(ticks on several lines, a line not crossed, a tick in prose, a tick beside a cross or another
option, a line without its option's text, a question that asks for what is not so, a listing too
short, a ticked letter that is no option), what each parameter changes, and how ``robust`` weighs it
against the statements (a last resort: a stated answer wins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, Built, one_kind

ROCKS = {"A": "Limestone", "B": "Sandstone", "C": "Marble", "D": "Shale", "E": "Basalt", "F": "Slate"}


QUESTION = "Which rock is igneous?"


def _step(tmp_path: Path, **params: Any) -> Built:
    return one_kind(tmp_path, "ticked_option", resolve=CONCLUSION, **params)


@pytest.fixture(scope="module")
def ticked(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("ticked_option"))


def _listing(line: str, ticked: str, tick: str = "✅", cross: str = "❌") -> str:
    """The six rocks one a line in ``line``'s form ({L}, {T}, {M}: letter, text, mark)."""
    rows = [line.format(L=letter, T=text, M=tick if letter == ticked else cross) for letter, text in ROCKS.items()]
    return "Classifying each option by how it forms:\n\n" + "\n".join(rows) + "\n\nBasalt cools from lava."


@pytest.mark.parametrize(
    "line",
    [
        "- {L}) {T} – sedimentary {M}",
        "{L}. {T} {M}",
        "| {L} | {T} | {M} |",
        "- **Option {L}: {T}** {M} — see above.",
        "3. ({L}) {T}: {M}",
    ],
)
@pytest.mark.parametrize("tick", ["✅", "✔️", "✓", "☑"])
def test_it_reads_the_one_ticked_option(ticked: Built, line: str, tick: str) -> None:
    assert ticked.outcome(_listing(line, "E", tick), options=ROCKS, question=QUESTION) == ("E", None)


@pytest.mark.parametrize(
    "output",
    [
        _listing("{L}) {T} {M}", "B", cross=""),  # the other lines not judged: no review, a plan
        "A) Limestone ❌\nB) Sandstone — checked ✓\nC) Shale ❌\nD) Basalt — not yet",
        "1. A) Compute the porosity ✓\n2. B) Compare ❌\n3. C) Answer ❌",  # no option's text
        "A) Limestone ❌\nB) Sandstone ❌\nC) Shale ✅❌ (unsure)\nD) Basalt ❌",  # a cross beside the tick
        "A) Limestone ❌\nB) Sandstone ❌ / C) Shale ✅\nD) Basalt ❌",  # two options on its line
        "A) Limestone ❌\nB) Sandstone: ✓ matches my first guess, but\nC) Shale ❌\nD) Basalt ❌",  # prose
        "A) Limestone ❌\nB) Sandstone ✅ ✅\nC) Shale ❌\nD) Basalt ❌",  # ticked twice
    ],
)
def test_a_tick_that_may_mean_something_else_reads_nothing(ticked: Built, output: str) -> None:
    assert ticked.read(output, options=ROCKS, question=QUESTION) is None


def test_a_question_asking_what_is_not_so_reads_no_tick(ticked: Built) -> None:
    # The tick may mark what is sedimentary, or accurate: the opposite of what is asked.
    output = _listing("{L}) {T} {M}", "A")
    assert ticked.read(output, options=ROCKS, question=QUESTION) == "A"
    assert ticked.read(output, options=ROCKS, question="Which rock is NOT sedimentary?") is None
    assert ticked.read(output, options=ROCKS, question="Which statement is false?") is None


@pytest.mark.parametrize(
    "output",
    [
        _listing("{L}) {T} {M}", "E", tick="✅", cross="✅"),  # every line ticked: a bullet, or a review
        "A) Limestone ✅\nB) Sandstone ✅\nC) Marble ❌\nD) Shale ❌",  # two ticked
        "A) Limestone\nB) Sandstone\nC) Marble\n\nA) ✅ / B) ✅ / C) ✅",  # every option ticked on one line
        "E) Basalt ✅\nA) Limestone ❌",  # two option lines are no listing
        "The answer is Basalt ✅, as the others are sedimentary.",  # no listing
        _listing("{L}) {T} {M}", "E", tick="❌", cross="❌"),  # crossed out, every one
        "- A) Limestone ❌\n- B) Sandstone ❌\n- C) Marble ❌\n\n✅ Basalt is igneous.",  # the tick on no option's line
    ],
)
def test_it_reads_nothing_without_one_ticked_option_line_in_a_listing(ticked: Built, output: str) -> None:
    assert ticked.read(output, options=ROCKS, question=QUESTION) is None


def test_a_ticked_letter_that_is_no_option_is_not_read(ticked: Built) -> None:
    four = dict(list(ROCKS.items())[:4])
    output = "A) Limestone ❌\nB) Sandstone ❌\nC) Marble ❌\nD) Shale ❌\nE) Basalt ✅"
    assert ticked.read(output, options=four, question=QUESTION) is None


def test_listing_lines_far_apart_are_two_listings(ticked: Built) -> None:
    # A tick in an earlier listing, then a listing of three without one: the last listing counts.
    first = "A) Limestone ✅\nB) Sandstone ❌\nC) Marble ❌"
    later = "\n".join(f"{letter}) {text} ❌" for letter, text in list(ROCKS.items())[3:])
    gap = "\n".join(["Now the metamorphic ones.", "", "They form under heat.", "", "And pressure.", ""])
    assert ticked.read(f"{first}\n{gap}\n{later}", options=ROCKS, question=QUESTION) is None
    assert ticked.read(f"{first}\n\nNow the others:\n{later}", options=ROCKS, question=QUESTION) == "A"


def test_parameter_marks_are_the_ticks(tmp_path: Path, ticked: Built) -> None:
    output = _listing("{L}) {T} {M}", "E", tick="👍")
    assert ticked.read(output, options=ROCKS, question=QUESTION) is None
    assert _step(tmp_path, marks=["👍"]).read(output, options=ROCKS, question=QUESTION) == "E"


def test_parameter_min_lines_is_how_many_option_lines_make_a_listing(tmp_path: Path, ticked: Built) -> None:
    output = "A) Limestone ❌\nE) Basalt ✅"
    assert ticked.read(output, options=ROCKS, question=QUESTION) is None
    assert _step(tmp_path, min_lines=2).read(output, options=ROCKS, question=QUESTION) == "E"


def test_in_robust_the_tick_counts_only_when_no_statement_commits() -> None:
    listing = _listing("{L}) {T} {M}", "E")
    assert ROBUST.read(listing, options=ROCKS, question=QUESTION) == "E"
    # A stated answer wins over a tick, before or after it: the tick may mark a property.
    assert ROBUST.read(f"The answer is (C).\n\n{listing}", options=ROCKS, question=QUESTION) == "C"
    assert ROBUST.read(f"{listing}\n\nSo the answer is (C).", options=ROCKS, question=QUESTION) == "C"


def _table(header: str, ticked_letter: str | None) -> str:
    """The rocks as table rows under ``header``: each letter, a short name, the tick on one row."""
    rows = [f"| {letter} | {text[:4]} | {'✅' if letter == ticked_letter else ''} |" for letter, text in ROCKS.items()]
    return f"| Option | Rock | {header} |\n|---|---|---|\n" + "\n".join(rows) + "\n\nBasalt cools from lava."


def test_parameter_selection_headers_name_a_tables_column_of_the_chosen_row(tmp_path: Path, ticked: Built) -> None:
    # The other rows' cells are empty, not crossed, and the row gives its option in other words:
    # the header says the column marks the one chosen.
    table = _table("Selected", "E")
    assert ticked.read(table, options=ROCKS, question=QUESTION) is None
    chosen = _step(tmp_path, selection_headers=["selected", "choice"])
    assert chosen.read(table, options=ROCKS, question=QUESTION) == "E"
    assert chosen.read(_table("**Choice?**", "E"), options=ROCKS, question=QUESTION) == "E"
    # a column of another name marks a property; a table with no tick marks none
    assert chosen.read(_table("Igneous", "E"), options=ROCKS, question=QUESTION) is None
    assert chosen.read(_table("Selected", None), options=ROCKS, question=QUESTION) is None
    # two ticks in the column: no single choice
    two = _table("Selected", "E").replace("| B | Sand |  |", "| B | Sand | ✅ |")
    assert two != table
    assert chosen.read(two, options=ROCKS, question=QUESTION) is None
    assert ROBUST.read(table, options=ROCKS, question=QUESTION) == "E"
