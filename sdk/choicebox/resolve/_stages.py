"""The stages of the ``conclusion`` policy: from the statements that name letters, in text order,
to the one letter a response finally commits to, or to why it commits to none.

Each stage is a small function of the policy (its vocabularies) and the ``Settling`` in hand (the
statements still standing, what was done with the others). It either decides (returns the
verdict's extraction and the statement it rests on) or lets the next stage go on (returns
``None``). A mode names its stages, in order, under ``resolve: stages:``; the default is
``DEFAULT_STAGES``. When every stage lets it go on, the concluding statement is the answer. The
reading rules each stage carries out are in ``docs/reading-rules.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, Protocol, TypeAlias

from choicebox.find import Candidate, Context, Extraction
from choicebox.find._payload import BRACKETED_LETTER
from choicebox.find._vocab import sentence_opening

from ._policies import Outcome, Ruling, _extraction

__all__ = ["DEFAULT_STAGES", "GAP_WORD", "STAGES", "STATED", "Fates", "Settling", "Vocabulary", "settle"]

STATED: Final = ("commitment", "hedge")
# A word of a gap between statements (two letters or more: "B" alone is no word).
# A word of a gap between statements, in any script: a run of CJK text, which has no spaces, is
# one word per stretch between its punctuation ("答え：E\n\n日本国憲法は…\n\n答え：B" is reasoning,
# not a run of two bare answers).
GAP_WORD: Final = re.compile(r"[A-Za-z]{2,}|[^\x00-\x7f\W\d_]{2,}")  # (ASCII words first: faster)
# What opens a first part: "part (i)", "Part 1", "(a)", "(i)", "1)".
_FIRST_PART: Final = re.compile(r"\bpart\b|\((?:a|i|1)\)|(?:^|\s)(?:a|1)\)", re.IGNORECASE)
Decision: TypeAlias = tuple[Extraction | None, Candidate | None]


class Vocabulary(Protocol):
    """What the stages read of the policy that runs them (``_conclusion.Conclusion``): its limits
    and its compiled vocabulary. A protocol, so that the stages do not import the policy."""

    @property
    def withdrawal_reach(self) -> int: ...
    @property
    def cut_off_words(self) -> int: ...
    @property
    def _withdrawal(self) -> re.Pattern[str] | None: ...
    @property
    def _explicit_withdrawal(self) -> re.Pattern[str] | None: ...
    @property
    def _withdrawal_condition(self) -> re.Pattern[str] | None: ...
    @property
    def _correction(self) -> re.Pattern[str]: ...
    @property
    def _revision(self) -> re.Pattern[str]: ...
    @property
    def _later_part(self) -> re.Pattern[str]: ...
    @property
    def _any_part(self) -> re.Pattern[str]: ...
    def _bare(self, text: str, a: int, b: int) -> bool: ...
    def _opening(self, text: str, lo: int, position: int) -> bool: ...
    def _cut_off(self, text: str) -> bool: ...


Stage: TypeAlias = Callable[[Vocabulary, "Settling"], Decision | None]
STAGES: dict[str, Stage] = {}


class Fates:
    """What the resolution did with each candidate, recorded as it goes."""

    __slots__ = ("notes", "stage")

    def __init__(self) -> None:
        self.notes: dict[int, tuple[Outcome, str]] = {}
        self.stage = ""  # the stage marking, named in each note it writes

    def mark(self, candidates: Sequence[Candidate], outcome: Outcome, note: str = "") -> None:
        if self.stage:
            note = f"{note} (stage {self.stage})" if note else f"stage {self.stage}"
        for candidate in candidates:
            self.notes.setdefault(id(candidate), (outcome, note))

    def rulings(
        self, candidates: Sequence[Candidate], chosen: Candidate | None
    ) -> tuple[Ruling, ...]:
        out = []
        for candidate in candidates:
            if candidate is chosen:
                out.append(Ruling(candidate, "chosen"))
                continue
            outcome, note = self.notes.get(id(candidate), ("ignored", ""))
            out.append(Ruling(candidate, outcome, note))
        return tuple(out)


def _stage(name: str) -> Callable[[Stage], Stage]:
    def register(function: Stage) -> Stage:
        STAGES[name] = function
        return function

    return register


class Settling:
    """What the stages work on: the statements still standing (``live``), in text order, and the
    record of what became of the others (``fates``)."""

    __slots__ = ("_run_start", "context", "fates", "hi", "how", "live", "lo", "text")

    def __init__(
        self, context: Context, text: str, live: list[Candidate], window: tuple[int, int], fates: Fates
    ) -> None:
        self.context = context
        self.text = text
        self.live = live
        self.lo, self.hi = window
        self.fates = fates
        self.how = ""  # how the concluding statement was reached, when a stage says
        self._run_start: int | None = None

    @property
    def last(self) -> Candidate:
        return self.live[-1]

    def run_start(self, policy: Vocabulary) -> int:
        """Where the final run starts in ``live``: the last statement and those joined to it by
        nothing but filler words."""
        if self._run_start is None:
            index = len(self.live) - 1
            while index > 0 and policy._bare(self.text, self.live[index - 1].end, self.live[index].start):
                index -= 1
            self._run_start = index
        return self._run_start

    def run(self, policy: Vocabulary) -> list[Candidate]:
        return self.live[self.run_start(policy) :]


def _failure(kind: str, detail: str, candidate: Candidate | None = None) -> Extraction:
    position = candidate.start if candidate is not None else 0
    return Extraction(None, failure=kind, detail=detail, position=position)  # type: ignore[arg-type]


@_stage("final_marker")
def final_marker(policy: Vocabulary, s: Settling) -> Decision | None:
    """An explicit final marker ("Final answer:") wins over everything before it (rule 1), except
    the final answers joined to it: a run of final markers ("Final answer: A\nFinal answer: B")
    is a run like any other, for the ``run`` stage to read (rule 2)."""
    finals = [i for i, c in enumerate(s.live) if c.final and c.kind in STATED]
    if finals:
        start = finals[-1]
        while start > 0 and s.live[start - 1].final and policy._bare(s.text, s.live[start - 1].end, s.live[start].start):
            start -= 1
        s.fates.mark(s.live[:start], "superseded", "before the final answer")
        s.live = s.live[start:]
    return None


@_stage("correction")
def correction(policy: Vocabulary, s: Settling) -> Decision | None:
    """A correction ("(D) is incorrect") withdraws the earlier commitments to its letter (rule 1);
    with every commitment withdrawn, none is left (rule 8). A withdrawal in the first person of
    the letter last committed to ("So I withdraw (B).") withdraws every commitment before it: the
    response then commits to nothing it said before, and no earlier letter is fallen back on."""
    live: list[Candidate] = []
    for candidate in s.live:
        if candidate.kind != "retraction":
            live.append(candidate)
            continue
        committed = [x for x in live if x.kind == "commitment"] if candidate.origin == "withdrawal" else []
        if committed and committed[-1].letters == candidate.letters:
            s.fates.mark(committed, "retracted", "withdrawn in the first person")
            s.fates.mark((candidate,), "ignored", "a withdrawal")
            live = [x for x in live if x.kind != "commitment"]
            continue
        withdrawn = [x for x in live if x.kind == "commitment" and x.letters == candidate.letters]
        s.fates.mark(withdrawn, "retracted", "withdrawn by a later correction")
        s.fates.mark((candidate,), "ignored", "a correction")
        live = [x for x in live if not (x.kind == "commitment" and x.letters == candidate.letters)]
    s.live = live
    if not live:
        return _failure("no_answer", "every commitment is withdrawn"), None
    return None


# A word right after a withdrawal's closing "no": the "no" is a determiner ("no need", "no doubt").
_WORD_GOES_ON: Final = re.compile(r"[ \t]++[A-Za-z]")
# An option named in the text between a statement and a withdrawal: the withdrawal is then about
# that option ("The answer is (B). Option A says x; no, that is wrong."), not the statement.
_NAMES_AN_OPTION: Final = re.compile(r"\(([A-Z])\)|\b(?:option|choice)\s*+\(?([A-Z])\b|\*\*([A-Z])\*\*", re.IGNORECASE)


# What may stand right before a withdrawal: "..., so I'll retract my answer".
_CONJUNCTION_ENDS: Final = re.compile(r"(?<![\w'’])(?:so|and|thus|therefore|hence|but)$", re.IGNORECASE)
# Withdrawals that may go on with an object, and then withdraw nothing: "no need", "never mind the units".
_TAKES_AN_OBJECT: Final = ("no", "never mind")
# Where a withdrawal's clause ends: "Actually, no — I assumed x" supposes nothing.
_CLAUSE_END: Final = re.compile(r"[.!?\n,;:—–]")
_SENTENCE_END: Final = re.compile(r"[.!?\n]")
# A conclusion drawn from a condition: "I could be wrong, so I withdraw my answer".
_THEREFORE: Final = re.compile(r"\b(?:so|thus|therefore|hence)\b", re.IGNORECASE)
# Words of a condition's that suppose nothing: "whether or not", "if anything", "even if".
_NO_CONDITION: Final = re.compile(r"(?:whether[ \t]++or[ \t]++not|if[ \t]++anything)\b", re.IGNORECASE)
_EVEN: Final = re.compile(r"\beven[ \t]++$", re.IGNORECASE)
_ANOTHER_QUESTION: Final = re.compile(r"\b(?:question|problem|item|part)\b", re.IGNORECASE)


def _withdrawals(policy: Vocabulary, s: Settling) -> list[re.Match[str]]:
    """The withdrawals after the concluding statement, in text order: within reach, or, those that
    name the answer, anywhere after it."""
    last, text = s.last, s.text
    near = policy._withdrawal
    far = policy._explicit_withdrawal
    found = list(near.finditer(text, last.end, min(s.hi, last.end + policy.withdrawal_reach))) if near else []
    if far is not None:
        found += far.finditer(text, last.end, s.hi)
    return sorted(found, key=lambda match: match.start())


def _clause_end(text: str, match: re.Match[str]) -> int:
    """Where the clause of the withdrawal ``match`` ends (looked for within 300 characters)."""
    end = _CLAUSE_END.search(text, match.end(), match.end() + 300)
    return end.start() if end else min(len(text), match.end() + 300)


def _supposed(policy: Vocabulary, text: str, match: re.Match[str], stop: int) -> bool:
    """A condition stands before the withdrawal in its sentence (after the last "so" there), or
    after it in its clause (up to ``stop``): "If I'm wrong, I withdraw my answer", "I take that
    back if the data are wrong"; not "I could be wrong, so I withdraw my answer", "Whether or not
    ..., I withdraw", "If anything, ...", "Even if ...", which suppose nothing of the withdrawal."""
    condition = policy._withdrawal_condition
    if condition is None:
        return False
    start = sentence_opening(text, match.start())
    for therefore in _THEREFORE.finditer(text, start, match.start()):
        start = therefore.end()
    return any(
        not _NO_CONDITION.match(text, found.start()) and not _EVEN.search(text, max(0, found.start() - 8), found.start())
        for found in condition.finditer(text, start, stop)
    )


