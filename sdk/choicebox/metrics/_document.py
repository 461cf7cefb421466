"""The metrics document: what ``choicebox grade`` writes beside its output, as typed values.

``<stem>_aggregate_metrics.json`` holds NeMo Gym's ``agent_metrics`` and ``key_metrics``, the
accuracy interval, accuracy per category of each ``--by`` field and a summary of the run;
``<stem>_failure_analysis.json`` holds the failure analysis. :class:`MetricsDocument` is both
files in one value: the accumulator makes one, the CLI summary, the HTML report and the server
read one, and :meth:`MetricsDocument.aggregate_json` / :meth:`MetricsDocument.failure_json` write
the files. :meth:`MetricsDocument.from_json` reads a document back, from these files or from
another tool's: every section but ``agent_metrics`` may be missing, and malformed entries are left
out (with a note, when the caller collects them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeGuard

import attrs

from choicebox._errors import MetricsError

from ._fields import MISSING_CATEGORY
from ._stats import CategoryStats, ConfidenceInterval

AGGREGATE_SUFFIX: Final = "_aggregate_metrics.json"
FAILURES_SUFFIX: Final = "_failure_analysis.json"


@attrs.frozen(kw_only=True)
class RunSummary:
    """What was graded and how it went: ``summary`` in the aggregate file.

    ``extra`` holds the caller's own keys, written after ``mode``. Files written by other tools
    may lack any field.
    """

    input: str | None = None
    output: str | None = None
    mode: str | None = None
    rows: int | None = None
    graded: int | None = None
    errors: int | None = None
    no_answer_rate: float | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input": self.input, "output": self.output, "mode": self.mode}
        out.update(self.extra)
        out["rows"] = self.rows
        out["graded"] = self.graded
        out["errors"] = self.errors
        out["no_answer_rate"] = self.no_answer_rate
        return out


@attrs.frozen(kw_only=True)
class CategoryEntry:
    """Accuracy of one category as a metrics document states it.

    Documents from choicebox always give the count and the interval; other tools' may not.
    """

    category: str
    n_samples: int | None = None
    mean_reward: float
    ci_lower: float | None = None
    ci_upper: float | None = None

    @classmethod
    def of(cls, stats: CategoryStats) -> CategoryEntry:
        return cls(
            category=stats.category,
            n_samples=stats.n_samples,
            mean_reward=stats.mean_reward,
            ci_lower=stats.ci_lower,
            ci_upper=stats.ci_upper,
        )


@attrs.frozen(kw_only=True)
class FailureCount:
    """How many rows failed one way, and their share of all rows."""

    count: int
    rate: float | None = None


@attrs.frozen(kw_only=True)
class FailureExemplar:
    """One failed row, shown as an example of its kind."""

    category: str | None = None
    problem_idx: int | None = None  # the task index, else the row's position
    uuid: str | None = None
    response_preview: str | None = None


@attrs.frozen(kw_only=True)
class FailureAnalysis:
    """Why rows earned no reward: counts per failure kind (most frequent first) and exemplars."""

    total_failures: int | None = None
    failure_rate: float | None = None
    categories: Mapping[str, FailureCount] = attrs.field(factory=dict)
    exemplars: tuple[FailureExemplar, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "total_failures": self.total_failures,
            "failure_rate": self.failure_rate,
            "categories": {
                name: {"count": kind.count, "rate": kind.rate}
                for name, kind in self.categories.items()
            },
            "exemplars": [attrs.asdict(exemplar) for exemplar in self.exemplars],
        }


@attrs.frozen(kw_only=True)
class MetricsDocument:
    """The metrics of a set of graded rows.

    ``agent_metrics``, ``key_metrics``, ``group_level_metrics``, ``repeat_level_metrics`` and
    ``perf_summary`` are NeMo Gym's (open sets of keys, so they stay mappings); ``pass@``/
    ``majority@`` values there are percentages, rewards and intervals elsewhere are fractions in
    [0, 1].
    """

    agent_metrics: Mapping[str, Any]
    key_metrics: Mapping[str, Any] = attrs.field(factory=dict)
    group_level_metrics: tuple[Mapping[str, Any], ...] = ()
    repeat_level_metrics: tuple[Mapping[str, Any], ...] = ()
    perf_summary: Mapping[str, Any] | None = None
    accuracy_ci: ConfidenceInterval | None = None
    categories: Mapping[str, tuple[CategoryEntry, ...]] = attrs.field(factory=dict)
    summary: RunSummary | None = None
    failure_analysis: FailureAnalysis | None = None

    def gym_response(self) -> dict[str, Any]:
        """NeMo Gym's ``/aggregate_metrics`` response, its keys in Gym's order."""
        return {
            "group_level_metrics": [dict(group) for group in self.group_level_metrics],
            "agent_metrics": dict(self.agent_metrics),
            "key_metrics": dict(self.key_metrics),
            "perf_summary": None if self.perf_summary is None else dict(self.perf_summary),
            "repeat_level_metrics": [dict(entry) for entry in self.repeat_level_metrics],
        }

    def aggregate_json(self) -> dict[str, Any]:
        """The content of ``<stem>_aggregate_metrics.json``."""
        out: dict[str, Any] = {
            "agent_metrics": dict(self.agent_metrics),
            "key_metrics": dict(self.key_metrics),
            "accuracy_ci": None if self.accuracy_ci is None else attrs.asdict(self.accuracy_ci),
            "categories": {
                field: [attrs.asdict(entry) for entry in entries]
                for field, entries in self.categories.items()
            },
        }
        if self.summary is not None:
            out["summary"] = self.summary.to_json()
        return out

    def failure_json(self) -> dict[str, Any]:
        """The content of ``<stem>_failure_analysis.json`` (empty without a failure analysis)."""
        return {} if self.failure_analysis is None else self.failure_analysis.to_json()

    @classmethod
    def from_json(cls, data: object, *, notes: list[str] | None = None) -> MetricsDocument:
        """Read an aggregate metrics document (with ``failure_analysis`` inside, if wanted).

        Raises ``MetricsError`` when ``data`` is no mapping or has no ``agent_metrics`` mapping.
        Sections and entries that are malformed are left out; what was left out is appended to
        ``notes``.
        """
        return _Reader([] if notes is None else notes).document(data)


# --- reading ----------------------------------------------------------------------------------


def finite_number(value: object) -> float | None:
    """A finite int or float (bools are not numbers here), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _count(value: object) -> int | None:
    number = finite_number(value)
    return int(number) if number is not None and number == int(number) else None


