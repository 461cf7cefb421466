"""Metrics over graded rows: pass@k, bootstrap intervals, category and failure breakdowns.

Two audiences share this package:

* The CLI, which streams millions of graded rows and must not keep them. Hence the accumulators
  (:class:`MetricsAccumulator`, :class:`FailureAccumulator`) that keep only what each metric needs:
  per task a short list of rewards and extracted answers, per failure category a count and a few
  exemplars.
* Users of NeMo Gym, who compare our numbers with the ``mcqa`` server's ``/aggregate_metrics``.
  :meth:`MetricsAccumulator.result` reproduces that endpoint's ``agent_metrics`` and
  ``key_metrics`` bit for bit: same keys, same order, same floating-point summation order.

``choicebox.metrics.report`` renders a metrics document as a self-contained HTML page.
"""

from __future__ import annotations

from choicebox._errors import MetricsError

from ._aggregate import MetricsAccumulator, aggregate_metrics
from ._categories import CategoryStats, category_breakdown
from ._failures import FailureAccumulator, failure_analysis
from ._stats import ConfidenceInterval, bootstrap_ci, pass_at_k

__all__ = [
    "CategoryStats",
    "ConfidenceInterval",
    "FailureAccumulator",
    "MetricsAccumulator",
    "MetricsError",
    "aggregate_metrics",
    "bootstrap_ci",
    "category_breakdown",
    "failure_analysis",
    "pass_at_k",
]