def _about_the_answer(s: Settling, match: re.Match[str], stop: int) -> bool:
    """The withdrawal is of this answer: not asked ("Should I withdraw my answer?"), and its
    clause (up to ``stop``) names no other letter nor another question ("I retract my answer of
    (B)" after (C), "I withdraw my answer to the previous question")."""
    text = s.text
    end = _SENTENCE_END.search(text, match.end(), match.end() + 300)
    if end is not None and end.group() == "?":
        return False
    named = {letter.upper() for groups in _NAMES_AN_OPTION.findall(text, match.end(), stop) for letter in groups if letter}
    return not (named - set(s.last.letters)) and _ANOTHER_QUESTION.search(text, match.end(), stop) is None


@_stage("withdrawal")
def withdrawal(policy: Vocabulary, s: Settling) -> Decision | None:
    """A concluding statement the response then withdraws without naming another option ("The
    answer is (A). Actually, no, that is not right, and I am not sure which one is.") leaves it
    committed to none: a response that ends committed to nothing commits to nothing (rule 8). The
    letter withdrawn is not a guess to fall back on, nor is any earlier one."""
    last, text = s.last, s.text
    for match in _withdrawals(policy, s):
        # It opens its clause: right after the statement, or after a sign, a line break or a
        # conjunction ("(B). Actually, no", "\\boxed{B} Scratch that", "..., so I'll retract my
        # answer").
        gap = text[last.end : match.start()]
        before = gap.rstrip(" \t*_")
        if before and before[-1].isalnum() and not _CONJUNCTION_ENDS.search(before, max(0, len(before) - 12)):
            continue
        if match.group().casefold().endswith(_TAKES_AN_OBJECT) and _WORD_GOES_ON.match(text, match.end()):
            continue  # "Wait, no need to check", "Never mind the units": no withdrawal of its own
        stop = _clause_end(text, match)
        if _supposed(policy, text, match, stop) or not _about_the_answer(s, match, stop):
            continue  # "If I'm wrong, I withdraw my answer", "... my answer to the previous question"
        if before.endswith("?"):
            return None  # "Could (B) be wrong? Actually, no.": it answers a question, withdraws nothing
        if _NAMES_AN_OPTION.search(gap):
            return None
        break
    else:
        return None
    s.fates.mark(s.live, "retracted", "withdrawn by the response, no other option named")
    return _failure("no_answer", f"the concluding answer is withdrawn: {match.group().strip(' .,;:!?*_')!r}", last), None


