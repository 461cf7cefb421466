"""User regexes (from rule files and from samples), bounded in size, compiled once, time-bounded.

They run on the third-party ``regex`` engine because it is the mainstream engine with a per-call
timeout: a catastrophic pattern such as ``(a+)+$`` ends within ``DEFAULT_TIMEOUT`` instead of
stalling a worker. The timeout covers matching, not compiling, and ``regex`` compiles a counted
repeat by writing its body out that many times (``a{10000000}``: 19 s and 2.6 GB; a row's
``a{1000000000}`` grew a server to 24 GB). So a pattern is measured before it is compiled and
refused, as an invalid pattern, when it passes one of these limits:

* ``MAX_PATTERN_CHARS``: the pattern text is at most 2,000 characters (dataset patterns are
  under 100; the audit's instruction patterns under 200);
* ``MAX_REPEAT``: no counted repeat ``{m}``, ``{m,}``, ``{,n}``, ``{m,n}`` counts past 1,000;
* ``MAX_PATTERN_SIZE``: the compiled size, estimated as the pattern's units (a literal, a class,
  an escape) with every group counted once per branch and every counted repeat multiplying what
  it repeats, nested repeats multiplying each other, is at most 20,000. That compiles in tens of
  milliseconds and a few megabytes at worst.

An invalid or refused pattern gives ``CompiledPattern.error``, never an exception: a rule file
reports it at load, located; a row's pattern is the ``invalid_regex`` failure it always was.
``MAX_PATTERNS_PER_ROW`` (32) caps how many patterns of one row are run, in every entry point,
so a row's worst case is 32 timeouts. Compiled patterns are cached by text and flags, at most
``MAX_CACHED_PATTERNS`` of them and ``MAX_CACHED_SIZE`` estimated units in all, least recently
used first out, so the cache stays within some tens of megabytes whatever the rows hold.
"""

from __future__ import annotations

import collections
import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from ._errors import describe_value

if TYPE_CHECKING:
    import regex

__all__ = [
    "DEFAULT_TIMEOUT",
    "FLAG_NAMES",
    "IGNORECASE",
    "MAX_CACHED_PATTERNS",
    "MAX_CACHED_SIZE",
    "MAX_PATTERNS_PER_ROW",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_SIZE",
    "MAX_REPEAT",
    "CompiledPattern",
    "RegexTimeout",
    "compile_pattern",
    "pattern_problem",
    "pattern_size",
    "too_many_patterns",
]

DEFAULT_TIMEOUT: Final = 0.25  # seconds for one pattern over one output

MAX_PATTERN_CHARS: Final = 2_000
MAX_REPEAT: Final = 1_000
MAX_PATTERN_SIZE: Final = 20_000
MAX_PATTERNS_PER_ROW: Final = 32
MAX_CACHED_PATTERNS: Final = 4_096
MAX_CACHED_SIZE: Final = 400_000  # estimated units; about 50 MB of compiled patterns at worst

# The ``regex`` engine's flag values, which are ``re``'s (a test holds that): the engine is
# imported when the first pattern is compiled, so that a run whose rows and modes have no
# pattern (most) does not pay its 10 ms import.
FLAG_NAMES: Final = {
    "ignorecase": int(re.IGNORECASE),
    "multiline": int(re.MULTILINE),
    "dotall": int(re.DOTALL),
    "verbose": int(re.VERBOSE),
}
IGNORECASE: Final = FLAG_NAMES["ignorecase"]


class RegexTimeout(Exception):
    """A pattern did not finish within its time bound."""


