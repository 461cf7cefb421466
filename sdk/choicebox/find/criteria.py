"""The ``criterion_statement`` step kind: the answer named by what the question asks for.

"Which statement is false?" is answered "The statement that is false is (F).", "Which point does
not satisfy the inequality?" by "The point that does not satisfy this inequality is (E).", and a
question of any kind by "The answer that does not belong to the list is (C).": a noun, a relative
clause that restates the question's criterion, a link and a letter. The noun is the one the
question asks about ("which statement", "which of the following points") or one of the answer
nouns; the letter must close its sentence, and a sentence that opens with a condition ("If the
statement that is false is (F), ...") supposes.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from choicebox.find._payload import MAX_PAYLOAD, read_at

from ._api import Candidate, Context, PicksOne, Which, register_step_kind
from ._vocab import (
    alternation,
    nonempty_words,
    occurrences,
    sentence_opening,
    valid_words,
    word_list,
)

__all__ = ["CriterionStatement"]

# The noun a question asks about: "Which statement ...", "Which of the following points ...",
# "What one of these ...".
_ASKED_NOUN: Final = re.compile(
    r"\b(?:which|what)[ \t]++(?:(?:one[ \t]++)?of[ \t]++(?:the[ \t]++following|these|those)[ \t]++)?([a-z]{3,20})\b",
    re.IGNORECASE,
)
# Words after "which" that are no noun of the question's: "Which of ...", "Which is ...".
_NOT_NOUNS: Final = frozenset({"of", "is", "are", "was", "were", "would", "could", "can", "does", "do", "did", "has", "have", "best", "most", "the"})
# What closes the letter's sentence: "(F).", "**(E)**", "C" at the end of its line.
_CLOSES: Final = re.compile(r"[*_$)\]]*+[ \t]*+(?:[.!]|$|\n)")


@register_step_kind("criterion_statement")
@attrs.frozen(kw_only=True)
class CriterionStatement(PicksOne):
    """The answer named by the question's criterion (see the module docstring).

    ``nouns`` open such a statement besides the question's own noun; ``links`` join the clause
    to the letter ("is", "would be"); ``conditions`` opening the sentence make it a supposition.
    The clause is "that" or "which" and at most ``max_clause`` characters of one sentence.
    """

    nouns: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    links: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    conditions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    max_clause: int = 80
    which: Which = "last"
    _clause: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _condition: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(
            self,
            "_clause",
            re.compile(
                rf"s?[*_]*+[ \t]++(?:that|which)[ \t]++[^.\n!?;:]{{1,{self.max_clause}}}?[ \t]++"
                rf"{alternation(self.links)}[ \t]*+:?"
            ),
        )
        # ``alternation`` of no conditions matches nothing
        object.__setattr__(self, "_condition", re.compile(rf"\b{alternation(self.conditions)}\b", re.IGNORECASE))

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None or (" that " not in low and " which " not in low) or not context.has_letter():
            return []  # every statement it reads has a relative clause and names a letter
        text = context.folded
        found = []
        for noun in self._nouns(context.question):
            for at in occurrences(low, f"the {noun}"):
                if at and low[at - 1].isalnum():
                    continue
                clause = self._clause.match(low, at + 4 + len(noun))
                if clause is None:
                    continue
                reading = read_at(text, clause.end(), min(len(text), clause.end() + MAX_PAYLOAD), lowercase=False)
                if reading.kind != "letter" or not _CLOSES.match(text, reading.end):
                    continue
                if self._condition.search(text, sentence_opening(text, at), at):
                    continue  # "If the statement that is false is (F), ...": a supposition
                found.append(
                    context.candidate(
                        "commitment", at, reading.end, reading.letters, how="the answer named by the question's criterion",
                        origin="evaluation", cue=text[at : clause.end()].strip(), layout=reading.layout,
                        payload=reading.form,
                    )
                )  # fmt: skip
        found.sort(key=lambda c: c.start)
        return found

    def _nouns(self, question: str) -> tuple[str, ...]:
        """The ``nouns`` and the one the question asks about, singular ("statements": "statement")."""
        asked = _ASKED_NOUN.search(question)
        if asked is None:
            return self.nouns
        noun = asked.group(1).lower()
        if noun in _NOT_NOUNS:
            return self.nouns
        if noun.endswith("s") and not noun.endswith("ss"):
            noun = noun[:-1]
        return tuple(dict.fromkeys((*self.nouns, noun)))
