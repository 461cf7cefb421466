"""Whether a text holds a letter any finder could read: the gate that lets a finder whose
statements all name letters skip a text without one, at C speed."""

from __future__ import annotations

import functools
import string
from collections.abc import Collection
from typing import Final

from choicebox.find._payload import MAX_PAYLOAD, letter_token

__all__ = ["has_readable_letter"]

_LINE_END_DECORATION: Final = " \t.!*_$`'\""
_ASCII_LETTERS_AND_DIGITS: Final = string.ascii_letters + string.digits


@functools.lru_cache(maxsize=256)
def _letter_classes(options: tuple[str, ...]) -> bytes:
    """A ``bytes.translate`` table for ASCII text: the capitals that are ``options`` to "L",
    the other ASCII letters and digits to "w" (what ``isalnum`` and ``[A-Za-z0-9]`` are on
    ASCII), every other character to a blank."""
    table = bytearray(b" " * 256)
    for char in _ASCII_LETTERS_AND_DIGITS:
        table[ord(char)] = ord("L") if char.isupper() and char in options else ord("w")
    return bytes(table)


# What names a lowercase letter as an option: "option b is correct".
_LETTER_LEADS: Final = ("option ", "Option ", "choice ", "Choice ")


def has_readable_letter(text: str, options: Collection[str], stop: int | None = None) -> bool:
    """Whether ``text[:stop]`` holds an option letter that ``letter_token`` reads, a lowercase
    letter named as an option ("option b") or in brackets ("(d)", which may cite option D): a
    letter a finder could take as an answer ("A car", "x = B", "U.S." are none).

    The places a letter can stand are found with C-speed searches (a capital standing alone, a
    lowercase letter in or before a bracket, a lowercase letter ending its line or the text) and
    read one by one until one is a letter, so a text with letters costs a read or two."""
    n = len(text)
    end = n if stop is None else min(stop, n)

    def reads(at: int) -> bool:
        token = letter_token(text, at, min(n, at + MAX_PAYLOAD), strict_end=False)
        return token is not None and token[1] in options

    # A standalone option capital (no letter or digit of any script before it, no ASCII letter
    # or digit after it) is found at C speed: each character is mapped to its class (an option
    # capital, another ASCII letter or digit, anything else) and " L " is searched for. A
    # character that is not ASCII is encoded as "?", anything else, so a capital after a letter
    # of another script ("πA") is found too and refused by ``isalnum``. A capital before ``end``
    # that is followed by a letter or digit at ``end`` or later is found as standalone by a
    # search that stops at ``end``, and not here; ``letter_token`` reads past ``end`` and
    # refuses it anyway.
    marks = text.encode("ascii", "replace").translate(_letter_classes(tuple(options)))
    classes = b" " + marks + b" "
    at = classes.find(b" L ", 0, end + 2)  # at: the capital's index in ``text``
    while at != -1:
        if (at == 0 or not text[at - 1].isalnum()) and reads(at):
            return True
        at = classes.find(b" L ", at + 1, end + 2)
    for opener in "([{":
        at = text.find(opener, 0, end)
        while at != -1:
            after = at + 1
            while after < n and text[after] in " \t":
                after += 1
            if after < n and text[after].islower() and (reads(at) or _cited_label_may_stand(text, opener, after, options)):
                return True
            if after > at + 1 and after < n and text[after] in options and reads(at):
                return True  # "( A )": a capital spaced inside its brackets, read from the bracket
            at = text.find(opener, at + 1, end)
    for closer in (*")]}", "\n"):
        ends = []
        at = text.find(closer, 0, end)
        while at != -1:
            ends.append(at)
            at = text.find(closer, at + 1, end)
        if closer == "\n" and end == n:
            ends.append(n)  # the text's end ends its last line
        skip = " \t" if closer != "\n" else _LINE_END_DECORATION
        for at in ends:
            before = at - 1
            while before >= 0 and text[before] in skip:
                before -= 1
            if (
                before >= 0
                and text[before].islower()
                and (before == 0 or not text[before - 1].isalnum())
                and reads(before)
            ):
                return True
    # "Therefore option b is correct.": a lowercase letter named as an option or a choice.
    for lead in _LETTER_LEADS:
        at = text.find(lead, 0, end)
        while at != -1:
            q = at + len(lead)
            if (
                q < end
                and text[q].islower()
                and text[q].upper() in options
                and (q + 1 == n or not text[q + 1].isalnum())
                and (at == 0 or not text[at - 1].isalnum())
            ):
                return True
            at = text.find(lead, at + 1, end)
    return False


def _cited_label_may_stand(text: str, opener: str, at: int, options: Collection[str]) -> bool:
    """"(d)" at ``at - 1``: a part label to ``letter_token``, but the citation of option D when
    D's own text follows ("(d) Alexander Fleming"), which only a reader with the options tells."""
    return opener == "(" == text[at - 1] and text.startswith(")", at + 1) and text[at].upper() in options
