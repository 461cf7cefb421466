"""Grading modes: YAML rule files loaded safely, checked strictly, and kept in a registry.

A rule file is data. It is composed by the library's bounded YAML reader (``_yaml``: depth,
aliases and size bounded, UTF-8, no tags) into nodes that remember their ``line:column``, so every
complaint (an unknown key, a duplicate key, an unknown step kind, a bad parameter, an invalid
regex, a weight that is not finite) points at the place in the file and shows the line. In a rules
directory, a symbolic link that leads outside the directory is refused unread.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeAlias

import attrs
import cattrs
import yaml

from ._errors import ChoiceboxError, RuleFileError, UnknownModeError
from ._resources import builtin_rule_files
from ._wire import converter
from ._yaml import YamlDocument, compose, read_file
from .find import FAILURE_KINDS, FailureKind, ParameterError, Step, step_kinds
from .find._api import RENAMED_KINDS, step_kind
from .resolve import ChainEntry, FirstStep, Policy, policy_kind, policy_kinds

__all__ = [
    "JUDGED_FAILURES",
    "RULES_DIR_ENV",
    "ChainEntry",
    "GradingMode",
    "ModeExample",
    "ModeRegistry",
    "default_registry",
    "load_mode_file",
    "parse_mode",
]

RULES_DIR_ENV: Final = "CHOICEBOX_RULES_DIR"
FORMAT_VERSION: Final = 1
COMPONENTS: Final = ("correctness", "format", "unambiguous")

_MODE_KEYS: Final = frozenset(
    {"version", "id", "description", "extends", "overrides", "resolve", "strategy",
     "strip_reasoning", "strip_invisible", "fit_for_training", "weights", "chain", "examples", "deviations",
     "judge"}
)  # fmt: skip
_ENTRY_KEYS: Final = frozenset({"kind", "id", "primary", "when"})
_WHEN: Final = ("answer_prefix", "no_commitment")
_EXAMPLE_KEYS: Final = frozenset({"output", "options", "expected", "note", "failure"})
_DEFAULT_OPTIONS: Final = {"A": "optA", "B": "optB", "C": "optC", "D": "optD"}
# The failure kinds a mode may send to a model judge (``judge:``): verdicts without a letter whose
# text is there to be read. The others, and why no judge may overrule them.
JUDGED_FAILURES: Final = (
    "no_answer", "ambiguous", "conflicting", "not_an_option", "refusal", "invalid_regex", "regex_timeout",
)  # fmt: skip
_NEVER_JUDGED: Final = {
    "wrong_answer": "the rules read a letter, and a judge does not overrule a letter read",
    "empty": "there is no text to read",
    "invalid_output": "no text was found in the response",
    "unfinished_reasoning": "the text is cut off inside a reasoning block, which is never read",
    "too_long": "the output is over the per-row budget, which holds for a judge too",
}


@attrs.frozen(kw_only=True)
class ModeExample:
    """An embedded example: an output, the options, and the letter it must give (or ``None``)."""

    output: str
    options: Mapping[str, str]
    expected: str | None
    failure: str | None = None
    note: str = ""
    line: int | None = None


@attrs.frozen(kw_only=True)
class GradingMode:
    """A grading mode: an ordered chain of steps, the policy that resolves what they find, and
    how to weigh the rewards.

    ``resolve`` names the policy (``first_step``: the first step in chain order that answers;
    ``last_position``: the statement made last; ``conclusion``: the response's concluding
    commitment, see ``choicebox.resolve._conclusion``); ``policy`` is the configured policy itself.
    """

    id: str
    description: str
    chain: tuple[ChainEntry, ...]
    resolve: str = "first_step"
    policy: Policy = attrs.field(factory=FirstStep)
    strip_reasoning: bool = False
    strip_invisible: bool = False
    fit_for_training: bool = False
    weights: Mapping[str, float] = attrs.field(factory=lambda: {"correctness": 1.0})
    examples: tuple[ModeExample, ...] = ()
    deviations: tuple[str, ...] = ()
    # The failure kinds whose verdicts carry ``needs_judge`` (``judge:`` in the file): the rows a
    # model judge may read after the rules (``choicebox.judge``). None by default, so a mode
    # keeps NeMo Gym's rewards unless its file opts in.
    judge: frozenset[FailureKind] = frozenset()
    extends: str | None = None
    source: str = "<memory>"

    @property
    def strategy(self) -> str:
        """The old name of ``resolve``, kept for code written against it."""
        return self.resolve


# --- YAML with positions -------------------------------------------------------------------------


# Positions, bounds and plain values come from the library's one YAML reader.
_Located: TypeAlias = YamlDocument[RuleFileError]


def _mapping_items(node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    assert isinstance(node, yaml.MappingNode)
    return {str(k.value): (k, v) for k, v in node.value}


def _compose(path: str, text: str) -> tuple[_Located, yaml.Node]:
    located, node = compose(text, path=path, error=RuleFileError)
    if node is None:
        raise RuleFileError("the file is empty", path=path)
    if not isinstance(node, yaml.MappingNode):
        raise located.error("a rule file must be a mapping", node)
    return located, node


# --- parsing a mode ------------------------------------------------------------------------------


def _build_step(located: _Located, kind: str, params: Mapping[str, Any], node: yaml.Node) -> Step:
    step: Step = _build(
        located, kind, params, node, what="step kind", find=step_kind, every=step_kinds,
        renamed=RENAMED_KINDS,
    )
    return step


def _build(
    located: _Located,
    kind: str,
    params: Mapping[str, Any],
    node: yaml.Node,
    *,
    what: str,
    find: Callable[[str], type[Any] | None],
    every: Callable[[], Mapping[str, type[Any]]],
    renamed: Mapping[str, str] | None = None,
) -> Any:
    """An instance of the registered attrs class ``kind`` from a rule file's parameters, every
    problem located at the parameter (or the entry) it comes from. ``find`` looks one kind up
    (importing only what it needs); ``every`` lists them all, for the complaint."""
    cls = find(kind)
    if cls is None and renamed and kind in renamed:
        raise located.error(f"{what} {kind!r} was renamed {renamed[kind]!r}", node)
    if cls is None:
        raise located.error(f"unknown {what} {kind!r}; known: {', '.join(sorted(every()))}", node)
    known = {a.alias for a in attrs.fields(cls) if a.init}
    items = _mapping_items(node) if isinstance(node, yaml.MappingNode) else {}
    for name in params:
        if name not in known:
            raise located.error(
                f"unknown parameter {name!r} for {what} {kind!r}; "
                f"its parameters: {', '.join(sorted(known)) or '(none)'}",
                items[name][0] if name in items else node,
            )
    try:
        return converter().structure(dict(params), cls)
    except ParameterError as exc:
        where = items[exc.name][1] if exc.name in items else node
        raise located.error(f"bad parameter {exc.name!r} for {what} {kind!r}: {exc}", where) from None
    except cattrs.BaseValidationError as exc:
        own = _parameter_error(exc)
        if own is not None:
            where = items[own.name][1] if own.name in items else node
            raise located.error(f"bad parameter {own.name!r} for {what} {kind!r}: {own}", where) from None
        messages = cattrs.transform_error(exc, path="params")
        first = messages[0] if messages else str(exc)
        key, leaf = _failed_parameter(exc)
        if first.startswith("unknown error") and leaf is not None:
            first = f"{leaf} @ params.{key}" if key else str(leaf)  # cattrs has no words for it
        where = items[key][1] if key is not None and key in items else node
        raise located.error(f"bad parameter for {what} {kind!r}: {first}", where) from None
    except (ValueError, TypeError) as exc:
        raise located.error(f"bad parameter for {what} {kind!r}: {exc}", node) from None


def _parse_policy(located: _Located, node: yaml.Node) -> tuple[str, Policy]:
    """``resolve: name`` or ``resolve: {policy: name, <parameters>}``."""
    raw = located.value(node)
    if isinstance(raw, str):
        name, params = raw, {}
    elif isinstance(raw, dict) and isinstance(raw.get("policy"), str):
        name, params = raw["policy"], {k: v for k, v in raw.items() if k != "policy"}
    else:
        raise located.error("resolve must name a policy, or be a mapping with a 'policy'", node)
    policy: Policy = _build(
        located, name, params, node, what="resolution policy", find=policy_kind, every=policy_kinds
    )
    return name, policy


def _failed_parameter(exc: BaseException) -> tuple[str | None, BaseException | None]:
    """The parameter a cattrs validation error is about and the innermost error, read from the
    structured notes cattrs attaches (``AttributeValidationNote``), not from its message."""
    key: str | None = None
    while isinstance(exc, cattrs.ClassValidationError | cattrs.IterableValidationError):
        with_notes, without = exc.group_exceptions()
        if with_notes:
            inner, note = with_notes[0]
            if key is None and isinstance(note, cattrs.AttributeValidationNote):
                key = note.name
            exc = inner
        elif without:
            exc = without[0]
        else:
            return key, None
    return key, exc


def _parameter_error(exc: BaseException) -> ParameterError | None:
    """The first ``ParameterError`` inside a cattrs exception group, if any."""
    if isinstance(exc, ParameterError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _parameter_error(inner)
        if found is not None:
            return found
    return exc.__cause__ if isinstance(exc.__cause__, ParameterError) else None


def _parse_chain(located: _Located, node: yaml.Node) -> list[ChainEntry]:
    if not isinstance(node, yaml.SequenceNode):
        raise located.error("chain must be a list of steps", node)
    entries: list[ChainEntry] = []
    seen: set[str] = set()
    for item in node.value:
        if not isinstance(item, yaml.MappingNode):
            raise located.error("a step must be a mapping with a 'kind'", item)
        raw = located.value(item)
        items = _mapping_items(item)
        kind = raw.get("kind")
        if not isinstance(kind, str):
            raise located.error("a step needs a 'kind' naming its step kind", item)
        params = {k: v for k, v in raw.items() if k not in _ENTRY_KEYS}
        step = _build_step(located, kind, params, item)
        entry_id = raw.get("id", kind)
        if not isinstance(entry_id, str) or not entry_id:
            raise located.error("a step 'id' must be a non-empty string", items["id"][1])
        if entry_id in seen:
            raise located.error(
                f"step id {entry_id!r} is used twice in this chain; give the steps distinct ids",
                items.get("id", items["kind"])[1],
            )
        seen.add(entry_id)
        primary = raw.get("primary", False)
        if not isinstance(primary, bool):
            raise located.error("'primary' must be true or false", items["primary"][1])
        when = raw.get("when")
        if when is not None and when not in _WHEN:
            raise located.error(f"'when' may only be {' or '.join(_WHEN)}", items["when"][1])
        entries.append(
            ChainEntry(
                id=entry_id,
                step=step,
                primary=primary,
                when_answer_prefix=when == "answer_prefix",
                when_no_commitment=when == "no_commitment",
            )
        )
    return entries


def _parse_judge(located: _Located, node: yaml.Node) -> frozenset[FailureKind]:
    """``judge: [no_answer, ...]``: the failure kinds sent to a model judge, each checked."""
    if not isinstance(node, yaml.SequenceNode):
        raise located.error("judge must be a list of failure kinds, e.g. [no_answer]", node)
    kinds: set[str] = set()
    for item in node.value:
        kind = located.value(item)
        if not isinstance(kind, str) or kind not in FAILURE_KINDS:
            raise located.error(
                f"unknown failure kind {kind!r}; a judge may read: {', '.join(JUDGED_FAILURES)}", item
            )
        if kind in _NEVER_JUDGED:
            raise located.error(f"{kind} is never sent to a judge: {_NEVER_JUDGED[kind]}", item)
        if kind in kinds:
            raise located.error(f"{kind} is listed twice", item)
        kinds.add(kind)
    return frozenset(kinds)  # type: ignore[arg-type]  # each one checked against FAILURE_KINDS


def _parse_examples(located: _Located, node: yaml.Node) -> list[ModeExample]:
    if not isinstance(node, yaml.SequenceNode):
        raise located.error("examples must be a list", node)
    examples: list[ModeExample] = []
    for item in node.value:
        raw = located.value(item)
        if not isinstance(raw, dict):
            raise located.error("an example must be a mapping", item)
        items = _mapping_items(item)
        for key in raw:
            if key not in _EXAMPLE_KEYS:
                raise located.error(
                    f"unknown example key {key!r}; known keys: {', '.join(sorted(_EXAMPLE_KEYS))}",
                    items[key][0],
                )
        if not isinstance(raw.get("output"), str):
            raise located.error("an example needs an 'output' string", item)
        if "expected" not in raw:
            raise located.error(
                "an example needs 'expected' (a letter, or null for no answer)", item
            )
        options = raw.get("options", _DEFAULT_OPTIONS)
        if isinstance(options, list):
            options = {chr(ord("A") + i): str(text) for i, text in enumerate(options)}
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            raise located.error("'options' must map letters to texts", items["options"][1])
        expected = raw["expected"]
        if expected is not None and (not isinstance(expected, str) or expected not in options):
            raise located.error(
                f"expected {expected!r} is not one of the example's options", items["expected"][1]
            )
        failure = raw.get("failure")
        if failure is not None:
            if failure not in FAILURE_KINDS or failure == "wrong_answer":
                kinds = ", ".join(k for k in FAILURE_KINDS if k != "wrong_answer")
                raise located.error(
                    f"unknown failure {failure!r}; an example's failure is one of: {kinds}",
                    items["failure"][1],
                )
            if expected is not None:
                raise located.error(
                    "an example with an expected letter has no failure; use expected: null",
                    items["failure"][1],
                )
        examples.append(
            ModeExample(
                output=raw["output"],
                options={str(k): v for k, v in options.items()},
                expected=expected,
                failure=raw.get("failure"),
                note=str(raw.get("note", "")),
                line=item.start_mark.line + 1,
            )
        )
    return examples


def parse_mode(
    text: str, *, path: str = "<string>", parents: Mapping[str, GradingMode] | None = None
) -> tuple[GradingMode, bool]:
    """Parse one rule file's text; returns the mode and whether it may override a built-in."""
    located, root = _compose(path, text)
    return _parse_composed(located, root, parents=parents)


