"""Whether the options a prompt lists agree with a row's options (the listing is read by
``choicebox._prompt_options``, the one parser of prompt options)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final

from choicebox._prompt_options import PromptOption, locate_options, loose_options

_QUOTE_CHARS: Final = 40  # texts quoted in a message are cut to this many characters


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
    block = locate_options(prompt, list(options))
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
    """Whether the loose reading of ``prompt`` (``loose_options``) lists exactly ``options``, in
    order and up to layout: how option lists the line reading cannot follow, such as patches with
    blank lines in them, are confirmed."""
    loose = loose_options(prompt)
    listed = loose.pairs if loose is not None else ()
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
