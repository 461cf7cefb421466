"""The ``ticked_option`` step kind (``choicebox.find.ticks``): the one option ticked in a listing of
the options ("- E) Basalt – igneous ✅" among the others crossed out).

What it reads (list items, table rows, bold option lines, any of its ticks), what it must not read
(ticks on several lines, a tick outside a listing, a listing too short, a ticked letter that is no
option), what each parameter changes, and how ``robust`` weighs it against the statements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, Built, one_kind

ROCKS = {"A": "Limestone", "B": "Sandstone", "C": "Marble", "D": "Shale", "E": "Basalt", "F": "Slate"}


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
    assert ticked.outcome(_listing(line, "E", tick), options=ROCKS) == ("E", None)


def test_lines_need_no_cross_besides_the_tick(ticked: Built) -> None:
    assert ticked.outcome(_listing("{L}) {T} {M}", "B", cross=""), options=ROCKS) == ("B", None)


@pytest.mark.parametrize(
    "output",
    [
        _listing("{L}) {T} {M}", "E", tick="✅", cross="✅"),  # every line ticked: a bullet, or a review
        "A) Limestone ✅\nB) Sandstone ✅\nC) Marble ❌\nD) Shale ❌",  # two ticked
        "E) Basalt ✅\nA) Limestone ❌",  # two option lines are no listing
        "The answer is Basalt ✅, as the others are sedimentary.",  # no listing
        _listing("{L}) {T} {M}", "E", tick="❌", cross="❌"),  # crossed out, every one
        "- A) Limestone ❌\n- B) Sandstone ❌\n- C) Marble ❌\n\n✅ Basalt is igneous.",  # the tick on no option's line
    ],
)
def test_it_reads_nothing_without_one_ticked_option_line_in_a_listing(ticked: Built, output: str) -> None:
    assert ticked.read(output, options=ROCKS) is None


def test_a_ticked_letter_that_is_no_option_is_not_read(ticked: Built) -> None:
    four = dict(list(ROCKS.items())[:4])
    output = "A) Limestone ❌\nB) Sandstone ❌\nC) Marble ❌\nD) Shale ❌\nE) Basalt ✅"
    assert ticked.read(output, options=four) is None


def test_listing_lines_far_apart_are_two_listings(ticked: Built) -> None:
    # A tick in an earlier listing, then a listing of three without one: the last listing counts.
    first = "A) Limestone ✅\nB) Sandstone ❌\nC) Marble ❌"
    later = "\n".join(f"{letter}) {text} ❌" for letter, text in list(ROCKS.items())[3:])
    gap = "\n".join(["Now the metamorphic ones.", "", "They form under heat.", "", "And pressure.", ""])
    assert ticked.read(f"{first}\n{gap}\nD) x ❌\n{later}", options=ROCKS) is None
    assert ticked.read(f"{first}\n\nNow the others:\n{later}", options=ROCKS) == "A"


def test_parameter_marks_are_the_ticks(tmp_path: Path, ticked: Built) -> None:
    output = _listing("{L}) {T} {M}", "E", tick="👍")
    assert ticked.read(output, options=ROCKS) is None
    assert _step(tmp_path, marks=["👍"]).read(output, options=ROCKS) == "E"


def test_parameter_min_lines_is_how_many_option_lines_make_a_listing(tmp_path: Path, ticked: Built) -> None:
    output = "A) Limestone ❌\nE) Basalt ✅"
    assert ticked.read(output, options=ROCKS) is None
    assert _step(tmp_path, min_lines=2).read(output, options=ROCKS) == "E"


def test_in_robust_the_tick_is_one_statement_among_the_others() -> None:
    listing = _listing("{L}) {T} {M}", "E")
    assert ROBUST.read(listing, options=ROCKS) == "E"
    assert ROBUST.read(f"The answer is (E).\n\n{listing}", options=ROCKS) == "E"
    assert ROBUST.read(f"{listing}\n\nSo the answer is (E).", options=ROCKS) == "E"
    # A later answer of another letter is not overruled by the tick (the listing's "F)" reads as
    # a part marker to the revision stage, which makes the two one answer per part: no answer).
    assert ROBUST.read(f"{listing}\n\nOn reflection, the answer is (C).", options=ROCKS) != "E"
