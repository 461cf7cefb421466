"""The ``other_questions`` step kind: where text about other questions starts.

Models answering a few-shot prompt sometimes go on to other questions: a new "Question 2:"
heading with its own answer, a recap of several answers ("Combining all the answers: (1) F,
(2) D"), another question's option list. This step reports where each such passage starts as an
``other_question`` candidate; the resolution policy decides which part of the text is about the
sample's own question. Headings carry in ``score`` how many of the question's long words their
section shares, so a response made of sections can be matched to the right one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import attrs

from choicebox.find._features import SampleFeatures, norm_text, words_of

from ._api import Candidate, Context, Extraction, register_step_kind
from ._vocab import alternation, nonempty_words, required_words, valid_words, word_list

__all__ = ["OtherQuestions"]

# A follow-up question a base model writes after its answer: a line numbered 2 or more that asks
# a question, then a line of lettered options ("2. In what year was ...?\n   A. 1776"). Options the
# same as this question's make no foreign listing, so only the question line tells it apart;
# the scope ends there only after an answer (``Conclusion._scope``), so a response that restates
# this question before answering it is read whole.
_NUMBERED_QUESTION: Final = re.compile(
    r"(?m)^[ \t]*+(?P<n>(?:[2-9]|[1-9]\d)[.)])[ \t]++[^\n]{8,300}\?[ \t]*+\n[ \t]*+[*_]*+\(?a[.):]"
)
_OPTIONS_LINE: Final = re.compile(r"(?m)^[ \t]*+[*_]*+options?[*_]*+[ \t]*+:[ \t]*+$")
_NUMBERED_RECAP: Final = re.compile(
    r"\(1\)\s*+\(?[a-j]\)?\s*+[,;]\s*+\(2\)\s*+\(?[a-j]\)?"
    r"|(?m:^[ \t]*+1[.):][ \t]*+\(?[a-j]\)?[ \t]*+\n[ \t]*+2[.):][ \t]*+\(?[a-j]\)?[ \t]*+$)"
)
_SENTENCE_OR_COLON: Final = re.compile(r"[.:\n]")
_LIST_NEXT: Final = re.compile(r"\s*+(?:[*_#]*+\s*+(?:the\s++)?answer|\(?\d+[.):]|\(?[a-j]\)|question\s*+\d)")
_LISTING_LINE: Final = re.compile(r"(?m)^[ \t]*+[*_]*+\(?([A-J])[.):][*_]*+[ \t]++(\S[^\n]*+)$")
_LONG_WORD: Final = re.compile(r"[a-z]{5,}")
# An option in a line that lists them in brackets: "(A) Paris (B) Rome (C) Oslo".
_INLINE_ITEM: Final = re.compile(r"\(([A-J])\)([^()\n]{1,120}+)")
# A lettered line that reviews an option ("(F) means ...", "A. This is ...") is no foreign option.
_REVIEW_LINE: Final = re.compile(
    r"(?:means|is|are|was|represents|states|says|translates|suggests|implies|would|could|can|does|do|has|"
    r"this|it|that|these|incorrect|correct|wrong|true|false|not)\b|[:=\-–]|.*\b(?:means|because|incorrect|correct)\b",
    re.IGNORECASE,
)


# A lettered option line of a question the response poses: "A. Depletion of glycogen", "(b) 2".
_OPTION_LINE: Final = re.compile(r"(?m)^[ \t*_]*+\(?[a-j][.)][ \t*_]++\S")


def _asks_another(low: str, start: int, question_words: frozenset[str]) -> bool:
    """The heading line at ``start`` asks a question ("Q: How far does it travel?") that is not
    the sample's: fewer than half its long words are the question's ("* Q: L³T⁻¹", a bullet
    that names a quantity, asks nothing)."""
    eol = low.find("\n", start)
    line = low[start : len(low) if eol == -1 else eol].rstrip(" \t*_")
    words = set(_LONG_WORD.findall(line))
    return line.endswith("?") and len(words & question_words) < 0.5 * len(words)


@register_step_kind("other_questions")
@attrs.frozen(kw_only=True)
class OtherQuestions:
    """Where text about other questions starts (see the module docstring).

    ``headings`` are the words of a heading line ("question", "problem"; a number and a colon
    may follow); ``prompt_echoes`` are lines that restart the prompt ("You are a knowledge
    expert"); ``recap_phrases`` introduce a recap ("combining all the answers"); a recap phrase
    counts only when a list of answers follows it. A document break starts other text too: a line
    of "===" after a blank line, or a section header "== response ==" naming one of
    ``section_names``. ``new_questions`` open a heading line that announces a question of the
    response's own ("**Practice Question:**", "Follow-up question"), followed by its own lettered
    options: everything after it is about that question, answered before it or not.
    """

    headings: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    prompt_echoes: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    recap_phrases: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    section_names: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    new_questions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    _heading: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _new_question: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _new_gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _section: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _recap: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _recap_gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        headings = alternation(self.headings)
        pattern = (
            rf"(?m)^[ \t]*+[#*_>]*+[ \t]*+{headings}[ \t]*+(?:\d++|[ivx]++)?[ \t]*+[*_]*+[ \t]*+[:.)][*_]*+"
            r"|^[ \t]*+[#*_]*+[ \t]*+q\d*+[ \t]*+[:.)]"
            # A markdown heading naming one: "### Question 12", "## Instruction 2 (More Difficult)".
            rf"|^[ \t]*+\#{{1,6}}[ \t]*+{headings}\b"
        )
        if self.prompt_echoes:
            pattern += rf"|^[ \t]*+{alternation(self.prompt_echoes)}"
        object.__setattr__(self, "_heading", re.compile(pattern))
        # A heading that announces a question of the response's own: "**Practice Question:**".
        new_question = (
            rf"(?m)^[ \t]*+[#*_>]*+[ \t]*+(?:{alternation(self.new_questions)})[ \t]*+(?:\d++)?[ \t]*+[*_]*+[ \t]*+[:.)]"
            rf"|^[ \t]*+\#{{1,6}}[ \t]*+(?:{alternation(self.new_questions)})\b"
            if self.new_questions
            else None
        )
        object.__setattr__(self, "_new_question", re.compile(new_question) if new_question else None)
        new_gates = required_words(self.new_questions) if self.new_questions else ()
        object.__setattr__(self, "_new_gates", ("",) if new_gates is None else new_gates)
        # A document break: a line of "=" after a blank line (a setext underline follows text),
        # or a "== response ==" section header naming one of ``section_names``.
        section = r"(?:^|\n)[ \t]*+\n[ \t]*+(?P<rule>={3,}+)[ \t]*+$"
        if self.section_names:
            section += rf"|^[ \t]*+={{2,}}+[ \t]*+{alternation(self.section_names)}[ \t]*+={{2,}}+[ \t]*+$"
        object.__setattr__(self, "_section", re.compile(section, re.MULTILINE))
        object.__setattr__(self, "_recap", re.compile(alternation(self.recap_phrases) + r"[^.\n:]{0,40}"))
        gates = required_words((*self.headings, *self.prompt_echoes))
        object.__setattr__(self, "_gates", ("",) if gates is None else (*gates, "\nq"))
        recap = required_words(self.recap_phrases) if self.recap_phrases else ()
        object.__setattr__(self, "_recap_gates", ("",) if recap is None else (*recap, "(1)", "\n1"))

    def __call__(self, context: Context) -> Extraction | None:
        return None  # it finds no answer, only where other questions start

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None:
            return []
        found: list[Candidate] = []
        if any(map(low.__contains__, self._gates)) or low.startswith("q"):
            found += self._headings(context, low)
        if self._new_question is not None and any(map(low.__contains__, self._new_gates)):
            new = self._new_question.search(low)
            if new is not None and len(_OPTION_LINE.findall(low, new.end(), new.end() + 2000)) >= 2:
                # "**Practice Question:** ...\nA. ...\nB. ...": a question with its own options
                # ("Follow-up question: is there drag? The question says no." is reasoning).
                found.append(
                    context.candidate(
                        "other_question", new.start(), new.start(), value="new_question",
                        how="a question of the response's own",
                    )
                )  # fmt: skip
        recap = self._recap_start(low)
        if recap is not None:
            found.append(context.candidate("other_question", recap, recap, value="recap", how="a recap of other answers"))
        if "option" in low:
            line = _OPTIONS_LINE.search(low)
            if line is not None:
                found.append(
                    context.candidate("other_question", line.start(), line.end(), value="options", how="an 'Options:' line")
                )
        if "==" in low:
            for match in self._section.finditer(low):
                at = match.start("rule") if match.group("rule") else match.start()
                found.append(context.candidate("other_question", at, at, value="section", how="a section break"))
        if "?\n" in low:
            numbered = _NUMBERED_QUESTION.search(low)
            if numbered is not None:
                found.append(
                    context.candidate(
                        "other_question", numbered.start("n"), numbered.start("n"), value="numbered",
                        how="a numbered question with its own options",
                    )
                )  # fmt: skip
        listing = self._foreign_listing(context)
        if listing is not None:
            found.append(
                context.candidate("other_question", listing, listing, value="listing", how="another question's options")
            )
        found.sort(key=lambda c: c.start)
        return found

    def _headings(self, context: Context, low: str) -> list[Candidate]:
        starts = [m.start() for m in self._heading.finditer(low)]
        if not starts:
            return []
        question_words = context.features.question_words()
        bounds = [*starts, len(low)]
        out = []
        for i, start in enumerate(starts):
            words = set(_LONG_WORD.findall(low, start, bounds[i + 1])) if question_words else set()
            # A section that lists options of its own, not this question's, is another
            # question's however many words it shares ("Question: Which is a tool of fiscal
            # policy?\nOptions:\nA. Open market operations ..." under a question on the discount rate).
            score = 0 if _lists_other_options(context, start, bounds[i + 1]) else len(question_words & words)
            out.append(
                context.candidate(
                    "other_question", start, start, value="heading", score=score, how="a new question heading",
                )
            )  # fmt: skip
        if question_words and starts[0] > 0 and not low[: starts[0]].isspace():
            opening = len(question_words & set(_LONG_WORD.findall(low, 0, starts[0])))
            if opening >= max(c.score for c in out) and all(_asks_another(low, c.start, question_words) for c in out):
                # The text before the first heading is the section about this question: it
                # shares as many of its words as any, and every heading asks another question
                # (a base model answers, then goes on to a "Q: ...?" of its own).
                out.insert(
                    0,
                    context.candidate(
                        "other_question", 0, 0, value="opening", score=opening,
                        how="the text before the first question heading: the section about this question",
                    ),
                )  # fmt: skip
        return out

    def _recap_start(self, low: str) -> int | None:
        """The first recap: a numbered list of answers, or a recap phrase followed by a list."""
        if not any(map(low.__contains__, self._recap_gates)):
            return None
        starts = []
        numbered = _NUMBERED_RECAP.search(low) if ("(1)" in low or "\n1" in low) else None
        if numbered is not None:
            starts.append(numbered.start())
        if self.recap_phrases:
            for match in self._recap.finditer(low):
                stop = _SENTENCE_OR_COLON.search(low, match.end(), match.end() + 400)
                if stop is not None and _LIST_NEXT.match(low, stop.end()):
                    starts.append(match.start())
                    break
        return min(starts) if starts else None

    def _foreign_listing(self, context: Context) -> int | None:
        """The start of another question's options: three or more lettered lines in sequence
        ("A. ...", "B. ...") of which two thirds are foreign to this sample's options, two that
        both are, or a line of three or more bracketed options ("(A) Paris (B) Rome (C) Oslo")
        most of whose texts are."""
        text = context.folded
        inline = _inline_listing(context) if "(C)" in text else None
        lined = self._lined_listing(context)
        found = [at for at in (inline, lined) if at is not None]
        return min(found) if found else None

    def _lined_listing(self, context: Context) -> int | None:
        text = context.folded
        if "\nB" not in text and "\n(B" not in text and "\n B" not in text:
            return None
        features = context.features
        options = context.options
        run_start, run_length, previous_end, previous_letter, foreign = 0, 0, -2, "", 0
        for match in _LISTING_LINE.finditer(text):
            letter = match.group(1)
            contiguous = bool(previous_letter) and match.start() <= previous_end + 1 and ord(letter) == ord(previous_letter) + 1
            if not contiguous:
                if _foreign_run(run_length, foreign):
                    return run_start
                run_start, run_length, foreign = match.start(), 0, 0
            run_length += 1
            line = match.group(2)
            if not _REVIEW_LINE.match(line):
                foreign += _foreign_item(features, options, letter, line)
            previous_end, previous_letter = match.end(), letter
        if _foreign_run(run_length, foreign):
            return run_start
        return None


def _lists_other_options(context: Context, start: int, end: int) -> bool:
    """``text[start:end]`` lists three or more lettered options, fewer than half of them this
    question's own texts (a restatement of this question gives them as they are)."""
    text, options = context.folded, context.options
    listed = own = 0
    for match in _LISTING_LINE.finditer(text, start, end):
        listed += 1
        letter = match.group(1)
        own += letter in options and norm_text(match.group(2)) == norm_text(options[letter])
    return listed >= 3 and own * 2 < listed


def _foreign_run(length: int, foreign: int) -> bool:
    """A run of lettered lines lists another question's options: two thirds of three or more
    lines are foreign, or both of two."""
    return (length >= 3 and foreign * 3 >= length * 2) or (length == 2 and foreign == 2)


def _inline_listing(context: Context) -> int | None:
    """The start of a line listing three or more options in brackets, in order from (A), most
    of whose texts are foreign to this sample's options."""
    text = context.folded
    features = context.features
    options = context.options
    at = text.find("(A)")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        at = text.find("(A)", end)
        items = _INLINE_ITEM.findall(text, start, end)
        letters = [letter for letter, _ in items]
        if len(items) < 3 or letters != [chr(ord("A") + i) for i in range(len(items))]:
            continue
        foreign = sum(_foreign_item(features, options, letter, item.strip(" \t,;")) for letter, item in items)
        if foreign * 3 >= len(items) * 2:
            return start
    return None


def _foreign_item(features: SampleFeatures, options: Mapping[str, str], letter: str, item: str) -> bool:
    """A listed option's text is not this sample's: a short one ("A. 0" where this question's A
    is 18) differs from the option of its letter, a longer one shares too few of its words."""
    if len(words_of(item)) < 3:
        return letter not in options or norm_text(item) != norm_text(options[letter])
    return _foreign_text(features.all_words(), features.option_words().get(letter), item)


def _foreign_text(known: frozenset[str], own: frozenset[str] | None, line: str) -> bool:
    words = words_of(line)
    if len(words) < 3:
        return False
    if own is not None and len(words & own) >= 0.3 * len(words):
        return False
    return len(words & known) < 0.2 * len(words)
