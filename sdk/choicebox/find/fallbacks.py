"""Finder step kinds of last resort, for outputs with no answer statement at all: a stray letter
closing a sentence, a closing result that equals one option's content, and the fast path that
settles a plain closing "The answer is (X)." without running the rest of the chain.

The first two are meant for chain entries marked ``when: no_commitment``: the policy runs them
only when nothing stronger was found, inside the part of the text it kept (``context.window``).
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from choicebox._letters import ambiguous_letters
from choicebox.find._payload import COPULA_END, LETTER_SEPARATORS, in_listing

from ._api import Candidate, Context, PicksOne, Which, picked, register_step_kind
from ._values import quantity, value_letters
from ._vocab import (
    alternation,
    last_words,
    nonempty_words,
    occurrences,
    substring_list,
    substrings,
    valid_words,
    word_before,
    word_list,
)

__all__ = ["ClosingAnswer", "ClosingValue", "StrayLetter"]

# "option (A)", "(B)" closing a sentence, "..., or C." closing a line.
_STRAY: Final = re.compile(
    r"(?:\b(?:option|choice)\s++[*_]*+\(?(?P<L1>[A-Z])\)?|(?<![\w\\^_)\]])\((?P<L2>[A-Z])\)"
    r"|\bor\s++(?P<L3>[A-Z])(?=[.!]?[ \t]*+(?:\n|$)))"
    r"[*_]*+(?P<end>(?=\s*+(?:[.!]|$|\n|,\s*+(?:which|as|since|because)))|[ \t]++(?=[^\n]))"
)
# "(I) 10,000 years ago.": the letter followed by option-like text up to its sentence's end.
_TAIL_AFTER_SPACE: Final = re.compile(r"((?:[^\n.]|\.(?![ \t\n])){1,160}?)(?=\.?[ \t]*(?:\n|$))")
_BRACKETED: Final = re.compile(r"\(([A-Z])\)")
# Another letter listed right after a stray one: "or (B)", ", C", "and option D".
_ANOTHER_LETTER: Final = re.compile(
    rf"[ \t]*+(?:{LETTER_SEPARATORS})[ \t]*+(?:(?i:option|choice)[ \t]++)?[*_(\[]*+[A-Z](?![\w'’])"
)
_NAMED: Final = re.compile(r"\b(?i:option|choice)\s++[*_]*+\(?([A-Z])\b")
_PARTS: Final = 3


_MODAL_BEFORE: Final = re.compile(r"\b(?:would|could|might)\b", re.IGNORECASE)
_CONDITION_IN: Final = re.compile(r"\b(?:if|suppose|supposing|assum\w*|were)\b", re.IGNORECASE)


def _last_stop(text: str, lo: int, hi: int) -> int:
    """The last full stop in ``text[lo:hi]`` that ends a sentence (not the point of "0.09"), or -1."""
    dot = text.rfind(".", lo, hi)
    while dot != -1 and dot + 1 < len(text) and text[dot + 1].isdigit():
        dot = text.rfind(".", lo, dot)
    return dot


@register_step_kind("stray_letter")
@attrs.frozen(kw_only=True)
class StrayLetter(PicksOne):
    """A letter that closes a sentence as a choice would: "..., or (C).", "This supports (H).",
    "option B.", "(I) 10,000 years ago." (the letter and its own option's text).

    The sentence must hold none of the ``negations`` ("not", "incorrect", "ruling out") and no
    other bracketed letter; and a ``link`` word must stand just before the letter ("is", "of",
    "supports", ":"), or a ``cue`` in the sentence ("answer", "best"), or the option's own words
    in the eight words before it. A negated letter is reported as a ``mention``.
    """

    negations: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    links: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    cues: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    which: Which = "last"
    _negation: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _link: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _cue: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_negation", re.compile(rf"\b{alternation(self.negations)}\b", re.IGNORECASE))
        object.__setattr__(
            self,
            "_link",
            re.compile(
                rf"(?:\b{alternation(self.links)}|[,:=])"
                r"(?:\s++(?:therefore|thus|then|clearly|hence|indeed|probably|likely))?[\s*_]*+$",
                re.IGNORECASE,
            ),
        )
        object.__setattr__(self, "_cue", re.compile(rf"\b{alternation(self.cues)}\b", re.IGNORECASE))

    @staticmethod
    def _matches(text: str, low: str, lo: int, hi: int) -> list[re.Match[str]]:
        """The matches of ``_STRAY`` in ``text[lo:hi]``, tried only where one can start: at
        "(X)", "option", "choice" and "or " (as ``finditer`` would, without overlaps)."""
        starts = [at for at in occurrences(text, "(", lo, hi) if text[at + 1 : at + 3].isupper()]
        for word in ("option", "choice", "or "):
            starts += occurrences(low, word, lo, hi)
        starts.sort()
        out: list[re.Match[str]] = []
        end = lo
        for at in starts:
            if at < end:
                continue
            match = _STRAY.match(text, at, hi)
            if match is not None:
                out.append(match)
                end = match.end()
        return out

    def find(self, context: Context) -> list[Candidate]:
        text = context.folded
        low = context.low
        if low is None:
            return []
        lo, hi = context.window
        found: list[Candidate] = []
        if not context.has_letter():
            return found  # every statement it reads names a letter
        features = context.features
        line, listing = (0, 0), False  # the line last asked about, and whether it lists options
        for match in self._matches(text, low, lo, hi):
            letter = match["L1"] or match["L2"] or match["L3"]
            if match["end"]:
                if _ANOTHER_LETTER.match(text, match.end(), hi):
                    continue  # "(A) or (B) ...": letters listed, no choice
                tail = _TAIL_AFTER_SPACE.match(text, match.end(), hi)
                if tail is None or not features.echoes(tail.group(1), letter):
                    continue
            reach = max(lo, match.start() - 300)
            newline = text.rfind("\n", reach, match.start())
            sentence_start = max(text.rfind(".", reach, match.start()), newline, lo)
            sentence = text[sentence_start : match.end()]
            # A conditional letter in a sentence that opens with a condition, looked for from the
            # sentence's true start past the points of its numbers, is supposed: "If the prevalence
            # were 1%: 0.009 / 0.0585 = 15.4%, which would be option A."
            whole = max(_last_stop(text, reach, match.start()), newline, lo)
            supposed = _MODAL_BEFORE.search(text, max(whole, match.start() - 24), match.start()) is not None and (
                _CONDITION_IN.search(text, whole, match.start()) is not None
            )
            if supposed or _rules_out(self._negation, sentence, match.start() - sentence_start):
                found.append(
                    context.candidate("mention", match.start(), match.end(), (letter,), how="a letter ruled out")
                )
                continue
            if {m.group(1) for m in _BRACKETED.finditer(sentence)} - {letter}:
                continue  # "(A) ..., (B) ..., (C)": a listing of options, not a choice
            if {m.group(1) for m in _NAMED.finditer(sentence)} - {letter}:
                continue  # "part (a) by option D and part (b) by option G": several options, no choice
            at = match.start()
            if not line[0] <= at < line[1]:  # asked once per line: the answer is the line's
                eol = text.find("\n", at)
                line = (text.rfind("\n", lo, at) + 1, len(text) if eol == -1 else eol)
                listing = in_listing(text, at, features.citations())
            if listing:
                continue  # "C. option C\nD. option D": a line of the options restated
            if _reviewed_in_list(context, at, letter):
                continue  # "- ... needed (A).\n- ... irrelevant (D).": the options reviewed, one an item
            listed = ambiguous_letters(sentence, context.options)
            if len(listed) >= 3 or (match["L3"] and listed):
                continue  # "one letter: A, B, C or D": the options listed, not a choice
            before = text[sentence_start : match.start()]
            if not (
                self._link.search(before)
                or match["L1"]
                or self._cue.search(sentence)
                or features.echoes(" ".join(before.split()[-8:]), letter)
            ):
                continue  # "homozygous for the normal gene (D)": a symbol, not a choice
            found.append(
                context.candidate(
                    "stray", match.start(), match.end(), (letter,), how="a letter closing a sentence",
                    origin="evaluation",
                )
            )  # fmt: skip
        return found


# What links a closing result to what it is: "x = 5", "≈", "is", "are", "equals", "gives us",
# "we get". Not a colon ("Common distractor: 24 N", "the ratio is 1:2:1") nor "be"/"was" ("Without
# friction, the force would be 48 N", "My first guess was 24 N").
# ("will be" states a result, "would be" supposes one: "The balance after 2 years will be $1,102.50.")
# (and the topic particle or copula of Japanese and Chinese: "この濃度は 2.4 mol/L です。", "浓度为 2.4 mol/L。")
_RESULT_LINK: Final = re.compile(
    r"=|≈|\b(?:is|are|equals)\b|\bgives\s++us\b|\bwe\s++get\b|\bwill\s++be\b|は|为|是|等于"
    r"|\bclosest\s++to(?:\s++(?:the\s++)?option)?\b"  # "..., which is closest to the option 37%."
)
# The literal each alternative of ``_RESULT_LINK`` starts with: the links are found with
# ``str.find`` and matched where they stand, where a scan (whose alternatives open with ``\b``,
# so the engine cannot skip ahead) tries every character of the line.
_RESULT_LINK_ANCHORS: Final = ("=", "≈", "is", "are", "equals", "gives", "we", "will", "closest")
_CJK_LINK_ANCHORS: Final = ("は", "为", "是", "等于")  # looked for in a line that is not ASCII only
# The links of a line a value may follow, read from the right: the last few only.
_MAX_LINKS: Final = 3


# A conclusion word opening the line, which links it to what it concludes: "Therefore L{t} =
# (1 / s^2)." gives option "L{t} = (1 / s^2)" whole.
_CONCLUDING: Final = re.compile(
    r"[*_ \t]*+(?:so|thus|therefore|hence|finally|in conclusion)\b[ \t]*+[,:]?", re.IGNORECASE
)


def _result_links(line: str, reach: int) -> list[int]:
    """Where the values after the line's last ``_MAX_LINKS`` links start, the last first, then
    after a conclusion word opening the line. Only the last ``reach`` characters are searched
    for links: a value longer than that is compared with no option."""
    lo = max(0, len(line) - reach - 8)
    found: set[int] = set()
    for anchor in _RESULT_LINK_ANCHORS if line.isascii() else (*_RESULT_LINK_ANCHORS, *_CJK_LINK_ANCHORS):
        at = line.find(anchor, lo)
        while at != -1:
            link = _RESULT_LINK.match(line, at)
            if link is not None:
                found.add(link.end())
            at = line.find(anchor, at + 1)
    ends = sorted(found, reverse=True)[:_MAX_LINKS]
    opening = _CONCLUDING.match(line)
    if opening is not None:
        ends.append(opening.end())
    return ends


# A sentence's end inside a value: what follows is another sentence.
_SENTENCE_END: Final = re.compile(r"[.!?][*_$)\]]*+\s++[*_$(]*+[A-Z]")
# Another value after a quantity's qualifier: "24 N for a light rope or 36 N for a heavy one",
# "12 N in case 1, 24 N in case 2".
_ANOTHER_VALUE: Final = re.compile(r"\d|\bor\b")
# What a quantity is of, after it: "of the cost", "from the center", "for the reaction".
_QUALIFIER: Final = re.compile(
    r"\s++(?:of|from|for|in|at|on|with|when|above|below|after|before|relative)\b", re.IGNORECASE
)
_COMPLETE_END: Final = ".!$])。"
# A line that labels a value, as a list of knowns does: "Time: 3 s", "- v0 = 0".
_KNOWN_LINE: Final = re.compile(r"[ \t>*_-]*+[^\n:=≈]{1,40}[:=≈][^\n]{0,60}")
# A relative clause after a value: ", which is common table salt".
_RELATIVE: Final = re.compile(r",[ \t]++which[ \t]")
# A lone letter as a labelled result: "C", "(C)", "C.".
_LONE_LETTER: Final = re.compile(r"[(\[]?([A-Z])[)\]]?\.?")
# A result announced on the line before its value: "So the minimum vertex cover is:\n\n[3, 4]".
_LINK_ENDING: Final = re.compile(
    r"(?:=|≈|\b(?:is|are|equals)|\bgives\s++us|\bwe\s++get)[ \t]*+:?[ \t*_]*+$"
)
# Hedge words before a value: "The Q value is about -2.76 MeV."
_ABOUT: Final = re.compile(r"(?:about|approximately|roughly|around|nearly|~|≈)\s++", re.IGNORECASE)


@register_step_kind("closing_value")
@attrs.frozen(kw_only=True)
class ClosingValue(PicksOne):
    """A complete output whose closing line ends in one option's full content:
    "... = 200$ lines per mm." with an option "200 lines per mm". The value after one of the
    line's last links ("=", "≈", "is", "are", "equals", "gives us", "we get", "will be"; not a
    colon nor "would be") or after a conclusion word opening the line must state exactly one option's content,
    as ``choicebox.find._values.same_value`` compares them ("$24.00" states "$24", "-1.32 × 10¹³ C" states "$-1.32$ $10^{13} \\mathrm{C}$"); a quantity
    may be followed by what it is of ("127.5% of the cost"). Or the line's bold spans give one
    option's whole content ("So, about **85 kg of ammonia** is produced."), in a line that holds
    none of the ``negations`` ("**Paris** is wrong"; with no ``negations`` the emphasis is not
    read). Before a linked value its sentence holds none of the ``conditions`` nor the
    ``negations`` other than the question's own words ("If it were x, the limit would be 1/2.",
    "The answer cannot be 24 N."). ``max_value`` is the longest value compared. A closing line
    that one of the ``result_labels`` opens names its result and needs no closing mark: "Final
    speed ≈ 4.2 m/s", "**Final velocity:** 4.2 m/s" (a colon links it too), when the line holds
    none of the ``negations`` nor the ``conditions``.
    """

    max_value: int = 300  # an option's whole text may be long ("a) Oxygen: Reasonable, b) ...")
    negations: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    conditions: tuple[str, ...] = attrs.field(
        default=(), converter=word_list, validator=valid_words
    )
    result_labels: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    _doubt: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _supposed: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _labelled: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        for name, words in (("_doubt", self.negations), ("_supposed", self.conditions)):
            pattern = re.compile(rf"\b{alternation(words)}\b", re.IGNORECASE) if words else None
            object.__setattr__(self, name, pattern)
        # "Final speed ≈", "**Final velocity:**": the label, what the result is of, its link.
        labelled = (
            re.compile(
                rf"[ \t>#*_-]*+{alternation(self.result_labels)}\b[^\n=≈:.]{{0,40}}?[ \t*_]*+[=≈:][ \t*_]*+",
                re.IGNORECASE,
            )
            if self.result_labels
            else None
        )
        object.__setattr__(self, "_labelled", labelled)

    def pick(self, context: Context) -> Candidate | None:
        return picked(self.find(context), "last")  # it reads one line: one candidate at most

    def find(self, context: Context) -> list[Candidate]:
        lo, hi = context.window
        text = context.folded[lo:hi].rstrip()
        if not text or len(context.options) < 2:
            return []
        if text.endswith(">"):
            # the closing tags of output sections ("<Output>\nThe multiplier is 5.\n</Output>"),
            # found from the end one by one (a search for a run of them anchored at the end would
            # try every position of a text made of them), the text cut once
            end = len(text)
            while end and text[end - 1] == ">":
                opening = text.rfind("</", max(0, end - 28), end)
                if opening == -1 or not _CLOSING_TAG.fullmatch(text, opening, end):
                    break
                end = opening
                while end and text[end - 1].isspace():
                    end -= 1
            text = text[:end]
        line_start = text.rfind("\n") + 1
        line = text[line_start:]
        if len(line) > 2000:
            line_start = len(text) - 2000
            line = text[line_start:]
        # Complete: it ends a sentence, inside closing markdown or not ("... orbit.**"); a bold
        # span alone completes nothing ("**Option B: 24 N**" heads a cut-off review). A line
        # labelled as the result is complete as it stands: "Final speed ≈ 4.2 m/s".
        if text.rstrip("*_")[-1:] not in _COMPLETE_END or (line.count("$") % 2 and _UNCLOSED_MATH.search(line)):
            # (a line whose math never closes is cut off inside it: "... is $(1/2)"; "$24.00." is money)
            return self._labelled_result(context, lo, line_start, line)
        # The closing sentence is read as the whole last line: the line holds no newline and
        # ends in no blank (``text`` is stripped), so a search for its last sentence
        # (``(?:^|(?<=[.!?])\s++(?=[A-Z\\$])|\n)([^\n]*?)\s*$``) always matched at its start
        # and returned all of it, at the cost of a lazy scan of up to 2,000 characters.
        emphasised = self._emphasised(context, line)
        if emphasised is not None:
            value, letter = emphasised
            return [
                context.candidate(
                    "commitment", lo + line_start, lo + len(text), (letter,), value=value,
                    how=f"the closing line's emphasis {value!r} is option {letter}'s content",
                )
            ]  # fmt: skip
        value, hits = self._linked_value(context, text, line_start, line)
        if len(hits) != 1:
            return self._labelled_result(context, lo, line_start, line)
        start = lo + line_start
        return [
            context.candidate(
                "commitment", start, lo + len(text), (hits[0],), value=value,
                how=f"the closing result {value!r} is option {hits[0]}'s content",
            )
        ]  # fmt: skip

    def _labelled_result(self, context: Context, lo: int, line_start: int, line: str) -> list[Candidate]:
        """The closing line's result after one of the ``result_labels`` ("Final speed ≈ 4.2 m/s",
        "**Verdict:** Adverse possession", "**Verdict: C**"), when it is one option's content or a
        lone option letter and the line doubts and supposes nothing."""
        label = self._labelled.match(line) if self._labelled is not None else None
        # ... or a closing line wholly in bold that labels its value ("**Year 2 depreciation
        # expense: $14,400**"), its label naming no option ("**Option B: 24 N**" heads a review)
        bold = (
            _BOLD_LABELLED_LINE.fullmatch(line)
            if label is None and self._labelled is not None and line.rstrip(" \t.").endswith("**")
            else None
        )
        if bold is not None and _NAMES_AN_OPTION.search(bold["label"]):
            bold = None
        if (label is None and bold is None) or any(
            words is not None and words.search(line) for words in (self._doubt, self._supposed)
        ):
            return []
        # The line right above (its end past the blanks between; a blank line between: a paragraph).
        folded, start = context.folded, lo + line_start
        above = start
        while above > 0 and folded[above - 1].isspace():
            above -= 1
        listed = "\n\n" not in folded[above:start] and _KNOWN_LINE.fullmatch(folded, folded.rfind("\n", 0, above) + 1, above)
        if line.rstrip(" \t*_").endswith("?") or listed:
            return []  # "Final speed ≈ 4.2 m/s?"; "Time: 3 s\nFinal speed: 4.2 m/s": a list of knowns
        if bold is not None:
            value = _without_about(bold["value"].strip())
        else:
            assert label is not None
            value = _without_about(_without_closing_marks(line[label.end() :].strip()).strip(" \t:*_"))
        lone = _LONE_LETTER.fullmatch(value) if bold is None else None
        if lone is not None:
            hits = [lone[1]] if lone[1] in context.options else []
        else:
            hits = value_letters(value, context.options, context.question) if 0 < len(value) <= self.max_value else []
        if len(hits) != 1:
            return []
        what = f"letter {hits[0]}" if lone else f"{value!r}, option {hits[0]}'s content"
        return [
            context.candidate(
                "commitment", lo + line_start, lo + line_start + len(line), (hits[0],), value="" if lone else value,
                how=f"the closing result, labelled as the result: {what}",
            )
        ]  # fmt: skip

    def _linked_value(
        self, context: Context, text: str, line_start: int, line: str
    ) -> tuple[str, list[str]]:
        """The value the closing line gives after a link, with the letters whose content it
        states: the tail after the line's last link ("... ≈ 1.81 × 10^10 m^-1."), or after an
        earlier one when the tail holds a link of the value itself, or after a conclusion word
        opening the line ("Therefore: a) Oxygen: Reasonable, b) ..."), or the whole line when the
        line before ends in a link."""
        links = _result_links(line, self.max_value)
        if not links:
            before = text[:line_start].rstrip()
            if not _LINK_ENDING.search(before, max(before.rfind("\n") + 1, len(before) - 200)):
                return "", []
            links = [0]  # the value alone on the last line, its link closing the line before
        options = context.options
        opening = _CONCLUDING.match(line)
        for index, at in enumerate(links):
            sentence = _sentence_start(line, at)
            if any(_unless_asked(words, line, sentence, at, context.question) for words in (self._supposed, self._doubt)):
                # "(If the intended expression were x, the limit would be 1/2.)", "The answer
                # cannot be 24 N.": a value supposed or denied before it. The words after the
                # link are the value's, maybe an option's own ("b) Nitrogen: Not reasonable").
                continue
            value = _without_about(_without_closing_marks(line[at:].strip()).strip(" \t:*_"))
            if _SENTENCE_END.search(value):
                break  # "p = 0.015$. The frequency ... = 0.": a tail of several sentences
            if not value or len(value) > self.max_value:
                continue
            hits = value_letters(value, options, context.question)
            relative = _RELATIVE.search(value) if not hits else None
            if relative is not None and not (self._doubt is not None and self._doubt.search(value, relative.start())):
                # "... is sodium chloride, which is common table salt.": the value, then what it is
                value = value[: relative.start()]
                hits = value_letters(value, options, context.question)
            if not hits and index == 0 and at != 0 and (opening is None or at != opening.end()):
                # "127.5% of the cost", "9.02 × 10^6 meters from the center of the earth": a
                # quantity and what it is of, where the option gives the quantity alone; after
                # the line's last link only ("12 N at t = 0, and the final force is 25 N").
                qualified = _QUALIFIER.search(value)
                if (
                    qualified is not None
                    and quantity(value[: qualified.start()]) is not None
                    and not _ANOTHER_VALUE.search(value, qualified.start())
                ):
                    value = value[: qualified.start()]
                    hits = value_letters(value, options, context.question)
            if hits:
                return value, hits
        return "", []

    def _emphasised(self, context: Context, line: str) -> tuple[str, str] | None:
        """(value, letter) when the closing line's bold spans give one option's whole content and
        no other's: "So, Earth would simply **continue in its present orbit.**" (rule 5), maybe
        after a label of what it is ("**Year 2 depreciation expense: $14,400**")."""
        if ("**" not in line and "__" not in line) or _LIST_ITEM.match(line):
            return None  # "6. **Lack of jobs**: ... not a reason": an item of a review, no conclusion
        if self._doubt is None or self._doubt.search(line):
            # "**Paris** is wrong.", "unsure whether it is **Paris** or something else": without
            # words that deny or doubt to look for, no emphasis is read.
            return None
        found: dict[str, str] = {}
        for span in _EMPHASIS.finditer(line):
            if line.startswith(":", span.end()):
                continue  # "**Term**: its explanation": a heading of what follows
            value = _without_about((span.group(1) or span.group(2)).strip())
            if not value or len(value) > self.max_value:
                continue
            hits = value_letters(value, context.options, context.question)
            labelled = _LABELLED_SPAN.fullmatch(value) if not hits else None
            if labelled is not None:
                # "**Year 2 depreciation expense: $14,400**": a bold line that names its result
                value = labelled["value"]
                hits = value_letters(value, context.options, context.question)
            if len(hits) > 1:
                return None  # a value that several options share names none of them
            if hits:
                found.setdefault(hits[0], value)
        if len(found) != 1:
            return None
        [(letter, value)] = found.items()
        return value, letter


# The last "$" of a line opening math, not money: "$(1/2)", "$\\frac".
_UNCLOSED_MATH: Final = re.compile(r"\$(?![\d\s,.])[^$]*+$")
_CLOSING_TAG: Final = re.compile(r"</[A-Za-z_]{1,24}>")
_BOLD_LABELLED_LINE: Final = re.compile(
    r"[ \t>#-]*+\*\*(?P<label>[^\W\d_][^:*\n]{1,60}?)[ \t]*+:[ \t]*+(?P<value>[^*\n]{1,120}?)[ \t.]*+\*\*[ \t.]*+"
)
_NAMES_AN_OPTION: Final = re.compile(r"\b(?:option|choice|answer|letter)\b|\b[A-Z]\b", re.IGNORECASE)
# A bold span that labels its result: what the result is (a few words, no sentence), a colon, the value.
_LABELLED_SPAN: Final = re.compile(r"[^\W\d_][^:.!?\n]{1,60}?[ \t]*+[:=][ \t]*+(?P<value>[^:\n]{1,120}?)[ \t.]*+")


def _unless_asked(words: re.Pattern[str] | None, line: str, start: int, end: int, question: str) -> bool:
    """One of ``words`` stands in ``line[start:end]``, and is not one of the question's own words
    ("The first ionization energy is 5.14 eV." for "What is the first ionization energy?";
    "The function the liver does not perform is ..." for "Which is not a function of the liver?")."""
    if words is None:
        return False
    asked = None
    for match in words.finditer(line, start, end):
        if asked is None:
            asked = question.casefold()  # once, and only for a sentence that holds one of them
        if match.group().casefold() not in asked:
            return True
    return False


# A letter named in an item of a list: "(D)", "option D", "so C is wrong".
_ITEM_LETTER: Final = re.compile(rf"{_BRACKETED.pattern}|{_NAMED.pattern}|\b([A-Z])\s++(?:is|are|was)\b")


# How many items on each side are looked at: a review lists the options, ten at most (and a
# list of a million letters costs no more per letter).
_REVIEW_REACH: Final = 10


def _reviewed_in_list(context: Context, at: int, letter: str) -> bool:
    """The letter at ``at`` stands in an item of a list whose other items, next to it, name
    other options: each item reviews one option ("- ... is needed (A).", "- ... (so C is
    wrong)."), none of them is the choice."""
    text, options = context.folded, context.options
    lo, hi = context.window
    start = text.rfind("\n", lo, at) + 1
    if _LIST_ITEM.match(text, start, at) is None:
        return False
    items: list[tuple[int, int]] = []
    above = start
    while above > lo and len(items) < _REVIEW_REACH:  # the items right above, up to a line that is no item
        prev = max(lo, text.rfind("\n", lo, above - 1) + 1)
        if _LIST_ITEM.match(text, prev, above) is None:
            break
        items.append((prev, above))
        above = prev
    below = text.find("\n", at)
    while below != -1 and below + 1 < hi and len(items) < 2 * _REVIEW_REACH:  # the items right below
        nxt = text.find("\n", below + 1)
        end = hi if nxt == -1 else min(nxt, hi)
        if _LIST_ITEM.match(text, below + 1, end) is None:
            break
        items.append((below + 1, end))
        below = nxt
    for item_start, item_end in items:
        for named in _ITEM_LETTER.finditer(text, item_start, item_end):
            other = named.group(1) or named.group(2) or named.group(3)
            if other != letter and other in options:
                return True
    return False


