"""Audit configuration: which checks run, their severity and parameters, read from YAML."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypeAlias

import attrs
import yaml

from choicebox._errors import AuditConfigError
from choicebox._regex import compile_pattern
from choicebox._yaml import compose, read_file

from ._checks import _CHECKS
from ._findings import SEVERITIES, Severity

_CONFIG_PACKAGE: Final = "choicebox.audit"
_CONFIG_FILE: Final = "default.yaml"


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
        text = read_file(path, error=AuditConfigError)
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


_Fail: TypeAlias = Callable[[yaml.Node, str], AuditConfigError]


def _parse_config(text: str, source: str, base: AuditConfig | None) -> AuditConfig:
    """Parse and validate a configuration; ``base`` None means this is the complete default file."""
    document, root = compose(text, path=source, error=AuditConfigError)
    if root is None:
        if base is None:
            raise AuditConfigError("empty configuration", path=source)
        return attrs.evolve(base, source=source)

    def fail(node: yaml.Node, message: str) -> AuditConfigError:
        return document.error(message, node)

    def mapping(node: yaml.Node, what: str) -> list[tuple[yaml.Node, yaml.Node, str]]:
        if not isinstance(node, yaml.MappingNode) or node.tag != _MAP_TAG:
            raise fail(node, f"{what} must be a plain mapping")
        out: list[tuple[yaml.Node, yaml.Node, str]] = []
        seen: set[str] = set()
        for key, value in node.value:
            name = document.value(key)
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
            if document.value(value) != 1:
                raise fail(value, "version: only version 1 is known")
        elif name == "checks":
            for ckey, cvalue, check in mapping(value, "checks"):
                if check not in _CHECKS:
                    raise fail(
                        ckey, f"checks: unknown check {check!r}; known checks: {', '.join(_CHECKS)}"
                    )
                checks[check] = _parse_check(
                    check, cvalue, checks.get(check), mapping, fail=fail, value_of=document.value
                )
        else:
            raise fail(key, f"unknown key {name!r}; expected version, checks")
    if base is None:
        missing = [c for c in _CHECKS if c not in checks]
        if missing:
            raise AuditConfigError(f"no settings for {', '.join(missing)}", path=source)
    return AuditConfig({c: checks[c] for c in _CHECKS if c in checks}, source)


def _parse_check(
    check: str,
    node: yaml.Node,
    old: CheckSettings | None,
    mapping: Callable[[yaml.Node, str], list[tuple[yaml.Node, yaml.Node, str]]],
    *,
    fail: _Fail,
    value_of: Callable[[yaml.Node], Any],
) -> CheckSettings:
    enabled = old.enabled if old is not None else None
    severity: Severity | None = old.severity if old is not None else None
    params = dict(old.params) if old is not None else {}
    for key, value_node, name in mapping(node, check):
        value = value_of(value_node)  # plain data: a tag such as !!python/object is refused
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


