"""What the judge is shown of a graded row: its verdict as written, its mode, and the request
(question, options, the text the mode read). The one reading every judge pass uses: the file pass
(``choicebox.batch.judge_file``) and the verify server's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from choicebox._errors import UnknownModeError, WireFormatError
from choicebox._grading import reading_text
from choicebox._modes import GradingMode, ModeRegistry
from choicebox._reader import read_mcqa_row
from choicebox._rollout import response_text
from choicebox.render import Verdict, verdict_of_row

from ._judge import JudgeRequest

__all__ = ["JudgedRow", "judged_row"]


class JudgedRow(NamedTuple):
    """A graded row as the judge sees it."""

    verdict: Verdict
    mode: GradingMode
    request: JudgeRequest


def judged_row(row: Mapping[str, Any], registry: ModeRegistry) -> JudgedRow | None:
    """``row``'s verdict (read off its fields, not graded again), its mode and the judge's request;
    ``None`` when one of them cannot be read (an error row, an unknown mode, no response text):
    such a row keeps what it says."""
    if "error" in row or "response" not in row:
        return None
    verdict = verdict_of_row(row)
    reading = read_mcqa_row(row, rollout=True)
    if verdict is None or isinstance(reading, list):
        return None
    try:
        mode = registry.get(verdict.mode)
        text = reading_text(mode, response_text(row["response"]))
    except (UnknownModeError, WireFormatError):
        return None
    if text is None:
        return None
    return JudgedRow(verdict, mode, JudgeRequest(question=reading.question, options=reading.options, response=text))