def _sentence_start(line: str, at: int) -> int:
    """Where the sentence of ``line`` that holds ``at`` starts."""
    return max(line.rfind(mark, 0, at) for mark in (". ", "! ", "? ", "; ", "(")) + 1


def _rules_out(negation: re.Pattern[str], sentence: str, letter_at: int) -> bool:
    """A negation in ``sentence`` rules out the letter at ``letter_at``. A comparison's "than"
    does only right before it ("rather than (D)", "better than option D"): "... times stronger
    than the gravitational force, which is option (D)" compares something else."""
    for found in negation.finditer(sentence):
        if found.group().lower() != "than" or letter_at - found.end() <= _THAN_REACH:
            return True
    return False


# How far before a letter a "than" may stand and still compare it: "rather than option (D)".
_THAN_REACH: Final = 9


def _without_closing_marks(value: str) -> str:
    """The value without the marks that close its sentence: "12 N.**", "Paris!" ("100!" is a
    factorial, and keeps its mark)."""
    if not value.isascii() and (copula := COPULA_END.search(value)) is not None:
        value = value[: copula.start()]  # "2.4 mol/L です。": the value, then "is"
    end = len(value)
    while end and (
        value[end - 1] in ".*_。"
        or (value[end - 1] == "!" and not value[end - 2 : end - 1].isdigit())
    ):
        end -= 1
    return value[:end]


