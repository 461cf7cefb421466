"""The lettered options a prompt lists: one grammar of option lines, read two ways.

An option line is a letter label and the option's text: ``A: text``, ``A) text``, ``(A) text``,
``[A] text`` or ``A. text`` (a period needs a space after it, so ``U.S.`` or ``A.B.`` never reads
as an option). Prompts are scanned line by line: a MULTILINE scan of the whole prompt costs four
times as much on Gym's long one-line questions.

* ``listed_options`` reads the options of a row that has no ``options`` field (Gym's rollout files
  drop it): the last run of lines lettered ``A``, ``B``, ``C``... in capitals, in one label style.
  When no such lines line up, the **loose** reading (``loose_options``): options that span
  paragraphs (a patch or code with blank lines in it), each starting at an ``A: `` line, letters
  running ``A``, ``B``, ``C``..., each text running to the next label.
* ``locate_options`` finds where a prompt lists options a row already has, tolerating a missing
  letter, so that a difference between the two can be named (``choicebox audit`` and ``fix``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final, NamedTuple

import attrs

__all__ = [
    "PromptOption",
    "PromptOptions",
    "listed_options",
    "locate_options",
    "loose_options",
    "option_blocks",
    "options_listed",
]


def _option_line(letter: str, text: str) -> re.Pattern[str]:
    """The grammar of an option line, for an alphabet of ``letter`` and a ``text`` pattern."""
    return re.compile(
        rf"[ \t]*(?P<label>\({letter}\)|\[{letter}\]|{letter}(?:[:)]|\.(?=[ \t])))"
        rf"[ \t]*(?P<text>{text})"
    )


# Any letter and any text, even none: what a listing is compared with a row's options by.
_OPTION_LINE: Final = _option_line("[A-Za-z]", r"(?:.*\S)?")
# A capital and some text: the only option lines a reading of the prompt's options takes.
_LISTED_OPTION_LINE: Final = _option_line("[A-Z]", r".*\S")


def _letter_and_style(label: str) -> tuple[str, str]:
    """The letter of a label and its style: ``(B)`` is ``("B", "(")``, ``[B]`` is ``("B", "[")``,
    ``B:``, ``B)`` and ``B.`` are ``("B", ":")``, ``("B", ")")`` and ``("B", ".")``."""
    return (label[1], label[0]) if len(label) == 3 else (label[0], label[1])


@attrs.frozen
class PromptOption:
    letter: str
    text: str  # the text on the option's own line, trailing whitespace removed
    more: tuple[str, ...] = ()  # the lines after it, before the next option (wrapped text, or not)


class PromptOptions(NamedTuple):
    """A run of lettered option lines in a prompt: where it starts, and each option.

    A named tuple, as it is immutable (readings are cached and shared) and cheap to build: one
    is built for every prompt whose options are read.
    """

    first_line: int  # the index of the first option line among the prompt's lines
    pairs: tuple[tuple[str, str], ...]  # (letter, text) of each option, in order
    more: tuple[tuple[str, ...], ...] = ()  # each option's following lines, when they were kept

    def text_before(self, prompt: str) -> str:
        """The text of ``prompt`` (the one this was read from) before its option lines."""
        rest = prompt.split("\n", self.first_line)[-1]  # from the first option line on
        return prompt[: len(prompt) - len(rest)]

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(letter for letter, _ in self.pairs)

    @property
    def options(self) -> tuple[PromptOption, ...]:
        """Each option with the lines that follow it (none kept by ``listed_options``)."""
        more = self.more or ((),) * len(self.pairs)
        return tuple(
            PromptOption(letter, text, after)
            for (letter, text), after in zip(self.pairs, more, strict=True)
        )


# Rollout files hold several rollouts of each prompt, usually next to each other.
@functools.lru_cache(maxsize=256)
def listed_options(prompt: str) -> PromptOptions | None:
    """The options ``prompt`` lists: its last run of option lines ``A``, ``B``, ``C``... (or None).

    A run starts at a line lettered ``A`` (a capital) and continues while the next option line in
    the same label style has the next letter; other lines in between (blank lines, wrapped text,
    lowercase or empty labels) are passed over. Fewer than two options is no list.
    """
    lines = prompt.split("\n")
    best: tuple[int, list[tuple[str, str]]] | None = None
    run: list[tuple[str, str]] = []
    first = 0  # the index of the run's first line
    style = ""
    wanted = ""  # the letter that continues the run
    match_line = _LISTED_OPTION_LINE.match
    for index, line in enumerate(lines):
        match = match_line(line)
        if match is None:
            continue
        label, text = match.group(1, 2)
        # _letter_and_style, inlined: this runs for every option line of every prompt read.
        letter, this_style = (label[1], label[0]) if len(label) == 3 else (label[0], label[1])
        if letter == wanted and this_style == style:
            run.append((letter, text))
            wanted = chr(ord(letter) + 1)
            continue
        if len(run) >= 2:
            best = (first, run)
        if letter == "A":
            run, style, first, wanted = [(letter, text)], this_style, index, "B"
        else:
            run, style, wanted = [], "", ""
    if len(run) >= 2:
        best = (first, run)
    if best is None:
        return None
    return PromptOptions(best[0], tuple(best[1]))


# The loose reading's labels: `A: ` at a line start, then text on the same line.
_LOOSE_LABEL: Final = re.compile(r"^(?P<letter>[A-Z]): (?=\S)", re.MULTILINE)
# What ends the last option of a loose reading: a closing tag line such as `</choices>`.
_CLOSING_TAG: Final = re.compile(r"^</[\w-]+>[ \t]*$", re.MULTILINE)


@functools.lru_cache(maxsize=256)
def loose_options(prompt: str) -> PromptOptions | None:
    """The options of ``prompt`` read as ``A: `` lines with consecutive letters from ``A``, each
    option's text running to the next label (the last one's to a closing tag line such as
    ``</choices>``, or to the end); the longest such run, the later one on a tie. Fewer than two
    options is no list.

    For option lists the line reading loses: options that span paragraphs.
    """
    best: list[re.Match[str]] = []
    run: list[re.Match[str]] = []
    for match in _LOOSE_LABEL.finditer(prompt):
        letter = match["letter"]
        if letter == "A":
            run = [match]
        elif run and ord(letter) == ord(run[-1]["letter"]) + 1:
            run.append(match)
        else:
            continue
        if len(run) >= len(best):
            best = list(run)
    if len(best) < 2:
        return None
    pairs: list[tuple[str, str]] = []
    for i, match in enumerate(best):
        if i + 1 < len(best):
            end = best[i + 1].start()
        else:
            closing = _CLOSING_TAG.search(prompt, match.end())
            end = closing.start() if closing is not None else len(prompt)
        pairs.append((match["letter"], prompt[match.end() : end].rstrip()))
    return PromptOptions(prompt.count("\n", 0, best[0].start()), tuple(pairs))


def options_listed(question: str, prompt: str | None) -> PromptOptions | None:
    """The options of a row without ``options``: listed in its question, else in its prompt;
    line by line first, else loosely (``loose_options``)."""
    texts = (question,) if prompt is None or prompt == question else (question, prompt)
    for text in texts:
        found = listed_options(text)
        if found is not None:
            return found
    for text in texts:
        found = loose_options(text)
        if found is not None:
            return found
    return None


def option_blocks(prompt: str) -> dict[str, str]:
    """Each option ``prompt`` lists with its whole block: its line and the lines after it up to
    the next option (two patches that share their first line are different options); the loose
    reading when no lines line up."""
    located = locate_options(prompt)
    if located is None:
        loose = loose_options(prompt)
        return dict(loose.pairs) if loose is not None else {}
    return {o.letter: "\n".join((o.text, *o.more)) for o in located.options}


def locate_options(prompt: str, letters: Sequence[str] = ()) -> PromptOptions | None:
    """The run of option lines in ``prompt`` that best matches ``letters`` (None: no list).

    A run is a sequence of option lines in one style whose letters increase (not necessarily by
    one, so a missing option still belongs to the list); blank lines may sit between them, and a
    non-blank line right after an option line is kept as that option's following text. The run
    with the most letters among ``letters`` wins (with no letters, the longest run of two or more);
    ties go to the later run.
    """
    wanted = set(letters)
    runs: list[tuple[int, list[tuple[str, str, list[str]]]]] = []
    run: list[tuple[str, str, list[str]]] = []
    first = 0  # the index of the run's first line
    style = ""
    gap = False
    for index, raw_line in enumerate(prompt.split("\n")):
        match = _OPTION_LINE.match(raw_line)
        if match is not None:
            letter, this_style = _letter_and_style(match["label"])
            text = match["text"]
            if run and this_style == style and letter > run[-1][0]:
                run.append((letter, text, []))
                gap = False
                continue
            if run:
                runs.append((first, run))
            run, first, style, gap = [(letter, text, [])], index, this_style, False
            continue
        line = raw_line.rstrip("\r")
        if not line.strip():
            gap = True
            continue
        if run and not gap:
            run[-1][2].append(line)
            continue
        if run:
            runs.append((first, run))
            run, style = [], ""
    if run:
        runs.append((first, run))
    best: tuple[int, int, list[tuple[str, str, list[str]]]] | None = None
    for begin, items in runs:
        if not wanted and len(items) < 2:
            continue
        score = sum(1 for letter, _, _ in items if letter in wanted) if wanted else len(items)
        if score and (best is None or score >= best[0]):
            best = (score, begin, items)
    if best is None:
        return None
    return PromptOptions(
        best[1],
        tuple((letter, text) for letter, text, _ in best[2]),
        tuple(tuple(more) for _, _, more in best[2]),
    )
