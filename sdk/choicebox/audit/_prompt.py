"""The options a prompt lists, and whether they agree with a row's options."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

_QUOTE_CHARS: Final = 40  # texts quoted in a message are cut to this many characters



# --- the options listed in a prompt --------------------------------------------------------------

# One lettered option per line: `A: text`, `A) text`, `(A) text`, `[A] text` or `A. text` (a period
# needs a space after it, so `U.S.` never reads as an option).
_PROMPT_OPTION: Final = re.compile(
    r"[ \t]*(?:\((?P<paren>[A-Za-z])\)|\[(?P<bracket>[A-Za-z])\]|(?P<letter>[A-Za-z])(?P<sep>[:)])"
    r"|(?P<dot>[A-Za-z])\.(?=[ \t]))[ \t]*(?P<text>.*?)[ \t]*$"
)


@attrs.frozen
class PromptOption:
    letter: str
    text: str  # the text on the option's own line
    more: tuple[str, ...]  # the lines after it, before the next option (wrapped text, or not)


@attrs.frozen
class PromptOptions:
    """The lettered option lines of a prompt: where the list starts, and each option."""

    start: int  # character offset of the first option line
    options: tuple[PromptOption, ...]

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(o.letter for o in self.options)


def parse_prompt_options(prompt: str, letters: Sequence[str] = ()) -> PromptOptions | None:
    """The run of lettered lines in ``prompt`` that best matches ``letters`` (None: no list).

    A run is a sequence of option lines in one style whose letters increase; blank lines may sit
    between them and a non-blank line right after an option line is kept as that option's
    following text. The run with the most letters among ``letters`` wins (with no letters, the
    longest run); ties go to the later run.
    """
    wanted = set(letters)
    runs: list[tuple[int, list[tuple[str, str, list[str]]]]] = []
    run: list[tuple[str, str, list[str]]] = []
    start = 0
    style = ""
    gap = False
    offset = 0
    for raw_line in prompt.split("\n"):
        here = offset
        offset += len(raw_line) + 1
        line = raw_line.rstrip("\r")
        match = _PROMPT_OPTION.match(line)
        if match is not None:
            letter = match["paren"] or match["bracket"] or match["letter"] or match["dot"]
            this_style = (
                "()" if match["paren"] else "[]" if match["bracket"] else match["sep"] or "."
            )
            if run and this_style == style and letter > run[-1][0]:
                run.append((letter, match["text"], []))
                gap = False
                continue
            if run:
                runs.append((start, run))
            run, start, style, gap = [(letter, match["text"], [])], here, this_style, False
            continue
        if not line.strip():
            gap = True
            continue
        if run and not gap:
            run[-1][2].append(line)
            continue
        if run:
            runs.append((start, run))
            run, style = [], ""
    if run:
        runs.append((start, run))
    best: tuple[int, int, list[tuple[str, str, list[str]]]] | None = None
    for begin, items in runs:
        score = sum(1 for letter, _, _ in items if letter in wanted) if wanted else len(items)
        if not wanted and len(items) < 2:
            continue
        if score and (best is None or score >= best[0]):
            best = (score, begin, items)
    if best is None:
        return None
    return PromptOptions(
        best[1], tuple(PromptOption(letter, text, tuple(more)) for letter, text, more in best[2])
    )


# The loose reading, for option lists the line parser loses: options that span paragraphs (a
# patch or code with blank lines in it), each an `A: ` line, letters running A, B, C, ...
_LOOSE_LABEL: Final = re.compile(r"^(?P<letter>[A-Z]): (?=\S)", re.MULTILINE)
_CLOSING_TAG: Final = re.compile(r"^</[\w-]+>[ \t]*$", re.MULTILINE)


def loose_prompt_options(prompt: str) -> list[tuple[str, str]]:
    """The options of ``prompt`` read as `A: ` lines with consecutive letters from A, each
    option's text running to the next label (the last one's to a closing tag line such as
    ``</choices>``, or to the end); the longest such run, the later one on a tie. Fewer than two
    options: none."""
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
        return []
    options: list[tuple[str, str]] = []
    for i, match in enumerate(best):
        if i + 1 < len(best):
            end = best[i + 1].start()
        else:
            closing = _CLOSING_TAG.search(prompt, match.end())
            end = closing.start() if closing is not None else len(prompt)
        options.append((match["letter"], prompt[match.end() : end].rstrip()))
    return options


def _options_in_prompt(prompt: str) -> list[tuple[str, str]]:
    """The (letter, text) pairs a prompt lists, for rows without ``options``: one line each, or,
    when no lettered lines line up, the loose reading (``loose_prompt_options``)."""
    block = parse_prompt_options(prompt)
    if block is None:
        return loose_prompt_options(prompt)
    return [(o.letter, o.text) for o in block.options]


def prompt_option_blocks(prompt: str) -> list[tuple[str, str]]:
    """Like ``_options_in_prompt``, but each option's whole block: its line and the lines after
    it up to the next option. Two patches that share their first line are different options."""
    block = parse_prompt_options(prompt)
    if block is None:
        return loose_prompt_options(prompt)
    return [(o.letter, "\n".join((o.text, *o.more))) for o in block.options]


def _canon(text: str) -> str:
    """NFC with whitespace collapsed: texts equal under it differ only in layout."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def _listed_as(option: PromptOption, text: str) -> bool:
    """Whether the prompt lists ``text`` for this option (on its line, possibly wrapped)."""
    wanted = _canon(text)
    shown = option.text
    if _canon(shown) == wanted:
        return True
    for line in option.more:
        shown += " " + line
        if _canon(shown) == wanted:
            return True
    return False