def _without_about(value: str) -> str:
    """The value past a hedge word before it: "about 12 N" is "12 N"."""
    about = _ABOUT.match(value)
    return value[about.end() :] if about is not None else value


# A line that is an item of a list: "- ...", "* ...", "6. ...", "b) ...".
_LIST_ITEM: Final = re.compile(r"[ \t>]*+(?:[-+•]|\*(?!\*)|\d{1,3}[.)]|[a-z][.)])[ \t]")
# A bold span of a line: "**85 kg of ammonia**", "__Loop of Henle__".
_EMPHASIS: Final = re.compile(r"\*\*([^*\n]{1,200}?)\*\*|__([^_\n]{1,200}?)__")
_CLOSING: Final = re.compile(r"answer is[ \t]*+\(([a-z])\)[.*]?[ \t]*+$")
@register_step_kind("closing_answer")
@attrs.frozen(kw_only=True)
class ClosingAnswer(PicksOne):
    """A fast path: an output that ends in "... answer is (X)." and in which nothing else could
    be read as a letter settles the verdict alone, and the rest of the chain does not run.

    The last ``window`` characters must end with "answer is (X)" for an option X; the text must
    hold the ``noun`` once and none of the ``unless`` substrings (what marks text about other
    questions; taken literally, so ``"\\nq"`` is a newline and a q); no word of ``mentions`` may
    stand right before the noun ("The wrong answer is (A)."); and no other letter of the options
    may stand before the close as the shared payload reading would read it
    (``choicebox.find._payload.letter_token``: "A car" and "x = A" are no letters). Every finder
    reads its letters that way, so no other statement can exist and the whole chain would decide
    the same; any other output goes through the whole chain.
    """

    noun: str = "answer"
    unless: tuple[str, ...] = attrs.field(default=(), converter=substring_list, validator=substrings)
    mentions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    window: int = 40
    _mentions: frozenset[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_mentions", last_words(self.mentions) or frozenset())

    def pick(self, context: Context) -> Candidate | None:
        return picked(self.find(context), "last")  # it finds one candidate at most

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None:
            return []
        end = len(low)
        while end and low[end - 1].isspace():
            end -= 1
        match = _CLOSING.search(low, max(0, end - self.window), end)
        letter = match.group(1).upper() if match is not None else ""
        if match is None or letter not in context.options or low.count(self.noun) != 1:
            return []  # a letter that is no option ("(X)" of a format instruction) takes the long way
        if any(map(low.__contains__, self.unless)):
            return []
        before = match.start()
        if context.has_letter(before):
            return []  # another letter a finder could read
        head = low.rfind(self.noun, 0, match.end())
        if self._mentions and word_before(low, head) in self._mentions:
            return []  # "The wrong answer is (A).": the answer statement's to read
        return [
            Candidate(
                "commitment", head, match.end(), (letter,), settles=True,
                how="a plain closing answer statement", step=context.step_id,
            )
        ]  # fmt: skip
