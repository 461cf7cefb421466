"""The row checks. Each check is a named function; its docstring is its documentation (what it
finds, a bad and a good example), printed by ``choicebox audit --list-checks``."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

import attrs

from choicebox._errors import describe_value
from choicebox._grading import template_regex_letter
from choicebox._prompt_options import option_blocks
from choicebox._regex import RegexTimeout, compile_pattern

from ._compare import (
    bare_words,
    case_sensitive_symbols,
    comparison_key,
    is_rounding_question,
    prose_case_difference,
    text_form,
)
from ._markup import markup_residue
from ._prompt import _quote, listed_loosely, prompt_option_problems
from ._question import question_problems
from ._tidy import column_layout, untidy_problems
from ._view import _Option, _View

# --- the checks ----------------------------------------------------------------------------------

Problems: TypeAlias = Iterator[tuple[str, str]]  # (field, message)
CheckFn: TypeAlias = Callable[[_View, Mapping[str, Any]], Problems]


@attrs.frozen
class CheckInfo:
    """A built-in check: its id, whether it reads one row or the whole file, and its documentation."""

    id: str
    scope: Literal["row", "file"]
    doc: str

    @property
    def summary(self) -> str:
        return self.doc.split("\n\n", 1)[0].replace("\n", " ")


_CHECKS: dict[str, CheckInfo] = {}
_ROW_CHECKS: dict[str, CheckFn] = {}


def _check(check_id: str, scope: Literal["row", "file"] = "row") -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        _CHECKS[check_id] = CheckInfo(check_id, scope, inspect.cleandoc(fn.__doc__ or ""))
        if scope == "row":
            _ROW_CHECKS[check_id] = fn
        return fn

    return register


def audit_checks() -> tuple[CheckInfo, ...]:
    """Every built-in check, in the order they run."""
    return tuple(_CHECKS.values())


@_check("unreadable_row")
def _unreadable_row(view: _View, params: Mapping[str, Any]) -> Problems:
    """A line that is not JSON, not a JSON object, or a row that does not decode as a sample for
    a reason no other check names (a missing field, a value of the wrong type).

    Bad:  {"question": "Which gas do plants absorb?", "options": "A: CO2, B: O2", ...}
    Good: {"question": "Which gas do plants absorb?", "options": [{"A": "CO2"}, {"B": "O2"}], ...}
    """
    return iter(())  # found while reading and decoding the row, see audit_row


@_check("not_multiple_choice")
def _not_multiple_choice(view: _View, params: Mapping[str, Any]) -> Problems:
    """A row that is not a multiple-choice row at all: no `options` of lettered choices, no
    `choices`, and no lettered options in its prompt (a free-text, judge or format task). It gets
    this one note and no other check; nothing in it is a defect of a multiple-choice row.

    Bad:  {"responses_create_params": {"input": "Translate 'cat' into French."}, "expected_answer": "chat"}
    Good: {"responses_create_params": {"input": "Which is a mammal?\\nA: Shark\\nB: Dolphin"}, "expected_answer": "B"}
    """
    return iter(())  # decided from the raw row, see _kinds.multiple_choice_row


@_check("empty_choice")
def _empty_choice(view: _View, params: Mapping[str, Any]) -> Problems:
    """A choice whose text is empty or only whitespace. A `null` option in a Gym row is padding,
    not a choice, and is not reported.

    Bad:  "options": [{"A": "Oxygen"}, {"B": "  "}, {"C": "Nitrogen"}]
    Good: "options": [{"A": "Oxygen"}, {"B": "Argon"}, {"C": "Nitrogen"}]
    """
    for option in view.options:
        if isinstance(option.text, str) and not option.text.strip():
            name = f"choice {option.letter}" if option.letter else "a choice"
            yield option.field, f"{name} has no text: give it its text or remove it from the row"


@_check("duplicate_choice")
def _duplicate_choice(view: _View, params: Mapping[str, Any]) -> Problems:
    """Two choices that say the same thing, or one letter used twice. Texts compare in Unicode
    NFKC with whitespace collapsed (and without punctuation with `punctuation`); case counts only
    between ordinary words (`Codes`/`codes`), never in a row that writes case-sensitive symbols
    (`Bb`/`BB`, `cTL`/`cTl`, `m`/`M`). With `numeric`, well-formed numbers compare by exact value
    (`3.2` = `3.20`, `3200` = `3,200`; `1` is not `1.0`, `0,1` and `0400` are no numbers), except
    in a question about rounding. Options read from a prompt compare as whole blocks.

    Bad:  "options": [{"A": "Mercury"}, {"B": "Venus"}, {"C": "mercury "}]
    Good: "options": [{"A": "Mercury"}, {"B": "Venus"}, {"C": "Mars"}]
    """
    for field, letter in view.duplicate_letters:
        yield (
            field,
            f"the option letter {describe_value(letter)} appears twice: give each option its own letter",
        )
    punctuation, numeric = bool(params["punctuation"]), bool(params["numeric"])
    exact = is_rounding_question(view.question)
    texts = _compared_texts(view)
    written = [t for t in texts if t is not None]
    if view.question is not None:
        written.append(view.question)
    symbols = case_sensitive_symbols(written)
    seen: dict[str, list[tuple[_Option, str]]] = {}
    for option, text in zip(view.options, texts, strict=True):
        if text is None or not text.strip():
            continue
        key = comparison_key(text, punctuation=punctuation, numeric=numeric, exact_numbers=exact)
        form = text_form(text, punctuation=punctuation)
        earlier = seen.setdefault(key, [])
        same = next((o for o, f in earlier if f == form), None)
        if same is None and key.startswith("t:") and not symbols:
            same = next((o for o, f in earlier if prose_case_difference(f, form)), None)
        if same is None and key.startswith("n:") and earlier:
            same = earlier[0][0]
        earlier.append((option, form))
        if same is not None:
            how = (
                " (the same number)"
                if key.startswith("n:") and form != text_form(same.text)
                else ""
            )
            yield (
                option.field,
                (
                    f"{_name(option)} {_quote(option.text)} repeats {_name(same)} "
                    f"{_quote(same.text)}{how}: replace one of them with a distinct choice"
                ),
            )


def _compared_texts(view: _View) -> list[str | None]:
    """Each option's text as compared (None: no text): an option read from a prompt is its whole
    block, so two patches that share their first line are not taken for one."""
    blocks: dict[str, str] = {}
    if view.options_from_prompt and view.prompt:
        blocks = option_blocks(view.prompt)
    texts: list[str | None] = []
    for option in view.options:
        text = option.text if isinstance(option.text, str) else None
        if text is not None and option.letter is not None:
            text = blocks.get(option.letter, text)
        texts.append(text)
    return texts


def _name(option: _Option) -> str:
    return option.letter or option.field


# A letter label at the start of a choice: (A), [A], A), A], A: ; or A. followed by a space.
_LABEL: Final = re.compile(
    r"\s*(?:\((?P<paren>[A-Za-z])\)|\[(?P<bracket>[A-Za-z])\]|(?P<plain>[A-Za-z])[):\]])\s*(?=\S)"
    r"|\s*(?P<dot>[A-Za-z])\.\s+(?=\S)"
)


@attrs.frozen
class ChoiceLabels:
    """How the choices of a row are labelled: ``own`` maps the position of each choice that
    starts with a copy of its own letter label to the label's length; ``stale`` maps the position
    of each choice carrying the label of an earlier lettering to that label's letter."""

    own: Mapping[int, int] = attrs.field(factory=dict)
    stale: Mapping[int, str] = attrs.field(factory=dict)