@_stage("no_option")
def no_option(policy: Vocabulary, s: Settling) -> Decision | None:
    """A response that concludes that no option is right commits to none (rule 8)."""
    if s.last.kind == "no_option":
        s.fates.mark(s.live[:-1], "superseded")
        return _failure("no_answer", "the response concludes that no option is right"), s.last
    return None


@_stage("hedge")
def hedge(policy: Vocabulary, s: Settling) -> Decision | None:
    """A concluding hedge between letters ("A or B") is no commitment (rule 4)."""
    last = s.last
    if last.kind == "hedge":
        s.fates.mark(s.live[:-1], "superseded")
        listed = ", ".join(last.letters)
        return _failure("ambiguous", f"{last.how}: a hedge between {listed}", last), last
    return None


@_stage("run")
def run(policy: Vocabulary, s: Settling) -> Decision | None:
    """The final run (the last statement and those joined to it by filler words) must agree: a
    run of different letters, a hedge beside another letter or "no option" beside a letter
    commits to none (rule 2); the same letter repeated is that letter."""
    statements = s.run(policy)
    letter = s.last.letters[0] if s.last.letters else None
    singles = {c.letters[0] for c in statements if c.kind == "commitment"}
    if len(singles) > 1:
        s.fates.mark(statements, "conflicting", "a run of bare answers with different letters")
        s.fates.mark(s.live[: s.run_start(policy)], "superseded")
        listed = ", ".join(sorted(singles))
        return _failure("conflicting", f"a run of answers with different letters: {listed}"), None
    for candidate in statements:
        if candidate.kind == "hedge" and letter not in candidate.letters:
            s.fates.mark(statements, "conflicting", "a hedge next to another letter")
            return _failure("conflicting", "a hedge next to an answer outside it"), None
        if candidate.kind == "no_option":
            s.fates.mark(statements, "conflicting")
            return _failure("conflicting", "'no option' next to a letter"), None
    return None