def _parse_composed(
    located: _Located,
    root: yaml.Node,
    raw: dict[str, Any] | None = None,
    *,
    parents: Mapping[str, GradingMode] | None,
) -> tuple[GradingMode, bool]:
    """``parse_mode`` of a composed file; ``raw`` is its plain data when already read."""
    path = located.path
    items = _mapping_items(root)
    for key, (key_node, _) in items.items():
        if key not in _MODE_KEYS:
            raise located.error(
                f"unknown key {key!r}; known keys: {', '.join(sorted(_MODE_KEYS))}", key_node
            )
    if raw is None:
        raw = located.value(root)  # also rejects duplicate keys anywhere
    version = raw.get("version")
    if version != FORMAT_VERSION:
        raise located.error(
            f"unsupported format version {version!r}; this choicebox reads version {FORMAT_VERSION}",
            items["version"][1] if "version" in items else root,
        )
    mode_id = raw.get("id")
    if not isinstance(mode_id, str) or not mode_id.strip():
        raise located.error(
            "a mode needs an 'id' (its mode name)", items["id"][1] if "id" in items else root
        )
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise located.error(
            "a mode needs a 'description'",
            items["description"][1] if "description" in items else root,
        )

    parent: GradingMode | None = None
    extends = raw.get("extends")
    if extends is not None:
        if not isinstance(extends, str):
            raise located.error("extends must name one mode", items["extends"][1])
        if parents is None or extends not in parents:
            known = ", ".join(sorted(parents or ()))
            raise located.error(
                f"extends unknown mode {extends!r}; known modes: {known}", items["extends"][1]
            )
        parent = parents[extends]

    chain = list(parent.chain) if parent else []
    if "chain" in items:
        chain += _parse_chain(located, items["chain"][1])
    if not chain:
        raise located.error(
            "a mode needs a non-empty 'chain' of steps", items.get("chain", (root, root))[1]
        )
    ids = [entry.id for entry in chain]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise located.error(f"step ids used twice after extending: {', '.join(duplicated)}", root)

    resolve_name, policy = (parent.resolve, parent.policy) if parent else ("first_step", FirstStep())
    if "resolve" in items and "strategy" in items:
        raise located.error("give 'resolve' or its old name 'strategy', not both", items["strategy"][0])
    if "resolve" in items or "strategy" in items:
        # ``strategy`` is the old name of ``resolve`` (first_step or last_position).
        key = "resolve" if "resolve" in items else "strategy"
        resolve_name, policy = _parse_policy(located, items[key][1])
    strip = raw.get("strip_reasoning", parent.strip_reasoning if parent else False)
    if not isinstance(strip, bool):
        raise located.error("strip_reasoning must be true or false", items["strip_reasoning"][1])
    invisible = raw.get("strip_invisible", parent.strip_invisible if parent else False)
    if not isinstance(invisible, bool):
        raise located.error("strip_invisible must be true or false", items["strip_invisible"][1])
    # Not inherited: a mode that extends a training mode has not been held to the property yet.
    training = raw.get("fit_for_training", False)
    if not isinstance(training, bool):
        raise located.error("fit_for_training must be true or false", items["fit_for_training"][1])
    weights = raw.get("weights", dict(parent.weights) if parent else {"correctness": 1.0})
    if not isinstance(weights, dict) or not weights:
        raise located.error("weights must map reward components to numbers", items["weights"][1])
    for name, weight in weights.items():
        if name not in COMPONENTS:
            raise located.error(
                f"unknown reward component {name!r}; components: {', '.join(COMPONENTS)}",
                items["weights"][1],
            )
        if not isinstance(weight, int | float) or isinstance(weight, bool):
            raise located.error(f"weight of {name!r} must be a number", items["weights"][1])
        if not math.isfinite(weight):
            # A NaN or infinite reward would pass every row and then abort the run's metrics.
            where = _mapping_items(items["weights"][1])[name][1]
            raise located.error(f"weight of {name!r} must be a finite number, not {weight}", where)
    overrides = raw.get("overrides", False)
    if not isinstance(overrides, bool):
        raise located.error("overrides must be true or false", items["overrides"][1])
    deviations = raw.get("deviations", [])
    if not isinstance(deviations, list) or not all(isinstance(d, str) for d in deviations):
        raise located.error("deviations must be a list of strings", items["deviations"][1])
    examples = _parse_examples(located, items["examples"][1]) if "examples" in items else []
    # Inherited: which rows a judge may read is the parent's reading policy, as strip_reasoning is.
    judge = _parse_judge(located, items["judge"][1]) if "judge" in items else (parent.judge if parent else frozenset())
    mode = GradingMode(
        id=mode_id,
        description=description.strip(),
        chain=tuple(chain),
        resolve=resolve_name,
        policy=policy,
        strip_reasoning=strip,
        strip_invisible=invisible,
        fit_for_training=training,
        weights={k: float(v) for k, v in weights.items()},
        examples=tuple(examples),
        deviations=tuple(deviations),
        judge=judge,
        extends=extends,
        source=path,
    )
    return mode, overrides