def choice_labels(
    options: Sequence[tuple[str | None, Any]], question: str | None = None
) -> ChoiceLabels:
    """The letter labels the choices carry, when they are labels.

    A leading ``(a)`` is a label only when at least two choices start with one, their letters
    are pairwise different, and the question does not use them as part markers: ``(a) 3.2 gal
    (b) 9.5 L`` on every choice, or a question with parts ``(a)``, ``(b)``, names parts, not
    choices. ``A. Lincoln`` is a name unless another choice also carries its own label. When some
    label names another choice's letter (``B: (G) Stayed the same``), the list was lettered again
    after the labels were written: those labels are reported as stale (at least half the choices
    labelled, letters among the option letters), and none counts as a copy to strip.
    """
    found: dict[int, tuple[str, int, bool]] = {}
    for i, (letter, text) in enumerate(options):
        if letter is None or not isinstance(text, str):
            continue
        match = _LABEL.match(text)
        if match is not None:
            label = match["paren"] or match["bracket"] or match["plain"] or match["dot"]
            found[i] = (label, match.end(), match["dot"] is not None)
    letters = [label.casefold() for label, _, _ in found.values()]
    if len(found) < 2 or len(set(letters)) != len(letters):
        return ChoiceLabels()
    if question is not None and any(_part_marker(letter).search(question) for letter in letters):
        return ChoiceLabels()
    own = {
        i: end
        for i, (label, end, _) in found.items()
        if label.casefold() == str(options[i][0]).casefold()
    }
    own = {i: end for i, end in own.items() if not found[i][2] or len(own) > 1}
    plain = {i: label for i, (label, _, dot) in found.items() if not dot}
    option_letters = {str(letter).casefold() for letter, _ in options if letter is not None}
    others = {i for i, label in plain.items() if i not in own}
    if not others:
        return ChoiceLabels(own=own)
    if len(plain) * 2 >= len(options) and all(
        label.casefold() in option_letters for label in plain.values()
    ):
        return ChoiceLabels(stale=plain)
    return ChoiceLabels()