# How many options called the answer one after the other make a review of them, not a revision.
_IN_TURN: Final = 3


@_stage("in_turn")
def in_turn(policy: Vocabulary, s: Settling) -> Decision | None:
    """Options restated one a line, in their order, each called the answer ("A. Tesla is the
    correct answer. <why>\nB. Weber is the correct answer. <why>\nC. ..."), three or more, are a
    review of the options, not revisions: no later one concludes the earlier (rules 2 and 6). A
    correction cue between two of them ("wait", "reconsider") makes them revisions again; answers
    that do not open their line with their option ("Rough estimate: (B). Refining: (C).
    Exactly: (D).") are refinements, for ``revision``."""
    last = s.last
    if last.kind != "commitment" or last.final:
        return None
    options = s.context.options
    order = list(options)
    tail: list[Candidate] = []
    for candidate in reversed(s.live):
        if candidate.kind != "commitment":
            continue
        letter = candidate.letters[0]
        if letter not in options or not _restates(s.text, candidate.start, letter, options[letter]):
            break
        if tail and order.index(letter) != order.index(tail[-1].letters[0]) - 1:
            break  # not the option before the one after it
        if _ASKED.match(s.text, candidate.end):
            return None  # "A. Paris is the correct answer? ...": options checked, not called the answer
        if tail and policy._correction.search(s.text, candidate.end, tail[-1].start):
            break
        tail.append(candidate)
    if len(tail) < _IN_TURN:
        return None
    tail.reverse()
    s.fates.mark(tail, "conflicting", "options called the answer one after another")
    listed = ", ".join(c.letters[0] for c in tail)
    return _failure("conflicting", f"options called the answer one after another ({listed}), none concluded"), None


