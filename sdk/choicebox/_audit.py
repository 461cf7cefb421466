"""Auditing multiple-choice data: deterministic checks, declared as data, that never change a sample.

Each check is a named function below; its docstring is its documentation (what it finds, a bad and
a good example), printed by ``choicebox audit --list-checks``. Whether a check runs, the severity of
its findings and its parameters come from a configuration file: ``checks/default.yaml`` ships with
the package, and a user file laid over it changes only what it names.

Checks read a *view* of a sample: the question, the lettered choices, the gold answer, the prompt
and the template, as far as they can be read. ``audit_row`` builds the view from the raw JSON
object, so the defects that make a row undecodable (a gold letter that is no option, an empty
option) are findings too; ``audit`` builds it from a decoded sample. ``audit_rows`` and
``audit_file`` add the one file-level check (the same question with different gold answers) and
yield one ``Audit`` per input row.
"""

from __future__ import annotations

import hashlib
import heapq
import inspect
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import attrs
import regex
import yaml

from ._errors import ChoiceboxError, WireFormatError
from ._jsonl import JsonlError, JsonlRow, iter_jsonl
from ._letters import normalise_option_text, read_payload
from ._regex import RegexTimeout, compile_pattern
from ._samples import (
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)
from ._wire import question_from_prompt

__all__ = [
    "Audit",
    "AuditConfig",
    "AuditConfigError",
    "AuditSummary",
    "CheckInfo",
    "CheckSettings",
    "Finding",
    "audit",
    "audit_checks",
    "audit_file",
    "audit_row",
    "audit_rows",
]

Severity: TypeAlias = Literal["error", "warning"]
SEVERITIES: Final[tuple[Severity, ...]] = ("error", "warning")
AnySample: TypeAlias = (
    MCQASample | MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample
)

_CONFIG_PACKAGE: Final = "choicebox.checks"
_CONFIG_FILE: Final = "default.yaml"
_QUOTE_CHARS: Final = 40  # texts quoted in a message are cut to this many characters


class AuditConfigError(ChoiceboxError, ValueError):
    """An audit configuration is invalid; the message starts with ``file:line``."""


# --- findings ------------------------------------------------------------------------------------


@attrs.frozen
class Finding:
    """One problem of one row: the check that found it, how bad it is, where, and what to do."""

    check: str
    severity: Severity
    field: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {
            "check": self.check,
            "severity": self.severity,
            "field": self.field,
            "message": self.message,
        }