def prompt_option_problems(prompt: str, options: Mapping[str, str]) -> list[str]:
    """How the option list of ``prompt`` differs from ``options`` (empty: it does not)."""
    block = parse_prompt_options(prompt, list(options))
    if block is None:
        flat = _canon(prompt)
        missing = [letter for letter, text in options.items() if _canon(text) not in flat]
        return (
            [
                f"the prompt lists no lettered options and does not contain {_letters_and_texts(missing, options)}"
            ]
            if missing
            else []
        )
    listed = {o.letter: o for o in block.options}
    problems: list[str] = []
    missing = [letter for letter in options if letter not in listed]
    if missing:
        problems.append(f"the prompt does not list {_letters_and_texts(missing, options)}")
    extra = [letter for letter in listed if letter not in options]
    if extra:
        shown = ", ".join(f"{letter} {_quote(listed[letter].text)}" for letter in extra)
        problems.append(f"the prompt lists {shown}, which `options` does not have")
    for letter, text in options.items():
        if letter in listed and not _listed_as(listed[letter], text):
            problems.append(
                f"{letter} reads {_quote(text)} in `options` but {_quote(listed[letter].text)} in the prompt"
            )
    common = [letter for letter in options if letter in listed]
    in_prompt = [letter for letter in block.letters if letter in options]
    if common != in_prompt:
        problems.append(f"the prompt lists the options in the order {', '.join(in_prompt)}")
    return problems


def listed_loosely(prompt: str, options: Mapping[str, str]) -> bool:
    """Whether the loose reading of ``prompt`` (``loose_prompt_options``) lists exactly
    ``options``, in order and up to layout: how option lists the line parser cannot follow, such
    as patches with blank lines in them, are confirmed."""
    listed = loose_prompt_options(prompt)
    return [letter for letter, _ in listed] == list(options) and all(
        _canon(text) == _canon(options[letter]) for letter, text in listed
    )


def _letters_and_texts(letters: Sequence[str], options: Mapping[str, str]) -> str:
    return ", ".join(f"{letter} {_quote(options[letter])}" for letter in letters)


def _quote(text: str, limit: int = _QUOTE_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)


