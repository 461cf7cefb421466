"""Finder step kinds for answer statements in prose: "the answer is (B)", "Antwort: C",
"I'd go with B", "So, B." (an option judged the answer, "(C) is correct", is ``verdicts``').

Each kind reports every statement it recognises as a ``Candidate`` (``find``) and, called
directly, the one its ``which`` picks (``first_step`` modes). Their vocabularies (nouns,
qualifiers, link verbs, labels in other languages, pick verbs) are parameters given in the rule
file. They read ``context.folded`` (end-of-text tokens blanked, letters of other scripts mapped)
and its lowercased twin, are gated by literal tests on it, and run each pattern from a literal
anchor, so a text without their words costs a few substring tests.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable
from typing import Final

import attrs

from choicebox.find._payload import (
    BRACKETED_LETTER,
    CONTRAST,
    MAX_PAYLOAD,
    PayloadReading,
    read_at,
)

from ._api import (
    Candidate,
    Context,
    Leniency,
    PicksOne,
    StatementKind,
    Which,
    register_step_kind,
)
from ._several import rest_of_sentence
from ._statement import may_give_option_text, option_by_text, statement_of, strictly
from ._vocab import (
    CLAUSE_ENDS,
    alternation,
    last_words,
    nonempty_words,
    occurrences,
    opens_line,
    opens_sentence,
    required_words,
    sentence_opening,
    valid_words,
    word_before,
    word_list,
)

__all__ = ["AnswerLabel", "AnswerStatement", "ConcludingSentence", "FirstPersonPick"]

# An answer line whose letter is followed by commentary, not by another question's option text.
_COMMENTARY: Final = re.compile(
    r"(?i:(?:the|this|there|it|its|however|but|although|note|which|since|because|as|so|and|if|with)\b|[(\[])|"
    r".*\b(?i:answer|option|closest|calculat\w*|question|discrepanc\w*|error|correct|approximat\w*)\b"
)
_LINE_OPENERS: Final = ("", "the", "answer:", "answer: the")


def _part_before(part_words: tuple[str, ...]) -> re.Pattern[str]:
    """A part named right before a statement: "for part (a) the answer is E", "in the second
    part, the answer is", "For case (b), the answer is", with the mode's ``part_words``."""
    words = alternation((*part_words, "question", "sub-question", "subquestion"))
    return re.compile(
        rf"\b(?:for|in)\s++(?:the\s++)?(?:{words}\s*+\(?[a-h1-9ivx]{{1,3}}\)?|\([a-h1-9]\)|"
        rf"(?:first|second|third|fourth|fifth|last|1st|2nd|3rd)\s++{words})[,:]?\s++(?:the\s++)?$"
    )


def _one_object_one_answer(context: Context, low: str, found: list[Candidate]) -> list[Candidate]:
    """Answers under a JSON key, two of them with different letters in one object ({"answer":
    "F", ..., "answer": "E"}: a duplicate key, which a parser resolves to its last value), are
    one statement that names two options: nothing marks either as final (rule 2)."""
    keyed = [c for c in found if c.kind == "commitment" and c.start > 0 and low[c.start - 1] == '"']
    for first, second in itertools.pairwise(keyed):
        if first.letters != second.letters and not any(map(low[first.end : second.start].__contains__, "{}")):
            both = context.candidate(
                "hedge", first.start, second.end, (*first.letters, *second.letters),
                how="two answers in one JSON object",
            )  # fmt: skip
            return [c for c in found if c is not first and c is not second] + [both]
    return found


def _is_json_key(low: str, a: int, z: int) -> bool:
    """The word ``low[a:z]`` is a quoted JSON key: ``{"choice": "J"}``."""
    return low[a - 1 : a] == '"' and low[z : z + 1] == '"' and low[z + 1 : z + 3].lstrip()[:1] == ":"


def _foreign_line(context: Context, candidate: Candidate) -> bool:
    """An answer line that gives another question's option ("The answer is ... B. They possess
    an open circulatory system", where no option says so): it starts its line, the text after
    its letter is not commentary and shares almost no words with this sample's options."""
    text = context.folded
    letter = candidate.letter
    if letter is None or not candidate.value:
        return False
    line_start = text.rfind("\n", max(0, candidate.start - 40), candidate.start) + 1
    if line_start == 0 and candidate.start > 40:
        return False
    opener = text[line_start : candidate.start].strip(" \t*_#>-").lower()
    return (
        opener in _LINE_OPENERS
        and not _COMMENTARY.match(candidate.value)
        and context.features.foreign(candidate.value, letter)
    )


# --- "the answer is (B)" -------------------------------------------------------------------------


# The value's letter named in a relative clause that closes its line, in a later sentence than
# the value's: "... = 12, which is option (C)."
_WHICH_IS_LETTER: Final = re.compile(
    r",[ \t]++which[ \t]++(?:is|corresponds[ \t]++to|matches)[ \t]++(?:(?i:option|choice)[ \t]++)?"
    r"[*_$]*+\(?(?P<L>[A-Z])\)?(?=[*_$]*+[ \t]*+[.!]?[*_$]*+[ \t]*+(?:\n|$))"
)


