"""Grading whole JSONL files: the engine under ``choicebox grade``, usable without argparse.

One engine (``Grader``) decodes, grades and encodes rows; two runners drive it: the local runner
(``grade_file``: this process or a pool of workers) and Ray (``choicebox.batch.ray``, with the
``ray`` extra). Both write the same output file and the same metrics files.

The file is streamed in spans of whole lines (about a megabyte each), and the encoded rows are
appended in input order to ``OUTPUT.partial``, which is renamed to ``OUTPUT`` once complete. What
is kept is per-task rewards (for pass@k) and per-category tallies, never the rows, so memory
stays flat however large the input is. Every non-blank input line becomes exactly one output
line: a graded row (NeMo Gym's verify-response shape) or an error row
``{"error": "line N: ...", "uuid": ..., "line": N}``; that one-to-one mapping makes ``resume``
exact.
"""

from __future__ import annotations

from choicebox._errors import BatchError

from ._engine import Grader
from ._local import (
    AGGREGATE_SUFFIX,
    CHUNK_BYTES,
    FAILURES_SUFFIX,
    BatchResult,
    Progress,
    default_output,
    grade_file,
    partial_path,
    sidecar_paths,
)
from ._metrics import BatchMetrics
from ._records import RowRecord

__all__ = [
    "AGGREGATE_SUFFIX",
    "CHUNK_BYTES",
    "FAILURES_SUFFIX",
    "BatchError",
    "BatchMetrics",
    "BatchResult",
    "Grader",
    "Progress",
    "RowRecord",
    "default_output",
    "grade_file",
    "partial_path",
    "sidecar_paths",
]