# A statement whose sentence ends in a question mark: it asks ("... is the correct answer?").
_ASKED: Final = re.compile(r"[^.!?\n]*+\?")
# A line's opening as a restated option: markup, the letter, its mark ("A.", "(A)", "**A)**").
_OPTION_OPENING: Final = re.compile(r"[ \t>#*_-]*+\(?([A-Z])\)?[.):]?[*_]*+[ \t]*+")


def _restates(text: str, position: int, letter: str, option: str) -> bool:
    """The line that holds ``position`` opens with ``letter`` and its option's own text."""
    start = text.rfind("\n", 0, position) + 1
    opening = _OPTION_OPENING.match(text, start)
    if opening is None or opening[1] != letter:
        return False
    own = option.strip().casefold()
    return bool(own) and text[opening.end() : opening.end() + len(own)].casefold() == own


def _restated_options(s: Settling, start: int) -> bool:
    """The lettered lines after ``start`` restate every option, each its letter and own text
    ("Here are the options again:\n(A) Concrete operational stage\n(B) ..."): a copy of the
    question, not a review cut off (rule 6), however it ends. Not when the statement's own line
    opens the listing ("Answer: (A) option A\n(B) option B\n..."): that lists the options, and
    commits to none of them."""
    text, options = s.text, s.context.options
    restated: set[str] = set()
    at = text.find("\n", start, s.hi)
    while at != -1:
        line = at + 1
        opening = _OPTION_OPENING.match(text, line)
        end = text.find("\n", line, s.hi)
        end = s.hi if end == -1 else end
        if opening is not None and opening[1] in options and text[opening.end() - 1 : opening.end()] in ".): \t*_":
            rest = text[opening.end() : end].strip(" \t.;,*_").casefold()
            if rest != options[opening[1]].strip().casefold():
                return False
            restated.add(opening[1])
        at = -1 if end >= s.hi else end
    return len(restated) == len(options)


