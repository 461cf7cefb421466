"""The summary of an audit run: counts per check and severity, and the worst rows."""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Any

from ._checks import _CHECKS
from ._findings import Audit

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
