"""Render: the verdict, its wire schema, and everything that writes it.

The third room of the grading pipeline, after ``choicebox.find`` and ``choicebox.resolve``: what a
verdict is (``Verdict``) and the one table of its wire fields (``WIRE_SCHEMA``), and every path that
renders it: the verify-response row and the batch's byte splice (``_rows``), the metrics records
read off a verdict or a written row (``_records``), and the verify service's graded and masked
replies (``_replies``). Each renders from ``WIRE_SCHEMA``; a new verdict field touches that table
and the tests.
"""

from __future__ import annotations

from ._replies import INVALID_ROW_KIND, gym_verify_response, masked_response
from ._rows import WRITTEN_FIELDS, append_spliced, output_row
from ._verdict import (
    JUDGE_FAILURES,
    VERDICT_KEYS,
    WIRE_SCHEMA,
    JudgeFailure,
    Verdict,
    WireField,
    verdict_key,
    verdict_of_row,
)

__all__ = [
    "INVALID_ROW_KIND",
    "JUDGE_FAILURES",
    "VERDICT_KEYS",
    "WIRE_SCHEMA",
    "WRITTEN_FIELDS",
    "JudgeFailure",
    "Verdict",
    "WireField",
    "append_spliced",
    "gym_verify_response",
    "masked_response",
    "output_row",
    "verdict_key",
    "verdict_of_row",
]