def load_mode_file(
    path: str | Path, *, parents: Mapping[str, GradingMode] | None = None
) -> GradingMode:
    """Load one rule file from disk."""
    text = read_file(path, error=RuleFileError)
    return parse_mode(text, path=str(path), parents=parents)[0]


# --- the registry --------------------------------------------------------------------------------


def _rule_paths(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise RuleFileError("not a directory of rule files", path=str(directory))
    paths = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    for path in paths:
        if not path.is_file():
            # A rule file that is a device, a pipe or a directory (also behind a link) is refused
            # by name, as a link that leaves the directory is: never skipped in silence.
            raise RuleFileError("not a regular file", path=str(path))
    return paths


def _composed(path: str, text: str) -> tuple[_Located, yaml.Node, dict[str, Any]] | None:
    """A rule file composed, with its plain data; ``None`` when it is no valid mapping
    (``parse_mode`` then reports why, located)."""
    try:
        located, root = _compose(path, text)
        return located, root, located.value(root)
    except ChoiceboxError:
        return None


def _extends_of(data: Any) -> str | None:
    extends = data.get("extends") if isinstance(data, dict) else None
    return extends if isinstance(extends, str) else None


@attrs.frozen
class _Unparsed:
    """A built-in rule file the registry parses on first use."""

    source: str
    text: str


class _Parents(Mapping[str, "GradingMode"]):
    """The registry's modes as ``parse_mode``'s parents: a built-in is parsed when asked for."""

    def __init__(self, registry: ModeRegistry) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> GradingMode:
        mode = self._registry._parsed(name)
        if mode is None:
            raise KeyError(name)
        return mode

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry._modes)

    def __len__(self) -> int:
        return len(self._registry._modes)