def _part_marker(letter: str) -> re.Pattern[str]:
    pattern = _PART_MARKERS.get(letter)
    if pattern is None:
        pattern = re.compile(rf"(?<![\w(\[])[(\[]?{re.escape(letter)}[)\]]", re.IGNORECASE)
        _PART_MARKERS[letter] = pattern
    return pattern


_PART_MARKERS: dict[str, re.Pattern[str]] = {}


@_check("choice_repeats_label")
def _choice_repeats_label(view: _View, params: Mapping[str, Any]) -> Problems:
    """A choice whose text starts with its own letter label, so the prompt shows `A: A) Paris`;
    `choicebox fix` strips it. Only labels count: markers such as `(a)` that several choices
    share, or that the question uses for its parts, are part of the text, and `A. Lincoln` alone
    is a name. Labels of an earlier lettering (`B: (G) Stayed the same`) are reported as stale
    and left for a person to fix.

    Bad:  "options": [{"A": "A) Paris"}, {"B": "B) Lyon"}]
    Good: "options": [{"A": "Paris"}, {"B": "Lyon"}]
    """
    labels = choice_labels([(o.letter, o.text) for o in view.options], view.question)
    for i, end in labels.own.items():
        option = view.options[i]
        label = option.text[:end].strip()
        yield (
            option.field,
            (
                f"choice {option.letter} starts with its own label {label!r}: "
                f"the text should be {_quote(option.text[end:])}"
            ),
        )
    for i, letter in labels.stale.items():
        option = view.options[i]
        yield (
            option.field,
            (
                f"choice {option.letter} {_quote(option.text)} carries the label ({letter}) of an "
                "earlier lettering: the choices were re-lettered, so check which text each "
                "label meant and remove the labels"
            ),
        )


