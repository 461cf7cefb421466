"""The row checks. Each check is a named function; its docstring is its documentation (what it
finds, a bad and a good example), printed by ``choicebox audit --list-checks``."""

from __future__ import annotations

import inspect
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

import attrs
import regex

from choicebox._letters import normalise_option_text, read_payload
from choicebox._regex import RegexTimeout, compile_pattern

from ._prompt import _quote, prompt_option_problems
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
    """Two choices with the same text after normalisation (case, Unicode NFKC, whitespace; numbers
    by value with `numeric`; punctuation with `punctuation`), or one letter used twice.

    Bad:  "options": [{"A": "Mercury"}, {"B": "Venus"}, {"C": "mercury "}]
    Good: "options": [{"A": "Mercury"}, {"B": "Venus"}, {"C": "Mars"}]
    """
    for field, letter in view.duplicate_letters:
        yield field, f"the option letter {letter!r} appears twice: give each option its own letter"
    first: dict[str, _Option] = {}
    for option in view.options:
        if not isinstance(option.text, str) or not option.text.strip():
            continue
        key = normalise_option_text(
            option.text,
            punctuation=bool(params["punctuation"]),
            numeric=bool(params["numeric"]),
        )
        earlier = first.setdefault(key, option)
        if earlier is not option:
            yield (
                option.field,
                (
                    f"{_name(option)} {_quote(option.text)} repeats {_name(earlier)} "
                    f"{_quote(earlier.text)}: replace one of them with a distinct choice"
                ),
            )


def _name(option: _Option) -> str:
    return option.letter or option.field


def _own_label(letter: str) -> re.Pattern[str]:
    return _LABELS.setdefault(
        letter,
        re.compile(
            rf"\s*(?:\({letter}\)|\[{letter}\]|{letter}[):\]])\s*(?=\S)|\s*(?P<dot>{letter}\.)\s+(?=\S)",
            re.IGNORECASE,
        ),
    )


_LABELS: dict[str, re.Pattern[str]] = {}


def own_labels(options: Sequence[tuple[str | None, Any]]) -> dict[int, int]:
    """The options (by position) whose text starts with their own letter label -> label length.

    ``A)``, ``(A)``, ``[A]``, ``A]`` and ``A:`` always count; ``A.`` only when another option
    also starts with its own label, so a text such as ``A. Lincoln`` alone is left as it is.
    """
    found: dict[int, tuple[int, bool]] = {}
    for i, (letter, text) in enumerate(options):
        if letter is None or not isinstance(text, str):
            continue
        match = _own_label(letter).match(text)
        if match is not None:
            found[i] = (match.end(), match["dot"] is not None)
    return {i: end for i, (end, dot) in found.items() if not dot or any(j != i for j in found)}


