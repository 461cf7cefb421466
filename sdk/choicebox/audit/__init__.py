"""Auditing multiple-choice data: deterministic checks, declared as data, that never change a sample.

Whether a check runs, the severity of its findings and its parameters come from a configuration
file: ``default.yaml`` ships in this package, and a user file laid over it changes only what it
names. Checks read a *view* of a sample: the question, the lettered choices, the gold answer, the
prompt and the template, as far as they can be read. ``audit_row`` builds the view from the raw
JSON object, so the defects that make a row undecodable are findings too; ``audit`` builds it from
a decoded sample. ``audit_rows`` and ``audit_file`` add the one file-level check (the same question
with different gold answers). ``fix`` and ``fix_file`` apply the safe, deterministic repairs.
"""

from __future__ import annotations

from choicebox._errors import AuditConfigError, FixFileError

from ._checks import CheckInfo, audit_checks
from ._config import AuditConfig, CheckSettings
from ._findings import Audit, Finding
from ._run import audit, audit_file, audit_row, audit_rows
from ._summary import AuditSummary
from .fix import Change, FixSummary, RowFix, fix, fix_file, fix_row

__all__ = [
    "Audit",
    "AuditConfig",
    "AuditConfigError",
    "AuditSummary",
    "Change",
    "CheckInfo",
    "CheckSettings",
    "Finding",
    "FixFileError",
    "FixSummary",
    "RowFix",
    "audit",
    "audit_checks",
    "audit_file",
    "audit_row",
    "audit_rows",
    "fix",
    "fix_file",
    "fix_row",
]
