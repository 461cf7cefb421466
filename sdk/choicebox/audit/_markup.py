"""LaTeX residue in text: the ``markup_residue`` check, and what ``choicebox fix`` must not touch.

Two kinds of leftovers reach datasets converted from LaTeX:

* **text-mode commands** printed instead of rendered: ``12 mCi\\textbullet hr``,
  ``\\textquotedblleft spoil``, ``\\cyrchar\\cyromega``;
* **eaten backslashes**: a LaTeX command in a JSON string written without doubling its backslash
  is read as a JSON escape, so ``\\bullet`` becomes a backspace and ``ullet``, ``\\tau`` a tab
  and ``au``, ``\\vert`` a vertical tab and ``ert``, ``\\frac`` a form feed and ``rac``, ``\\rho``
  a line break and ``ho``.

The control characters are the only trace of the lost command. Tidying them as whitespace (what
``untidy_text`` would suggest) destroys that trace, so texts with residue are reported here and
left unchanged by ``fix``.
"""

from __future__ import annotations

import re
from typing import Final

# Text-mode symbols (textcomp, inputenc) that have no business in plain text; they are matched as
# prefixes because the converter glues them to the next word ("\textquotedblleftspoil").
_TEXT_COMMANDS: Final = re.compile(
    r"\\text(?:quotedbl(?:left|right)|asteriskcentered|periodcentered|bullet|cent|sterling|yen"
    r"|euro|section|backslash|dollar|degree|endash|emdash|theta|phi|tau|mu|ohm|copyright"
    r"|registered|trademark)|\\cyr[a-z]+"
)
# Control characters no text contains on purpose: each is a JSON escape (\b, \f) or a Python one
# (\v, \a) that ate the backslash of the command whose letters follow.
_ESCAPE_ONLY: Final = re.compile(r"[\x07\x08\x0b\x0c](?P<tail>[A-Za-z]*)")
# A tab or a line break is ordinary whitespace, so it counts only before the rest of a command
# that no word starts with: \tau, \theta, \times, \text..., \to, \tan, \tilde, \triangle, \tfrac;
# \rho, \right, \rceil, \rfloor; \neq, \nabla. A tab that indents a line is layout.
_TAB_TAIL: Final = re.compile(
    r"(?<![\n\t])\t(?P<tail>(?:au|heta|imes|o|an|ilde|riangle|frac)(?![A-Za-z])|ext[a-z]+)"
)
_BREAK_TAIL: Final = re.compile(
    r"[\r\n](?P<tail>(?:ho|ight|eq)(?![a-z.])|(?:ceil|floor)(?![a-z(])|abla)"
)
# Code keeps its tabs and line breaks: only the escape-only characters are judged there.
_CODE: Final = re.compile(r"```|<code>|diff --git")

_ESCAPES: Final = {
    "\x07": "a",
    "\x08": "b",
    "\x0b": "v",
    "\x0c": "f",
    "\t": "t",
    "\r": "r",
    "\n": "r",
}
_NAMES: Final = {
    "\x07": "a bell character",
    "\x08": "a backspace",
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\t": "a tab",
    "\r": "a carriage return",
    "\n": "a line break",
}


# Every residue starts with one of these: most texts have none and are done with one search.
_ANY_START: Final = re.compile(r"[\\\x07\x08\x0b\x0c\t\r\n]")
# Commands the letters after an eaten backslash usually begin, to name the one that was lost
# ("\x08ulletcm^-3" lost "\bullet" before "cm"); longest first.
_COMMANDS_BY_ESCAPE: Final = {
    "a": "alpha approx angle ast",
    "b": "beta bullet backslash binom boldsymbol bar",
    "f": "frac forall",
    "v": "vert varepsilon varphi vartheta vec vee vdots",
    "t": "tau theta times tilde triangle tfrac tan to",
    "r": "rho right rceil rfloor",
    "n": "neq nabla",
}
_KNOWN: Final = sorted(
    (name for names in _COMMANDS_BY_ESCAPE.values() for name in names.split()),
    key=len,
    reverse=True,
)


def markup_residue(text: str) -> list[str]:
    """The LaTeX leftovers in ``text``, each described once (empty: none)."""
    if _ANY_START.search(text) is None:
        return []
    found: list[str] = []
    for match in _TEXT_COMMANDS.finditer(text):
        found.append(f"the LaTeX command '{match.group(0)}' printed as text")
    patterns = [_ESCAPE_ONLY] if _CODE.search(text) else [_ESCAPE_ONLY, _TAB_TAIL, _BREAK_TAIL]
    for pattern in patterns:
        for match in pattern.finditer(text):
            char, tail = match.group(0)[0], match["tail"]
            escape = "n" if char == "\n" and tail in ("eq", "abla") else _ESCAPES[char]
            known = next((c for c in _KNOWN if (escape + tail).startswith(c)), None)
            if tail.startswith("ext"):  # a text-mode command is one word: \texttheta, \textphi
                known = escape + tail
            command = f"\\{known}" if known else f"a LaTeX command (\\{escape}{tail[:10]}…)"
            found.append(
                f"{_NAMES[char]} before {tail[:10]!r}: the backslash of {command} was read as "
                f"the escape \\{escape}"
            )
    return list(dict.fromkeys(found))


def has_markup_residue(text: str) -> bool:
    """Whether ``text`` holds LaTeX leftovers, so tidying its whitespace would hide them."""
    return bool(markup_residue(text))
