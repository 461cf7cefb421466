"""Grading whole JSONL files: the engine under ``choicebox grade``, usable without argparse.

``Grader`` decodes, grades and encodes rows. One file pipeline (``_pipeline``) drives it through
a runner: the local runner (``grade_file``: this process, alone or with a pool of workers) or Ray
(``choicebox.batch.ray.grade_file_ray``, with the ``ray`` extra). A runner only turns spans of
the input into graded bytes and records; reading, resuming, writing and counting are the
pipeline's, so both write the same output file and the same metrics files.

The file is streamed in spans of whole lines (about a megabyte each), and the encoded rows are
appended in input order to ``OUTPUT.partial``, which is renamed to ``OUTPUT`` once complete. What
is kept is what ``choicebox.metrics.MetricsAccumulator`` needs (per-task rewards for pass@k,
per-category tallies), never the rows, so memory stays small however large the input is. Every
non-blank input line becomes exactly one output line: a graded row (NeMo Gym's verify-response
shape) or an error row ``{"error": "line N: ...", "uuid": ..., "line": N}``; that one-to-one
mapping makes ``resume`` exact.

``judge_file`` is the judge pass over a graded file (``choicebox grade --judge-url``): the rows a
mode flagged for a model judge, judged and rewritten in place with their metrics.
"""

from __future__ import annotations

from choicebox._errors import BatchError
from choicebox.metrics import AGGREGATE_SUFFIX, FAILURES_SUFFIX, RowRecord

from ._engine import Grader
from ._files import default_output, partial_path, sidecar_paths
from ._judging import JudgeResult, judge_file, judging_path
from ._local import grade_file
from ._pipeline import CHUNK_BYTES, BatchResult, Progress

__all__ = [
    "AGGREGATE_SUFFIX",
    "CHUNK_BYTES",
    "FAILURES_SUFFIX",
    "BatchError",
    "BatchResult",
    "Grader",
    "JudgeResult",
    "Progress",
    "RowRecord",
    "default_output",
    "grade_file",
    "judge_file",
    "judging_path",
    "partial_path",
    "sidecar_paths",
]
