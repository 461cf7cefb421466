"""Reading the judge's reply, strictly: one option letter, or ``NONE``; anything else is a judge
failure, recorded with the reply, never a guess.

A judge that answers "I think B" or "**B**" has not followed the one instruction it was given, and
a reader that pulled a letter out of its prose would be the lenient extractor this package exists
to avoid. Surrounding blanks are the only thing read past.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final, NamedTuple

from choicebox.render import JudgeFailure

__all__ = ["NONE", "ReplyReading", "read_reply"]

NONE: Final = "NONE"
# How much of a reply that is no answer a failure's detail quotes.
_QUOTED: Final = 60


class ReplyReading(NamedTuple):
    """What a reply says: a letter, none (``letter`` and ``failure`` both ``None``), or a failure."""

    letter: str | None
    failure: JudgeFailure | None = None
    detail: str = ""


def read_reply(reply: str, letters: Collection[str]) -> ReplyReading:
    """The reading of the judge's ``reply`` on a row whose option letters are ``letters``."""
    token = reply.strip()
    if token == NONE:
        return ReplyReading(None, detail="the judge read no single option")
    if len(token) == 1 and "A" <= token <= "Z":
        if token in letters:
            return ReplyReading(token, detail=f"the judge read {token}")
        return ReplyReading(
            None, "not_an_option", f"the judge replied {token}, which is not one of the options {', '.join(letters)}"
        )
    quoted = token if len(token) <= _QUOTED else token[:_QUOTED] + "…"
    return ReplyReading(None, "not_a_letter", f"the judge replied {quoted!r}, neither one option letter nor {NONE}")
