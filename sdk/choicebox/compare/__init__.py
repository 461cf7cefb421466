"""Where two gradings of one file differ: ``choicebox compare``, usable without argparse.

:func:`compare_file` grades a file of rollouts twice (two modes, or one mode against the
verdicts already recorded in it, such as Gym's ``reward`` and ``extracted_answer``) and counts
the (before, after) verdict pairs, the accuracy change with its paired-bootstrap interval and
McNemar's exact test, and keeps a few exemplars of each change; :func:`render_text` and
:func:`render_html` show it.
"""

from __future__ import annotations

from ._pairs import (
    CLASSES,
    RECORDED,
    ROW_MODE,
    Comparison,
    Exemplar,
    Outcome,
    compare_file,
    mcnemar_exact,
)
from ._render import render_html, render_text

__all__ = [
    "CLASSES",
    "RECORDED",
    "ROW_MODE",
    "Comparison",
    "Exemplar",
    "Outcome",
    "compare_file",
    "mcnemar_exact",
    "render_html",
    "render_text",
]
