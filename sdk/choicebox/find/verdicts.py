"""The finder step kind for an option judged to be the answer: "(C) is the correct answer",
"Option B is the best choice", "making (C) the correct answer", "Option B: <its text> is correct",
"Hence, <option B's text> is the correct answer".

Its vocabularies (the verdict words, the verbs that link a letter to them, the conditions that
make a verdict hypothetical) are parameters given in the rule file. It reads ``context.folded``
and its lowercased twin, and runs its patterns only in windows around its verdict words.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from choicebox.find._citation import CITED_WORDS, text_ending_at
from choicebox.find._payload import LETTER_SEPARATORS

from ._api import Candidate, Context, PicksOne, Which, register_step_kind
from ._vocab import (
    NEGATIVE_QUESTION,
    alternation,
    last_words,
    nonempty_words,
    occurrences,
    opens_sentence,
    required_words,
    sentence_opening,
    valid_words,
    word_list,
)

__all__ = ["OptionVerdict"]

_LETTER_BEFORE: Final = re.compile(
    r"(?P<lead>\b(?i:option|choice|answer|statement)\s*+)?(?P<o>[(\[])?(?<![°\d.,$\\^_/])(?<!\d\s)"
    r"\b(?P<L>[A-Z]|(?<=option\s)[a-j]|(?<=choice\s)[a-j]|(?<=option\s\()[a-j]|(?<=choice\s\()[a-j])\b(?P<c>[)\]])?[*_]*+(?:,[ \t]*+(?:which|that))?\s*+$"
)
# What may stand between the verb and the verdict word: "is therefore the most correct".
_BETWEEN_VERB_AND_VERDICT: Final = frozenset(
    ["the", "most", "only", "single", "one", "therefore", "thus", "clearly", "then", "indeed", "definitely", "also",
     "my", "final"]  # and the first words of verdicts that own the answer: "(B) would be my final answer"
)  # fmt: skip
# Letters listed before the judged one: "(A) or (B) is correct", "Either A, C or D is the answer".
_LISTED_BEFORE: Final = re.compile(
    r"(?:(?:\b(?i:option|choice)[ \t]++)?[*_]*+[(\[]?\b[A-Z]\b[)\]]?[*_]*+[ \t]*+"
    rf"(?i:{LETTER_SEPARATORS})[ \t]*+[*_]*+)++$"
)
_LISTED_LETTER: Final = re.compile(r"\b[A-Z]\b")
_JUDGED: Final = re.compile(
    r"\(?\b([A-Z])\b\)?[*_]*+\s++is\s++(?:true|false|not\s++true|incorrect|correct)\b"
)


# A condition right after a verdict: "H would be correct only if ...", "C is right unless ...".
_CONDITION_AFTER: Final = re.compile(
    r"(?:[ \t]++(?:answer|choice|option|one|explanation))?[ \t,*_]*+(?P<only>only[ \t]++)?(?:if|unless|provided|assuming|when)\b",
    re.IGNORECASE,
)


# "Only if" later in the verdict's sentence: "**A** is the most consistent with the data only if ...".
_ONLY_IF_LATER: Final = re.compile(r"[^.!?\n]{0,60}?\b(?P<only>only[ \t]++)(?:if|when)\b", re.IGNORECASE)


@register_step_kind("option_verdict")
@attrs.frozen(kw_only=True)
class OptionVerdict(PicksOne):
    """An option judged to be the answer: "(I) is the correct answer", "Option C is correct",
    "B is the best choice", ", making (C) the correct answer".

    ``verdicts`` are the words that judge ("correct", "best", "the answer"); ``closing_verdicts``
    judge only where they close the sentence ("C is the one."; "C is the one that causes it" is
    a description); ``verbs`` what
    links the letter to them ("is", "would be"). A bare "A" or "I" is English, and a letter after
    one of the ``conditions`` ("if", "whether", "suppose") is hypothetical. "(H) is true" counts
    only as a stray letter, and only when no other option is judged true or false.

    An option named by its own text alone is judged the same way ("Hence, vitamin B12
    deficiency is the correct answer."), when the text is the whole subject of its sentence:
    only markup, quotes and one of the ``openers`` ("hence", "therefore") stand before it, and
    the verdict closes the sentence or clause. Without ``openers`` no text is read this way.
    """

    verdicts: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    verbs: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    conditions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    closing_verdicts: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    openers: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    which: Which = "last"
    _anchor: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _makes: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _condition: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _supposition: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _subject_opening: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _verb_ends: frozenset[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        verbs = alternation(self.verbs)
        verdicts = alternation(self.verdicts)
        if self.closing_verdicts:
            # A closing verdict only where its sentence ends, so that "is the only one
            # consistent" is still tried as a verdict of its own.
            verdicts = rf"{verdicts}|{alternation(self.closing_verdicts)}\b(?={_ENDS_SENTENCE.pattern})"
        # "making (C) the correct answer" ends in a letter; the verbs end in their last word.
        object.__setattr__(self, "_verb_ends", (last_words(self.verbs) or frozenset()) | {"as", "is"})
        object.__setattr__(
            self,
            "_anchor",
            re.compile(
                rf"(?<=[\s*_)\]]){verbs}\s++(?:therefore\s++|thus\s++|clearly\s++|then\s++|indeed\s++|"
                # "only" with its article: "(D) is only appropriate once ..." restricts, not judges
                rf"definitely\s++|also\s++)?(?:the\s++(?:(?:most|only|single|one)\s++)?|(?:most|single|one)\s++)?"
                rf"(?P<adj>{verdicts})\b(?!\s++(?:for|to)\s++(?:part|\())(?!\s++(?:because|since|as|but)\b)"
            ),
        )
        object.__setattr__(
            self,
            "_makes",
            re.compile(
                r"\b(?:makes?|making|leaves?|leaving|is|as)\s++(?:option\s++|choice\s++)?(?P<o>\()?"
                r"(?P<L>[A-Z])(?(o)\))\s++(?:as\s++)?the\s++(?:(?:only\s++|most\s++\w++\s++)?"
                r"(?:correct|right|best|valid)\s++(?:answer|option|choice)"
                # "That leaves H as the only possibility."
                r"|only\s++(?:possible\s++|remaining\s++|viable\s++)?(?:possibility|option|choice|answer|candidate))"
            ),
        )
        object.__setattr__(
            self, "_condition", re.compile(rf"\b{alternation(self.conditions)}\b[^.\n]{{0,30}}$", re.IGNORECASE)
        )
        object.__setattr__(self, "_supposition", re.compile(rf"\b{alternation(self.conditions)}\b", re.IGNORECASE))
        object.__setattr__(self, "_gates", required_words((*self.verdicts, *self.closing_verdicts)) or ("",))
        # What may open the sentence before an option's text as its subject: markup, quotes and
        # one opener ("Hence, ", "**Therefore**, "), "option"/"choice" (lowercased text).
        object.__setattr__(
            self,
            "_subject_opening",
            re.compile(
                rf"{_SUBJECT_MARKS}(?:(?:{alternation(self.openers)})\b[\s,:*_]*+)?"
                rf"(?:(?:the\s++)?(?:option|choice)\s++)?{_SUBJECT_MARKS}"
            )
            if self.openers
            else None,
        )

    def _windows(self, low: str) -> list[tuple[int, int]]:
        """Windows of the text around each verdict word that a verb may precede: the patterns
        run only there. The word before the verdict (past "the", "most", an adverb) must be the
        last word of a verb ("is", "be", "remains") or of "making (C)"."""
        windows = []
        for word in self._gates:
            for at in occurrences(low, word):
                words = low[max(0, at - 48) : at].split()
                while words and words[-1] in _BETWEEN_VERB_AND_VERDICT:
                    words.pop()
                if words and (words[-1] in self._verb_ends or words[-1][-1:] == ")" or len(words[-1]) == 1):
                    windows.append((max(0, at - 64), at + len(word) + 40))
        return windows

    def _supposed(self, text: str, anchor: re.Match[str], start: int) -> bool:
        """One of the ``conditions`` near the letter ("if (C) ..."), anywhere in the sentence
        before a conditional verdict ("If the patient were unstable, (C) would be correct"), or a
        condition right after the verdict ("(C) is correct only if ...")."""
        if not self.conditions:
            return False
        conditional = "would" in anchor.group() or "could" in anchor.group()
        after = _CONDITION_AFTER.match(text, anchor.end()) or _ONLY_IF_LATER.match(text, anchor.end())
        if after is not None and (conditional or after["only"]):
            # "H would be correct only if 'pessimistic' were 'optimistic'", "(C) is right only
            # if ..." ("(B) is correct when air resistance is neglected" restates the question)
            return True
        if conditional:
            return self._supposition.search(text, sentence_opening(text, start), start) is not None
        return self._condition.search(text, max(0, start - 40), start) is not None

    def _concludes_true(self, context: Context, low: str, start: int, anchor: re.Match[str]) -> bool:
        """"Therefore (D) must be true." for "Which must be true?": one of the ``openers`` and
        nothing else before the letter in its sentence, the verdict closing it, and a question
        that asks what is true (not what is not: "(D) is true" may be what it does not ask for)."""
        question = context.question
        if self._subject_opening is None or not _ASKS_WHAT_IS_TRUE.search(question) or NEGATIVE_QUESTION.search(question):
            return False  # not "Which ..., if true, most weakens ...": a supposition, not what it asks
        opening = sentence_opening(low, start)
        lead = self._subject_opening.fullmatch(low, opening, start)
        return (
            lead is not None
            and any(ch.isalpha() for ch in low[opening:start])  # an opener, not markup alone
            and _ENDS_SENTENCE.match(low, anchor.end()) is not None
            and not self._supposed(low, anchor, start)
            # one option said to be true, no other: "(E) must be true as well" makes two
            and len({m[1] for m in _SAID_TRUE.finditer(context.folded)}) == 1
        )

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None:
            return []
        lettered = context.has_letter()
        if not lettered and self._subject_opening is None:
            return []  # every statement it reads names a letter
        windows = self._windows(low)
        if not windows:
            return []
        text = context.folded
        n = len(text)
        anchors: dict[int, re.Match[str]] = {}
        makes: dict[int, re.Match[str]] = {}
        for lo, hi in windows:
            for anchor in self._anchor.finditer(text, lo, min(n, hi)):
                anchors.setdefault(anchor.start(), anchor)
            if " the " in low[lo:hi]:
                for match in self._makes.finditer(text, lo, min(n, hi)):
                    makes.setdefault(match.start(), match)
        found: list[Candidate] = []
        for _, anchor in sorted(anchors.items()):
            before = _LETTER_BEFORE.search(text, max(0, anchor.start() - 24), anchor.start()) if lettered else None
            if before is None:
                named = self._named_before(context, low, anchor)
                if named is not None:
                    found.append(named)
                    continue
                if not lettered:
                    continue
                cited = _cited_before(context, text, anchor.start())
                if cited is not None and not self._supposed(text, anchor, cited[1]):
                    # "Option B: <option B's text> is correct."
                    found.append(
                        context.candidate(
                            "commitment", cited[1], anchor.end(), (cited[0],), how="an option cited, then judged the answer",
                            origin="evaluation", payload="letter with its option's text",
                        )
                    )  # fmt: skip
                continue
            letter = before["L"].upper()
            if not (before["lead"] or before["o"] or before["c"] or _in_bold(text, before.start("L"))) and letter in "AI" and not (
                letter == "A" and opens_sentence(low, before.start()) and _ENDS_SENTENCE.match(text, anchor.end())
            ):
                # A bare capital A or I is English ("A is the best ..."), but no article stands
                # before a verb ("A is correct." as a whole sentence judges option A), and none
                # is set in bold alone ("**A** is the most consistent with the data").
                continue
            if anchor["adj"] == "true":
                if self._concludes_true(context, low, before.start(), anchor):
                    found.append(
                        context.candidate(
                            "commitment", before.start(), anchor.end(), (letter,), how="an option concluded true",
                            origin="evaluation",
                        )
                    )  # fmt: skip
                elif before["lead"] and len({m.group(1) for m in _JUDGED.finditer(text)}) == 1:
                    found.append(
                        context.candidate(
                            "stray", before.start(), anchor.end(), (letter,), how="a statement judged true",
                            origin="evaluation",
                        )
                    )  # fmt: skip
                continue
            if self._supposed(text, anchor, before.start()) or _ASKED.match(text, anchor.end()):
                continue  # "B is correct?": a question, not a verdict
            listed = _LISTED_BEFORE.search(text, max(0, before.start() - 60), before.start())
            others = [] if listed is None else _LISTED_LETTER.findall(text, listed.start(), listed.end())
            if listed is not None and others and letter not in others:
                # "(A) or (B) is correct": several letters judged together commit to none of them.
                found.append(
                    context.candidate(
                        "hedge", listed.start(), anchor.end(), (*dict.fromkeys(others), letter),
                        how="several options judged the answer together", origin="evaluation",
                    )
                )  # fmt: skip
                continue
            found.append(
                context.candidate(
                    "commitment", before.start(), anchor.end(), (letter,), how="an option judged the answer",
                    origin="evaluation",
                )
            )  # fmt: skip
        for _, match in sorted(makes.items()):
            found.append(
                context.candidate(
                    "commitment", match.start(), match.end(), (match["L"],),
                    how="an option made the answer", origin="evaluation",
                )
            )  # fmt: skip
        found.sort(key=lambda c: c.start)
        return found


    def _named_before(self, context: Context, low: str, anchor: re.Match[str]) -> Candidate | None:
        """"Hence, vitamin B12 deficiency is the correct answer.": the one option whose whole text
        is the subject of the verdict's sentence (LABELLING rule 5), else ``None``."""
        opening = self._subject_opening
        closing = _CLOSES_CLAUSE.match(low, anchor.end()) if opening is not None else None
        if opening is None or closing is None:
            return None
        close = anchor.start()
        while close > 0 and low[close - 1] in _QUOTES_AND_BLANKS:
            close -= 1
        named = []
        for letter, words in context.features.citations().items():
            # A text of CITED_WORDS words may be the opening of a longer option: not its whole text.
            start = text_ending_at(low, close, words) if len(words) < CITED_WORDS else -1
            if start != -1 and opening.fullmatch(low, sentence_opening(low, start), start) is not None:
                named.append((letter, start))
        if len(named) != 1:
            return None
        letter, start = named[0]
        text = context.folded
        if self._supposed(text, anchor, start):
            return None
        cue = text[anchor.start() : closing.end()].strip().rstrip(_CLAUSE_MARKS)  # "is the correct answer"
        return context.candidate(
            "commitment", start, anchor.start() + len(cue), (letter,), how="an option named by its text, then judged the answer",
            origin="evaluation", value=context.options[letter], cue=cue, layout="before the verdict",
            payload="option's text",
        )  # fmt: skip


# A verdict's sentence that ends in a question mark: "**I** is the most likely answer? No".
_ASKED: Final = re.compile(r"[^.!?\n]{0,80}+\?")


def _in_bold(text: str, at: int) -> bool:
    """The letter at ``at`` is bold on its own: "**A**", "__A__"."""
    return at >= 2 and text[at - 2 : at] in ("**", "__") and text[at + 1 : at + 3] == text[at - 2 : at]


# What may end the sentence after a verdict word: "is correct.", "is the correct answer."
# A question that asks which option is true: "Which must be true?" (not "..., if true, ...").
_ASKS_WHAT_IS_TRUE: Final = re.compile(r"(?<!\bif )\btrue\b", re.IGNORECASE)
# An option said to be true: "(D) must be true", "**E** is true".
_SAID_TRUE: Final = re.compile(r"\(?\b([A-Z])\b\)?[*_]*+\s++(?:is|must\s++be|would\s++be)\s++true\b")
_ENDS_SENTENCE: Final = re.compile(r"(?:[ \t]++(?:answer|option|choice|one))?[*_]*+[ \t]*+(?:[.!]|\n|$)")
# What closes the clause of a verdict on an option's text: "is the correct answer.", "... answer,".
_CLOSES_CLAUSE: Final = re.compile(r"(?:[ \t]++(?:answer|option|choice|one))?[*_\"'”’]*+[ \t]*+(?:[.!,;]|\n|$)")
_QUOTES_AND_BLANKS: Final = " \t*_`\"'“”‘’"
_CLAUSE_MARKS: Final = " \t\n.!,;*_\"'”’"
# Markup and quotes that may stand around a subject: "**", "“", "> ".
_SUBJECT_MARKS: Final = r"[\s*_#>`\"'“”‘’-]*+"
# The letter before a cited option's text: "Option B: ", "(B) ", "B. ".
_CITATION_LEAD: Final = re.compile(r"(?:\b(?i:option|choice)[ \t]++)?[*_]*+\(?(?P<L>[A-Z])[).:]?[*_]*+[ \t]*+$")


def _cited_before(context: Context, text: str, end: int) -> tuple[str, int] | None:
    """The option cited by its letter and its own text right before ``end``: (letter, start)."""
    # "Option C (Not wrong, Wrong) is ...": the text may stand in brackets after its letter.
    close = end
    while close > 0 and text[close - 1] in " \t*_":
        close -= 1
    close -= 1  # the last character before the blanks
    bracketed = close > 0 and text[close] == ")"
    for letter, words in context.features.citations().items():
        start = text_ending_at(text, close if bracketed else end, words)
        if start == -1:
            continue
        if bracketed:
            if text[start - 1 : start] != "(":
                continue
            start -= 1
        lead = _CITATION_LEAD.search(text, max(0, start - 16), start)
        if lead is not None and lead["L"] == letter:
            return letter, lead.start()
    return None