def _text(value: object) -> str | None:
    """A string, or a number shown as one (bools and containers are no text)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value)


def _get(entry: object, name: str) -> Any:
    """``entry[name]`` for mappings, ``entry.name`` for objects such as ``CategoryStats``."""
    if isinstance(entry, Mapping):
        return entry.get(name)
    return getattr(entry, name, None)


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _section(value: object) -> Mapping[str, Any] | None:
    """A mapping, or an attrs instance (``ConfidenceInterval``) as one; else ``None``."""
    if isinstance(value, Mapping):
        return value
    if attrs.has(type(value)):
        return attrs.asdict(value)  # type: ignore[arg-type]  # attrs.has() narrowed it
    return None


class _Reader:
    """Reads a document leniently, noting what it leaves out."""

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes

    def document(self, data: object) -> MetricsDocument:
        if not isinstance(data, Mapping):
            raise MetricsError(f"metrics must be a mapping, got {type(data).__name__}")
        agent = data.get("agent_metrics")
        if not isinstance(agent, Mapping):
            raise MetricsError("metrics has no 'agent_metrics' mapping")
        key = data.get("key_metrics")
        groups = data.get("group_level_metrics")
        repeats = data.get("repeat_level_metrics")
        perf = data.get("perf_summary")
        return MetricsDocument(
            agent_metrics=agent,
            key_metrics=key if isinstance(key, Mapping) else {},
            group_level_metrics=(
                tuple(g for g in groups if isinstance(g, Mapping)) if _is_list(groups) else ()
            ),
            repeat_level_metrics=(
                tuple(r for r in repeats if isinstance(r, Mapping)) if _is_list(repeats) else ()
            ),
            perf_summary=perf if isinstance(perf, Mapping) else None,
            accuracy_ci=self.interval(data.get("accuracy_ci")),
            categories=self.categories(data.get("categories")),
            summary=self.summary(data.get("summary")),
            failure_analysis=self.failures(data.get("failure_analysis")),
        )

    def interval(self, value: object) -> ConfidenceInterval | None:
        if value is None:
            return None
        section = _section(value) or {}
        point, low, high = (
            finite_number(section.get(k)) for k in ("value", "ci_lower", "ci_upper")
        )
        confidence = finite_number(section.get("confidence"))
        resamples = _count(section.get("resamples"))
        if (
            point is not None
            and low is not None
            and high is not None
            and confidence is not None
            and resamples is not None
        ):
            return ConfidenceInterval(
                value=point, ci_lower=low, ci_upper=high, confidence=confidence, resamples=resamples
            )
        self.notes.append("accuracy_ci is not a complete interval; it was left out.")
        return None

    def summary(self, value: object) -> RunSummary | None:
        section = _section(value)
        if section is None:
            return None
        known = ("input", "output", "mode", "rows", "graded", "errors", "no_answer_rate")
        return RunSummary(
            input=_text(section.get("input")),
            output=_text(section.get("output")),
            mode=_text(section.get("mode")),
            rows=_count(section.get("rows")),
            graded=_count(section.get("graded")),
            errors=_count(section.get("errors")),
            no_answer_rate=finite_number(section.get("no_answer_rate")),
            extra={k: v for k, v in section.items() if k not in known},
        )

    def categories(self, value: object) -> dict[str, tuple[CategoryEntry, ...]]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.notes.append("categories is not an object; it was left out.")
            return {}
        out: dict[str, tuple[CategoryEntry, ...]] = {}
        for field, entries in value.items():
            if not _is_list(entries):
                self.notes.append(f"categories[{str(field)!r}] is not a list; it was left out.")
                continue
            rows, skipped = [], 0
            for entry in entries:
                mean = finite_number(_get(entry, "mean_reward"))
                if mean is None:
                    skipped += 1
                    continue
                name = _get(entry, "category")
                rows.append(
                    CategoryEntry(
                        category=MISSING_CATEGORY if name is None else str(name),
                        n_samples=_count(_get(entry, "n_samples")),
                        mean_reward=mean,
                        ci_lower=finite_number(_get(entry, "ci_lower")),
                        ci_upper=finite_number(_get(entry, "ci_upper")),
                    )
                )
            if skipped:
                self.notes.append(
                    f"{skipped} entr{'y' if skipped == 1 else 'ies'} of "
                    f"categories[{str(field)!r}] had no numeric mean_reward and were left out."
                )
            out[str(field)] = tuple(rows)
        return out

    def failures(self, value: object) -> FailureAnalysis | None:
        section = _section(value)
        if not section:
            return None
        kinds: dict[str, FailureCount] = {}
        for name, info in (_section(section.get("categories")) or {}).items():
            count = _count(_get(info, "count"))
            if count is None:
                self.notes.append(f"failure kind {str(name)!r} has no count; it was left out.")
                continue
            kinds[str(name)] = FailureCount(count=count, rate=finite_number(_get(info, "rate")))
        exemplars: list[FailureExemplar] = []
        raw = section.get("exemplars")
        if _is_list(raw):
            for entry in raw:
                if _section(entry) is None:
                    self.notes.append("an exemplar that is not an object was left out.")
                    continue
                index = _get(entry, "problem_idx")
                uuid, preview = _get(entry, "uuid"), _get(entry, "response_preview")
                exemplars.append(
                    FailureExemplar(
                        category=_text(_get(entry, "category")),
                        problem_idx=_count(index),
                        uuid=None if uuid is None else str(uuid),
                        response_preview=None if preview is None else str(preview),
                    )
                )
        return FailureAnalysis(
            total_failures=_count(section.get("total_failures")),
            failure_rate=finite_number(section.get("failure_rate")),
            categories=kinds,
            exemplars=tuple(exemplars),
        )