@attrs.frozen
class CompiledPattern:
    """A compiled user pattern, or the reason it would not compile."""

    source: str
    pattern: regex.Pattern[str] | None
    error: str | None

    def finditer(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> list[regex.Match[str]]:
        """Every match, left to right; raises ``RegexTimeout`` when the bound runs out."""
        assert self.pattern is not None, "finditer on a pattern that failed to compile"
        try:
            return list(self.pattern.finditer(text, timeout=timeout))
        except TimeoutError:
            shown = describe_value(self.source)
            raise RegexTimeout(f"pattern {shown} timed out after {timeout:g}s") from None


def compile_pattern(source: str, flags: int = 0) -> CompiledPattern:
    """Compile ``source`` with ``flags``; an invalid or too large pattern gives ``error``."""
    key = (source, flags)
    found = _CACHE.get(key)
    if found is None:
        found = _compile(source, flags)
        _CACHE.put(key, found, pattern_size(source)[1] if found.pattern is not None else 1)
    return found


class _PatternCache:
    """Least recently used first out, bounded in entries and in estimated compiled size."""

    def __init__(self, max_entries: int, max_size: int) -> None:
        self._entries: collections.OrderedDict[tuple[str, int], tuple[CompiledPattern, int]]
        self._entries = collections.OrderedDict()
        self._size = 0
        self._max_entries = max_entries
        self._max_size = max_size
        self._lock = threading.Lock()  # grading runs in threads (serve)

    def get(self, key: tuple[str, int]) -> CompiledPattern | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: tuple[str, int], compiled: CompiledPattern, size: int) -> None:
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (compiled, size)
            self._size += size
            while len(self._entries) > self._max_entries or self._size > self._max_size:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= dropped

    @property
    def size(self) -> int:
        """The estimated size of the patterns held."""
        return self._size

    def __len__(self) -> int:
        return len(self._entries)


_CACHE: Final = _PatternCache(MAX_CACHED_PATTERNS, MAX_CACHED_SIZE)


def _compile(source: str, flags: int) -> CompiledPattern:
    if not isinstance(source, str):
        kind = type(source).__name__
        return CompiledPattern(source, None, f"expected a pattern string, got {kind}")
    problem = pattern_problem(source)
    if problem is not None:
        return CompiledPattern(source, None, f"invalid pattern {describe_value(source)}: {problem}")
    import regex  # noqa: PLC0415  see FLAG_NAMES

    try:
        # V0 keeps the semantics of Python's re, which is what dataset regexes are written for.
        # regex's own cache is bypassed: it would keep up to 500 patterns outside these bounds.
        pattern = regex.compile(source, flags | regex.V0, cache_pattern=False)
    except (regex.error, ValueError, TypeError, RecursionError, OverflowError) as exc:
        return CompiledPattern(source, None, f"invalid pattern {describe_value(source)}: {exc}")
    return CompiledPattern(source, pattern, None)


def flags_from_names(names: Iterable[str]) -> int:
    """The flag value for names such as ``ignorecase``; unknown names raise ``KeyError``."""
    value = 0
    for name in names:
        value |= FLAG_NAMES[name]
    return value


# --- measuring a pattern before it is compiled ---------------------------------------------------


def too_many_patterns(patterns: Sequence[str]) -> str | None:
    """Why a row's patterns may not run: more than ``MAX_PATTERNS_PER_ROW`` of them (``None``
    when they may). The one check every entry point makes; each says what follows from it
    (grading records it, runs none of them and grades with the mode's chain; the server answers
    422, since the client can send fewer)."""
    if len(patterns) > MAX_PATTERNS_PER_ROW:
        return f"output_regex has {len(patterns)} patterns, more than the {MAX_PATTERNS_PER_ROW} a sample may have"
    return None


def pattern_problem(source: str) -> str | None:
    """Why ``source`` is too large to compile (see the limits above), or ``None``."""
    if len(source) > MAX_PATTERN_CHARS:
        return f"the pattern is {len(source):,} characters long; the limit is {MAX_PATTERN_CHARS:,}"
    largest, size = pattern_size(source)
    if largest > MAX_REPEAT:
        count = f"{largest:,}" if largest < _HUGE else f"over {_HUGE:,}"
        return f"the repeat count {count} is over the limit of {MAX_REPEAT:,}"
    if size > MAX_PATTERN_SIZE:
        return (
            f"the pattern expands to about {size:,} units when compiled (counted repeats "
            f"multiply what they repeat); the limit is {MAX_PATTERN_SIZE:,}"
        )
    return None


def pattern_size(source: str) -> tuple[int, int]:
    """``(largest repeat count, estimated compiled size)`` of a pattern, in one linear scan.

    The scan reads the syntax of ``regex`` in its V0 (``re``-compatible) mode: escapes, classes
    (no nested sets in V0), groups and their ``(?...)`` prefixes, ``|`` and counted repeats. It
    errs on the large side: under ``verbose`` whitespace and ``#`` comments mean nothing, so the
    pattern is measured both as written and with them removed, and the larger reading counts.
    """
    plain = _measure(source)
    if "#" not in source and not any(c.isspace() for c in source):
        return plain
    verbose = _measure(_without_verbose_spacing(source))
    return max(plain[0], verbose[0]), max(plain[1], verbose[1])


