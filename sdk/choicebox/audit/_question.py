"""Whether a question stem is malformed or cut off: the rules behind ``truncated_question``.

On real multiple-choice data the sound signals are structural: a bracket or a quotation opened and
never closed, a stem that is only "Which of the following", a stem too short to ask anything. How
a stem *ends* is not: completion stems ("... is a contract for"), stems ending in an equation
(``f(3, 5) =``), a list or a table header, and imperatives without a period are all sound, so the
three ending heuristics (a dangling word, a mid-sentence character, no terminal punctuation) are
off by default and stay available for datasets of full-sentence questions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._prompt import _quote

_SENTENCE_END: Final = re.compile(r"[.?!](?:\s+|$)")
_TERMINAL: Final = re.compile(r"""[.?!:;)\]}"'»”’…_$%*]$|\d$""")
_MID_SENTENCE: Final = re.compile(r"[,\-–—(\[{/\\&+=]$")

# Code has its own brackets and quotes (and prompts quote code): neither count is judged there.
_CODE: Final = re.compile(r"```|<code>|diff --git")

# LaTeX sized delimiters: \left and \right pair up whatever delimiter follows, and `\left.` or
# `\right.` draws none (its partner is a bracket of the other kind, or a plain one outside).
_SIZED: Final = re.compile(r"\\(left|right)\s*(?:\\[{}|]|\\\||[()\[\]./|<>])")
_INVISIBLE: Final = re.compile(r"\\(?:left|right)\s*\.")
_ESCAPED_BRACE: Final = re.compile(r"\\[{}]")
_OPEN_SIZED: Final = "\u27e8"
_CLOSE_SIZED: Final = "\u27e9"
_OPENERS: Final = "([{" + _OPEN_SIZED
_CLOSERS: Final = ")]}" + _CLOSE_SIZED
# "1)", "ii)", "b)" number a list and close nothing, at the start, after a space or punctuation.
_ENUMERATOR: Final = re.compile(r"(?:^|(?<=[\s,.;:(]))(?:\d{1,2}|[ivxIVX]{1,4}|[A-Za-z])\s?\)")
# ... and a letter glued to a word numbers the list too when its neighbour letter (b next to a or
# c) also closes a ")" in the stem: "FFOb) 1234c) ...".
_LETTER_CLOSE: Final = re.compile(r"([A-Za-z])\s?\)")

_QUOTES: Final = re.compile(r'["\u201c\u201d]|\\textquotedbl(?:left|right)')
# Inch and prime marks are no quotes: 13'6" x 18'8", a 9" tile, f"'(a).
_INCH: Final = re.compile(r"(?<=\d)\"|(?<=\d)''|(?<=\w)\"(?=')")
# A quotation of several paragraphs opens each paragraph and closes only the last one.
_PARAGRAPH_QUOTE: Final = re.compile(r'[.!?\u2026]\s+["\u201c][A-Z]')


def question_problems(
    text: str, params: Mapping[str, Any], choices: Sequence[str] = ()
) -> list[str]:
    """Why a question-style ``text`` looks malformed or cut off (empty: it does not).

    ``choices`` are the row's choice texts: choices that continue the stem (most start in lower
    case) excuse a short stem, and choices that close the stem's quotation excuse an open one.
    """
    stem = text.strip()
    problems: list[str] = []
    texts = [c.strip() for c in choices if c.strip()]
    continued = bool(texts) and sum(1 for c in texts if c[0].islower()) * 2 >= len(texts)
    if len(stem) < int(params["min_length"]) and not continued:  # "Inflation" + "discourages..."
        problems.append(f"it is only {len(stem)} characters long")
    if not stem:
        return problems
    problems.extend(_ending_problems(stem, params))
    if not _CODE.search(stem):
        problems.extend(_bracket_problems(stem))
        problems.extend(_quote_problems(stem, texts))
    return problems


def _ending_problems(stem: str, params: Mapping[str, Any]) -> list[str]:
    tail = _quote(stem[-30:])
    sentences = [s for s in _SENTENCE_END.split(stem) if s.strip()]
    last_sentence = sentences[-1] if sentences else stem
    bare = " ".join(last_sentence.casefold().rstrip("?:. ").split())
    phrases = {" ".join(p.casefold().split()) for p in params["dangling_phrases"]}
    words = re.findall(r"\w+", stem[-60:])
    last_word = words[-1].casefold() if words else ""
    if bare in phrases:
        return [f"it ends with {_quote(last_sentence.strip())} and asks nothing"]
    if stem[-1].isalpha() and last_word in {w.casefold() for w in params["dangling_words"]}:
        return [f"it ends with the word {last_word!r} ({tail}): cut off mid-sentence"]
    if params["mid_sentence_endings"] and _MID_SENTENCE.search(stem):
        return [f"it ends with {stem[-1]!r} ({tail}): cut off mid-sentence"]
    if params["require_terminal_punctuation"] and stem[-1].isalnum() and not _TERMINAL.search(stem):
        return [f"it ends without punctuation ({tail}): cut off mid-word or mid-sentence?"]
    return []


def _bracket_problems(stem: str) -> list[str]:
    text = _SIZED.sub(lambda m: _OPEN_SIZED if m.group(1) == "left" else _CLOSE_SIZED, stem)
    text = _ESCAPED_BRACE.sub("", text)
    numbering = {m.end() - 1 for m in _ENUMERATOR.finditer(text)}
    glued = [(m.end() - 1, m.group(1).casefold()) for m in _LETTER_CLOSE.finditer(text)]
    letters = {letter for _, letter in glued}
    numbering.update(
        at for at, letter in glued if {chr(ord(letter) - 1), chr(ord(letter) + 1)} & letters
    )
    slack = len(_INVISIBLE.findall(stem))
    depth = lowest = 0
    for i, char in enumerate(text):
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            if depth == 0 and char == ")" and i in numbering:
                continue
            depth -= 1
            lowest = min(lowest, depth)
    if depth > slack:
        return [f"{depth} bracket(s) opened and never closed"]
    if -lowest > slack:
        return ["a bracket is closed that was never opened"]
    return []


def _quote_problems(stem: str, choices: Sequence[str]) -> list[str]:
    # Odd with and without the inch marks: `"rule of 70"` keeps its closing quote after a digit.
    if len(_QUOTES.findall(stem)) % 2 == 0:
        return []
    plain = _INCH.sub("", stem)
    if len(_QUOTES.findall(plain)) % 2 == 0 or _PARAGRAPH_QUOTE.search(plain):
        return []
    # A completion stem whose quotation each choice finishes: `analogy: “Vision is to hearing as`.
    closing = sum(1 for c in choices if len(_QUOTES.findall(c)) % 2)
    if choices and closing * 2 >= len(choices):
        return []
    return ["an odd number of double quotes"]
