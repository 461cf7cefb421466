"""What an audit reports: findings, one sample's ``Audit``."""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import attrs

Severity: TypeAlias = Literal["error", "warning"]
SEVERITIES: Final[tuple[Severity, ...]] = ("error", "warning")




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