_COUNT: Final = re.compile(r"\{(\d*)(,?)(\d*)\}")
# What follows "(" in a group that is not a plain capture: a name, a lookaround, flags, or a
# whole construct ending in ")" (a backreference, a call, inline flags).
_GROUP_PREFIX: Final = re.compile(
    r"\?(?:P?<\w+>|'\w+'|<[=!]|[:=!>|]|P[=>]\w+\)|&\w+\)|[-+]?\d+\)|R\)|[-a-zA-Z^]*[:)])?"
)
_INLINE_FLAGS: Final = re.compile(r"\?(?!R\))[-a-zA-Z^]*\)")
_HUGE: Final = 10**12  # any size past every limit; keeps the arithmetic small


def _measure(source: str) -> tuple[int, int]:
    # A stack of open groups; a group is a list of branches, a branch a list of unit sizes.
    groups: list[list[list[int]]] = [[[]]]
    largest = 0
    i, end = 0, len(source)
    while i < end:
        char = source[i]
        if char == "\\":
            i += 2
            if source[i - 1 : i] in ("p", "P", "N") and source[i : i + 1] == "{":
                close = source.find("}", i)
                i = end if close == -1 else close + 1
            groups[-1][-1].append(1)
        elif char == "[":
            i = _class_end(source, i)
            groups[-1][-1].append(1)
        elif char == "(":
            if source.startswith("(?#", i):
                close = source.find(")", i)
                i = end if close == -1 else close + 1
                continue
            prefix = _GROUP_PREFIX.match(source, i + 1)
            i = prefix.end() if prefix is not None else i + 1
            if prefix is None or not prefix.group().endswith(")"):
                groups.append([[]])
            elif not _INLINE_FLAGS.fullmatch(prefix.group()):
                groups[-1][-1].append(1)  # (?P=name), (?1), (?R): an atom complete in itself
            # else inline flags such as (?i): no atom at all, so a count after them repeats
            # what came before them (regex reads "(...)(?i){300}" as the group 300 times)
        elif char == ")":
            if len(groups) > 1:
                closed = groups.pop()
                groups[-1][-1].append(max(1, _total(closed)))
            i += 1
        elif char == "|":
            groups[-1].append([])
            i += 1
        elif char == "{" and (count := _COUNT.match(source, i)) and (count[1] or count[2]):
            low = _number(count[1])
            high = _number(count[3])
            largest = max(largest, low, high)
            branch = groups[-1][-1]
            if branch:
                branch[-1] = min(_HUGE, branch[-1] * max(1, low, high))
            i = count.end()
        else:
            groups[-1][-1].append(1)
            i += 1
    while len(groups) > 1:  # unbalanced: regex will refuse it, but measure what is there
        closed = groups.pop()
        groups[-1][-1].append(_total(closed))
    return largest, _total(groups[0])


def _total(group: list[list[int]]) -> int:
    return min(_HUGE, sum(sum(branch) for branch in group))


def _number(digits: str) -> int:
    return 0 if not digits else _HUGE if len(digits) > 12 else int(digits)


def _class_end(source: str, start: int) -> int:
    """The index after the class opening at ``start``: V0 classes do not nest."""
    i = start + 1
    if source[i : i + 1] == "^":
        i += 1
    if source[i : i + 1] == "]":
        i += 1  # a "]" first is a literal
    while i < len(source) and source[i] != "]":
        i += 2 if source[i] == "\\" else 1
    return min(i + 1, len(source))


def _without_verbose_spacing(source: str) -> str:
    """``source`` as ``verbose`` reads it: unescaped whitespace and ``#`` comments removed."""
    out: list[str] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            out.append(source[i : i + 2])
            i += 2
        elif char == "[":
            stop = _class_end(source, i)
            out.append(source[i:stop])
            i = stop
        elif char.isspace():
            i += 1
        elif char == "#":
            newline = source.find("\n", i)
            i = len(source) if newline == -1 else newline + 1
        else:
            out.append(char)
            i += 1
    return "".join(out)