class ModeRegistry:
    """The grading modes by name: the built-ins, then any user rule directories.

    A user file whose id equals a built-in's is an error unless it says ``overrides: true``;
    two user files with one id are always an error. A built-in mode is parsed when first used
    (a process grading in one mode does not compose and build the others: robust.yaml alone
    takes about 0.1 s); its id is its file's name, which parsing checks.
    """

    def __init__(self, modes: Mapping[str, GradingMode] | None = None) -> None:
        self._modes: dict[str, GradingMode | _Unparsed] = dict(modes or {})
        self._builtin: frozenset[str] = frozenset(self._modes)

    @classmethod
    def with_builtins(cls, rules_dirs: Sequence[str | Path] = ()) -> ModeRegistry:
        """The built-in modes plus those found in ``rules_dirs``."""
        registry = cls()
        for file in builtin_rule_files():
            name = file.name.rsplit(".", 1)[0]
            registry._modes[name] = _Unparsed(f"<builtin>/{file.name}", file.read_text(encoding="utf-8"))
        registry._builtin = frozenset(registry._modes)
        for directory in rules_dirs:
            registry.add_directory(directory)
        return registry

    def _parsed(self, name: str) -> GradingMode | None:
        """The mode ``name`` (a built-in parsed now if not yet), ``None`` if there is none."""
        entry = self._modes.get(name)
        if not isinstance(entry, _Unparsed):
            return entry
        del self._modes[name]  # while it parses: a file that extends itself finds no parent
        try:
            mode, _ = parse_mode(entry.text, path=entry.source, parents=_Parents(self))
        except BaseException:
            self._modes[name] = entry
            raise
        if mode.id != name:
            self._modes[name] = entry
            raise RuleFileError(
                f"a built-in rule file must declare its own name as its id, {name!r}, not {mode.id!r}",
                path=entry.source,
            )
        self._modes[name] = mode
        return mode

    def add_directory(self, directory: str | Path) -> list[GradingMode]:
        """Load every ``*.yaml`` rule file of ``directory``; returns the modes it added."""
        # Confined to the directory: a link to a file elsewhere (/etc/passwd) is refused unread.
        sources = [
            (str(p), read_file(p, error=RuleFileError, within=directory))
            for p in _rule_paths(Path(directory))
        ]
        return self._add_sources(sources, builtin=False)

    def _add_sources(
        self, sources: Iterable[tuple[str, str]], *, builtin: bool
    ) -> list[GradingMode]:
        pending = list(sources)
        added: list[GradingMode] = []
        # Each file composed once, for the ordering below (which asks every file about every
        # other) and for parsing it: composing YAML is most of the start-up's cost.
        composed = {text: _composed(path, text) for path, text in pending}
        plain = {text: None if found is None else found[2] for text, found in composed.items()}
        # Parents first: a file that extends a mode defined later in the same batch waits for it.
        for _ in range(len(pending) + 1):
            waiting = []
            for path, text in pending:
                parent = _extends_of(plain[text])
                if (
                    parent is not None
                    and parent not in self
                    and any(
                        _declares(plain[other], parent) for _, other in pending if other is not text
                    )
                ):
                    waiting.append((path, text))
                    continue
                found = composed[text]
                if found is None:
                    mode, overrides = parse_mode(text, path=path, parents=_Parents(self))
                else:
                    located, root, raw = found
                    mode, overrides = _parse_composed(located, root, raw, parents=_Parents(self))
                self._register(mode, overrides=overrides, builtin=builtin)
                added.append(mode)
            if not waiting or len(waiting) == len(pending):
                pending = waiting
                break
            pending = waiting
        for path, text in pending:  # a cycle or a missing parent: parse to get the located error
            parse_mode(text, path=path, parents=_Parents(self))
        return added

    def _register(self, mode: GradingMode, *, overrides: bool, builtin: bool) -> None:
        existing = self._modes.get(mode.id)
        replaces_builtin = existing is not None and existing.source.startswith("<builtin>")
        if existing is not None and (builtin or not replaces_builtin or not overrides):
            why = (
                "set 'overrides: true' in the file to replace the built-in mode"
                if replaces_builtin and not builtin
                else "mode ids must be unique"
            )
            raise RuleFileError(
                f"mode {mode.id!r} is already defined by {existing.source}; {why}",
                path=mode.source,
            )
        self._modes[mode.id] = mode

    def get(self, name: str) -> GradingMode:
        """The mode called ``name``; ``UnknownModeError`` lists the known ones."""
        mode = self._parsed(name)
        if mode is None:
            raise UnknownModeError(name, list(self._modes))
        return mode

    def __contains__(self, name: object) -> bool:
        return name in self._modes

    def __iter__(self) -> Iterator[GradingMode]:
        return iter(sorted(map(self.get, list(self._modes)), key=lambda m: m.id))

    def names(self) -> list[str]:
        return sorted(self._modes)

    def is_builtin(self, name: str) -> bool:
        return name in self._builtin and self._modes[name].source.startswith("<builtin>")


def _declares(data: Any, mode_id: str) -> bool:
    return isinstance(data, dict) and data.get("id") == mode_id


_DEFAULT: dict[tuple[str, ...], ModeRegistry] = {}


def default_registry(rules_dirs: Sequence[str | Path] = ()) -> ModeRegistry:
    """The built-in modes plus ``rules_dirs`` and the directories in ``$CHOICEBOX_RULES_DIR``.

    Cached per set of directories: rule files are read once per process, never per grade call.
    """
    env = os.environ.get(RULES_DIR_ENV, "")
    dirs = tuple(str(d) for d in rules_dirs) + tuple(d for d in env.split(os.pathsep) if d)
    registry = _DEFAULT.get(dirs)
    if registry is None:
        registry = _DEFAULT[dirs] = ModeRegistry.with_builtins(dirs)
    return registry