@_check("choice_repeats_label")
def _choice_repeats_label(view: _View, params: Mapping[str, Any]) -> Problems:
    """A choice whose text starts with its own letter label, so the prompt shows `A: A) Paris`.
    (`A. Lincoln` alone is a name, not a label: a `A.` label counts only when another choice
    also carries its own label.) `choicebox fix` strips the label.

    Bad:  "options": [{"A": "A) Paris"}, {"B": "B) Lyon"}]
    Good: "options": [{"A": "Paris"}, {"B": "Lyon"}]
    """
    labelled = own_labels([(o.letter, o.text) for o in view.options])
    for i, end in labelled.items():
        option = view.options[i]
        label = option.text[:end].strip()
        yield (
            option.field,
            (
                f"choice {option.letter} starts with its own label {label!r}: "
                f"the text should be {_quote(option.text[end:])}"
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
            yield field, f"{field} is {gold!r}, not an option letter ({', '.join(letters)})"
        elif gold not in letters:
            hint = " (letters are case-sensitive)" if gold.upper() in letters else ""
            yield (
                field,
                (
                    f"{field} {gold!r} is not one of the option letters "
                    f"{', '.join(letters) or '(none)'}{hint}: point it at the correct option"
                ),
            )
        return
    n = len(view.options)
    if not isinstance(gold, int) or isinstance(gold, bool):
        yield field, f"answer_index is {gold!r}, not a whole number between 0 and {n - 1}"
    elif not 0 <= gold < n:
        yield (
            field,
            (
                f"answer_index {gold} is outside the {n} choices (0..{n - 1}): "
                "point it at the correct choice"
            ),
        )


_SENTENCE_END: Final = re.compile(r"[.?!](?:\s+|$)")
_TERMINAL: Final = re.compile(r"""[.?!:;)\]}"'»”’…_$%*]$|\d$""")
_MID_SENTENCE: Final = re.compile(r"[,\-–—(\[{/\\&+=]$")
_ENUMERATOR: Final = re.compile(r"(?:^|(?<=\s))(?:\d{1,2}|[ivxIVX]{1,4}|[A-Za-z])\)$")
_OPENERS: Final = "([{"
_CLOSERS: Final = ")]}"


def question_problems(text: str, params: Mapping[str, Any]) -> list[str]:
    """Why a question-style ``text`` looks truncated or malformed (empty: it does not)."""
    stem = text.strip()
    problems: list[str] = []
    if len(stem) < int(params["min_length"]):
        problems.append(f"it is only {len(stem)} characters long")
        if not stem:
            return problems
    tail = _quote(stem[-30:])
    sentences = [s for s in _SENTENCE_END.split(stem) if s.strip()]
    last_sentence = sentences[-1] if sentences else stem
    bare = " ".join(last_sentence.casefold().rstrip("?:. ").split())
    phrases = {" ".join(p.casefold().split()) for p in params["dangling_phrases"]}
    words = re.findall(r"\w+", stem[-60:])
    last_word = words[-1].casefold() if words else ""
    if bare in phrases:
        problems.append(f"it ends with {_quote(last_sentence.strip())} and asks nothing")
    elif stem[-1].isalpha() and last_word in {w.casefold() for w in params["dangling_words"]}:
        problems.append(f"it ends with the word {last_word!r} ({tail}): cut off mid-sentence")
    elif _MID_SENTENCE.search(stem):
        problems.append(f"it ends with {stem[-1]!r} ({tail}): cut off mid-sentence")
    elif (
        params["require_terminal_punctuation"] and stem[-1].isalnum() and not _TERMINAL.search(stem)
    ):
        problems.append(f"it ends without punctuation ({tail}): cut off mid-word or mid-sentence?")
    depth = 0
    dipped = False
    for i, char in enumerate(stem):
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            # "1)", "ii)" or "b)" numbering a list closes nothing.
            if depth == 0 and char == ")" and _ENUMERATOR.search(stem, 0, i + 1):
                continue
            depth -= 1
            dipped = dipped or depth < 0
    if depth > 0:
        problems.append(f"{depth} bracket(s) opened and never closed")
    elif dipped or depth < 0:
        problems.append("a bracket is closed that was never opened")
    if stem.count('"') % 2:
        problems.append('an odd number of " quotes')
    if stem.count("“") != stem.count("”"):
        problems.append("unbalanced “ ” quotes")
    return problems


@_check("truncated_question")
def _truncated_question(view: _View, params: Mapping[str, Any]) -> Problems:
    """A question that looks cut off or malformed: shorter than `min_length`, ending mid-word or
    mid-sentence (on a dangling word such as "the", a comma, or with no punctuation), with
    unbalanced brackets or quotes, or a bare "Which of the following" that asks nothing. Only
    question-style texts are judged: continuation stems (style "continuation") end mid-sentence
    by design. A row without `question` is judged on its prompt's text before the options.

    Bad:  "question": "Which of the following describes the role of the"
    Good: "question": "Which of the following describes the role of the ribosome?"
    """
    if not view.judge_question or view.question is None:
        return
    problems = question_problems(view.question, params)
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
    if problems:
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
    """The letter the patterns read from ``response``, the way grading reads them (first pattern
    with a match; its last match; the group ``answer``, else the last group, else the match)."""
    for source in patterns:
        compiled = compile_pattern(source, _IGNORECASE)
        if compiled.pattern is None:
            continue
        try:
            found = compiled.finditer(response)
        except RegexTimeout:
            continue
        if not found:
            continue
        match = found[-1]
        if "answer" in match.re.groupindex:
            captured = match.group("answer")
        elif match.lastindex:
            captured = match.group(match.lastindex)
        else:
            captured = match.group(0)
        if captured is None:
            continue
        payload = read_payload(captured, options, option_text=False)
        return payload.letter if payload.kind == "letter" else None
    return None


_IGNORECASE: Final = int(regex.IGNORECASE)


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


def _above_phrase(text: str, phrases: Sequence[str]) -> bool:
    bare = normalise_option_text(text, punctuation=True)
    return any(
        bare == p or bare.startswith(p + " ")
        for p in (normalise_option_text(p, punctuation=True) for p in phrases)
    )


@_check("all_of_the_above_not_last")
def _all_of_the_above_not_last(view: _View, params: Mapping[str, Any]) -> Problems:
    """An "all of the above" / "none of the above" choice (the forms in `phrases`) followed by an
    ordinary choice: "above" no longer covers every other choice (several such choices may
    close the list together).

    Bad:  "options": [{"A": "Iron"}, {"B": "All of the above"}, {"C": "Copper"}]
    Good: "options": [{"A": "Iron"}, {"B": "Copper"}, {"C": "All of the above"}]
    """
    phrases = params["phrases"]
    texts = [(o, isinstance(o.text, str) and _above_phrase(o.text, phrases)) for o in view.options]
    last_plain = max((i for i, (_, above) in enumerate(texts) if not above), default=-1)
    for i, (option, above) in enumerate(texts):
        if above and i < last_plain:
            after = texts[last_plain][0]
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


def untidy_problems(text: str, *, collapse: bool) -> list[str]:
    """Why ``text`` is not in the form ``fix`` writes (NFC, trimmed, ...); empty: it is."""
    problems: list[str] = []
    if unicodedata.normalize("NFC", text) != text:
        problems.append("is not in Unicode NFC")
    if "\r" in text:
        problems.append("has carriage returns")
    if text != text.strip():
        problems.append("has leading or trailing whitespace")
    if any(line != line.rstrip() for line in text.split("\n")):
        problems.append("has trailing spaces on a line")
    if collapse and "\n" not in text.strip() and _ODD_SPACE.search(text.strip()):
        problems.append("has runs of spaces or tabs or non-breaking spaces")
    return list(dict.fromkeys(problems))


_ODD_SPACE: Final = re.compile(r"[^\S\n]{2,}|[^\S \n]")


@_check("untidy_text")
def _untidy_text(view: _View, params: Mapping[str, Any]) -> Problems:
    """A question (its own field) or choice with untidy text: not Unicode NFC, leading or trailing
    whitespace, carriage returns, runs of spaces or tabs inside a one-line choice. Harmless to a
    reader, but it makes texts that look equal compare unequal. `choicebox fix` tidies it.

    Bad:  "options": [{"A": " Caf\\u0065\\u0301 "}]
    Good: "options": [{"A": "Caf\\u00e9"}]
    """
    if view.explicit_question and isinstance(view.question, str):
        problems = untidy_problems(view.question, collapse=False)
        if problems:
            yield view.question_field, f"the question {', '.join(problems)}: run choicebox fix"
    for option in view.options:
        if isinstance(option.text, str) and option.text.strip():
            problems = untidy_problems(option.text, collapse=True)
            if problems:
                yield (
                    option.field,
                    (
                        f"choice {_name(option)} {_quote(option.text)} {', '.join(problems)}: "
                        "run choicebox fix"
                    ),
                )


