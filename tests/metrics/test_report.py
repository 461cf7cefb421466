"""Tests of choicebox.metrics.report: a self-contained, escaped HTML page that copes with partial input."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from choicebox import ReportError
from choicebox._errors import ChoiceboxError
from choicebox.metrics import aggregate_metrics, bootstrap_ci, category_breakdown, failure_analysis
from choicebox.metrics.report import render_report, write_report

SCRIPT = "<script>alert('pwned')</script>"


def _full_metrics() -> dict[str, Any]:
    """A document as ``choicebox grade`` writes it, built with the real metric functions."""
    rows: list[dict[str, Any]] = []
    subjects = ["algebra", "biology", "law & <order>"]
    for task in range(12):
        for attempt in range(4):
            correct = (task + attempt) % 3 != 0
            rows.append(
                {
                    "_ng_task_index": task,
                    "reward": 1.0 if correct else 0.0,
                    "extracted_answer": "B" if correct or attempt % 2 else None,
                    "subject": subjects[task % 3],
                    "uuid": f"id-{task}-{attempt}",
                    "failure": None if correct else ("no_answer" if attempt % 2 == 0 else "wrong_answer"),
                    "output_text": "Answer: B" if correct else f"{SCRIPT} I would say B",
                }
            )  # fmt: skip
    ci = bootstrap_ci([r["reward"] for r in rows], resamples=2000)
    return {
        "agent_metrics": aggregate_metrics(rows)["agent_metrics"],
        "accuracy_ci": {
            "value": ci.value,
            "ci_lower": ci.ci_lower,
            "ci_upper": ci.ci_upper,
            "confidence": ci.confidence,
            "resamples": ci.resamples,
        },
        "categories": {
            "subject": [
                {
                    "category": c.category,
                    "n_samples": c.n_samples,
                    "mean_reward": c.mean_reward,
                    "ci_lower": c.ci_lower,
                    "ci_upper": c.ci_upper,
                }
                for c in category_breakdown(rows, "subject", resamples=2000)
            ]
        },
        "failure_analysis": failure_analysis(rows, max_exemplars=2),
        "summary": {"rows": len(rows), "errors": 2, "mode": "strict", "input": "rollouts.jsonl"},
    }


class _Collector(HTMLParser):
    """Records every tag, attribute and script body, and checks that tags nest properly."""

    VOID = frozenset({"meta", "br", "img", "hr", "input", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.stack: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag == "script":
            self.scripts += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1]}>"
        self.stack.pop()


def _parse(page: str) -> _Collector:
    collector = _Collector()
    collector.feed(page)
    collector.close()
    assert collector.stack == []
    return collector


def test_full_report_has_the_charts_and_the_numbers() -> None:
    metrics = _full_metrics()
    page = render_report(metrics, title="MMLU run")
    parsed = _parse(page)
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>MMLU run</title>" in page
    # Three charts: accuracy by subject, failure kinds, accuracy against k.
    assert parsed.tags.count("svg") == 3
    assert 'aria-label="Accuracy by subject"' in page
    assert 'aria-label="Failure kinds"' in page
    assert 'aria-label="Accuracy against k"' in page
    # Header numbers: rows, errors, accuracy with its interval.
    ci = metrics["accuracy_ci"]
    assert f"{100 * ci['value']:.1f}%" in page
    assert f"95% CI {100 * ci['ci_lower']:.1f}% – {100 * ci['ci_upper']:.1f}%" in page
    assert ">48<" in page  # rows
    assert ">2<" in page  # errors
    # Per-category numbers, with the category name escaped.
    for entry in metrics["categories"]["subject"]:
        assert f"{100 * entry['mean_reward']:.1f}%" in page
    assert "law &amp; &lt;order&gt;" in page
    # Failure kinds and pass@k numbers.
    for name, info in metrics["failure_analysis"]["categories"].items():
        assert f"<td>{name}</td><td class=num>{info['count']}</td>" in page
    agent = metrics["agent_metrics"]
    for k in (1, 2, 3, 4):
        assert f"{agent[f'pass@{k}/accuracy']:.1f}%" in page
        assert f"{agent[f'majority@{k}/accuracy']:.1f}%" in page
    assert "pass@1[avg-of-k]" in page
    assert "<code>mean/reward</code>" in page


def test_page_needs_no_network() -> None:
    page = render_report(_full_metrics())
    parsed = _parse(page)
    assert parsed.scripts == 0
    assert "http://" not in page
    assert "https://" not in page
    for name, value in parsed.attrs:
        if name in {"src", "href", "xlink:href", "action", "srcset", "poster"}:
            assert value is not None
            assert value.startswith("#"), (name, value)  # only links inside the page
    assert not re.search(r"url\(\s*['\"]?(?!#)", page), "CSS or SVG url() to outside the page"
    assert "@import" not in page
    assert "<link" not in page


def test_model_output_is_escaped() -> None:
    metrics = _full_metrics()
    metrics["failure_analysis"]["exemplars"].append(
        {
            "category": "<b>kind</b>",
            "problem_idx": 7,
            "uuid": '"><img src=x onerror=alert(1)>',
            "response_preview": SCRIPT,
        }
    )
    page = render_report(metrics, title="<i>title</i>")
    parsed = _parse(page)
    assert parsed.scripts == 0
    assert "img" not in parsed.tags
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    assert "&lt;b&gt;kind&lt;/b&gt;" in page
    assert "&lt;i&gt;title&lt;/i&gt;" in page


def test_minimal_input() -> None:
    page = render_report({"agent_metrics": {"mean/reward": 0.5}})
    parsed = _parse(page)
    assert "50.0%" in page  # accuracy falls back to mean/reward
    assert "svg" not in parsed.tags  # nothing to chart
    assert "<code>mean/reward</code>" in page
    assert "Failure kinds" not in page
    assert "Accuracy by category" not in page


@pytest.mark.parametrize(
    "metrics",
    [
        {"agent_metrics": {}},
        {"agent_metrics": {"pass@1/accuracy": 40.0}},  # a single k: a table, no curve
        {"agent_metrics": {"mean/reward": None}, "summary": {}, "accuracy_ci": {}},
        {"agent_metrics": {"mean/reward": float("nan")}, "categories": {"subject": []}},
        {"agent_metrics": {}, "failure_analysis": {"total_failures": 0, "categories": {}}},
        {
            "agent_metrics": {"per_sample_aggregate": {"accuracy": [1.0, 2.0]}},
            "categories": {"a": "not a list", "b": [{"category": "x"}, 3, {"mean_reward": 1}]},
            "failure_analysis": {"categories": {"timeout": {"rate": 0.1}}, "exemplars": [{}, 5]},
            "summary": {"rows": "many", "errors": True, "mode": ["x"]},
            "accuracy_ci": "0.5",
        },
    ],
)
def test_partial_or_malformed_sections_still_render(metrics: dict[str, Any]) -> None:
    page = render_report(metrics)
    _parse(page)
    assert "</html>" in page


def test_malformed_entries_are_noted_not_dropped_silently() -> None:
    page = render_report(
        {
            "agent_metrics": {},
            "categories": {"subject": [{"category": "x"}, {"category": "y", "mean_reward": 0.5}]},
        }
    )
    assert "had no numeric mean_reward" in page
    assert "50.0%" in page


def test_single_k_gives_a_table_without_a_chart() -> None:
    page = render_report({"agent_metrics": {"pass@1/accuracy": 40.0, "majority@1/accuracy": 41.0}})
    assert "Accuracy against k" in page
    assert "40.0%" in page
    assert "41.0%" in page
    assert "<svg" not in page


def test_metric_objects_are_accepted_as_well_as_dicts() -> None:
    rows = [{"reward": r, "subject": s} for r, s in [(1, "a"), (0, "a"), (1, "b")]]
    page = render_report(
        {
            "agent_metrics": {"mean/reward": 2 / 3},
            "accuracy_ci": bootstrap_ci([1, 0, 1], resamples=500),
            "categories": {"subject": category_breakdown(rows, "subject", resamples=500)},
        }
    )
    assert "66.7%" in page
    assert page.count("<svg") == 1


def test_labels_with_dollars_do_not_break_the_chart() -> None:
    # Paired $ would be parsed as mathtext, and "$\frac{$" is an invalid formula.
    entries = [
        {"category": "costs $5 and $6", "n_samples": 3, "mean_reward": 0.5},
        {"category": "$\\frac{$", "n_samples": 2, "mean_reward": 1.0},
        {"category": "中文 category " * 10, "n_samples": 1, "mean_reward": 0.0},
    ]
    page = render_report({"agent_metrics": {}, "categories": {"weird": entries}})
    assert page.count("<svg") == 1
    assert "costs $5 and $6" in page


def test_output_is_deterministic() -> None:
    metrics = _full_metrics()
    assert render_report(metrics) == render_report(metrics)


def test_svg_ids_are_unique_across_charts() -> None:
    page = render_report(_full_metrics())
    clip_ids = re.findall(r'<clipPath id="([^"]+)"', page)
    assert clip_ids
    assert len(clip_ids) == len(set(clip_ids))


def test_invalid_documents_raise_report_error() -> None:
    with pytest.raises(ReportError, match="agent_metrics"):
        render_report({"summary": {"rows": 3}})
    with pytest.raises(ReportError):
        render_report([1, 2])  # type: ignore[arg-type]
    assert issubclass(ReportError, ChoiceboxError)
    assert issubclass(ReportError, ValueError)


def test_without_matplotlib_the_tables_remain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    page = render_report(_full_metrics())
    assert "<svg" not in page
    assert "matplotlib is not installed" in page
    assert "Failure kinds" in page


def test_write_report(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    write_report({"agent_metrics": {"mean/reward": 0.25}}, target, title="Run 1")
    text = target.read_text(encoding="utf-8")
    assert "<title>Run 1</title>" in text
    assert "25.0%" in text
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left
    assert target.stat().st_mode & 0o777 == 0o644


def test_write_report_failure_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    with pytest.raises(ReportError):
        write_report({}, str(target))
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