@_check("gold_not_in_choices")
def _gold_not_in_choices(view: _View, params: Mapping[str, Any]) -> Problems:
    """The gold answer names no choice: a letter that is not an option letter, an index outside
    the choices, or no gold answer at all.

    Bad:  "options": [{"A": "3"}, {"B": "4"}], "expected_answer": "C"
    Good: "options": [{"A": "3"}, {"B": "4"}], "expected_answer": "B"
    """
    field = view.gold_field
    gold = view.gold
    if not view.options_readable:
        return  # unreadable_row reports the options
    if not view.gold_present or gold is None:
        yield field, f"the row has no {field}: add the gold answer"
        return
    if view.family == "mcqa":
        letters = [o.letter for o in view.options if o.letter is not None]
        if not isinstance(gold, str):
            yield (
                field,
                f"{field} is {describe_value(gold)}, not an option letter ({', '.join(letters)})",
            )
        elif gold not in letters:
            hint = " (letters are case-sensitive)" if gold.upper() in letters else ""
            yield (
                field,
                (
                    f"{field} {describe_value(gold)} is not one of the option letters "
                    f"{', '.join(letters) or '(none)'}{hint}: point it at the correct option"
                ),
            )
        return
    n = len(view.options)
    if not isinstance(gold, int) or isinstance(gold, bool):
        yield (
            field,
            f"answer_index is {describe_value(gold)}, not a whole number between 0 and {n - 1}",
        )
    elif not 0 <= gold < n:
        yield (
            field,
            (
                f"answer_index {gold} is outside the {n} choices (0..{n - 1}): "
                "point it at the correct choice"
            ),
        )


@_check("truncated_question")
def _truncated_question(view: _View, params: Mapping[str, Any]) -> Problems:
    """A question that is malformed or looks cut off: a bracket or a quotation opened and never
    closed (LaTeX `\\left`/`\\right`, list numbering such as `a)`, inch marks and quotations
    the choices close are understood; code is not judged), a bare "Which of the following" that
    asks nothing, or shorter than `min_length` (unless the choices continue it). How a stem ends
    is no evidence on real data (completion stems, equations, imperatives), so the ending checks
    (`dangling_words`, `mid_sentence_endings`, `require_terminal_punctuation`) are off unless
    configured. Continuation stems (style "continuation") are never judged. A row without
    `question` is judged on its prompt's text before the options.

    Bad:  "question": "Which statement describes the ribosome (the site of protein synthesis?"
    Good: "question": "Which statement describes the ribosome (the site of protein synthesis)?"
    """
    if not view.judge_question or view.question is None:
        return
    choices = [o.text for o in view.options if isinstance(o.text, str)]
    problems = question_problems(view.question, params, choices)
    if problems:
        yield (
            view.question_field,
            "the question looks truncated or malformed: " + "; ".join(problems),
        )


@_check("prompt_options_mismatch")
def _prompt_options_mismatch(view: _View, params: Mapping[str, Any]) -> Problems:
    """The prompt in `responses_create_params` lists options that differ from the `options`
    field: an option missing or extra, a different text, or a different order. The model then
    answers a question the grader does not grade. `choicebox fix` re-renders the prompt when the
    row's `template_metadata.template_id` names a shipped template.

    Bad:  prompt "...\\nA: Granite\\nB: Basalt", "options": [{"A": "Granite"}, {"B": "Marble"}]
    Good: prompt "...\\nA: Granite\\nB: Marble", "options": [{"A": "Granite"}, {"B": "Marble"}]
    """
    if view.prompt is None or view.family != "mcqa" or view.options_from_prompt:
        return
    options = view.texts
    if not options:
        return
    problems = prompt_option_problems(view.prompt, options)
    if problems and not listed_loosely(view.prompt, options):
        yield (
            "responses_create_params.input",
            (
                "the prompt's options differ from `options`: "
                + "; ".join(problems[:3])
                + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            ),
        )


def _regex_field(view: _View, i: int) -> str:
    return f"{view.regex_field}[{i}]" if view.regex_as_list else view.regex_field


@_check("template_regex_invalid")
def _template_regex_invalid(view: _View, params: Mapping[str, Any]) -> Problems:
    """A `template_metadata.output_regex` pattern that does not compile. Graders skip it, so
    every answer in the template's format goes unread.

    Bad:  "output_regex": "ANSWER IS ([A-D]"
    Good: "output_regex": "ANSWER IS ([A-D])"
    """
    for i, pattern in enumerate(view.regexes):
        if not isinstance(pattern, str):
            continue
        compiled = compile_pattern(pattern)
        if compiled.pattern is None:
            yield _regex_field(view, i), f"{compiled.error}: fix the pattern"


