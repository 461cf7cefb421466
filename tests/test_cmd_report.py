"""``choicebox report``: a metrics file that ``choicebox grade`` wrote becomes an HTML page."""

from __future__ import annotations

from pathlib import Path

from choicebox.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_report_renders_the_metrics_and_the_failure_analysis_beside_them(tmp_path: Path) -> None:
    graded = tmp_path / "graded.jsonl"
    assert main(["grade", str(FIXTURES / "rollouts_mixed.jsonl"), "-o", str(graded), "-q"]) in (0, 1)
    metrics = tmp_path / "graded_aggregate_metrics.json"
    report = tmp_path / "page.html"

    assert main(["report", str(metrics), "-o", str(report)]) == 0

    page = report.read_text(encoding="utf-8")
    assert "<svg" in page
    assert "Failure kinds" in page  # read from graded_failure_analysis.json beside the metrics
    assert "http://" not in page
    assert "https://" not in page


def test_report_defaults_to_the_metrics_name_with_html(tmp_path: Path) -> None:
    metrics = tmp_path / "m.json"
    metrics.write_text('{"agent_metrics": {"mean/reward": 0.5}}', encoding="utf-8")
    assert main(["report", str(metrics)]) == 0
    assert (tmp_path / "m.html").exists()


def test_report_of_a_missing_or_broken_file_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["report", str(tmp_path / "absent.json")]) == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main(["report", str(broken)]) == 2
    assert not (tmp_path / "broken.html").exists()
