"""The ``option_citation`` step kind: a sentence that ends by citing one option by its letter and
its own text, whatever predicate leads to it.

"The statement that is not true is C. Sound travels faster in a vacuum.", "The most likely cause
is D. Vitamin B12 deficiency.", "... is best described as B. operant conditioning." name no answer
noun, but the letter and the option's exact text agree: the sentence cites that option as what
the subject is (LABELLING rules 5 and 10). The citation forms are ``choicebox.find._citation``'s.

A citation commits only when it closes its sentence and a link word ("is", "as", "to") leads
straight into it; a sentence that opens with it (a restated option, an option under review), one
that cites several options, one whose link is negated ("is not") or that is hypothetical ("if",
"consider") only mentions the options, and so does a run of citations on consecutive lines.
Sentences that cite different options describe them (one example of each kind): none commits.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from choicebox.find._citation import citation_after, text_ending_at

from ._api import Candidate, Context, Extraction, register_step_kind
from ._vocab import alternation, nonempty_words, valid_words, word_list

__all__ = ["OptionCitation"]

# A capital standing alone, bare or in brackets, that may open a citation: "D", "(D)";
# ``citation_after`` then checks the joint ("D. ", "D) ", "D: ", "D - ") and the option's text.
# A plain class with one lookahead: the regex engine skips to the capitals at C speed.
_CAPITAL: Final = re.compile(r"[A-Z](?![\w'’])")
# What may open a citation before its letter: "**", "Option ", "choice ".
_OPENER: Final = re.compile(r"(?:\b(?i:option|choice)[ \t]++)?[*_]*+$")
# What may follow a citation that closes its sentence: markup, a closing mark, then its end.
_CLOSES: Final = re.compile(r"[*_`$\"')\]]*+[ \t]*+(?:[.!;]|(?=\n)|$)")
_SENTENCE_START: Final = re.compile(r"[.!?](?=\s)|\n|^")
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s|$)|\n")
_WORD: Final = re.compile(r"[\w'’-]+")


@register_step_kind("option_citation")
@attrs.frozen(kw_only=True)
class OptionCitation:
    """A concluding sentence that cites one option (see the module docstring).

    ``links`` are the words that may lead straight into the citation ("is", "as", "to"); one of
    the ``negations`` right before the link ("cannot be", "is never"), or one of the
    ``conditions`` anywhere before it in its sentence, makes it a mention. Only the last
    ``window`` characters are read: a sentence that concludes a response stands there.
    """

    links: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    negations: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    conditions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    window: int = 600
    _link_end: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _negated: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _condition: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(
            self, "_link_end", re.compile(rf"(?:^|\s){alternation(self.links)}[ \t:,]*+$", re.IGNORECASE)
        )
        negations = alternation(self.negations) if self.negations else "(?!)"
        # "cannot be D. ...", "is never D. ...": a negation right before the link.
        object.__setattr__(self, "_negated", re.compile(rf"\b{negations}[ \t]++\S++[ \t:,]*+$", re.IGNORECASE))
        conditions = alternation(self.conditions) if self.conditions else "(?!)"
        object.__setattr__(self, "_condition", re.compile(rf"\b{conditions}\b", re.IGNORECASE))

    def __call__(self, context: Context) -> Extraction | None:
        return None  # it weighs in only under a policy that reads every statement

    def find(self, context: Context) -> list[Candidate]:
        options = context.features.citations()
        if not options or not context.has_letter():
            return []
        text = context.folded
        cited: list[tuple[int, int, str]] = []  # (start, end, letter) of each citation
        lo = max(0, len(text) - self.window)
        low = context.low
        if low is not None and not any(low.find(words[0], lo) != -1 for words in options.values()):
            return []  # no option's first word in the window: no option is cited there
        # Letter first, then its option's text: a window holds few standalone capitals.
        for match in _CAPITAL.finditer(text, lo):
            letter = match.group()
            start, token_end = match.start(), match.end()
            bracketed = start and text[start - 1] == "(" and text.startswith(")", token_end)
            if bracketed:
                start, token_end = start - 1, token_end + 1
            elif start and (text[start - 1].isalnum() or text[start - 1] in "\\(_"):
                continue  # inside a word, a command or an open bracket
            end = citation_after(text, token_end, letter, options)
            if end != -1:  # "D. Vitamin B12 deficiency"
                opener = _OPENER.search(text, max(0, start - 12), start)
                cited.append((opener.start() if opener else start, end, letter))
            elif bracketed and (words := options.get(letter)) is not None:
                before = text_ending_at(text, start, words)
                if before != -1:  # "Vitamin B12 deficiency (D)"
                    cited.append((before, token_end, letter))
        if not cited:
            return []
        cited.sort()
        found: list[Candidate] = []
        for index, (start, end, letter) in enumerate(cited):
            sentence = self._sentence_start(text, start)
            lead = text[sentence:start]
            closes = _CLOSES.match(text, end)
            sentence_end = _sentence_end(text, end)
            others = {x[2] for x in cited if x[2] != letter and sentence <= x[0] < sentence_end}
            listed = _on_adjacent_line(text, cited, index) or _next_to_another(text, cited, index)
            if closes is None or others or listed or not self._commits(lead):
                continue  # a mention: the options restated, reviewed, negated or supposed
            found.append(
                context.candidate(
                    "commitment", start, end, (letter,), how="an option cited by letter and text, closing a sentence",
                    origin="evaluation", cue=lead.strip(), layout="closing a sentence",
                    payload="letter with its option's text",
                )
            )  # fmt: skip
        if len({c.letters for c in found}) > 1:
            # "The example of positive feedback is (A). ... of negative feedback is (D).": sentences
            # that cite different options without a cue describe them, none is the answer.
            return []
        return found

    @staticmethod
    def _sentence_start(text: str, position: int) -> int:
        """Where the sentence holding ``position`` starts (after an end mark or a newline)."""
        lo = max(0, position - 300)
        start = lo
        for match in _SENTENCE_START.finditer(text, lo, position):
            start = match.end()
        return start

    def _commits(self, lead: str) -> bool:
        """The words before the citation state what it is: a link leads into it, not negated,
        and nothing in the sentence makes it hypothetical."""
        words = _WORD.findall(lead)
        if len(words) < 2:
            return False  # a sentence that opens with the citation restates an option
        if self._link_end.search(lead) is None:
            return False
        return self._negated.search(lead) is None and self._condition.search(lead) is None


def _sentence_end(text: str, position: int) -> int:
    stop = _SENTENCE_END.search(text, position)
    return len(text) if stop is None else stop.end()


def _next_to_another(text: str, cited: list[tuple[int, int, str]], index: int) -> bool:
    """Another option is cited right before or after this citation, with only blanks and marks
    between them: "(A) text. (B) text. (C) text." lists the options in one line."""
    start, end, letter = cited[index]
    for other_start, other_end, other in cited:
        if other == letter:
            continue
        if 0 <= other_start - end <= 4 and not text[end:other_start].strip(" \t.,;:*_"):
            return True
        if 0 <= start - other_end <= 4 and not text[other_end:start].strip(" \t.,;:*_"):
            return True
    return False


def _on_adjacent_line(text: str, cited: list[tuple[int, int, str]], index: int) -> bool:
    """Another option is cited on the line before or after: the options are being listed."""
    start, end, letter = cited[index]
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    previous_start = text.rfind("\n", 0, max(0, line_start - 1)) + 1 if line_start else 0
    next_end = text.find("\n", line_end + 1)
    next_end = len(text) if next_end == -1 else next_end
    for other_start, _, other in cited:
        if other == letter:
            continue
        if line_start and previous_start <= other_start < line_start:
            return True
        if line_end < other_start <= next_end:
            return True
    return False