# How far before a part's answer its part marker may stand: "For part (b), the answer is A".
_PART_REACH: Final = 40
# A part's marker: "part (b)", "Part 2", "(ii)", "b)".
_PART_MARK: Final = re.compile(r"\bpart\s*+\(?\w{1,4}\)?|\((?:[a-z]|[ivx]{1,4}|\d{1,2})\)|\b[a-h]\)", re.IGNORECASE)


def _part_mark(text: str, candidate: Candidate) -> str:
    """The marker of the part a part's answer answers, from its cue or the words before it
    (``""`` when none is found): "(a)" of "the answer to part (a) is (A)"."""
    before = text[max(0, candidate.start - _PART_REACH) : candidate.start] + " " + candidate.cue
    marks = _PART_MARK.findall(before)
    return marks[-1].casefold() if marks else ""


@_stage("part_scoped")
def part_scoped(policy: Vocabulary, s: Settling) -> Decision | None:
    """A concluding answer scoped to one part of the question ("the answer to (a) is C") answers
    the question only in part (rule 8)."""
    statements = s.run(policy)
    commitments = [c for c in statements if c.kind == "commitment"]
    if commitments and all(c.part for c in commitments):
        parts = [c for c in s.live if c.kind == "commitment" and c.part]
        letters = list(dict.fromkeys(c.letters[0] for c in parts))
        marks = {_part_mark(s.text, c) for c in parts}
        later = {m.casefold() for m in _PART_MARK.findall(s.text, parts[-1].end, s.hi)} - marks
        if len(letters) == 1 and len(marks) > 1 and "" not in marks and not later:
            # "the answer to part (a) is (A) ... The answer to part (b) is (A)": every part
            # answered, by one option (the same letter repeated is that letter, rule 2); not
            # when another part's marker follows ("For part (c)," cut off: rule 8).
            s.how = "the same answer for each part"
            return None
        s.fates.mark(statements, "conflicting", "scoped to one part")
        if len(letters) > 1:
            # "For part (a) the answer is E, for part (b) the answer is D": one letter per part
            # and no overall answer (rule 2).
            s.fates.mark(parts, "conflicting", "one answer per part")
            return _failure("conflicting", f"one answer per part ({', '.join(letters)}), no overall answer"), None
        return _failure("no_answer", "an answer scoped to one part only"), None
    return None


@_stage("revision")
def revision(policy: Vocabulary, s: Settling) -> Decision | None:
    """An earlier different commitment, with reasoning between, is revised by the concluding one
    (rule 1), unless the two answer different parts of a multi-part question (rule 2); a hedge in
    the run is narrowed by the concluding letter."""
    last, text, context = s.last, s.text, s.context
    if not last.letters:
        return None  # a concluding statement of no option revises nothing (stage no_option)
    statements = s.run(policy)
    index = s.run_start(policy)
    letter = last.letters[0]
    s.fates.mark([c for c in statements[:-1] if c.kind == "hedge"], "superseded", "narrowed by the concluding answer")
    s.fates.mark(statements[:-1], "agrees")
    earlier = [
        c for c in s.live[:index]
        if c.kind == "commitment" and c.letters[0] != letter and not c.part and c.letters[0] in context.options
    ]  # fmt: skip
    if earlier and not last.final:
        previous = earlier[-1]
        opening = previous is s.live[0] and policy._opening(text, s.lo, previous.start)
        between = text[previous.end : statements[0].start]
        # A marked later part ("For part (ii)") makes two answers one per part; an opening
        # answer too, when the response opens with its part ("For part (i), the answer is C.").
        if (not opening or _FIRST_PART.search(text, s.lo, previous.start)) and policy._later_part.search(between):
            s.fates.mark((previous, last), "conflicting", "one answer per marked part")
            detail = f"one answer per part ({previous.letters[0]} ... {letter}), no overall answer"
            return _failure("conflicting", detail), None
        if (
            not opening
            and context.features.multipart()
            and not policy._any_part.search(text, s.lo, s.hi)
            and not policy._revision.search(between)
        ):
            s.fates.mark((previous, last), "conflicting", "one answer per part of the question")
            detail = f"one answer per part of a multi-part question ({previous.letters[0]} ... {letter})"
            return _failure("conflicting", detail), None
        if _supposes(policy, text, previous.start) and _supposes(policy, text, statements[0].start):
            # "If the question means integer division, the answer is C.\n If it means floating-
            # point division, the answer is E.": one answer per case, none chosen (rule 4)
            s.fates.mark((previous, last), "conflicting", "one answer per supposed case")
            detail = f"one answer per supposed case ({previous.letters[0]} ... {letter}), none chosen"
            return _failure("conflicting", detail), None
        s.how = "revised opening answer" if opening else "revised answer"
    s.fates.mark(s.live[:index], "superseded", "revised by the concluding answer")
    return None