def _instruction_answers(
    view: _View, formats: Sequence[Mapping[str, str]]
) -> tuple[str, str] | None:
    """The answer format the prompt asks for, as (the instruction, answer with `{letter}`)."""
    for item in formats:
        compiled = compile_pattern(item["instruction"])
        if compiled.pattern is None:
            continue
        for text in view.prompt_texts:
            try:
                found = compiled.finditer(text)
            except RegexTimeout:
                continue
            if not found:
                continue
            match = found[0]
            answer = item.get("answer")
            if answer is not None:
                return match.group(0), answer
            fmt, at = match.group("format"), match.start("format")
            start, end = match.start("placeholder") - at, match.end("placeholder") - at
            return match.group(0), fmt[:start] + "{letter}" + fmt[end:]
    return None


def regex_reads(patterns: Sequence[str], response: str, options: Mapping[str, str]) -> str | None:
    """The letter the patterns read from ``response``: grading's own reading of a template's
    ``output_regex`` (``template_regex_letter``), so the check cannot disagree with the grader."""
    return template_regex_letter(tuple(patterns), response, options)


@_check("template_regex_mismatch")
def _template_regex_mismatch(view: _View, params: Mapping[str, Any]) -> Problems:
    """The template's `output_regex` does not read the answer format its own prompt asks for:
    the instruction (`\\boxed{}`, "ANSWER IS X", 'Answer: LETTER', see `formats`) is rendered
    with each option letter and the patterns must read that letter back. Patterns that do not
    compile are `template_regex_invalid`; a prompt with no recognisable instruction is not judged.

    Bad:  prompt 'Conclude with "ANSWER IS X"', "output_regex": "Answer:\\s*([A-D])"
    Good: prompt 'Conclude with "ANSWER IS X"', "output_regex": "ANSWER IS\\s*\\(?([A-Za-z])\\)?"
    """
    patterns = [p for p in view.regexes if isinstance(p, str) and compile_pattern(p).pattern]
    options = view.texts
    if not patterns or not options:
        return
    found = _instruction_answers(view, params["formats"])
    if found is None:
        return
    instruction, answer = found
    for letter in options:
        rendered = answer.replace("{letter}", letter)
        response = f"Comparing the options, one fits best.\n{rendered}"
        if regex_reads(patterns, response, options) != letter:
            field = view.regex_field
            yield (
                field,
                (
                    f"output_regex does not read {letter} from {rendered!r}, the answer the prompt's "
                    f"instruction {_quote(instruction)} asks for: align the pattern with the instruction"
                ),
            )
            return


def _reads_as(bare: str, phrases: Sequence[str]) -> bool:
    """Whether the words ``bare`` are one of ``phrases`` (given as words), possibly followed by
    more words."""
    return any(bare == p or bare.startswith(p + " ") for p in phrases)


# "All of the above (I, II, III)" names what it covers, so its place does not matter.
_NAMED_COVER: Final = re.compile(r"\(\s*\w+(?:\s*(?:,|\band\b|&)\s*\w+)+\s*\)")


@_check("all_of_the_above_not_last")
def _all_of_the_above_not_last(view: _View, params: Mapping[str, Any]) -> Problems:
    """An "all of the above" / "none of the above" choice (the forms in `phrases`) followed by an
    ordinary choice: "above" no longer covers every other choice (several such choices may
    close the list together). The forms in `other_phrases` ("all of these") carry no position,
    so they are not reported, but they are no ordinary choice either; a choice that names what
    it covers (`All of the above (I, II, III)`) is not reported.

    Bad:  "options": [{"A": "Iron"}, {"B": "All of the above"}, {"C": "Copper"}]
    Good: "options": [{"A": "Iron"}, {"B": "Copper"}, {"C": "All of the above"}]
    """
    above = [bare_words(p) for p in params["phrases"]]
    others = [*above, *(bare_words(p) for p in params["other_phrases"])]
    marks: list[tuple[_Option, bool, bool]] = []  # (option, reported form, no ordinary choice)
    for option in view.options:
        text = option.text if isinstance(option.text, str) else ""
        bare = bare_words(text)
        closing = bool(bare) and _reads_as(bare, others)
        reported = closing and _reads_as(bare, above) and not _NAMED_COVER.search(text)
        marks.append((option, reported, closing))
    last_plain = max((i for i, (_, _, closing) in enumerate(marks) if not closing), default=-1)
    for i, (option, reported, _) in enumerate(marks):
        if reported and i < last_plain:
            after = marks[last_plain][0]
            yield (
                option.field,
                (
                    f"{_name(option)} {_quote(option.text)} comes before the ordinary choice "
                    f"{_name(after)} {_quote(after.text)}: move it to the end"
                ),
            )


