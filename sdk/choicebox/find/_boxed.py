"""Find ``\\boxed{...}`` answers in a model output and read which choice each one names.

Two steps, kept apart so a caller can apply its own policy in between:

* :func:`find_boxes` scans the whole output for ``\\boxed{`` / ``\\fbox{`` openers and matches
  their braces. It is one linear pass: a compiled regex finds the openers and, inside a box,
  the places where the brace depth changes, and a stack pairs the braces, so 10,000 nested braces, 10,000 unclosed
  openers or a 5 MB output cost time proportional to their length and no recursion.
* :func:`read_box` reads one box's content: a letter, a labelled option, several letters, option
  text or nothing. Common contents are recognised by one precompiled regex; the rest go through
  a linear pre-pass that strips formatting wrappers, then the LALR grammar
  ``grammars/boxed.lark``. Results are cached by content, because the same few contents
  (``C``, ``\\text{C}``) repeat across thousands of rollouts.

Rules chosen here (callers rely on them):

* Nested boxes: the outermost closed box is reported and the inner one is part of its content
  (``read_box`` strips an inner ``\\boxed{}`` like any other wrapper).
* Unclosed boxes: an opener whose braces never balance runs to the end of the text. It never
  hides a closed box, and of several unclosed openers only the last (innermost) is reported,
  since every earlier one's content contains it.
* Escaped braces ``\\{`` and ``\\}`` are literal characters: they neither open nor close a box.
  ``\\\\`` is a LaTeX line break, so a brace right after it is a real brace. Outside any box,
  a doubled ``\\\\boxed{`` (text escaped twice) is still found, starting at its last backslash.
* Contents whose braces do not balance read as "empty" (there is no well-defined answer);
  contents over 2,000 characters read as a "value" without parsing (a derivation, not a letter).
* Digits glued to or before a letter (``2B``, ``B2``, ``1. B``) read as that letter.
* Letter case is kept (``b`` reads as ``b``); the caller decides whether lowercase counts.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Final, Literal

import attrs

from choicebox._resources import builtin_grammar
from choicebox.find._parser_cache import lalr_parser

if TYPE_CHECKING:
    from lark import Lark, Token, Tree

__all__ = ["Box", "BoxKind", "BoxReading", "find_boxes", "read_box"]

# What a box holds, in the payload readers' words (``_payload.PayloadKind``) where they share a
# meaning: one letter; a letter with a label or its option's text ("C: text"); several letters
# (a hedge); content that is no letter (a value); nothing.
BoxKind = Literal["letter", "labelled", "hedge", "value", "empty"]


@attrs.frozen(kw_only=True)
class Box:
    """One ``\\boxed{...}`` or ``\\fbox{...}`` found in a text."""

    start: int  # index of the backslash of \boxed / \fbox
    end: int  # index just past the closing brace, or len(text) when unclosed
    content: str  # text between the braces; for an unclosed box, the rest of the text
    closed: bool  # False when the braces never balance


@attrs.frozen(kw_only=True)
class BoxReading:
    """What one box content says.

    ``letters`` holds one letter for "letter" and "labelled", two or more for "hedge" and
    none otherwise. ``text`` is the letter ("letter"), the text after the label ("labelled") or
    the whole unwrapped content ("value"). ``raw`` is always the whole unwrapped content, so a
    caller can check whether a "labelled" reading such as ``E. coli`` is really option text.
    """

    kind: BoxKind
    letters: tuple[str, ...]
    text: str
    raw: str


# ---------------------------------------------------------------------------------------------
# Finding boxes

# An opener, and when the content holds no brace and no backslash, the whole box at once: most
# boxes (`\boxed{C}`) are closed right here without entering the brace-matching loop.
_OPENER: Final = re.compile(r"\\(?:boxed|fbox)\s*\{(?:([^{}\\]*+)\})?")

# Inside a box the scanner stops only where the brace depth can change. Everything else is eaten
# by one match of group 1, in C: text without braces, escapes (`\{` and `\}` are literal
# characters; `\\` is a line break, so the brace after it is real) and whole innermost groups
# `{...}`, which cannot change the depth. Possessive quantifiers and atomic groups keep the
# engine from backtracking, so every character is looked at a bounded number of times.
_ESCAPE: Final = r"\\[^A-Za-z]|\\(?!(?:boxed|fbox)\s*\{)[A-Za-z]++"
_FLAT: Final = rf"(?:[^{{}}\\]++|{_ESCAPE})"
_INSIDE: Final = re.compile(
    rf"((?>{_FLAT}|\{{{_FLAT}*+\}})++)"  # 1: depth-neutral text
    r"|(\\(?:boxed|fbox)\s*\{)"  # 2: a nested box opener
    r"|(\{)"  # 3: an opening brace
    r"|\}"  # a closing brace
)
_NEUTRAL, _NESTED_BOX, _OPEN = 1, 2, 3


def find_boxes(text: str) -> list[Box]:
    """Every top-level ``\\boxed{}`` / ``\\fbox{}`` of ``text``, in text order. Never raises."""
    boxes: list[Box] = []
    unclosed: Box | None = None
    pos = 0
    while unclosed is None:
        opener = _OPENER.search(text, pos)
        if opener is None:
            break
        flat = opener.group(1)
        if flat is not None:
            boxes.append(Box(start=opener.start(), end=opener.end(), content=flat, closed=True))
            pos = opener.end()
            continue
        pos, unclosed = _match_box(text, opener, boxes)
    if unclosed is not None:
        # Closed boxes are disjoint and in order; the unclosed one may start before some of
        # them (they sit inside it), so put it where its start belongs.
        bisect.insort(boxes, unclosed, key=lambda box: box.start)
    return boxes


def _match_box(text: str, opener: re.Match[str], out: list[Box]) -> tuple[int, Box | None]:
    """Match the braces of the box opened by ``opener``, appending the closed boxes to ``out``.

    Returns where scanning for the next opener resumes and the box left unclosed at the end of
    the text, if any. Everything between the opener and its closing brace is scanned once.
    """
    # One entry per open brace: (box start, content start) for a box opener, None for a plain
    # brace. The Python loop runs once per depth change, never once per character.
    stack: list[tuple[int, int] | None] = [(opener.start(), opener.end())]
    # Closed boxes as (start, content start, end); Box objects (and their content strings) are
    # only built for the ones reported, so boxes nested 10,000 deep cost no quadratic copying.
    spans: list[tuple[int, int, int]] = []
    resume = len(text)
    for token in _INSIDE.finditer(text, opener.end()):
        kind = token.lastindex
        if kind == _NEUTRAL:
            continue
        if kind == _NESTED_BOX:
            stack.append((token.start(), token.end()))
            continue
        if kind == _OPEN:
            stack.append(None)
            continue
        opened = stack.pop()
        if opened is not None:
            start, content_start = opened
            # A box that closes contains every box closed since it opened: drop those, so
            # only the outermost closed box is reported. Amortised linear: each span is
            # appended and dropped at most once.
            while spans and spans[-1][0] > start:
                spans.pop()
            spans.append((start, content_start, token.end()))
        if not stack:
            resume = token.end()
            break
    out.extend(
        Box(start=start, end=end, content=text[content_start : end - 1], closed=True)
        for start, content_start, end in spans
    )
    return resume, _innermost_unclosed(text, stack)


def _innermost_unclosed(text: str, stack: list[tuple[int, int] | None]) -> Box | None:
    for opened in reversed(stack):
        if opened is not None:
            start, content_start = opened
            return Box(start=start, end=len(text), content=text[content_start:], closed=False)
    return None  # pragma: no cover - the outer opener is always on the stack


# ---------------------------------------------------------------------------------------------
# Reading one box

_CACHE_LIMIT: Final = 512  # contents longer than this are rare and not worth caching
_LARK_LIMIT: Final = 2_000  # a box this long holds a derivation, not a letter

_EMPTY: Final = BoxReading(kind="empty", letters=(), text="", raw="")


def read_box(content: str) -> BoxReading:
    """Read the content of one box. Never raises."""
    if len(content) <= _CACHE_LIMIT:
        return _read_cached(content)
    if len(content) > _LARK_LIMIT:
        collapsed = _collapse(content)
        return BoxReading(kind="value", letters=(), text=collapsed, raw=collapsed)
    return _read(content)


@functools.lru_cache(maxsize=4096)
def _read_cached(content: str) -> BoxReading:
    return _read(content)


def _read(content: str) -> BoxReading:
    if not content.isascii():
        content = unicodedata.normalize("NFKC", content)  # fullwidth Ｂ reads as B
    fast = _read_fast(content)
    if fast is not None:
        return fast
    return _read_slow(content)


def _collapse(text: str) -> str:
    return " ".join(text.split())


# The fast path: the contents that make up nearly every box, read without Lark. Each match must
# give exactly what the slow path gives (a test checks this on a table of contents).
_FAST_LETTER: Final = re.compile(
    r"\s*(?P<w>\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?"
    r"(?P<p>\()?(?P<letter>[A-Za-z])(?(p)\))"
    r"\s*(?(w)\}\s*)"
)
# "C: Karyotyping": the label text is plain (no LaTeX, no markdown), starts with a word of two
# or more letters that is not a list word, and holds no lone letter that could be a second
# choice; everything else goes to the grammar.
_FAST_LABEL: Final = re.compile(
    r"\s*(?P<p>\()?(?P<letter>[A-Za-z])(?(p)\)|\s*[:.)])\s+"
    r"(?P<text>(?!(?:and|or|both|either)(?![A-Za-z]))[A-Za-z]{2}[^\\{}$*\[\]()]*+)\s*"
)
_LONE_LETTER: Final = re.compile(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])")


def _read_fast(content: str) -> BoxReading | None:
    match = _FAST_LETTER.fullmatch(content)
    if match is not None:
        letter = match["letter"]
        raw = f"({letter})" if match["p"] else letter
        return BoxReading(kind="letter", letters=(letter,), text=letter, raw=raw)
    match = _FAST_LABEL.fullmatch(content)
    if match is not None and _LONE_LETTER.search(match["text"]) is None:
        letter = match["letter"]
        return BoxReading(
            kind="labelled", letters=(letter,), text=_collapse(match["text"]), raw=_collapse(content)
        )
    return None


def _read_slow(content: str) -> BoxReading:
    unwrapped = _unwrap(content)
    if unwrapped is None:
        # Unbalanced braces: there is no well-defined content to read, so no answer.
        return BoxReading(kind="empty", letters=(), text="", raw=_collapse(content))
    core = _collapse(unwrapped)
    if not core:
        return _EMPTY
    if _MAY_NAME_A_CHOICE.match(core) is None or _EXPONENT_NUMBER.fullmatch(core):
        # "2e5" is two hundred thousand, not a digit glued to the letter E.
        return _text(core)
    from lark.exceptions import LarkError  # noqa: PLC0415  Lark only for what the fast path cannot read

    try:
        tree = _parser().parse(core)
    except LarkError:
        return _text(core)
    return _interpret(tree, core)


_EXPONENT_NUMBER: Final = re.compile(r"[-+]?\d++(?:[.,]\d++)?\s?[eE]\s?[-+]?\d++")


def _text(core: str) -> BoxReading:
    return BoxReading(kind="value", letters=(), text=core, raw=core)


# Every shape the grammar accepts starts with an optional prefix word and brackets, then a
# digit or a lone letter. Anything else is option text, known without running the parser.
_MAY_NAME_A_CHOICE: Final = re.compile(
    r"(?i:(?:the )?(?:(?:correct|final|right|best) )?(?:answer|option|choice)s?"
    r"(?: (?:is|are))?(?: ?:)? ?|(?:both|either) )?"
    r"[(\[{ ]*(?:[0-9]|[A-Za-z](?![A-Za-z]))"
)


@functools.cache
def _parser() -> Lark:
    return lalr_parser("boxed", builtin_grammar("boxed"))


# A second label inside a label's text ("A) Karyotyping, B) PCR") makes the answer a list.
_OTHER_LABEL: Final = re.compile(
    r"(?:^|[,;]\s*|\s(?:and|or)\s+)(?:\((?P<p>[A-Za-z])\)|(?P<d>[A-Za-z])[:)])(?=\s|$)"
)


def _interpret(tree: Tree[Token], core: str) -> BoxReading:
    """Turn a parse of ``core`` into a reading. The tree is flat: start -> shape -> tokens."""
    from lark import Token, Tree  # noqa: PLC0415  imported with the parser, not with choicebox

    shape = tree.children[0]
    if not isinstance(shape, Tree):  # pragma: no cover - the grammar always has a shape rule
        return _text(core)
    tokens = [child for child in shape.children if isinstance(child, Token)]
    letters = [str(token) for token in tokens if token.type == "LETTER"]
    rule = str(shape.data)
    if rule == "labelled":
        rest = next(str(token) for token in tokens if token.type == "REST").strip()
        others = [m["p"] or m["d"] for m in _OTHER_LABEL.finditer(rest)]
        if others:
            return _letters([*letters, *others], core)
        return BoxReading(kind="labelled", letters=(letters[0],), text=rest, raw=core)
    if rule == "range":
        return _letters(_expand_range(letters[0], letters[1]), core)
    return _letters(letters, core)


def _letters(letters: list[str], core: str) -> BoxReading:
    distinct = tuple(dict.fromkeys(letters))
    if len(distinct) == 1:
        # "B or B" names one choice.
        return BoxReading(kind="letter", letters=distinct, text=distinct[0], raw=core)
    return BoxReading(kind="hedge", letters=distinct, text=core, raw=core)


def _expand_range(first: str, last: str) -> list[str]:
    """``A-D`` names A, B, C and D; a descending or mixed-case range names its two ends."""
    if first < last and first.isupper() == last.isupper():
        return [chr(code) for code in range(ord(first), ord(last) + 1)]
    return [first, last]


# ---------------------------------------------------------------------------------------------
# Stripping wrappers: one linear pass over LaTeX tokens with a stack of brace groups

# Commands whose argument is the text itself: the command and its braces go, the text stays.
_WRAPPERS: Final = frozenset(
    {
        "text", "textbf", "textit", "textsf", "texttt", "textrm", "textup", "textnormal",
        "emph", "underline", "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "mathnormal",
        "mathbb", "boldsymbol", "bm", "operatorname", "boxed", "fbox", "mbox", "hbox",
    }
)  # fmt: skip
# Commands whose first argument is dropped along with them (a colour, a length or a label
# name is not the answer).
_DROP_ARGUMENT: Final = frozenset({"color", "textcolor", "hspace", "vspace", "label"})
# Commands that only set spacing or sizes: replaced by a space.
_SPACING: Final = frozenset(
    {
        "quad", "qquad", "left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr",
        "displaystyle", "textstyle", "bf", "it", "rm", "enspace", "space",
    }
)  # fmt: skip
# Control symbols that are spacing or math delimiters: \, \; \! \  \\ \( \) \[ \]
_SPACING_SYMBOLS: Final = frozenset(",;:! \t\n\\()[]")

_LATEX_TOKEN: Final = re.compile(
    r"\\(?P<cmd>[A-Za-z]+\s*)"  # one group per alternative, so lastgroup names it
    r"|\\(?P<sym>.)"
    r"|(?P<brace>[{}])"
    r"|(?P<strip>\*\*+|\$+)"
    r"|(?P<plain>[^\\{}*$]+|\*|\\)",
    re.DOTALL,
)

_KEEP: Final = 0  # a group that is a command's argument: keep its braces
_STRIP: Final = 1  # a wrapper's or bare group: drop the braces, keep the text
_DROP: Final = 2  # a dropped argument: drop everything inside


def _unwrap(content: str) -> str | None:
    """The content without formatting wrappers, or None when its braces do not balance."""
    out: list[str] = []
    stack: list[int] = []
    next_group = _STRIP  # what the next "{" opens
    dropping = 0  # depth of _DROP groups we are inside
    for token in _LATEX_TOKEN.finditer(content):
        kind = token.lastgroup
        if kind == "brace":
            if token.group() == "{":
                group = _DROP if dropping else next_group
                dropping += group == _DROP
                stack.append(group)
                if group == _KEEP:
                    out.append("{")
                next_group = _STRIP
                continue
            if not stack:
                return None
            group = stack.pop()
            dropping -= group == _DROP
            if group == _KEEP:
                out.append("}")
            # \frac{1}{2}: a group right after a kept group is the command's next argument.
            next_group = _KEEP if group == _KEEP else _STRIP
            continue
        if dropping and kind != "cmd":
            continue
        if kind == "cmd":
            word = token["cmd"]
            name = word.rstrip()
            next_group = _command(name, len(name) < len(word), out, dropping)
        elif kind == "sym":
            _symbol(token["sym"], out)
            next_group = _STRIP
        elif kind == "strip":
            out.append(" " if token.group().startswith("$") else "")
        else:
            plain = token.group()
            if plain.strip():
                # x^{2}, x_{i}: a group after ^ or _ is an argument; otherwise a bare group.
                next_group = _KEEP if plain.endswith(("^", "_")) else _STRIP
            out.append(plain)
    if stack:
        return None
    return "".join(out)


def _command(name: str, gap: bool, out: list[str], dropping: int) -> int:
    """Emit a control word; return what its following "{" opens."""
    if dropping:
        return _DROP
    if name in _WRAPPERS:
        out.append(" ")
        return _STRIP
    if name in _DROP_ARGUMENT:
        return _DROP
    if name in _SPACING:
        out.append(" ")
        return _STRIP
    out.append(f"\\{name}{' ' if gap else ''}")
    return _KEEP


def _symbol(symbol: str, out: list[str]) -> None:
    """Emit a control symbol: spacing becomes a space, an escaped character itself."""
    if symbol in _SPACING_SYMBOLS:
        out.append(" ")
    elif symbol in "{}$%&#_":
        out.append(symbol)
    else:
        out.append(f"\\{symbol}")
