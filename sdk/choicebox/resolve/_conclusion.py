"""The ``conclusion`` resolution policy: which letter a response finally commits to.

It applies the rules of a careful human grader to the statements the mode's steps found, in text
order (the grader's rules, with the examples they were written from, are in the README's
"Soundness" section):

1. Scope: text about other questions is dropped (a new "Question:" heading, a recap of other
   answers, another question's options, an answer line that gives another question's option).
2. An explicit final marker ("Final answer:") wins over everything before it; a correction
   ("(D) is incorrect") withdraws the letter it names.
3. The final run: the last statement and those joined to it by nothing but filler words. A hedge
   there ("A or B") is ``ambiguous``; several different letters are ``conflicting``; an earlier
   hedge that holds the final letter is narrowed by it.
4. An earlier, different commitment with reasoning in between is revised by the later one,
   unless the answers belong to different parts of a multi-part question (``conflicting``).
5. A response cut off while answering one part of several, or while reviewing options, commits
   to nothing.
6. With no letter statement at all: a value that equals exactly one option's content, then the
   mode's fallback steps (``when: no_commitment``: stray letters, a closing result).

The vocabularies (filler words, correction and revision cues, part markers, no-option phrases)
are parameters in the mode's YAML.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Final

import attrs

from choicebox._errors import ParameterError
from choicebox.find import Candidate, Context, Extraction
from choicebox.find._statement import numbered_option_of
from choicebox.find._values import value_letters
from choicebox.find._vocab import (
    alternation,
    nonempty_words,
    opens_line,
    valid_words,
    whole_words,
    word_list,
)

from ._policies import (
    ChainEntry,
    Resolution,
    Ruling,
    _extraction,
    applicable,
    register_policy,
    run_step,
)
from ._stages import (
    DEFAULT_STAGES,
    GAP_WORD,
    STAGES,
    STATED,
    Fates,
    Settling,
    Stage,
    _failure,
    settle,
)

__all__ = ["Conclusion"]

_LETTERED: Final = ("commitment", "hedge", "retraction", "no_option")
# What answers the question, for the scope rules: a letter, or a value (rule 5).
_ANSWERING: Final = (*STATED, "value")
_LINE_LEVEL_MAX: Final = 300
# An answer shown, not given: the format an instruction asks for, echoed ("end with a line of
# the form `Final Answer: \boxed{A}`, where A is replaced by the letter of the chosen option").
_CODE_SPAN: Final = re.compile(r"`[^`\n]{1,200}+`")
_PLACEHOLDER_EXPLAINED: Final = re.compile(
    r"[`}\])*_.'\"]{0,4}+,?[ \t]++where[ \t]++[(\[]?(?P<L>[A-Z])[)\]]?[ \t]++(?:is|stands|represents)\b"
)


def _known_stages(instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
    unknown = [name for name in value if name not in STAGES]
    if unknown:
        raise ParameterError(attribute.name, f"unknown stage {unknown[0]!r}; the stages are: {', '.join(STAGES)}")
    if len(set(value)) != len(value):
        raise ParameterError(attribute.name, "a stage is named twice")


@register_policy("conclusion")
@attrs.frozen(kw_only=True)
class Conclusion:
    """The policy of the module docstring. Its parameters (YAML, under ``resolve:``):

    ``fillers``: words that may stand between statements of one run ("the", "so", "answer");
    ``run_gap_words`` more words than that make reasoning, not a run, as does a gap longer than
    ``run_gap_chars``; ``correction_cues`` in a gap ("however", "wait") also end a run;
    ``revision_cues`` between two answers of a multi-part question say the later revises the
    earlier; ``part_words`` ("part", "statement") and ``later_parts`` ("for the second part")
    mark the parts of a response; ``opening_boilerplate`` may precede an opening answer within
    ``opening_words`` words; ``no_option_statements`` ("none of the options") cancel a stray
    letter before them; a statement in an inline code span after one of the ``example_cues``
    ("of the form `Final Answer: \\boxed{A}`"), or whose letter is then said to stand for the
    answer (", where A is replaced by the letter"), shows a format and answers nothing; a response cut off after more than ``cut_off_words`` words of
    unanswered work on a multi-part question commits to nothing. ``withdrawals`` ("no, that is
    wrong", "scratch that", "I'm not sure any more") after the concluding statement, within
    ``withdrawal_reach`` characters and with no option named before them, withdraw it;
    ``explicit_withdrawals``, which name the answer ("I withdraw my answer", "I'll retract my
    answer"), do so at any distance after it. Neither does in a sentence that holds one of the
    ``withdrawal_conditions`` ("If I'm wrong, I withdraw my answer").
    """

    fillers: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    correction_cues: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    revision_cues: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    part_words: tuple[str, ...] = attrs.field(converter=word_list, validator=nonempty_words)
    later_parts: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    opening_boilerplate: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    no_option_statements: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    example_cues: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    withdrawals: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    explicit_withdrawals: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    withdrawal_conditions: tuple[str, ...] = attrs.field(default=(), converter=word_list, validator=valid_words)
    withdrawal_reach: int = 200
    run_gap_words: int = 1
    run_gap_chars: int = 400
    opening_words: int = 3
    cut_off_words: int = 25
    complete_endings: str = ".!?)]}\"'*`$>”’|"
    stages: tuple[str, ...] = attrs.field(default=DEFAULT_STAGES, converter=tuple, validator=_known_stages)
    _named_stages: tuple[tuple[str, Stage], ...] = attrs.field(init=False, repr=False, eq=False)
    _filler: frozenset[str] = attrs.field(init=False, repr=False, eq=False)
    _correction: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _revision: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _later_part: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _any_part: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _boilerplate: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _no_option: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _example: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _withdrawal: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _explicit_withdrawal: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)
    _withdrawal_condition: re.Pattern[str] | None = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        set_("_named_stages", tuple((name, STAGES[name]) for name in self.stages))
        set_("_filler", frozenset(word for entry in self.fillers for word in entry.split()))
        set_("_correction", re.compile(whole_words(self.correction_cues), re.IGNORECASE))
        set_("_revision", re.compile(whole_words(self.revision_cues), re.IGNORECASE))
        words = alternation(self.part_words)
        later = alternation(self.later_parts)
        # A part marker opens a sentence (its end mark maybe inside bold: "(D).**"), a line or a
        # list item. The blanks and markup before it are taken possessively from the first one, so
        # a run of 20,000 blank lines is scanned once.
        opener = r"(?:^|(?<![*_#\s])\n|[.!?:][*_]*+\s)[*_#\s]*+(?:[-•][ \t]++[*_]*+)?"
        set_(
            "_later_part",
            re.compile(
                rf"{opener}(?:\(?[b-h]\)|[2-9]\)|\([2-9]\)|{words}\s*+\(?(?:[b-h]|[2-9]|ii+)\b\)?|"
                rf"for\s++(?:part\s*+)?\(?(?:[b-h]|ii+|iv)\)|{later}\b)",
                re.IGNORECASE,
            ),
        )
        set_(
            "_any_part",
            re.compile(
                rf"{opener}(?:\(?[a-h]\)|[1-9]\)|\([1-9]\)|{words}\s*+\(?(?:[a-h]|[1-9]|i+)\b\)?)\s",
                re.IGNORECASE,
            ),
        )
        set_(
            "_boilerplate",
            re.compile(rf"\s*+(?:{alternation(self.opening_boilerplate)})?\s*+", re.IGNORECASE),
        )
        set_(
            "_no_option", re.compile(rf"\b{alternation(self.no_option_statements)}", re.IGNORECASE)
        )
        cues = self.example_cues
        set_("_example", re.compile(rf"(?<!\w)(?:{alternation(cues)})(?!\w)", re.IGNORECASE) if cues else None)
        for name, entries in (("_withdrawal", self.withdrawals), ("_explicit_withdrawal", self.explicit_withdrawals)):
            set_(name, re.compile(rf"(?<![\w'’])(?:{alternation(entries)})\b", re.IGNORECASE) if entries else None)
        conditions = self.withdrawal_conditions
        set_("_withdrawal_condition", re.compile(rf"\b{alternation(conditions)}\b", re.IGNORECASE) if conditions else None)

    # --- running the chain -----------------------------------------------------------------------

    def __call__(
        self, context: Context, chain: Sequence[ChainEntry], errors: list[str]
    ) -> Resolution:
        entries: dict[str, ChainEntry] = {}
        found: list[Candidate] = []
        fallbacks: list[ChainEntry] = []
        for entry in chain:
            if entry.when_answer_prefix and not applicable(entry, context):
                continue
            entries[entry.id] = entry
            if entry.when_no_commitment:
                fallbacks.append(entry)
                continue
            candidates = run_step(entry, context, errors)
            if not candidates:  # most steps on most outputs: nothing to weigh or settle
                continue
            found.extend(candidates)
            settled = [c for c in candidates if c.settles]
            if settled:
                return self._settled(context, settled[-1], found, entries)
        fates = Fates()
        extraction, chosen, considered = self._resolve(context, found, fallbacks, errors, fates)
        source = entries.get(chosen.step) if chosen is not None else None
        return Resolution(extraction, source, fates.rulings(considered, chosen))

    def _settled(
        self,
        context: Context,
        candidate: Candidate,
        found: list[Candidate],
        entries: dict[str, ChainEntry],
    ) -> Resolution:
        """A fast-path finding: nothing else in the text can weigh against it."""
        return Resolution(
            _extraction(candidate, context),
            entries.get(candidate.step),
            tuple(Ruling(c, "chosen" if c is candidate else "ignored") for c in found),
        )

    # --- the rules -------------------------------------------------------------------------------

    def _resolve(
        self,
        context: Context,
        found: list[Candidate],
        fallbacks: list[ChainEntry],
        errors: list[str],
        fates: Fates,
    ) -> tuple[Extraction | None, Candidate | None, list[Candidate]]:
        text = context.folded
        options = context.options
        lo, hi, scope_note = self._scope(context, found, fates)
        kept: list[Candidate] = []
        dropped: list[Candidate] = []
        examples = self._examples(text)
        for candidate in found:
            if candidate.kind == "other_question":
                where = "a section: the text before the first question heading" if candidate.value == "opening" else "where text about another question starts"
                fates.mark((candidate,), "ignored", where)
            elif candidate.start < lo or candidate.start >= hi:
                fates.mark((candidate,), "outside", scope_note)
            elif candidate.letters == ("X",) and "X" not in options:
                fates.mark((candidate,), "ignored", "the (X) of a format instruction")
            elif self._example is not None and self._shown(text, candidate, examples):
                fates.mark((candidate,), "ignored", "an answer format shown, not an answer given")
            elif candidate.origin != "labelled" and any(
                x not in options for x in candidate.letters
            ):
                fates.mark((candidate,), "not_an_option")
            elif (
                candidate.origin == "evaluation"
                and candidate.letters == ("I",)
                and context.features.roman()
            ):
                fates.mark((candidate,), "ignored", "statement I, not option I")
            else:
                kept.append(candidate)
                continue
            dropped.append(candidate)
        merged = _beyond_the_options(_merge(kept), options, text)
        merged, hi = self._drop_foreign(merged, hi, fates)
        considered = sorted(dropped + merged, key=lambda c: c.start)
        lettered = [c for c in merged if c.kind in _LETTERED]
        if not any(c.kind in STATED for c in lettered):
            return self._without_letters(
                context, merged, considered, fallbacks=fallbacks, errors=errors, fates=fates, window=(lo, hi)
            )
        return self._settle(context, text, lettered, window=(lo, hi), fates=fates, considered=considered)

    def _examples(self, text: str) -> list[tuple[int, int]]:
        """The inline code spans that follow one of the ``example_cues`` on their line ("of the
        form `Answer: X`", "e.g. `\\boxed{B}`"): formats shown, not answers."""
        if self._example is None or "`" not in text:
            return []
        spans = []
        for span in _CODE_SPAN.finditer(text):
            reach = max(0, span.start() - 80)
            line = text.rfind("\n", reach, span.start()) + 1  # (within reach: linear in the text)
            if self._example.search(text, max(line, reach), span.start()) is not None:
                spans.append(span.span())
        return spans

    @staticmethod
    def _shown(text: str, candidate: Candidate, examples: list[tuple[int, int]]) -> bool:
        """The candidate lies in an example span, or its letter is said to stand for the answer
        right after it (", where A is replaced by the letter ...")."""
        # The spans are in text order and never overlap: the last one opening at or before the
        # candidate is the only one that may hold it.
        if examples:
            at = bisect.bisect_right(examples, (candidate.start, len(text))) - 1
            if at >= 0 and examples[at][0] <= candidate.start < examples[at][1]:
                return True
        if text.find("where", candidate.end, candidate.end + 16) == -1:
            return False  # most statements: no "where" right after them
        explained = _PLACEHOLDER_EXPLAINED.match(text, candidate.end)
        return explained is not None and candidate.letters == (explained["L"],)

    def _without_letters(
        self,
        context: Context,
        merged: list[Candidate],
        considered: list[Candidate],
        *,
        fallbacks: list[ChainEntry],
        errors: list[str],
        fates: Fates,
        window: tuple[int, int],
    ) -> tuple[Extraction | None, Candidate | None, list[Candidate]]:
        """No statement names a letter: "no option" statements, values, then the fallbacks."""
        no_option = [c for c in merged if c.kind == "no_option"]
        if no_option:
            fates.mark(no_option[-1:], "decides", "no option is right")
            return _failure("no_answer", "the response says no option is right"), None, considered
        values = [c for c in merged if c.kind == "value"]
        if len(values) > 2 and self._cut_off_in(values[-1], context.folded) and _repeats(values[-3:]):
            # "Answer: <option G's text>" repeated until the output was cut off inside the last
            # one: the last is an unfinished repetition, the ones before it the statement.
            fates.mark(values[-1:], "ignored", "a value the output was cut off in")
            values.pop()
        if values:
            value = values[-1]
            chosen = _as_commitment(value, context)
            if chosen is not None:
                # Each value that names one option, read as that option's letter: the same stages
                # as letters ("The answer is Paris.\nThe answer is Rome.": a run of two answers).
                read = [(v, c) for v in values[:-1] if (c := _as_commitment(v, context)) is not None] + [(value, chosen)]
                as_letters = {id(v): c for v, c in read}
                fates.mark([v for v in values[:-1] if id(v) not in as_letters], "superseded", "an earlier value")
                considered = [as_letters.get(id(c), c) for c in considered]
                if len({c.letters for _, c in read}) == 1:
                    fates.mark([c for _, c in read[:-1]], "superseded", "an earlier value")
                    return _extraction(chosen, context), chosen, considered
                found, settled, _ = self._settle(
                    context, context.folded, [c for _, c in read], window=window, fates=fates, considered=[]
                )
                source = next((c for _, c in read if settled is not None and c.start == settled.start), None)
                return found, source, considered
            fates.mark(values[:-1], "superseded", "an earlier value")
            fates.mark((value,), "decides", "matches no single option")
            return (
                _failure("no_answer", f"the value {value.value!r} matches no single option"),
                None,
                considered,
            )
        lo, hi = window
        context.window = (lo, hi)
        stray: list[Candidate] = [c for c in merged if c.kind == "stray"]
        later: list[Candidate] = []
        for entry in fallbacks:
            later.extend(run_step(entry, context, errors))
        considered = considered + later
        stray += [c for c in later if c.kind == "stray"]
        stray = [c for c in stray if c.letters[0] in context.options and lo <= c.start < hi]
        if any(c.letters == ("I",) for c in stray) and context.features.roman():
            stray = [c for c in stray if c.letters != ("I",)]
        stray.sort(key=lambda c: c.start)
        if len({c.letters[0] for c in stray}) >= 3:
            # "In Celsius, it's 100 (option A). In Fahrenheit, 212 (option B). ...": the options
            # gone through one by one, none chosen.
            fates.mark(stray, "conflicting", "stray letters of three options or more: a review")
            return _failure("no_answer", "stray letters of several options, none chosen"), None, considered
        results = [c for c in later if c.kind == "commitment"]
        if not stray:
            if results:
                return _extraction(results[-1], context), results[-1], considered
            return None, None, considered
        if self.no_option_statements and self._no_option.search(context.folded, stray[-1].end, hi):
            fates.mark(stray, "retracted", "followed by 'no option is right'")
            return (
                _failure("no_answer", "a stray letter, then 'no option is right'"),
                None,
                considered,
            )
        as_commitments = [c._replace(kind="commitment") for c in stray]
        found, settled, _ = self._settle(
            context, context.folded, as_commitments, window=(lo, hi), fates=fates, considered=[]
        )
        # The rulings speak of the candidates as found (stray letters), not as re-read.
        for new, old in zip(as_commitments, stray, strict=True):
            if id(new) in fates.notes:
                fates.notes[id(old)] = fates.notes[id(new)]
        if settled is None:
            return found, None, considered
        original = next(c for c in stray if c.start == settled.start and c.letters == settled.letters)
        return found, original, considered

    def _cut_off_in(self, candidate: Candidate, text: str) -> bool:
        """The output ends inside ``candidate``, with no mark that completes it."""
        end = len(text.rstrip())
        return candidate.end >= end and text[end - 1 : end] not in self.complete_endings

    def _settle(
        self,
        context: Context,
        text: str,
        lettered: list[Candidate],
        *,
        window: tuple[int, int],
        fates: Fates,
        considered: list[Candidate],
    ) -> tuple[Extraction | None, Candidate | None, list[Candidate]]:
        """The stages, in the mode's order, on the statements that name letters."""
        return settle(self, Settling(context, text, lettered, window, fates), self._named_stages, considered)

    # --- helpers ---------------------------------------------------------------------------------

    def _bare(self, text: str, a: int, b: int) -> bool:
        """Nothing between two statements but filler words (at most ``run_gap_words`` others)."""
        if b - a > self.run_gap_chars:
            return False
        if b - a > 12 and self._correction.search(text, a, b):
            return False
        others = 0
        for word in GAP_WORD.findall(text, a, b):
            if word.lower() not in self._filler:
                others += 1
                if others > self.run_gap_words:
                    return False
        return True

    def _opening(self, text: str, lo: int, position: int) -> bool:
        """The statement opens the response: only boilerplate and a few words before it."""
        if position - lo > 400:
            return False
        match = self._boilerplate.match(text, lo, position)
        rest = text[match.end() if match else lo : position]
        return len(GAP_WORD.findall(rest)) <= self.opening_words

    def _cut_off(self, text: str) -> bool:
        stripped = text.rstrip()
        return bool(stripped) and stripped[-1] not in self.complete_endings

    def _scope(
        self, context: Context, found: list[Candidate], fates: Fates
    ) -> tuple[int, int, str]:
        """The part of the text about this question (rule 1), from the scope markers found."""
        n = len(context.text)
        markers = [c for c in found if c.kind == "other_question"]
        if not markers:
            return 0, n, ""
        own = next((c.start for c in markers if c.value == "new_question"), None)
        if own is not None:
            # "**Practice Question:** ...": the response's own question, and its answer, follow.
            return 0, own, "after a question of the response's own"
        opening = next((c for c in markers if c.value == "opening"), None)
        headings = [c for c in markers if c.value == "heading"]
        cuts = sorted(c.start for c in markers if c.value not in ("heading", "opening"))
        recap = next((c.start for c in markers if c.value == "recap"), None)
        stated = [c for c in found if c.kind in _ANSWERING]  # an answer given before a marker
        if headings:
            first = headings[0].start
            if first > 0 and any(c.start < first for c in stated):
                return 0, min([first, *cuts]), "after a new 'Question' heading"
            best, best_hits = len(headings) - 1, -1
            for i, heading in enumerate(headings):
                if heading.score >= best_hits:  # a tie goes to the later section
                    best, best_hits = i, heading.score
            if opening is not None and not any(c.start >= first for c in stated):
                # The finder found the text before the first heading to be the section about
                # this question, and nothing after the heading answers: a base model's value,
                # then its own "Q: ...?" and "A: ..." ("Q: Considering everything, which option
                # is correct?\nA: ... (B)" answers this question after all).
                return 0, min([first, *cuts]), "after a new 'Question' heading"
            if best_hits == 0 and len(context.features.question_words()) >= 3:
                # No section shares a word with the question: every one is about another.
                return 0, first, "in sections about other questions"
            lo = headings[best].start
            hi = headings[best + 1].start if best + 1 < len(headings) else n
            hi = min([hi, *(c for c in cuts if c > lo)])
            return (
                lo,
                hi,
                f"outside section {best + 1} of {len(headings)}, the one about this question",
            )
        if recap is not None and recap == cuts[0]:
            return 0, recap, "after a recap of other questions' answers"
        cut = cuts[0]
        if any(c.start < cut for c in stated):
            return 0, cut, "after another question's options"
        return 0, n, ""

    @staticmethod
    def _drop_foreign(
        merged: list[Candidate], hi: int, fates: Fates
    ) -> tuple[list[Candidate], int]:
        """An answer line giving another question's option ends the scope after an answer to
        this one; with nothing before it, that line alone is dropped."""
        for index, candidate in enumerate(merged):
            if not candidate.foreign:
                continue
            if any(c.kind in STATED for c in merged[:index]):
                fates.mark(merged[index:], "outside", "after an answer to another question")
                return merged[:index], candidate.start
            fates.mark((candidate,), "outside", "an answer to another question")
            return merged[:index] + merged[index + 1 :], hi
        return merged, hi


def _beyond_the_options(merged: list[Candidate], options: Mapping[str, str], text: str) -> list[Candidate]:
    """An answer line naming a letter this question does not have ("Answer: (K)" for options A to
    J), after an answer to one of its options (a letter, or a value: rule 5), answers another
    question: it is marked foreign, so the scope ends there (``_drop_foreign``). Alone, it stays
    what it is: not an option."""
    answered = False
    out = []
    for candidate in merged:
        beyond = (
            answered
            and candidate.kind == "commitment"
            and candidate.origin == "labelled"
            and candidate.letters[0] not in options
            and opens_line(text, candidate.start)
        )
        answered = answered or (candidate.kind in _ANSWERING and all(x in options for x in candidate.letters))
        out.append(candidate._replace(foreign=True) if beyond else candidate)
    return out


def _as_commitment(value: Candidate, context: Context) -> Candidate | None:
    """A value statement that states one option's content, or names an option by its number, as
    a commitment to that option."""
    numbered = numbered_option_of(context, value)
    hits = (
        numbered if numbered is not None
        else value_letters(value.value, context.options, context.question) or _numeric_match(value.value, context)
    )  # fmt: skip
    if not hits and numbered is None and (linked := _LINKED_TAIL.fullmatch(value.value)) is not None:
        # "Answer: The speed is about 19.6 m/s.", "Antwort: Die Geschwindigkeit beträgt etwa 19,6
        # m/s.": a sentence that links its subject to the value; the value is what it gives
        hits = value_letters(linked["tail"], context.options, context.question)
    if len(hits) != 1:
        return None
    return value._replace(
        kind="commitment", letters=(hits[0],), how=f"{value.how}: the value {value.value!r} is option {hits[0]}'s content"
    )


# A short subject, a link (English and the languages of the answer labels), the value after it.
_LINKED_TAIL: Final = re.compile(
    r"[^\W\d_][^=≈\n]{0,60}?(?:[ \t]++(?:is|are|equals|was|will[ \t]++be|beträgt|ist|est|es|è|é|wynosi|"
    r"составляет|равна|равен|bằng|adalah)[ \t]++|[ \t]*+[=≈][ \t]*+)(?P<tail>[^\n]{1,80})",
    re.IGNORECASE,
)


def _merge(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per statement: "Final Answer: The answer is (B)" is one final commitment,
    a letter inside a value's span wins over the value, a correction absorbs its own letter."""
    candidates = sorted(candidates, key=lambda c: (c.start, -c.end))
    merged: list[Candidate] = []
    for c in candidates:
        if merged and merged[-1].start <= c.start < merged[-1].end:
            prev = merged[-1]
            final = prev.final or c.final
            if prev.kind == "value" and c.kind in ("value", "commitment", "hedge", "retraction"):
                replacement = c._replace(start=prev.start, final=final, part=prev.part or c.part)
            elif prev.kind == "no_option" and c.kind in ("commitment", "hedge", "retraction"):
                replacement = c._replace(start=prev.start, final=final)
            elif prev.kind in ("commitment", "hedge", "retraction") and c.kind == "value":
                # "**G** is the right choice: <an explanation>": the value read after "choice:"
                # is the letter's statement going on; the letter, given, beats the content.
                replacement = prev._replace(end=max(prev.end, c.end), final=final)
            elif prev.kind == c.kind and prev.letters == c.letters:
                replacement = prev._replace(end=max(prev.end, c.end), final=final)
            elif prev.kind == "commitment" and c.kind == "retraction" and c.letters == prev.letters:
                replacement = c._replace(start=prev.start)
            elif c.end <= prev.end:
                replacement = prev._replace(final=final)
            else:
                replacement = c._replace(start=prev.start, final=final)
            merged[-1] = replacement
            continue
        merged.append(c)
    return merged


_DIGITS: Final = re.compile(r"[-+]?\$?\s*+(?:\d{1,3}(?:,\d{3})++|\d++)(?:\.\d++)?|[-+]?\.\d++")
_TIMES_TEN: Final = re.compile(r"\s*+(?:[x×*]|\\times)\s*+10\s*+\^\s*+\{?\s*+([-+]?\d{1,3})\}?")
_ANY_DIGIT: Final = re.compile(r"\d")
# An exponent on the number: "2^10", "2^{10}" ("7.20^\\circ" is degrees).
_POWER: Final = re.compile(r"\^\s*+\{?\s*+[-+]?\d")
# An operator next to the number makes it one term of an expression, not the value:
# "x^x(1 + \\ln x)" and "ln x + 1" both hold a 1, and neither is worth 1.
_OPERATOR_AFTER: Final = re.compile(r"\s*+(?:[-+*/×·]|\\(?:times|cdot|div|pm)\b)")  # ("^": ``_POWER``)
_OPERATOR_BEFORE: Final = re.compile(r"(?:[-+*/×·^(\[{]|\\(?:times|cdot|div|pm|frac))\s*+$")
_SIGN_AFTER_TERM: Final = re.compile(r"[^\s=:≈~]\s*+$")
# Words that make a number no value given: "not 5", "less than 5", "5 or more", "at least 5".
_NOT_ONE_VALUE: Final = re.compile(
    r"\b(?:not|no|never|or|than|less|more|least|most|over|under|between|except|either|neither|nor|"
    r"squared|cubed|dozen|hundred|thousand|million|billion|trillion|factorial)\b",
    re.IGNORECASE,
)


def _lead_number(text: str) -> Decimal | None:
    """The number a short value starts with, when it is the value's only number; exact."""
    text = text.replace("−", "-")
    match = _DIGITS.search(text, 0, 64)
    if match is None or match.start() > 12:
        return None
    digit = next(i for i in range(match.start(), match.end()) if text[i].isdigit())
    if digit > 0 and text[digit - 1].isalpha():
        return None  # "G1 phase", "CO2": a name with a digit in it, not a number ("Stage 3" is one)
    before, sign = text[: match.start()], match.group()[:2]
    binary = sign[:1] in "+-" and _SIGN_AFTER_TERM.search(before) and (sign[1:].isspace() or not before[-1].isspace())
    if binary or _OPERATOR_BEFORE.search(before):
        return None  # "ln x + 1", "x^x(1 + ...": a term of an expression ("about -5" is a value)
    try:
        value = Decimal(match.group().replace(",", "").replace("$", "").replace(" ", ""))
    except InvalidOperation:
        return None
    rest = text[match.end() : match.end() + 200]
    power = _TIMES_TEN.match(rest)
    if (
        rest[:1].isalpha()
        or rest[:1] == "!"
        or _POWER.match(rest)
        or (power is None and _OPERATOR_AFTER.match(rest))
        or _NOT_ONE_VALUE.search(text, 0, 200)
    ):
        return None  # "2x", "5i", "2^10", "5!", "1 + ln x"; "not 5", "5 or more": no value of 5
    if power is not None:
        value = value.scaleb(int(power.group(1)))
        rest = rest[power.end() :]
    if len(rest) >= 200 or _ANY_DIGIT.search(rest):
        return None  # several numbers: a compound value, not comparable this way
    return value


def _repeats(last: Sequence[Candidate]) -> bool:
    """The last of three values (an unfinished one) is the start of the two before it, which are
    one value repeated: a loop, cut off inside its next turn ("The answer is 12. ... The answer
    is 1" is a revision, not a loop)."""
    *repeated, cut = (" ".join(c.value.split()) for c in last)
    return repeated[0] == repeated[1] and bool(cut) and repeated[1].startswith(cut) and len(cut) < len(repeated[1])


def _numeric_match(value: str, context: Context) -> list[str]:
    """Rule 5 for numbers: the value's one number equals exactly one option's one number
    (units and format may differ: "605 °F" and "605°F", "2.5 x 10^3 J" and "2500 J")."""
    lead = _lead_number(value)
    if lead is None:
        return []
    hits = []
    for letter, text in context.options.items():
        option = _lead_number(text)
        if option is not None and option == lead:
            hits.append(letter)
    return hits