@_check("conflicting_duplicate_question", scope="file")
def _conflicting_duplicate_question(view: _View, params: Mapping[str, Any]) -> Problems:
    """The same question (normalised; with `same_choices`, also the same set of choices) appears
    twice in a file with different gold answers (compared by text, so reordered choices do not
    count). The finding is on the later row and names the earlier line. Only a hash of each
    question is kept, so memory stays small on large files.

    Bad:  line 3 "Which planet is largest?" gold "Jupiter"; line 9 the same question, gold "Saturn"
    Good: line 9 is removed, or its gold answer is "Jupiter" too
    """
    return iter(())  # a file-level check, run by audit_rows


@_check("untidy_text")
def _untidy_text(view: _View, params: Mapping[str, Any]) -> Problems:
    """A question (its own field) or choice with untidy text: not Unicode NFC, leading or trailing
    whitespace, carriage returns, runs of spaces or tabs inside a one-line choice. Harmless to a
    reader, but it makes texts that look equal compare unequal. `choicebox fix` tidies it. Not
    reported: gaps that two choices or more share (table columns), the line whitespace of a
    multi-line choice (a patch), and text with LaTeX residue (see `markup_residue`).

    Bad:  "options": [{"A": " Caf\\u0065\\u0301 "}]
    Good: "options": [{"A": "Caf\\u00e9"}]
    """
    if view.explicit_question and isinstance(view.question, str):
        problems = untidy_problems(view.question, choice=False)
        if problems:
            yield view.question_field, f"the question {', '.join(problems)}: run choicebox fix"
    texts = [o.text if isinstance(o.text, str) else "" for o in view.options]
    columns = column_layout(texts)
    for i, option in enumerate(view.options):
        if isinstance(option.text, str) and option.text.strip():
            problems = untidy_problems(option.text, choice=True, columns=i in columns)
            if problems:
                yield (
                    option.field,
                    (
                        f"choice {_name(option)} {_quote(option.text)} {', '.join(problems)}: "
                        "run choicebox fix"
                    ),
                )


@_check("markup_residue")
def _markup_residue(view: _View, params: Mapping[str, Any]) -> Problems:
    """LaTeX left in the question or a choice: a text-mode command printed as text
    (`\\textbullet`, `\\textquotedblright`, `\\cyrchar`), or a control character where JSON
    escaping ate a command's backslash (`\\bullet` read as a backspace and `ullet`, `\\tau` as
    a tab and `au`, `\\vert` as a vertical tab and `ert`). The reader sees garbage where a
    symbol was; `choicebox fix` leaves such text unchanged, since the control character is the
    only trace of the command.

    Bad:  "options": [{"A": "32.2 ft\\u0008ullet s^-2"}, {"B": "9.8 m\\textbullet s^-2"}]
    Good: "options": [{"A": "32.2 ft s^-2"}, {"B": "9.8 m s^-2"}]
    """
    if isinstance(view.question, str):
        found = markup_residue(view.question)
        if found:
            yield view.question_field, f"the question has {_residue(found)}"
    for option in view.options:
        if isinstance(option.text, str):
            found = markup_residue(option.text)
            if found:
                yield (
                    option.field,
                    f"choice {_name(option)} {_quote(option.text)} has {_residue(found)}",
                )


def _residue(found: Sequence[str]) -> str:
    more = f"; and {len(found) - 2} more" if len(found) > 2 else ""
    return f"LaTeX residue: {'; '.join(found[:2])}{more}: restore the symbols"
