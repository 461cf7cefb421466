"""User regexes (from rule files and from samples), compiled once and run with a time bound.

They run on the third-party ``regex`` engine because it is the mainstream engine with a per-call
timeout: a catastrophic pattern such as ``(a+)+$`` ends within the bound instead of stalling a
worker. Compilation results, failures included, are cached by pattern text.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Final

import attrs
import regex

__all__ = ["DEFAULT_TIMEOUT", "FLAG_NAMES", "CompiledPattern", "RegexTimeout", "compile_pattern"]

DEFAULT_TIMEOUT: Final = 0.25  # seconds for one pattern over one output

FLAG_NAMES: Final = {
    "ignorecase": regex.IGNORECASE,
    "multiline": regex.MULTILINE,
    "dotall": regex.DOTALL,
    "verbose": regex.VERBOSE,
}


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
            raise RegexTimeout(f"pattern {self.source!r} timed out after {timeout:g}s") from None


@functools.lru_cache(maxsize=4096)
def compile_pattern(source: str, flags: int = 0) -> CompiledPattern:
    """Compile ``source`` with ``flags``; an invalid pattern gives ``error``, never an exception."""
    try:
        # V0 keeps the semantics of Python's re, which is what dataset regexes are written for.
        return CompiledPattern(source, regex.compile(source, flags | regex.V0), None)
    except (regex.error, ValueError, TypeError, RecursionError, OverflowError) as exc:
        return CompiledPattern(source, None, f"invalid pattern {source!r}: {exc}")


def flags_from_names(names: Iterable[str]) -> int:
    """The flag value for names such as ``ignorecase``; unknown names raise ``KeyError``."""
    value = 0
    for name in names:
        value |= FLAG_NAMES[name]
    return value