@attrs.frozen(kw_only=True)
class Audit:
    """The findings for one sample or row (``line`` is the 1-based line of a file row)."""

    findings: tuple[Finding, ...] = ()
    line: int | None = None
    uuid: str | None = None

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """No finding at all."""
        return not self.findings

    @property
    def checks(self) -> frozenset[str]:
        """The ids of the checks with a finding."""
        return frozenset(f.check for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        """The report row: ``{"line", "uuid", "findings": [...]}``."""
        return {
            "line": self.line,
            "uuid": self.uuid,
            "findings": [f.to_json() for f in self.findings],
        }


# --- configuration -------------------------------------------------------------------------------


@attrs.frozen
class CheckSettings:
    """How one check runs: on or off, the severity of its findings, its parameters."""

    enabled: bool
    severity: Severity
    params: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class AuditConfig:
    """The settings of every check, by id, in the order the checks run."""

    checks: Mapping[str, CheckSettings]
    source: str = "<default>"

    @classmethod
    def default(cls) -> AuditConfig:
        """The shipped configuration, ``choicebox/checks/default.yaml``."""
        return _default_config()

    @classmethod
    def load(cls, path: str | Path, *, base: AuditConfig | None = None) -> AuditConfig:
        """A user file laid over ``base`` (the default configuration unless given)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise AuditConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return _parse_config(text, str(path), base or cls.default())

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "<string>") -> AuditConfig:
        """A configuration text laid over the default configuration."""
        return _parse_config(text, source, cls.default())

    def enabled(self, check: str) -> bool:
        settings = self.checks.get(check)
        return settings is not None and settings.enabled

    def select(self, ids: Iterable[str]) -> AuditConfig:
        """Only the checks named run (unknown ids raise ``AuditConfigError``)."""
        wanted = set(_known_ids(ids))
        return attrs.evolve(
            self,
            checks={
                k: attrs.evolve(v, enabled=v.enabled and k in wanted)
                for k, v in self.checks.items()
            },
        )

    def ignore(self, ids: Iterable[str]) -> AuditConfig:
        """The checks named do not run (unknown ids raise ``AuditConfigError``)."""
        unwanted = set(_known_ids(ids))
        return attrs.evolve(
            self,
            checks={
                k: attrs.evolve(v, enabled=v.enabled and k not in unwanted)
                for k, v in self.checks.items()
            },
        )


def _known_ids(ids: Iterable[str]) -> list[str]:
    out = [i.strip() for i in ids if i.strip()]
    for check in out:
        if check not in _CHECKS:
            raise AuditConfigError(f"unknown check {check!r}; known checks: {', '.join(_CHECKS)}")
    return out


def _default_config() -> AuditConfig:
    cached = _DEFAULT_CACHE.get("config")
    if cached is None:
        resource = resources.files(_CONFIG_PACKAGE).joinpath(_CONFIG_FILE)
        cached = _parse_config(resource.read_text(encoding="utf-8"), _CONFIG_FILE, None)
        _DEFAULT_CACHE["config"] = cached
    return cached


_DEFAULT_CACHE: dict[str, AuditConfig] = {}


def _parse_config(text: str, source: str, base: AuditConfig | None) -> AuditConfig:
    """Parse and validate a configuration; ``base`` None means this is the complete default file."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise AuditConfigError(f"{where}: invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise AuditConfigError(f"{source}: invalid YAML: {exc}") from None
    if root is None:
        if base is None:
            raise AuditConfigError(f"{source}: empty configuration")
        return attrs.evolve(base, source=source)

    def fail(node: yaml.Node, message: str) -> AuditConfigError:
        return AuditConfigError(f"{source}:{node.start_mark.line + 1}: {message}")

    def mapping(node: yaml.Node, what: str) -> list[tuple[yaml.Node, yaml.Node, str]]:
        if not isinstance(node, yaml.MappingNode) or node.tag != _MAP_TAG:
            raise fail(node, f"{what} must be a plain mapping")
        out: list[tuple[yaml.Node, yaml.Node, str]] = []
        seen: set[str] = set()
        for key, value in node.value:
            name = _construct(key, source)
            if not isinstance(name, str):
                raise fail(key, f"{what}: keys must be strings, got {name!r}")
            if name in seen:
                raise fail(key, f"{what}: key {name!r} appears twice")
            seen.add(name)
            out.append((key, value, name))
        return out

    checks: dict[str, CheckSettings] = dict(base.checks) if base is not None else {}
    for key, value, name in mapping(root, "the configuration"):
        if name == "version":
            if _construct(value, source) != 1:
                raise fail(value, "version: only version 1 is known")
        elif name == "checks":
            for ckey, cvalue, check in mapping(value, "checks"):
                if check not in _CHECKS:
                    raise fail(
                        ckey, f"checks: unknown check {check!r}; known checks: {', '.join(_CHECKS)}"
                    )
                checks[check] = _parse_check(
                    check, cvalue, checks.get(check), mapping, fail=fail, source=source
                )
        else:
            raise fail(key, f"unknown key {name!r}; expected version, checks")
    if base is None:
        missing = [c for c in _CHECKS if c not in checks]
        if missing:
            raise AuditConfigError(f"{source}: no settings for {', '.join(missing)}")
    return AuditConfig({c: checks[c] for c in _CHECKS if c in checks}, source)


def _parse_check(
    check: str,
    node: yaml.Node,
    old: CheckSettings | None,
    mapping: Callable[[yaml.Node, str], list[tuple[yaml.Node, yaml.Node, str]]],
    *,
    fail: Callable[[yaml.Node, str], AuditConfigError],
    source: str,
) -> CheckSettings:
    enabled = old.enabled if old is not None else None
    severity: Severity | None = old.severity if old is not None else None
    params = dict(old.params) if old is not None else {}
    for key, value_node, name in mapping(node, check):
        value = _construct(value_node, source)
        where = f"{check}.{name}"
        if name == "enabled":
            if not isinstance(value, bool):
                raise fail(value_node, f"{where}: expected true or false, got {value!r}")
            enabled = value
        elif name == "severity":
            if value not in SEVERITIES:
                raise fail(value_node, f"{where}: expected error or warning, got {value!r}")
            severity = value
        elif old is None:  # the default file defines the parameters and their types
            params[name] = value
        elif name not in old.params:
            known = ", ".join(["enabled", "severity", *old.params])
            raise fail(key, f"{where}: unknown key {name!r}; {check} takes {known}")
        else:
            problem = _type_problem(value, old.params[name])
            if problem:
                raise fail(value_node, f"{where}: {problem}")
            params[name] = value
        if name == "formats":
            problem = _formats_problem(value)
            if problem:
                raise fail(value_node, f"{where}: {problem}")
    if enabled is None or severity is None:
        raise fail(node, f"{check}: needs both enabled and severity")
    return CheckSettings(enabled, severity, params)


def _construct(node: yaml.Node, source: str = "<config>") -> Any:
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:  # an unsafe tag such as !!python/object
        problem = getattr(exc, "problem", None) or exc
        raise AuditConfigError(f"{source}:{node.start_mark.line + 1}: {problem}") from None
    finally:
        loader.dispose()


_MAP_TAG: Final = "tag:yaml.org,2002:map"


def _type_problem(value: Any, default: Any) -> str | None:
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"expected true or false, got {value!r}"
    if isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if ok else f"expected a whole number >= 0, got {value!r}"
    if isinstance(default, str):
        return None if isinstance(value, str) else f"expected a string, got {value!r}"
    if isinstance(default, list):
        if not isinstance(value, list):
            return f"expected a list, got {type(value).__name__}"
        if default and isinstance(default[0], dict):
            return None  # the formats list, checked by _formats_problem
        if not all(isinstance(v, str) for v in value):
            return "expected a list of strings"
    return None


def _formats_problem(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of formats, got {type(value).__name__}"
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            return f"[{i}]: expected a mapping with instruction (and answer)"
        unknown = set(item) - {"instruction", "answer"}
        if unknown:
            return f"[{i}]: unknown key {sorted(unknown)[0]!r}; expected instruction, answer"
        instruction = item.get("instruction")
        if not isinstance(instruction, str):
            return f"[{i}].instruction: expected a regex string"
        compiled = compile_pattern(instruction)
        if compiled.pattern is None:
            return f"[{i}].instruction: {compiled.error}"
        answer = item.get("answer")
        if answer is None:
            groups = compiled.pattern.groupindex
            if "format" not in groups or "placeholder" not in groups:
                return f"[{i}]: without answer, instruction needs the groups format and placeholder"
        elif not isinstance(answer, str) or "{letter}" not in answer:
            return f"[{i}].answer: expected a string containing {{letter}}"
    return None


# --- the view a check reads ----------------------------------------------------------------------


@attrs.frozen
class _Option:
    letter: str | None  # None when the raw key is no single letter
    text: Any  # a string for a readable option
    field: str


@attrs.frozen(kw_only=True)
class _View:
    family: Literal["mcqa", "mc"]
    # The question as a person reads it (None when there is none to judge) and where it lives.
    question: str | None
    question_field: str
    judge_question: bool  # False for continuation stems
    explicit_question: bool  # the text is a field of its own (not the prompt), so fix may tidy it
    options: tuple[_Option, ...]
    options_readable: bool = True  # False: the options are no list, so no gold can be judged
    duplicate_letters: tuple[tuple[str, str], ...] = ()  # (field, letter)
    gold: Any  # the gold letter (mcqa) or index (mc), as read
    gold_present: bool
    gold_field: str
    prompt: str | None = None  # the last user message
    options_from_prompt: bool = False  # the row has no `options`: they were read from the prompt
    prompt_texts: tuple[str, ...] = ()  # every message text, for finding the instruction
    regexes: tuple[Any, ...] = ()
    regex_field: str = "template_metadata.output_regex"
    regex_as_list: bool = False

    @property
    def texts(self) -> dict[str, str]:
        """Readable options: letter -> text."""
        return {
            o.letter: o.text
            for o in self.options
            if o.letter is not None and isinstance(o.text, str)
        }

    @property
    def gold_text(self) -> str | None:
        if self.family == "mcqa":
            return self.texts.get(self.gold) if isinstance(self.gold, str) else None
        index = self.gold
        if (
            isinstance(index, int)
            and not isinstance(index, bool)
            and 0 <= index < len(self.options)
        ):
            text = self.options[index].text
            return text if isinstance(text, str) else None
        return None


def _mc_letter(i: int) -> str | None:
    return string.ascii_uppercase[i] if i < len(string.ascii_uppercase) else None


def _message_texts(params: Any) -> tuple[str, ...]:
    if not isinstance(params, Mapping):
        return ()
    out: list[str] = []
    instructions = params.get("instructions")
    if isinstance(instructions, str):
        out.append(instructions)
    messages = params.get("input")
    if isinstance(messages, str):
        out.append(messages)
    elif isinstance(messages, Sequence):
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, Sequence):
                out.extend(
                    p["text"]
                    for p in content
                    if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                )
    return tuple(out)


def _question_stem(
    question: Any, prompt: str | None, letters: Sequence[str]
) -> tuple[str | None, bool]:
    """The question to judge and whether it is a field of its own.

    A row without ``question`` is read from its prompt: the text before the listed options, after
    the instruction of a shipped template when the prompt starts with one.
    """
    if isinstance(question, str) and question != prompt:
        return question, True
    if prompt is None:
        return (question if isinstance(question, str) else None), False
    block = parse_prompt_options(prompt, letters)
    if block is None:
        return None, False
    stem = prompt[: block.start]
    for prefix in _template_prefixes():
        match = prefix.match(stem)
        if match is not None:
            stem = stem[match.end() :]
            break
    return stem, False


def _template_prefixes() -> tuple[re.Pattern[str], ...]:
    cached = _PREFIX_CACHE.get("prefixes")
    if cached is None:
        from ._templates import templates

        found: list[re.Pattern[str]] = []
        for spec in templates().values():
            head, sep, _ = spec.prompt.partition("{question}")
            if not sep or not head:
                continue
            pattern = "".join(
                "[A-Za-z]*" if part == "{letters}" else re.escape(part)
                for part in re.split(r"(\{letters\})", head)
            )
            found.append(re.compile(pattern))
        cached = tuple(found)
        _PREFIX_CACHE["prefixes"] = cached
    return cached


_PREFIX_CACHE: dict[str, tuple[re.Pattern[str], ...]] = {}


def _view_of_row(row: Mapping[str, Any]) -> _View:
    if row.get("task_type") == "multiple_choice" or ("context" in row and "choices" in row):
        return _view_of_mc_row(row)
    params = row.get("responses_create_params")
    prompt = question_from_prompt(params) if isinstance(params, Mapping) else None
    options: list[_Option] = []
    duplicates: list[tuple[str, str]] = []
    seen: set[str] = set()
    raw_options = row.get("options")
    readable = isinstance(raw_options, list) or "options" not in row
    if isinstance(raw_options, list):
        for i, item in enumerate(raw_options):
            if not isinstance(item, Mapping):
                continue
            for letter, text in item.items():
                if text is None:  # Gym pads option lists with nulls: no such choice
                    continue
                good = isinstance(letter, str) and len(letter) == 1 and letter.isalpha()
                if good and letter in seen:
                    duplicates.append((f"options[{i}]", letter))
                    continue
                if good:
                    seen.add(letter)
                options.append(
                    _Option(
                        letter if good else None,
                        text,
                        f"options.{letter}" if good else f"options[{i}]",
                    )
                )
    from_prompt = "options" not in row and prompt is not None
    if from_prompt:  # Gym rollout files drop `options`: read them from the prompt, as grading does
        assert prompt is not None
        options = [
            _Option(letter, text, "responses_create_params.input")
            for letter, text in _options_in_prompt(prompt)
        ]
    question, explicit = _question_stem(
        row.get("question"), prompt, [o.letter for o in options if o.letter]
    )
    template = row.get("template_metadata")
    regexes: tuple[Any, ...] = ()
    as_list = False
    if isinstance(template, Mapping):
        pattern = template.get("output_regex")
        if isinstance(pattern, str):
            regexes = (pattern,)
        elif isinstance(pattern, list):
            regexes, as_list = tuple(pattern), True
    return _View(
        family="mcqa",
        question=question,
        question_field="question" if explicit else "responses_create_params.input",
        judge_question=True,
        explicit_question=explicit,
        options=tuple(options),
        options_readable=readable,
        duplicate_letters=tuple(duplicates),
        gold=row.get("expected_answer"),
        gold_present="expected_answer" in row and row.get("expected_answer") is not None,
        gold_field="expected_answer",
        prompt=prompt,
        options_from_prompt=from_prompt,
        prompt_texts=_message_texts(params),
        regexes=regexes,
        regex_as_list=as_list,
    )


def _view_of_mc_row(row: Mapping[str, Any]) -> _View:
    choices = row.get("choices")
    readable = isinstance(choices, list)
    options = (
        tuple(_Option(_mc_letter(i), text, f"choices[{i}]") for i, text in enumerate(choices))
        if isinstance(choices, list)
        else ()
    )
    context = row.get("context")
    return _View(
        family="mc",
        question=context if isinstance(context, str) else None,
        question_field="context",
        judge_question=row.get("style") == "qa",
        explicit_question=True,
        options=options,
        options_readable=readable,
        gold=row.get("answer_index"),
        gold_present="answer_index" in row,
        gold_field="answer_index",
    )


def _view_of_sample(sample: AnySample) -> _View:
    if isinstance(sample, MultipleChoiceSample):
        return _View(
            family="mc",
            question=sample.context,
            question_field="context",
            judge_question=sample.style == "qa",
            explicit_question=True,
            options=tuple(
                _Option(_mc_letter(i), text, f"choices[{i}]")
                for i, text in enumerate(sample.choices)
            ),
            gold=sample.answer_index,
            gold_present=True,
            gold_field="answer_index",
        )
    prompt = question_from_prompt(sample.responses_create_params)
    question, explicit = _question_stem(sample.question, prompt, sample.letters)
    template = sample.template
    return _View(
        family="mcqa",
        question=question,
        question_field="question" if explicit else "responses_create_params.input",
        judge_question=True,
        explicit_question=explicit,
        options=tuple(
            _Option(letter, text, f"options.{letter}") for letter, text in sample.options.items()
        ),
        gold=sample.expected_answer,
        gold_present=True,
        gold_field="expected_answer",
        prompt=prompt,
        prompt_texts=_message_texts(sample.responses_create_params),
        regexes=template.output_regex if template is not None else (),
        regex_as_list=template is not None
        and (template.regex_as_list or len(template.output_regex) != 1),
    )


# --- the options listed in a prompt --------------------------------------------------------------

# One lettered option per line: `A: text`, `A) text`, `(A) text`, `[A] text` or `A. text` (a period
# needs a space after it, so `U.S.` never reads as an option).
_PROMPT_OPTION: Final = re.compile(
    r"[ \t]*(?:\((?P<paren>[A-Za-z])\)|\[(?P<bracket>[A-Za-z])\]|(?P<letter>[A-Za-z])(?P<sep>[:)])"
    r"|(?P<dot>[A-Za-z])\.(?=[ \t]))[ \t]*(?P<text>.*?)[ \t]*$"
)


@attrs.frozen
class PromptOption:
    letter: str
    text: str  # the text on the option's own line
    more: tuple[str, ...]  # the lines after it, before the next option (wrapped text, or not)


@attrs.frozen
class PromptOptions:
    """The lettered option lines of a prompt: where the list starts, and each option."""

    start: int  # character offset of the first option line
    options: tuple[PromptOption, ...]

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(o.letter for o in self.options)


def parse_prompt_options(prompt: str, letters: Sequence[str] = ()) -> PromptOptions | None:
    """The run of lettered lines in ``prompt`` that best matches ``letters`` (None: no list).

    A run is a sequence of option lines in one style whose letters increase; blank lines may sit
    between them and a non-blank line right after an option line is kept as that option's
    following text. The run with the most letters among ``letters`` wins (with no letters, the
    longest run); ties go to the later run.
    """
    wanted = set(letters)
    runs: list[tuple[int, list[tuple[str, str, list[str]]]]] = []
    run: list[tuple[str, str, list[str]]] = []
    start = 0
    style = ""
    gap = False
    offset = 0
    for raw_line in prompt.split("\n"):
        here = offset
        offset += len(raw_line) + 1
        line = raw_line.rstrip("\r")
        match = _PROMPT_OPTION.match(line)
        if match is not None:
            letter = match["paren"] or match["bracket"] or match["letter"] or match["dot"]
            this_style = (
                "()" if match["paren"] else "[]" if match["bracket"] else match["sep"] or "."
            )
            if run and this_style == style and letter > run[-1][0]:
                run.append((letter, match["text"], []))
                gap = False
                continue
            if run:
                runs.append((start, run))
            run, start, style, gap = [(letter, match["text"], [])], here, this_style, False
            continue
        if not line.strip():
            gap = True
            continue
        if run and not gap:
            run[-1][2].append(line)
            continue
        if run:
            runs.append((start, run))
            run, style = [], ""
    if run:
        runs.append((start, run))
    best: tuple[int, int, list[tuple[str, str, list[str]]]] | None = None
    for begin, items in runs:
        score = sum(1 for letter, _, _ in items if letter in wanted) if wanted else len(items)
        if not wanted and len(items) < 2:
            continue
        if score and (best is None or score >= best[0]):
            best = (score, begin, items)
    if best is None:
        return None
    return PromptOptions(
        best[1], tuple(PromptOption(letter, text, tuple(more)) for letter, text, more in best[2])
    )


def _options_in_prompt(prompt: str) -> list[tuple[str, str]]:
    """The (letter, text) pairs a prompt lists, for rows without ``options``."""
    block = parse_prompt_options(prompt)
    return [(o.letter, o.text) for o in block.options] if block is not None else []


def _canon(text: str) -> str:
    """NFC with whitespace collapsed: texts equal under it differ only in layout."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def _listed_as(option: PromptOption, text: str) -> bool:
    """Whether the prompt lists ``text`` for this option (on its line, possibly wrapped)."""
    wanted = _canon(text)
    shown = option.text
    if _canon(shown) == wanted:
        return True
    for line in option.more:
        shown += " " + line
        if _canon(shown) == wanted:
            return True
    return False


def prompt_option_problems(prompt: str, options: Mapping[str, str]) -> list[str]:
    """How the option list of ``prompt`` differs from ``options`` (empty: it does not)."""
    block = parse_prompt_options(prompt, list(options))
    if block is None:
        flat = _canon(prompt)
        missing = [letter for letter, text in options.items() if _canon(text) not in flat]
        return (
            [
                f"the prompt lists no lettered options and does not contain {_letters_and_texts(missing, options)}"
            ]
            if missing
            else []
        )
    listed = {o.letter: o for o in block.options}
    problems: list[str] = []
    missing = [letter for letter in options if letter not in listed]
    if missing:
        problems.append(f"the prompt does not list {_letters_and_texts(missing, options)}")
    extra = [letter for letter in listed if letter not in options]
    if extra:
        shown = ", ".join(f"{letter} {_quote(listed[letter].text)}" for letter in extra)
        problems.append(f"the prompt lists {shown}, which `options` does not have")
    for letter, text in options.items():
        if letter in listed and not _listed_as(listed[letter], text):
            problems.append(
                f"{letter} reads {_quote(text)} in `options` but {_quote(listed[letter].text)} in the prompt"
            )
    common = [letter for letter in options if letter in listed]
    in_prompt = [letter for letter in block.letters if letter in options]
    if common != in_prompt:
        problems.append(f"the prompt lists the options in the order {', '.join(in_prompt)}")
    return problems


def _letters_and_texts(letters: Sequence[str], options: Mapping[str, str]) -> str:
    return ", ".join(f"{letter} {_quote(options[letter])}" for letter in letters)


def _quote(text: str, limit: int = _QUOTE_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)


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


# --- running the checks --------------------------------------------------------------------------


def _run(view: _View, config: AuditConfig) -> list[Finding]:
    findings: list[Finding] = []
    for check, fn in _ROW_CHECKS.items():
        settings = config.checks.get(check)
        if settings is None or not settings.enabled:
            continue
        findings.extend(
            Finding(check, settings.severity, field, message)
            for field, message in fn(view, settings.params)
        )
    return findings


def _uuid_of(sample: AnySample) -> str | None:
    if isinstance(sample, MCQASample):
        return sample.uuid
    uuid = sample.extra.get("uuid")
    return uuid if isinstance(uuid, str) else None


def audit(sample: AnySample, *, config: AuditConfig | None = None) -> Audit:
    """The findings for one decoded sample of either family; the sample is never changed."""
    if not isinstance(sample, MCQASample | MultipleChoiceSample):
        raise TypeError(f"expected a choicebox sample, got {type(sample).__name__}")
    config = config or AuditConfig.default()
    return Audit(findings=tuple(_run(_view_of_sample(sample), config)), uuid=_uuid_of(sample))


# Which check a decoding problem belongs to: (check, pattern on "message @ $.path").
_PROBLEM_CHECKS: Final = (
    ("gold_not_in_choices", re.compile(r"@ \$\.(?:expected_answer|answer_index)$")),
    ("empty_choice", re.compile(r"must not be empty @ \$\.(?:options|choices)")),
    ("duplicate_choice", re.compile(r"appears twice @ \$\.options")),
)


def _decode_problems(row: Mapping[str, Any], family: str) -> tuple[str, ...]:
    from ._wire import decode_mcqa, decode_multiple_choice

    try:
        if family == "mc":
            decode_multiple_choice(row)
        else:
            decode_mcqa(row, options_fallback=_options_in_prompt)
    except WireFormatError as exc:
        return exc.problems
    return ()


def _finding_for_problem(problem: str, config: AuditConfig) -> Finding | None:
    message, _, path = problem.rpartition(" @ ")
    if not _:
        message, path = problem, "$"
    field = path[2:] if path.startswith("$.") else path
    check = next((c for c, pattern in _PROBLEM_CHECKS if pattern.search(problem)), "unreadable_row")
    settings = config.checks.get(check)
    if settings is None or not settings.enabled:
        return None
    return Finding(check, settings.severity, field or "$", f"the row does not decode: {message}")


def _unreadable(config: AuditConfig, message: str) -> tuple[Finding, ...]:
    """An ``unreadable_row`` finding for the whole row, unless that check is switched off."""
    settings = config.checks["unreadable_row"]
    if not settings.enabled:
        return ()
    return (Finding("unreadable_row", settings.severity, "$", message),)


def audit_row(row: Any, *, config: AuditConfig | None = None, line: int | None = None) -> Audit:
    """The findings for one raw row (a decoded JSON value), of either family.

    Checks read the row as far as it can be read, so a row that would not decode (a gold letter
    that is no option, an empty option) is audited rather than refused; each decoding problem no
    check explains becomes an ``unreadable_row`` finding.
    """
    config = config or AuditConfig.default()
    if not isinstance(row, Mapping):
        message = f"the row is a JSON {_json_kind(row)}, not an object: it cannot be a sample"
        return Audit(findings=_unreadable(config, message), line=line)
    view = _view_of_row(row)
    found_by_checks = _run(view, config)
    found = {f.check for f in found_by_checks}
    for problem in _decode_problems(row, view.family):
        finding = _finding_for_problem(problem, config)
        if finding is not None and finding.check not in found - {"unreadable_row"}:
            found_by_checks.append(finding)
    uuid = row.get("uuid")
    if view.family == "mc" and not isinstance(uuid, str):
        extra_uuid = row.get("extra")
        uuid = extra_uuid.get("uuid") if isinstance(extra_uuid, Mapping) else None
    return Audit(
        findings=tuple(found_by_checks), line=line, uuid=uuid if isinstance(uuid, str) else None
    )


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


class _DuplicateQuestions:
    """The file-level check: normalised question (hash) -> gold text (hash) -> first line."""

    def __init__(self, settings: CheckSettings) -> None:
        self._settings = settings
        self._seen: dict[bytes, dict[bytes, tuple[int | None, str]]] = {}

    def check(self, view: _View, line: int | None) -> Finding | None:
        gold = view.gold_text
        if view.question is None or gold is None or not view.question.strip():
            return None
        key = hashlib.blake2b(digest_size=16)
        key.update(normalise_option_text(view.question, punctuation=True).encode())
        if self._settings.params["same_choices"]:
            choices = sorted(
                normalise_option_text(t, punctuation=True, numeric=True)
                for t in view.texts.values()
            )
            key.update(b"\x00" + "\x1f".join(choices).encode())
        gold_key = hashlib.blake2b(
            normalise_option_text(gold, punctuation=True, numeric=True).encode(), digest_size=16
        ).digest()
        golds = self._seen.setdefault(key.digest(), {})
        earlier = next(((ln, text) for g, (ln, text) in golds.items() if g != gold_key), None)
        golds.setdefault(gold_key, (line, _quote(gold, 30)))
        if earlier is None:
            return None
        where = f"line {earlier[0]}" if earlier[0] is not None else "an earlier row"
        return Finding(
            "conflicting_duplicate_question",
            self._settings.severity,
            view.gold_field,
            f"{where} has the same question with the gold answer {earlier[1]}, here it is "
            f"{_quote(gold, 30)}: keep one row, or make both golds agree",
        )


def audit_rows(
    rows: Iterable[JsonlRow | JsonlError | Any], *, config: AuditConfig | None = None
) -> Iterator[Audit]:
    """One ``Audit`` per row, in order, with the file-level check; rows may be ``iter_jsonl``
    items (so line numbers and unreadable lines are reported) or plain decoded values."""
    config = config or AuditConfig.default()
    duplicates = (
        _DuplicateQuestions(config.checks["conflicting_duplicate_question"])
        if config.enabled("conflicting_duplicate_question")
        else None
    )
    for number, item in enumerate(rows, start=1):
        if isinstance(item, JsonlError):
            findings = _unreadable(config, f"the line is not JSON: {item.message}")
            yield Audit(findings=findings, line=item.line)
            continue
        line, row = (item.line, item.value) if isinstance(item, JsonlRow) else (number, item)
        result = audit_row(row, config=config, line=line)
        if duplicates is not None and isinstance(row, Mapping):
            found = duplicates.check(_view_of_row(row), line)
            if found is not None:
                result = attrs.evolve(result, findings=(*result.findings, found))
        yield result


def audit_file(path: str | Path, *, config: AuditConfig | None = None) -> Iterator[Audit]:
    """One ``Audit`` per non-blank line of a JSONL file, streaming."""
    return audit_rows(iter_jsonl(path), config=config)


# --- the summary ---------------------------------------------------------------------------------


class AuditSummary:
    """Counts over a stream of audits: findings per check and severity, and the worst rows."""

    def __init__(self, worst: int = 5) -> None:
        self.rows = 0
        self.rows_with_findings = 0
        self.errors = 0
        self.warnings = 0
        self.per_check: Counter[tuple[str, str]] = Counter()  # findings per (check, severity)
        self.per_check_rows: Counter[tuple[str, str]] = Counter()  # rows with such a finding
        self._worst_n = worst
        self._worst: list[tuple[int, int, int, int]] = []  # (errors, warnings, -order, line)

    def add(self, result: Audit) -> None:
        self.rows += 1
        if not result.findings:
            return
        self.rows_with_findings += 1
        errors, warnings = len(result.errors), len(result.warnings)
        self.errors += errors
        self.warnings += warnings
        for finding in result.findings:
            self.per_check[finding.check, finding.severity] += 1
        for key in {(f.check, f.severity) for f in result.findings}:
            self.per_check_rows[key] += 1
        entry = (
            errors,
            warnings,
            -self.rows,
            result.line if result.line is not None else self.rows,
        )
        if len(self._worst) < self._worst_n:
            heapq.heappush(self._worst, entry)
        else:
            heapq.heappushpop(self._worst, entry)

    @property
    def worst(self) -> list[tuple[int, int, int]]:
        """(line, errors, warnings) of the rows with the most errors, then warnings, then first."""
        return [(line, e, w) for e, w, _, line in sorted(self._worst, reverse=True)]

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "rows_with_findings": self.rows_with_findings,
            "errors": self.errors,
            "warnings": self.warnings,
            "checks": {
                check: {
                    "severity": severity,
                    "count": count,
                    "rows": self.per_check_rows[check, severity],
                }
                for (check, severity), count in self._ordered()
            },
            "worst_rows": [{"line": ln, "errors": e, "warnings": w} for ln, e, w in self.worst],
        }

    def _ordered(self) -> list[tuple[tuple[str, str], int]]:
        order = list(_CHECKS)
        return sorted(
            self.per_check.items(),
            key=lambda item: (
                order.index(item[0][0]) if item[0][0] in order else len(order),
                item[0][1],
            ),
        )

    def render(self) -> str:
        """The summary as text, one item a line."""
        lines = [
            f"audited {_plural(self.rows, 'row')}: {self.rows_with_findings} with findings "
            f"({_plural(self.errors, 'error')}, {_plural(self.warnings, 'warning')})"
        ]
        if self.per_check:
            width = max(len(check) for check, _ in self.per_check)
            for (check, severity), count in self._ordered():
                rows = self.per_check_rows[check, severity]
                lines.append(
                    f"  {check:<{width}}  {_plural(count, severity)}"
                    + (f" in {_plural(rows, 'row')}" if rows != count else "")
                )
        if self._worst:
            shown = ", ".join(
                f"line {ln} ({_plural(e, 'error')}, {_plural(w, 'warning')})"
                for ln, e, w in self.worst
            )
            lines.append(f"worst rows: {shown}")
        return "\n".join(lines)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
