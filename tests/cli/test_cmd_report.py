"""``choicebox report``: a metrics file that ``choicebox grade`` wrote becomes an HTML page."""

from __future__ import annotations

from pathlib import Path

import pytest

from choicebox.cli import main

FIXTURES = Path(__file__).parents[1] / "fixtures"


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


def test_report_of_a_missing_or_broken_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    absent = tmp_path / "absent.json"
    assert main(["report", str(absent)]) == 2
    assert f"choicebox report: {absent}: cannot read:" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "agent_metrics": {"n": 1,,}\n}\n', encoding="utf-8")
    assert main(["report", str(broken)]) == 2
    assert not (tmp_path / "broken.html").exists()
    # file:line:column, the line and a caret, as every error about a file reads.
    assert capsys.readouterr().err.splitlines() == [
        f"choicebox report: {broken}:2:28: invalid JSON: "
        "unexpected character, expected a string key",
        '      "agent_metrics": {"n": 1,,}',
        "                               ^",
    ]


def test_a_metrics_file_without_agent_metrics_is_blamed_not_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics = tmp_path / "m.json"
    metrics.write_text('{"rows": 3}', encoding="utf-8")
    assert main(["report", str(metrics)]) == 2
    err = capsys.readouterr().err
    assert err == f"choicebox report: {metrics}: metrics has no 'agent_metrics' mapping\n"
    assert not (tmp_path / "m.html").exists()