def _supposes(policy: Vocabulary, text: str, start: int) -> bool:
    """The sentence of the statement at ``start`` opens with one of the policy's withdrawal
    conditions ("If ...", "Assuming ..."), before the statement."""
    condition = policy._withdrawal_condition
    if condition is None:
        return False
    opening = sentence_opening(text, start)
    found = condition.search(text, opening, start)
    return found is not None and not text[opening : found.start()].strip(" \t*_-•>#")


# An option named in a review: "Option B is incorrect because ...".
_NAMED_OPTION: Final = re.compile(r"\b(?i:option|choice)[ \t]++\(?([A-Z])\b")


@_stage("cut_off")
def cut_off(policy: Vocabulary, s: Settling) -> Decision | None:
    """A response cut off while answering the other parts of a multi-part question, or while
    reviewing the options after an evaluation, commits to none (rule 8)."""
    last, text = s.last, s.text
    if last.final or not policy._cut_off(text[s.lo : s.hi]):
        return None
    after = text[last.end : s.hi]
    if (
        s.context.features.multipart()
        and len(GAP_WORD.findall(after)) > policy.cut_off_words
        and not policy._bare(text, last.end, s.hi)
    ):
        s.fates.mark((last,), "decides", "cut off while answering the other parts")
        return _failure("no_answer", "answers one part of a multi-part question, then is cut off"), None
    named = {m.group(1) for m in BRACKETED_LETTER.finditer(after)} | {m.group(1) for m in _NAMED_OPTION.finditer(after)}
    if last.origin == "evaluation" and named - set(last.letters) and not _restated_options(s, last.end):
        s.fates.mark((last,), "decides", "cut off while reviewing the options")
        return _failure("no_answer", "cut off while reviewing the options"), None
    return None


DEFAULT_STAGES: Final = (
    "final_marker",
    "correction",
    "withdrawal",
    "no_option",
    "hedge",
    "run",
    "part_scoped",
    "in_turn",
    "revision",
    "cut_off",
)


def settle(
    policy: Vocabulary, s: Settling, stages: Sequence[tuple[str, Stage]], considered: list[Candidate]
) -> tuple[Extraction | None, Candidate | None, list[Candidate]]:
    """Run the stages in order; when none decides, the concluding statement is the answer. What
    each stage does to a statement is noted with the stage's name (``choicebox explain``)."""
    try:
        for name, stage in stages:
            s.fates.stage = name
            decided = stage(policy, s)
            if decided is not None:
                return decided[0], decided[1], considered
    finally:
        s.fates.stage = ""
    last = s.last
    if last.kind != "commitment" or last.letters[0] not in s.context.options:
        s.fates.mark((last,), "not_an_option" if last.kind == "commitment" else "decides")
        return _extraction(last, s.context), last, considered
    how = s.how or ("final answer" if last.final else "concluding answer")
    chosen = last._replace(how=f"{last.how} ({how})")
    s.fates.notes[id(chosen)] = ("chosen", "")
    considered = [chosen if c is last else c for c in considered]
    return _extraction(chosen, s.context), chosen, considered
