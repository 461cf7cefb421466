"""Metrics over graded rows: pass@k, bootstrap intervals, category and failure breakdowns.

One accumulator counts everything: :class:`MetricsAccumulator` takes graded rows (or their
:class:`RowRecord`, what ``choicebox grade``'s workers send back) and keeps only what each metric
needs: per task a short list of rewards and answers, per category a byte per row, per failure kind
a count and a few exemplars. It serves two audiences:

* ``choicebox grade``, which streams millions of rows and must not keep them, and writes the
  :class:`MetricsDocument` the accumulator makes (``<stem>_aggregate_metrics.json`` and
  ``<stem>_failure_analysis.json``).
* Users of NeMo Gym, who compare our numbers with the ``mcqa`` server's ``/aggregate_metrics``:
  :meth:`MetricsAccumulator.result` (and :func:`aggregate_metrics`, and ``choicebox serve``)
  reproduce that endpoint's ``agent_metrics`` and ``key_metrics`` bit for bit: same keys, same
  order, same floating-point summation order.

:func:`category_breakdown` and :func:`failure_analysis` are the accumulator run once over a list.
``choicebox.metrics.report`` renders a metrics document as a self-contained HTML page.
"""

from __future__ import annotations

from choicebox._errors import MetricsError

from ._accumulator import (
    MetricsAccumulator,
    aggregate_metrics,
    category_breakdown,
    failure_analysis,
)
from ._document import (
    AGGREGATE_SUFFIX,
    FAILURES_SUFFIX,
    CategoryEntry,
    FailureAnalysis,
    FailureCount,
    FailureExemplar,
    MetricsDocument,
    RunSummary,
)
from ._records import RowRecord
from ._stats import CategoryStats, ConfidenceInterval, bootstrap_ci, pass_at_k, wilson_interval

__all__ = [
    "AGGREGATE_SUFFIX",
    "FAILURES_SUFFIX",
    "CategoryEntry",
    "CategoryStats",
    "ConfidenceInterval",
    "FailureAnalysis",
    "FailureCount",
    "FailureExemplar",
    "MetricsAccumulator",
    "MetricsDocument",
    "MetricsError",
    "RowRecord",
    "RunSummary",
    "aggregate_metrics",
    "bootstrap_ci",
    "category_breakdown",
    "failure_analysis",
    "pass_at_k",
    "wilson_interval",
]