@register_step_kind("answer_statement")
@attrs.frozen(kw_only=True)
class AnswerStatement(PicksOne):
    """An answer noun with a link and a payload: "the answer is (B)", "Final Answer: C",
    "the correct option is B", "the answer to (a) is (C)", ``{"answer": "D"}``.

    ``nouns`` always open a statement; ``qualified_nouns`` ("option", "choice") only after one
    of the ``qualifiers`` ("the correct option is"), since "one option is (C)" is a mention;
    ``label_nouns`` ("ans") only before a colon, as a label ("Ans: C", "ANS: C"; "the ANS is
    ..." is an acronym in prose). A noun right after one of the ``mentions`` ("the wrong
    answer is", "a tempting answer is") names an answer the response does not give.
    ``final_qualifiers`` ("final", "overall") make it an explicit final marker. ``links`` are
    the verbs between noun and payload ("is", "would be"); a colon, "=" and a dash link too.
    ``adverbs`` may follow a verb link, or stand between commas before it: "the answer is
    therefore B", "the answer is hence **B**", "The answer, therefore, is B". A
    conditional link ("would be") in a sentence that opens with one of the ``conditions`` ("if",
    "suppose") is a supposition, not an answer. A statement after a part named by one of the
    ``part_words`` ("For part (a) the answer is E", "For case (b), the answer is") answers that
    part only.
    The payload is read in place (``payload: lenient``: hedges, retractions, "none of the
    options" and values are told apart; ``strict``: a lone letter only). A value followed in its
    sentence by a bracketed letter ("the answer is 23,500 yards, which is (B)") is that letter.
    """

    nouns: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    qualified_nouns: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    label_nouns: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    mentions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    qualifiers: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    final_qualifiers: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    links: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    adverbs: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    conditions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    part_words: tuple[str, ...] = attrs.field(default=("part",), converter=word_list, validator=valid_words)
    payload: Leniency = "lenient"
    which: Which = "last"
    _condition: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _part_before: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _qualifier_before: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _final: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _rest: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _qualifier_ends: frozenset[str] | None = attrs.field(init=False, repr=False, eq=False)
    _mentions: frozenset[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        qualifier = alternation(self.qualifiers)
        set_ = functools.partial(object.__setattr__, self)
        set_("_mentions", last_words(self.mentions) or frozenset())
        set_("_qualifier_before", re.compile(rf"{qualifier}\s++(?:{qualifier}\s++)?$"))
        set_("_final", re.compile(alternation(self.final_qualifiers)))
        links = alternation(self.links)
        # An adverb after the verb, or between commas before it (a colon or a dash takes none).
        adverb = rf"(?:,?[ \t]++{alternation(self.adverbs)}\b,?)?" if self.adverbs else ""
        aside = rf"(?:,[ \t]*+{alternation(self.adverbs)},(?=[ \t]))?" if self.adverbs else ""
        set_(
            "_rest",
            re.compile(
                r"(?:\s++(?:choice|option|letter|key))?"  # "Answer key: D"
                r"(?:\s++(?:here|then|now))?"  # "the right option here is B"
                + aside +
                # "Answer (letter only):", "Answer (A-D):": a remark on the format.
                r"(?:[ \t]*+\([^()\n]{2,24}\))?"  # "answer (I) is correct": a letter is no remark
                r"(?P<part>\s++(?:to|for|of)\s++(?:the\s++)?(?:part|question|sub-?question)?\s*+"
                r"\(?[a-h1-9ivx]{1,3}\)(?!\w)|"
                r"\s++(?:to|for)\s++part\s++\(?[a-h1-9]\)?(?!\w)|"
                r"\s++(?:to|for)\s++(?:the\s++)?(?:first|second|third|fourth|last|1st|2nd|3rd)\s++"
                r"(?:question|part|case|situation|statement))?"
                r"(?:\s++(?:to|for)\s++(?:this|the|your|the\s++given|the\s++above)\s++"
                r"(?:question|problem|multiple[-\s]choice\s++question))?"
                # "[Answer] A": a bracketed label (``find`` checks the bracket that opens it).
                # "| **Answer** | **G** |": a table row, the answer in the next cell.
                rf"(?P<link>[*_\"'”]*+(?:\s*+{links}\b{adverb}|\s*+[:：=→]|[ \t]*+\|(?=[ \t*_(])|\s++[-–—]\s)|[ \t]++(?=\([a-z]\))|\](?=[ \t])|"
                # A heading: "### Final Answer", "**Final Answer**" alone on its line.
                # (also DSPy's field markers: "[[ ## answer ## ]]")
                r"(?P<heading>[*_#]*+[ \t]*+(?:#++[ \t]*+\]\][ \t]*+)?(?=\r?\n)))"
            ),
        )
        set_("_gates", required_words((*self.nouns, *self.qualified_nouns)) or ("",))
        conditions = alternation(self.conditions) if self.conditions else "(?!)"
        set_("_condition", re.compile(rf"\b{conditions}\b", re.IGNORECASE))
        set_("_qualifier_ends", last_words(self.qualifiers))
        set_("_part_before", _part_before(self.part_words))

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None:
            return []
        text = context.folded
        citations = context.features.citations()
        found: list[Candidate] = []
        for head, qualifier, noun_is_primary, rest in self._statements(low, text):
            link = rest.group("link").strip(" \t\r\n*_\"'”")  # "**Final Answer** -" links by its dash
            if link == "]" and (head == 0 or low[head - 1] != "["):
                continue  # "the answer] B": a bracket closes only the label it opened
            if link == "|" and not low[max(0, head - 8) : head].rstrip(" \t*_").endswith("|"):
                continue  # a bar links only a table's cells: "| Answer | G |"
            reading = read_at(text, rest.end(), min(len(text), rest.end() + MAX_PAYLOAD), citations=citations)
            if self.payload == "strict":
                reading = strictly(context, reading)
            if reading.kind == "empty":
                continue
            if ("would" in link or "could" in link) and self._condition.search(text, sentence_opening(text, head), head):
                continue  # "If the question meant kelvin, the answer would be C": a supposition
            heading = rest.group("heading") is not None
            if heading and not opens_line(text, head, within=12) and not _FIELD_MARKER.search(text, max(0, head - 8), head):
                continue  # "... we find the answer\nis": a heading stands alone on its line
            # "our answer (B)": without a link verb only a letter counts; under a heading a
            # statement of no option too ("## Final Answer\nNone of the options matches").
            readable = ("letter", "retract", "value", "none") if heading else ("letter", "retract", "value")
            if (heading or link in ("", "-", "–", "—", "|")) and reading.kind not in readable:
                continue
            final = bool(qualifier) and self._final.search(qualifier) is not None
            part = rest.group("part") is not None or self._part_before.search(low, max(0, head - 40), head) is not None
            how = "answer statement" if noun_is_primary else "qualified option statement"
            if heading:
                how = f"{how} (a heading, the payload under it)"
            candidate = statement_of(
                context, reading, head, final=final, part=part, how=how, cue_end=rest.end(),
                layout="under a heading" if heading else "",
            )  # fmt: skip
            if candidate is None:
                continue
            if candidate.kind == "value" and (heading or link in ("-", "–", "—", "|")):
                # "### Final Answer\n\nVitamin B12 deficiency", "Correct Answer - Vitamin B12
                # deficiency": under a heading or after a dash, an option's text counts, not prose
                # (a paragraph after "## Answer" is no value to weigh).
                candidate = option_by_text(context, candidate)
                if candidate is None:
                    continue
            if candidate.kind == "value" and not link:
                continue  # without a link only a letter, or an option cited by its text, counts
            if candidate.kind == "value":
                lettered = self._letter_after_value(context, reading, head, final=final, part=part)
                if lettered is not None:
                    found.append(lettered)
                    continue
            if candidate.kind == "commitment" and reading.tail:
                candidate = self._with_tail(context, candidate, reading)
            found.append(candidate)
        return _one_object_one_answer(context, low, found)

    def _statements(self, low: str, text: str) -> list[tuple[int, str, bool, re.Match[str]]]:
        """(head, qualifier, primary noun, link match) of each answer noun that opens a statement."""
        out = []
        n = len(text)
        nouns = [(a, noun, True) for noun in self.nouns for a in occurrences(low, noun)]
        nouns += [(a, noun, False) for noun in self.qualified_nouns for a in occurrences(low, noun)]
        labels = [(a, noun, True) for noun in self.label_nouns for a in occurrences(low, noun)]
        # A label noun counts before a colon only ("Ans: C"; "the ANS is" is an acronym in prose).
        nouns += [(a, noun, p) for a, noun, p in labels if _LABEL_COLON.match(low, a + len(noun))]
        if len(self.nouns) + len(self.qualified_nouns) + len(self.label_nouns) > 1:
            nouns.sort()
        for a, noun, is_primary in nouns:
            z = a + len(noun)
            if a > 0 and low[a - 1].isalpha():
                continue
            if z < n and low[z] == "s":
                z += 1
            if z < n and (low[z].isalpha() if is_primary else low[z].isalnum()):
                continue
            json_key = _is_json_key(low, a, z)
            if not is_primary and not json_key and (a == 0 or not low[a - 1].isspace()):
                continue
            rest = self._rest.match(low, z, n)
            if rest is None:
                continue
            if self._mentions and word_before(low, a) in self._mentions:
                continue  # "the wrong answer is M phase": an answer named, not given
            qualifier_match = self._qualifier(low, a)
            if not is_primary and qualifier_match is None and not json_key:
                continue  # "one option is (C)": a mention unless qualified, or a JSON key
            if (
                not (rest["link"] or "").strip()
                and low[rest.end("link") : rest.end("link") + 1] == "("
                and qualifier_match is None
                and word_before(low, a) not in _OWNERS
                and not opens_sentence(low, a)
            ):
                continue  # "Students often pick (A)": a verb, not the noun "pick" before its letter
            head = qualifier_match.start() if qualifier_match is not None else a
            out.append((head, qualifier_match.group() if qualifier_match else "", is_primary, rest))
        return out

    def _qualifier(self, low: str, a: int) -> re.Match[str] | None:
        """The qualifiers right before the noun at ``a`` ("the final answer", "correct option")."""
        if a == 0 or not low[a - 1].isspace():
            return None
        if self._qualifier_ends is not None:
            # Most nouns follow "the": test the word before before running the pattern.
            window = low[max(0, a - 24) : a].split()
            if not window or window[-1].lstrip("*_#[(").replace("’", "'") not in self._qualifier_ends:
                return None
        match = self._qualifier_before.search(low, max(0, a - 48), a)
        if match is not None and match.start() > 0 and low[match.start() - 1].isalnum():
            return None  # the qualifier must start a word
        return match

    def _letter_after_value(
        self, context: Context, reading: PayloadReading, head: int, *, final: bool, part: bool
    ) -> Candidate | None:
        """"the answer is 23,500 yards, which is (B)", "The answer is 8.6 km --> D": a bracketed
        letter, or one after an arrow, in the value's sentence, before any contrast ("Operant
        conditioning, not (D)" excludes D)."""
        text = context.folded
        stop_at = rest_of_sentence(text, reading.end)
        start = reading.end - len(reading.value)
        found = [(m.start(), m.group(1)) for m in BRACKETED_LETTER.finditer(text, start, stop_at)]
        arrowed = list(_ARROWED_LETTER.finditer(text, start, stop_at))
        if len({m.group(1) for m in arrowed}) == 1 and not _CLOSES_LINE.match(text, arrowed[-1].end()):
            arrowed = []  # "→ E = 72 J", "--> D or E", "A → B + C": the arrow points to no option
        found += [(m.start(), m.group(1)) for m in arrowed]  # several: one a case, a hedge
        letters = tuple(dict.fromkeys(letter for _, letter in sorted(found)))
        if not letters:
            # "Answer: The factors are 2^3 · 3^2. The count is 4 · 3 = 12, which is option (B).":
            # a later sentence of the value's line names its letter, in a clause closing the line.
            eol = text.find("\n", stop_at, stop_at + MAX_PAYLOAD)
            which = _WHICH_IS_LETTER.search(text, stop_at, stop_at + MAX_PAYLOAD if eol == -1 else eol)
            if which is None:
                return None
            letters, stop_at = (which["L"],), which.end("L")
        kind: StatementKind = "commitment" if len(letters) == 1 else "hedge"
        return context.candidate(
            kind, head, stop_at, letters, final=final, part=part, how="answer statement (a value, then its letter)"
        )

    @staticmethod
    def _with_tail(context: Context, candidate: Candidate, reading: PayloadReading) -> Candidate:
        """"The answer is B. Bent": the option's own text extends the statement; another
        question's option text marks it foreign."""
        letter = candidate.letters[0]
        tail = reading.tail
        if context.features.echoes(tail, letter) or len(tail.split()) <= 4:
            at = context.folded.find(tail, reading.end, reading.end + 8 + len(tail))
            if at != -1:
                candidate = candidate._replace(end=max(candidate.end, at + len(tail)))
        if _foreign_line(context, candidate):
            candidate = candidate._replace(foreign=True)
        return candidate


# --- "Antwort: C", "la respuesta es (B)" ---------------------------------------------------------


def _bounded(label: str) -> str:
    """The label as a pattern; labels in scripts that separate words must stand as words."""
    pattern = alternation((label,))
    script = unicodedata.name(label[0], "")
    if script.startswith(("LATIN", "CYRILLIC")):
        return rf"(?<!\w){pattern}(?!\w)"
    return pattern


@register_step_kind("answer_label")
@attrs.frozen(kw_only=True)
class AnswerLabel(PicksOne):
    """An answer label followed by a colon ("Antwort: C", "答案：C", "الإجابة: ب"), or an answer
    phrase followed by its payload ("Die Antwort ist (D)", "答えは B").

    ``labels`` need a colon after them (or a spaced dash, or a bracketed letter: "ответ (H)"),
    ``phrases`` do not; both are literal, any script. ``adverbs`` may follow a phrase ("Die
    richtige Antwort ist daher **D**", "La respuesta es, por lo tanto, B"). A label or phrase that
    holds one of the ``final_qualifiers`` ("最終的な答え", "Respuesta final") is an explicit final
    marker, as "Final answer:" is."""

    labels: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    phrases: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    adverbs: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    final_qualifiers: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    payload: Leniency = "lenient"
    which: Which = "last"
    _pattern: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _ascii_gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _by_first_letter: dict[str, tuple[str, ...]] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        # A label links to its payload by a colon (past a JSON key's closing quote) or by the
        # lenticular bracket that closes it ("【答案】B"); where it opens
        # its clause, as "Answer" does, also by a spaced dash or by a bracketed letter right after
        # it ("Следовательно, ответ (H)."; "habitat selection (G)" is prose). ``find`` checks the
        # clause.
        labels = "|".join(_bounded(label) for label in self.labels)
        link = r"(?:[ \t*_\"']*+[:：]|[ \t]*+】|(?P<loose>[ \t]++[-–—](?=[ \t])|[ \t]++(?=\([a-z]\))))"
        alternatives = [rf"(?:{labels}){link}"] if self.labels else []
        adverb = rf"(?:,?[ \t]++{alternation(self.adverbs)}(?!\w),?)?" if self.adverbs else ""
        # A phrase links to its payload by a spaced dash too: "Правильный ответ — B".
        dash = r"(?:[ \t]++[-–—](?=[ \t]))?"
        alternatives += [rf"{_bounded(phrase)}{dash}{adverb}[ \t*_]*+" for phrase in self.phrases]
        pattern = "|".join(alternatives) or "(?!)"
        object.__setattr__(self, "_pattern", re.compile(pattern))
        # Before the pattern runs, test one word each entry cannot do without: an ASCII text can
        # only hold the ASCII words; another word is looked for only where its first non-ASCII
        # letter is (the letter alone opens too often: "α" of an alpha particle, for "απάντηση").
        required = required_words((*self.labels, *self.phrases)) or ("",)
        ascii_words = [w for w in required if w.isascii()]
        # A word that holds another is found wherever that one is ("selected_option", "selected"):
        # the shorter alone is tested, one scan of the text fewer for each.
        object.__setattr__(
            self, "_ascii_gates", tuple(w for w in ascii_words if not any(o != w and o in w for o in ascii_words))
        )
        by_first: dict[str, list[str]] = {}
        for word in required:
            if not word.isascii():
                by_first.setdefault(next(ch for ch in word if not ch.isascii()), []).append(word)
        object.__setattr__(self, "_by_first_letter", {ch: tuple(words) for ch, words in sorted(by_first.items())})

    def _holds_other_word(self, low: str) -> bool:
        """``low`` holds one of the required words that are not ASCII."""
        return any(
            any(map(low.__contains__, words)) for letter, words in self._by_first_letter.items() if letter in low
        )

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None:
            return []
        if not any(map(low.__contains__, self._ascii_gates)) and (low.isascii() or not self._holds_other_word(low)):
            return []
        text = context.folded
        citations = context.features.citations()
        found = []
        for match in self._pattern.finditer(low):
            if match["loose"] is not None and not opens_sentence(low, match.start(), ends=CLAUSE_ENDS):
                continue
            reading = read_at(text, match.end(), min(len(text), match.end() + 200), citations=citations)
            if self.payload == "strict":
                reading = strictly(context, reading)
            final = bool(self.final_qualifiers) and any(q in match.group() for q in self.final_qualifiers)
            candidate = statement_of(
                context, reading, match.start(), final=final, how="answer label", cue_end=match.end()
            )
            if candidate is not None:
                found.append(candidate)
        return found


# --- "I'd go with B", "the best one is C" --------------------------------------------------------

# Where a sentence or a line opens: after its end mark or a newline, past blanks and markdown.
_OPENING: Final = r"[.!?:;,\n][ \t]*+[*_]*+"  # a sentence, a line, or a clause after a comma: "..., so it must be C."
_CLAUSE_END: Final = re.compile(r"[*_$)\]]*+[ \t]*+(?:[.!]|$|\n|\s++\()")
# A superlative pick's letter may also close a clause before its apposition: "the most
# appropriate next step is (A), obtaining an ECG".
_PICK_END: Final = re.compile(r"[*_$)\]]*+[ \t]*+(?:[.!,;]|$|\n|\()")
# What makes an opening's letter a subject, a supposition or a question, not a pick.
_NOT_PICKED: Final = re.compile(
    r"[*_)\]]*+(?:[ \t]*+\?|[ \t]++(?i:would|will|means?|requires?|makes?|gives?|leads?|only[ \t]++if)\b)"
)


# A letter an arrow points to after a value: "8.6 km --> D", "12 N → **(D)**".
_ARROWED_LETTER: Final = re.compile(r"(?:-{1,2}>|=>|→|⇒|⟶)[ \t]*+[*_]*+\(?([A-Z])\)?[*_]*+(?![\w'’])")
# What may follow a letter that closes its line.
_CLOSES_LINE: Final = re.compile(r"[ \t*_]*+[.!]?[ \t*_]*+(?:\n|$)")
# "So C it is.": the letter, then the idiom that closes the clause.
_IT_IS: Final = re.compile(r"[*_)\]]*+[ \t]++it[ \t]++is[*_]*+[ \t]*+(?:[.!]|$|\n)")
_MODAL: Final = re.compile(r"\b(?:would|could)\b")
# A condition that is the choice itself: "if I had to choose", "if forced to pick", "if I must guess".
_FORCED_CHOICE: Final = re.compile(
    r"(?:if|unless)\s++(?:(?:i|we)\s++(?:had|have|were|was|am|are|must)\s++(?:to\s++)?|forced\s++to\s++|pushed\s++to\s++)"
    r"(?:choose|pick|select|guess|answer|decide|go\s++with|commit)",
    re.IGNORECASE,
)


@register_step_kind("first_person_pick")
@attrs.frozen(kw_only=True)
class FirstPersonPick(PicksOne):
    """A first-person pick: "I'd go with B", "I choose option B", "we select (C)", "I think it's
    B", or a superlative one: "the best one is C", "the closest would be (D)".

    ``verbs`` follow "I" or "we" (and a modal: "I'd", "I will"); ``superlatives`` follow "the";
    ``openings`` pick with no subject where they open a sentence or a line ("Going with D."),
    maybe after one of the ``leading_words`` ("But if I have to pick one, D").
    ``withdrawals`` follow "I" like the verbs and withdraw the letter after them ("So I withdraw
    (B).", "I'm no longer confident in C"), when said, not asked, supposed or quoted: a
    retraction of it, which the correction stage applies to the commitments before it.
    A superlative pick's letter must close its clause ("the best is A good ..." is prose). A
    conditional pick ("I would choose C") in a sentence that opens with one of the ``conditions``
    ("If the gas were ideal, ...") is hypothetical, unless the condition is the choice itself ("If I
    had to choose, I would pick C").
    """

    verbs: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    superlatives: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    openings: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    leading_words: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    conditions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    withdrawals: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    which: Which = "last"
    _pattern: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _condition: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _superlative: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _opening: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _opening_gates: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        verbs = alternation(self.verbs)
        if self.withdrawals:
            verbs = rf"(?:(?P<withdraw>{alternation(self.withdrawals)})|{verbs})"
        superlatives = alternation(self.superlatives)
        object.__setattr__(
            self,
            "_pattern",
            re.compile(
                r"(?P<who>i|we)(?:\s*+['’]\s*+(?:d|ll|m|ve|re)|\s++(?:will|would|shall|should|must|can|might|do|am|have|are))?"
                # The payload follows on the line, or on a later one (read_at's next-line layout).
                rf"(?:\s++(?:have\s++to|probably|definitely|then|therefore))?\s++{verbs}(?:[ \t]++|[ \t]*+(?=\r?\n))"
            ),
        )
        object.__setattr__(
            self,
            "_superlative",
            re.compile(
                # up to five words of what it is: "the most appropriate next step in diagnosis is"
                rf"the\s++{superlatives}(?:\s++(?!is\b|would\b|seems\b)[a-z-]++){{0,5}}?\s++(?:is|would\s++be|seems\s++to\s++be)"
                r"(?:[ \t]++|[ \t]*+(?=\r?\n))"
            ),
        )
        conditions = alternation(self.conditions) if self.conditions else "(?!)"
        object.__setattr__(self, "_condition", re.compile(rf"\b{conditions}\b", re.IGNORECASE))
        words = required_words(self.superlatives) if self.superlatives else ()
        object.__setattr__(self, "_gates", ("",) if words is None else words)
        openings = alternation(self.openings) if self.openings else "(?!)"
        # A comma or a colon may close an opening clause: "If I had to pick one, A."
        object.__setattr__(self, "_opening", re.compile(rf"{openings}(?:[ \t]*+[,:])?(?:[ \t]++|[ \t]*+(?=\r?\n))"))
        # Each opening is looked for where its first word stands (a memchr-speed search), not
        # by a scan of the whole text; a first word that is a pattern ("*", "word?") is no literal.
        firsts = {choice for entry in self.openings for choice in entry.split()[0].split("/")}
        literal = all(first and "*" not in first and not first.endswith("?") for first in firsts)
        object.__setattr__(self, "_opening_gates", tuple(sorted(firsts)) if literal else ())

    def _matches(self, low: str) -> list[re.Match[str]]:
        """The pick phrases, each matched where its subject or superlative stands."""
        matches: dict[int, re.Match[str]] = {}
        for subject in ("i ", "i'", "i’", "we "):
            for at in occurrences(low, subject):
                if at and low[at - 1].isalnum():
                    continue
                match = self._pattern.match(low, at)
                if match is not None:
                    matches.setdefault(at, match)
        if self.superlatives:
            for word in self._gates:
                for at in occurrences(low, word):
                    for match in self._superlative.finditer(low, max(0, at - 12), at + len(word) + 64):
                        if match.start() == 0 or not low[match.start() - 1].isalnum():
                            matches.setdefault(match.start(), match)
        if self.openings:
            found: Iterable[re.Match[str] | None]
            if self._opening_gates:
                # Its first word is everywhere ("my", "final"): the pattern is run only where the
                # word opens a sentence or a line, which the match must do (below).
                starts = sorted(
                    at for first in self._opening_gates for at in occurrences(low, first) if self._opens(low, at)
                )
                found = [self._opening.match(low, at) for at in starts]
            else:
                found = self._opening.finditer(low)
            for match in found:
                if match is None:
                    continue
                if self._opens(low, match.start()):
                    matches.setdefault(match.start(), match)
        return [matches[at] for at in sorted(matches)]

    def _opens(self, low: str, at: int) -> bool:
        """``at`` opens its sentence, or follows a leading word that does ("But if I ...")."""
        if opens_sentence(low, at):
            return True
        word = word_before(low, at).rstrip(",")
        return word in self.leading_words and opens_sentence(low, low.rfind(word, 0, at))

    def _supposed(self, text: str, match: re.Match[str]) -> bool:
        """A conditional pick ("would", "could") in a sentence that opens with one of the
        ``conditions`` ("If the gas were ideal, I would go with C"), unless the condition is the
        choice itself ("If I had to choose, I would pick C" picks C)."""
        if not self.conditions or not _MODAL.search(match.group()):
            return False
        opening = sentence_opening(text, match.start())
        condition = self._condition.search(text, opening, match.start())
        return condition is not None and not _FORCED_CHOICE.match(text, condition.start(), match.start())

    def _withdraws(self, text: str, match: re.Match[str], end: int) -> bool:
        """A withdrawal said, not asked, supposed or quoted: "I" withdraws, the letter closes its
        sentence ("So I withdraw (B)."; not "Should I retract (C)?", "we withdraw D from the
        manifold", "If I were wrong, I would withdraw (B)", 'a student said "I take back C"')."""
        if match["who"] != "i" or self._supposed(text, match) or not _CLOSES_SENTENCE.match(text, end):
            return False
        opening = sentence_opening(text, match.start())
        before = text[opening : match.start()]
        if any(quote in before for quote in _QUOTES) or text[max(0, match.start() - 1) : match.start()] == "'":
            return False  # quoted: 'A student might say "I take back B."'
        line = text.rfind("\n", 0, match.start()) + 1
        if text[line : match.start()].lstrip().startswith(">"):
            return False  # a quoted line
        return self._condition.search(text, opening, match.start()) is None  # "If I'm wrong, I retract (B)."

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None or not (context.has_letter() or may_give_option_text(context, low)):
            return []  # every statement it reads names a letter, or gives an option's text
        text = context.folded
        citations = context.features.citations()
        found = []
        for match in self._matches(low):
            reading = read_at(text, match.end(), min(len(text), match.end() + 80), citations=citations)
            if match.re is self._pattern and match["withdraw"] is not None:
                if reading.kind == "letter" and self._withdraws(text, match, reading.end):
                    found.append(
                        context.candidate(
                            "retraction", match.start(), reading.end, reading.letters, how="a first-person withdrawal",
                            origin="withdrawal", cue=text[match.start() : match.end()].strip(), payload=reading.form,
                        )
                    )  # fmt: skip
                continue
            if reading.kind not in ("letter", "hedge", "value"):
                continue
            candidate = statement_of(
                context, reading, match.start(), how="a first-person pick", origin="pick", cue_end=match.end()
            )
            if candidate is not None and candidate.kind == "value":
                candidate = option_by_text(context, candidate)
            if candidate is None:
                continue  # a pick names a letter, or an option by its text
            if self._supposed(text, match):
                continue
            superlative = match.re is self._superlative
            if reading.kind == "letter" and superlative and not reading.cited and not _PICK_END.match(text, reading.end):
                continue  # "the best is A good ...": only a letter closing its clause
            if match.re is self._opening and _NOT_PICKED.match(text, reading.end):
                continue  # "Going with D would require ...", "it's C only if ...", "So it's C?"
            found.append(candidate)
        return found


# DSPy's field marker before its name, on a line of its own: "[[ ## answer ## ]]".
_FIELD_MARKER: Final = re.compile(r"(?:^|\n)\[\[[ \t]*+#++[ \t]*+$")
# Who may own an answer noun that its bracketed letter follows with no link: "my answer (B)".
_OWNERS: Final = frozenset({"my", "our", "the", "your", "final", "an"})
# The colon after a label noun: "Ans: C", "**Ans.:** C", "ans :" (not "ans is", "ans =").
_LABEL_COLON: Final = re.compile(r"\.?[*_]*+[ \t]*+[:：]")
# A letter that closes its sentence, which says and does not ask: "(B).", "B;", "B" at the end.
_CLOSES_SENTENCE: Final = re.compile(r"[)\]*_]*+[ \t]*+(?:[.!;](?![^\n.!;]*?\?)|\n|$)")
_QUOTES: Final = ('"', "“", "„", "«", "「")


# --- "So, B." ------------------------------------------------------------------------------------


def _after_comma(low: str, at: int) -> bool:
    """A comma or a semicolon, past blanks and markup, stands before ``at``."""
    before = low[max(0, at - 8) : at].rstrip(" \t*_")
    return before[-1:] in (",", ";")


# A letter right after a concluding clause's words: "..., so (B).", "..., therefore option B".
_LETTER_NEXT: Final = re.compile(r"[*_(\[ \t]*+(?:(?i:option|choice)[ \t]++)?[*_(\[]*+[A-Z](?![\w'’])")
# A condition in the sentence before a clause that opens with a concluding word.
_CONDITIONAL: Final = re.compile(r"\b(?:if|when|unless|whether|assum\w*|suppos\w*)\b")
# Words on a concluding sign's line that make its letter a case or a mistake, not the answer:
# "If friction is ignored → **D**", "Common mistake → (A)."
_SUPPOSED_LINE: Final = re.compile(
    r"\b(?:if|when|unless|assum\w*|suppos\w*|not|wrong|incorrect|mistake\w*|trap|error\w*|distractor\w*|"
    r"tempting|naive|common|eliminat\w*|rul\w*\s++out)\b"
)
# What may follow a concluding sign's letter to the end of the text: closing marks.
_CLOSES_TEXT: Final = re.compile(r"[ \t*_.!)\]]*+\s*+$")
# A letter in bold or brackets after a concluding sign: "→ **F**", "⇒ (C)", "→ **(A)**" ("A → B"
# of a reaction or an implication names no option).
_DECORATED_LETTER: Final = re.compile(
    r"[ \t]*+(?:(?:\*\*|__)[ \t]*+(?:[(\[][ \t]*+[a-z][ \t]*+[)\]]|[a-z])[ \t]*+(?:\*\*|__)|[(\[][ \t]*+[a-z][ \t]*+[)\]])"
)


@register_step_kind("concluding_sentence")
@attrs.frozen(kw_only=True)
class ConcludingSentence(PicksOne):
    """A sentence that opens with a concluding word and ends with a letter: "So, B.",
    "Therefore, (C).", "Thus option B". A sign among the ``words`` ("→", "=>") concludes where it
    stands, on the last line, when a bold or bracketed letter follows it and no other sign is
    followed by one ("... 1646.4 V → **F**"). Only the last
    ``window`` characters are read: such a sentence closes a response. The letter must be a
    capital and an option.
    """

    words: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    window: int = 600
    which: Which = "last"
    _pattern: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _opening: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _signs: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_signs", tuple(word for word in self.words if not any(map(str.isalnum, word))))
        # A word ends where a word does; a sign ("=>", "→") ends where it ends.
        words = rf"{alternation(self.words)}(?:\b|(?<=\W))"
        object.__setattr__(
            self,
            "_pattern",
            re.compile(rf"{words}[*_]*+[ \t]*+[,:]?[ \t]*+(?:it\s*+['’]?s\s++|it\s++(?:is|must\s++be|has\s++to\s++be)\s++)?"),
        )
        # Where a sentence opens with a concluding word: everything ``_pattern`` needs after
        # the word is optional, so it matches exactly where the lookahead does. An opening
        # holds no end mark after its first character, so the openings this finds are those
        # that scanning every opening finds, and the regex engine skips the others itself.
        object.__setattr__(self, "_opening", re.compile(rf"{_OPENING}(?={words})"))

    def _openings(self, low: str, start: int) -> list[re.Match[str]]:
        """The concluding phrases that open a sentence or a line in ``low[start:]``, and the
        signs among the words ("→", "=>") anywhere before a bracketed or bold letter: "All four
        results line up with one option: ... → **F**"."""
        positions = [0] if start == 0 else []
        positions += [
            m.end()
            for m in self._opening.finditer(low, start)
            # "..., so it must be C" concludes; "If the dose were doubled, so C" supposes
            if low[m.start()] not in ",;" or not _CONDITIONAL.search(low, sentence_opening(low, m.start()), m.start())
        ]
        signs = []
        closing = -1
        for sign in self._signs:
            at = low.find(sign, start)
            while at != -1:
                letter = _DECORATED_LETTER.match(low, at + len(sign))
                if letter is not None:
                    signs.append(at)
                    if _CLOSES_TEXT.match(low, letter.end()):
                        closing = at
                at = low.find(sign, at + len(sign))
        last_line = low.rstrip().rfind("\n") + 1
        if len(signs) == 1 and closing == signs[0] >= last_line and not _SUPPOSED_LINE.search(low, last_line, closing):
            # One sign before a letter that closes the text; several map values to options ("12
            # N → (A), 24 N → (B)") or cases to answers ("If friction is ignored → **D**"), one
            # inside the text may answer one part of several, a sign after a mistake names it
            # ("Common mistake → (A)."), and none of those concludes.
            positions.append(signs[0])
        positions.sort()
        found = []
        for at in positions:
            match = self._pattern.match(low, at)
            if match is not None:
                found.append(match)
        return found

    def find(self, context: Context) -> list[Candidate]:
        low = context.low
        if low is None or not context.has_letter():
            return []  # every statement it reads names a letter
        start = max(0, len(low) - self.window)
        text = context.folded
        citations = context.features.citations()
        found = []
        for match in self._openings(low, start):
            if _after_comma(low, match.start()) and not _LETTER_NEXT.match(text, match.end()):
                continue  # "2 A, so the answer is (B)": a clause concludes with a letter, the answer statement reads the rest
            reading = read_at(
                text, match.end(), min(len(text), match.end() + MAX_PAYLOAD), lowercase=False, citations=citations
            )
            if reading.kind not in ("letter", "value"):
                continue
            candidate = statement_of(
                context, reading, match.start(), how="a concluding sentence", origin="evaluation", cue_end=match.end()
            )
            if candidate is None or candidate.kind != "commitment" or candidate.letters[0] not in context.options:
                continue
            # The letter closes its clause ("So, B.", "So C it is."), a contrast excludes another
            # option after it ("So, B rather than D."), or the option's text follows it ("So, B. Bent").
            if reading.cited or any(p.match(text, reading.end) for p in (_CLAUSE_END, CONTRAST, _IT_IS)):
                found.append(candidate)
        return found
