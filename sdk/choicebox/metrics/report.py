"""A self-contained HTML report of a grading run, for people to read.

The input is a :class:`~choicebox.metrics.MetricsDocument`, or the JSON of one: the
``<stem>_aggregate_metrics.json`` that ``choicebox grade`` writes, with the failure analysis
inside as ``failure_analysis``::

    {
      "agent_metrics": {"mean/reward": 0.62, "pass@1/accuracy": 62.0, ...},   # required
      "accuracy_ci": {"value", "ci_lower", "ci_upper", "confidence", "resamples"},
      "categories": {"<field>": [{"category", "n_samples", "mean_reward",
                                  "ci_lower", "ci_upper"}, ...]},
      "failure_analysis": {"total_failures", "failure_rate", "categories", "exemplars"},
      "summary": {"rows", "errors", "mode", "input"},
    }

JSON is read by :meth:`MetricsDocument.from_json`: every key but ``agent_metrics`` may be
missing, and entries that are malformed are left out with a note on the page rather than failing
the whole report. Rewards and intervals are fractions in [0, 1]; ``pass@``/``majority@`` values in
``agent_metrics`` are percentages, as in NeMo Gym.

The page needs no network: CSS is inline, and charts are inline SVG drawn by matplotlib with
glyphs as paths (no font files). Everything taken from the input is escaped with ``html.escape``:
exemplar previews are model output and may well contain ``<script>``.

matplotlib is imported only when a report is rendered, so the rest of choicebox works without it;
without it, the report still renders, with tables in place of charts.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from choicebox import __version__
from choicebox._errors import MetricsError, ReportError
from choicebox.metrics._document import (
    CategoryEntry,
    FailureExemplar,
    MetricsDocument,
    finite_number,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ReportError", "render_report", "write_page", "write_report"]

_number = finite_number  # agent_metrics is an open set of keys, read value by value

# Charts share one small palette (colour-blind safe, from Okabe & Ito) so the page reads as one.
_BLUE: Final = "#0072B2"
_ORANGE: Final = "#E69F00"
_GREEN: Final = "#009E73"
_RED: Final = "#D55E00"
_INK: Final = "#333333"
_GRID: Final = "#DDDDDD"

_CHART_WIDTH: Final = 7.5  # inches; the SVG scales down to the column width in CSS
_LABEL_CHARS: Final = 48  # longer category names are cut in charts (tables show them whole)
_MAX_CHART_BARS: Final = 120  # beyond this a bar chart stops being readable; tables show all
_JSON_CELL_CHARS: Final = 300


# ----------------------------------------------------------------------------- reading input


@attrs.frozen
class _Series:
    label: str
    points: tuple[tuple[int, float], ...]
    band: tuple[tuple[int, float], ...] = ()  # standard error per k, drawn as a band


_PASS_RE: Final = re.compile(r"^pass@(\d+)/accuracy$")
_AVG_RE: Final = re.compile(r"^pass@1\[avg-of-(\d+)\]/accuracy$")
_AVG_ERR_RE: Final = re.compile(r"^pass@1\[avg-of-(\d+)\]/accuracy/std_err_across_runs$")
_MAJORITY_RE: Final = re.compile(r"^majority@(\d+)/accuracy$")


def _series(agent: Mapping[str, Any], pattern: re.Pattern[str]) -> tuple[tuple[int, float], ...]:
    points: dict[int, float] = {}
    for key, value in agent.items():
        match = pattern.match(str(key))
        number = _number(value)
        if match is not None and number is not None:
            points[int(match.group(1))] = number
    return tuple(sorted(points.items()))


def _pass_series(agent: Mapping[str, Any]) -> list[_Series]:
    """pass@k, pass@1[avg-of-k] (with its standard error) and majority@k of accuracy, by k."""
    found = [
        _Series("pass@k", _series(agent, _PASS_RE)),
        _Series("pass@1[avg-of-k]", _series(agent, _AVG_RE), _series(agent, _AVG_ERR_RE)),
        _Series("majority@k", _series(agent, _MAJORITY_RE)),
    ]
    return [s for s in found if s.points]


# ------------------------------------------------------------------------------- formatting


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _percent(fraction: float | None, digits: int = 1) -> str:
    return "—" if fraction is None else f"{100 * fraction:.{digits}f}%"


def _points(percent: float | None) -> str:
    """A value that is already in percent (Gym's pass@k keys)."""
    return "—" if percent is None else f"{percent:.1f}%"


def _integer(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _metric_cell(value: object) -> str:
    number = _number(value)
    if number is not None:
        return _esc(f"{number:.6g}")
    if isinstance(value, (Mapping, list, tuple)):
        text = json.dumps(value, default=str, ensure_ascii=False)
        if len(text) > _JSON_CELL_CHARS:
            text = text[:_JSON_CELL_CHARS] + "…"
        return f"<code>{_esc(text)}</code>"
    return _esc(value)


def _chart_label(text: str) -> str:
    """Text safe for a matplotlib label: one line, bounded, no mathtext."""
    text = " ".join(text.split())
    if len(text) > _LABEL_CHARS:
        text = text[: _LABEL_CHARS - 1] + "…"
    # Paired "$" would switch matplotlib to mathtext, and a malformed formula raises at draw time.
    return text.replace("$", r"\$")


# ----------------------------------------------------------------------------------- charts

_SVG_PROLOGUE_RE: Final = re.compile(r"^.*?(?=<svg\b)", re.DOTALL)
_SVG_METADATA_RE: Final = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
# Namespace declarations are inert identifiers, but the HTML parser supplies both namespaces for
# inline SVG anyway; dropping them leaves the page without a single http:// string.
_SVG_XMLNS_RE: Final = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')


def _matplotlib_available() -> bool:
    try:
        import matplotlib.figure  # noqa: F401, PLC0415  the optional report extra
    except ImportError:
        return False
    return True


def _figure(height: float) -> Figure:
    # The object-oriented Figure, not pyplot: no global figure registry and no GUI backend, so
    # rendering never touches the caller's backend (what matplotlib.use("Agg") would change).
    from matplotlib.figure import Figure  # noqa: PLC0415  the optional report extra

    fig = Figure(figsize=(_CHART_WIDTH, height), layout="constrained")
    fig.patch.set_facecolor("white")
    return fig


def _style(ax: Any) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#999999")
    ax.tick_params(colors=_INK, labelsize=9)
    ax.set_axisbelow(True)


def _svg(fig: Figure, title: str, salt: str) -> str:
    """The figure as an inline ``<svg>`` element with deterministic, page-unique ids."""
    import matplotlib  # noqa: PLC0415  the optional report extra

    buffer = io.StringIO()
    # svg.hashsalt fixes the clip-path ids: the same input renders the same page, and a distinct
    # salt per chart keeps ids unique when several SVGs share one HTML document.
    with (
        matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path"}),
        warnings.catch_warnings(),
    ):
        # A category name with glyphs DejaVu lacks (CJK) warns and renders as boxes; the table
        # below the chart shows it properly, so the warning is noise here.
        warnings.simplefilter("ignore", UserWarning)
        fig.savefig(
            buffer,
            format="svg",
            metadata={"Title": title, "Date": None, "Creator": None, "Format": None, "Type": None},
        )
    svg = _SVG_PROLOGUE_RE.sub("", buffer.getvalue(), count=1)
    svg = _SVG_METADATA_RE.sub("", svg, count=1)
    head, rest = svg.split(">", 1)
    head = _SVG_XMLNS_RE.sub("", head)
    return f'{head} class="chart" role="img" aria-label="{_esc(title)}">{rest}'.strip()


def _category_chart(field: str, rows: Sequence[CategoryEntry], overall: float | None) -> str:
    from matplotlib.ticker import PercentFormatter  # noqa: PLC0415  the optional report extra

    shown = rows[:_MAX_CHART_BARS]
    fig = _figure(1.1 + 0.3 * len(shown))
    ax = fig.add_subplot()
    _style(ax)
    ys = list(range(len(shown)))
    means = [r.mean_reward for r in shown]
    # Error bars are distances from the mean; an entry without an interval gets none.
    below = [max(0.0, r.mean_reward - r.ci_lower) if r.ci_lower is not None else 0.0 for r in shown]
    above = [max(0.0, r.ci_upper - r.mean_reward) if r.ci_upper is not None else 0.0 for r in shown]
    ax.barh(ys, means, height=0.62, color=_BLUE, alpha=0.85, label="accuracy")
    ax.errorbar(
        means, ys, xerr=[below, above], fmt="none", ecolor=_INK, elinewidth=1, capsize=3,
        label="95% CI",
    )  # fmt: skip
    for y, mean, hi in zip(ys, means, above, strict=True):
        ax.text(mean + hi + 0.012, y, _percent(mean), va="center", fontsize=8, color=_INK)
    if overall is not None:
        ax.axvline(overall, color=_ORANGE, linestyle="--", linewidth=1.2, label="overall")
    labels = [
        _chart_label(r.category) + ("" if r.n_samples is None else f"  (n={r.n_samples:,})")
        for r in shown
    ]
    ax.set_yticks(ys, labels=labels)
    ax.invert_yaxis()  # first category on top, as in the table
    ax.set_xlim(0, 1.12)  # room right of 100% for the value labels
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
    ax.grid(axis="x", color=_GRID, linewidth=0.8)
    ax.set_xlabel("accuracy (mean reward)", color=_INK, fontsize=9)
    # Below the axes, not inside them, where it would cover bars or value labels.
    fig.legend(loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    return _svg(fig, f"Accuracy by {field}", f"choicebox-category-{field}")


def _failure_chart(kinds: Sequence[tuple[str, int, float | None]]) -> str:
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415  the optional report extra

    shown = kinds[:_MAX_CHART_BARS]
    fig = _figure(1.0 + 0.34 * len(shown))
    ax = fig.add_subplot()
    _style(ax)
    ys = list(range(len(shown)))
    counts = [count for _, count, _ in shown]
    ax.barh(ys, counts, height=0.62, color=_RED, alpha=0.85)
    top = max(counts, default=0) or 1
    for y, (_, count, rate) in zip(ys, shown, strict=True):
        text = f"{count:,}" + ("" if rate is None else f" ({_percent(rate)})")
        ax.text(count + top * 0.01, y, text, va="center", fontsize=8, color=_INK)
    ax.set_yticks(ys, labels=[_chart_label(name) for name, _, _ in shown])
    ax.invert_yaxis()  # most frequent on top
    ax.set_xlim(0, top * 1.22)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", color=_GRID, linewidth=0.8)
    ax.set_xlabel("failed rows", color=_INK, fontsize=9)
    return _svg(fig, "Failure kinds", "choicebox-failures")


def _pass_chart(series: Sequence[_Series]) -> str:
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415  the optional report extra

    fig = _figure(3.4)
    ax = fig.add_subplot()
    _style(ax)
    colours = {"pass@k": _BLUE, "pass@1[avg-of-k]": _GREEN, "majority@k": _ORANGE}
    markers = {"pass@k": "o", "pass@1[avg-of-k]": "s", "majority@k": "^"}
    for s in series:
        ks = [k for k, _ in s.points]
        values = [v for _, v in s.points]
        colour = colours.get(s.label, _INK)
        ax.plot(ks, values, marker=markers.get(s.label, "o"), markersize=4, linewidth=1.6,
                color=colour, label=s.label)  # fmt: skip
        errors = dict(s.band)
        # Gym reports the spread across runs from k = 2 on (one run has none), so the band
        # covers the k that have it.
        banded = [(k, v, errors[k]) for k, v in s.points if k in errors]
        if len(banded) > 1:
            ax.fill_between(
                [k for k, _, _ in banded],
                [v - e for _, v, e in banded],
                [v + e for _, v, e in banded],
                color=colour,
                alpha=0.15,
                linewidth=0,
                label=f"{s.label} ± s.e.",
            )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    lowest = min(v for s in series for _, v in s.points)
    ax.set_ylim(max(0.0, math.floor(lowest / 10) * 10 - 5), 100)
    ax.grid(color=_GRID, linewidth=0.8)
    ax.set_xlabel("k (rollouts per task)", color=_INK, fontsize=9)
    ax.set_ylabel("accuracy (%)", color=_INK, fontsize=9)
    fig.legend(loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    return _svg(fig, "Accuracy against k", "choicebox-pass-at-k")


# ---------------------------------------------------------------------------------- sections


class _Page:
    """Collects the page body and the notes about input that had to be left out."""

    def __init__(self, *, charts: bool) -> None:
        self.charts = charts
        self.parts: list[str] = []
        self.notes: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)


def _table(headers: Sequence[str], rows: Iterator[Sequence[str]] | Sequence[Sequence[str]],
           *, numeric: Sequence[int] = ()) -> str:  # fmt: skip
    """An HTML table; cells arrive escaped. ``numeric`` columns are right-aligned."""
    head = "".join(
        f'<th{" class=num" if i in numeric else ""} scope="col">{_esc(h)}</th>'
        for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=num' if i in numeric else ''}>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(label: str, value: str, detail: str = "") -> str:
    extra = f'<div class="detail">{detail}</div>' if detail else ""
    return f'<div class="card"><div class="label">{_esc(label)}</div><div class="value">{value}</div>{extra}</div>'


def _summary(page: _Page, metrics: MetricsDocument, accuracy: float | None, title: str) -> None:
    summary, ci, failures = metrics.summary, metrics.accuracy_ci, metrics.failure_analysis
    interval = ""
    if ci is not None:
        how = f"percentile bootstrap, {ci.resamples:,} resamples"
        # The method goes in a tooltip: the card has room for the interval only.
        interval = (
            f'<span title="{_esc(how)}">{ci.confidence:.0%} CI '
            f"{_percent(ci.ci_lower)} – {_percent(ci.ci_upper)}</span>"
        )

    subtitle = []
    if summary is not None:
        subtitle = [
            f"{name} <strong>{_esc(value)}</strong>"
            for name, value in (("mode", summary.mode), ("input", summary.input))
            if value is not None
        ]
    page.add(f"<header><h1>{_esc(title)}</h1>")
    if subtitle:
        page.add(f'<p class="subtitle">{" · ".join(subtitle)}</p>')

    rows = None if summary is None else summary.rows
    errors = None if summary is None else summary.errors
    error_share = f"{_percent(errors / rows)} of rows" if rows and errors is not None else ""
    cards = [
        _card("Accuracy", _percent(accuracy), interval),
        _card("Rows graded", _integer(rows)),
        _card("Errors", _integer(errors), error_share),
    ]
    if failures is not None and failures.total_failures is not None:
        rate = failures.failure_rate
        cards.append(_card("Failures", _integer(failures.total_failures), "" if rate is None else f"{_percent(rate)} of rows"))  # fmt: skip
    pass1 = _number(metrics.agent_metrics.get("pass@1/accuracy"))
    if pass1 is not None:
        cards.append(_card("pass@1", _points(pass1)))
    page.add(f'<div class="cards">{"".join(cards)}</div></header>')


def _categories(page: _Page, metrics: MetricsDocument, overall: float | None) -> None:
    if not metrics.categories:
        return
    page.add('<section id="categories"><h2>Accuracy by category</h2>')
    for field, rows in metrics.categories.items():
        page.add(f"<h3>by <code>{_esc(field)}</code></h3>")
        if not rows:
            page.add('<p class="empty">No categories.</p>')
            continue
        if page.charts:
            page.add(f"<figure>{_category_chart(field, rows, overall)}</figure>")
            if len(rows) > _MAX_CHART_BARS:
                page.add(f'<p class="note">The chart shows the first {_MAX_CHART_BARS} of {len(rows)} categories; the table lists all.</p>')  # fmt: skip
        table = _table(
            ["category", "rows", "accuracy", "95% CI"],
            [
                (
                    _esc(r.category),
                    _integer(r.n_samples),
                    _percent(r.mean_reward),
                    "—"
                    if r.ci_lower is None or r.ci_upper is None
                    else f"{_percent(r.ci_lower)} – {_percent(r.ci_upper)}",
                )
                for r in rows
            ],
            numeric=(1, 2, 3),
        )
        page.add(f"<details><summary>Table ({len(rows)} categories)</summary>{table}</details>")
    page.add("</section>")


def _failures(page: _Page, metrics: MetricsDocument) -> None:
    failures = metrics.failure_analysis
    if failures is None:
        return
    # A ranking, as failure_analysis writes it, whatever order the input came in.
    kinds = sorted(failures.categories.items(), key=lambda item: (-item[1].count, item[0]))
    page.add('<section id="failures"><h2>Failure kinds</h2>')
    if not kinds:
        page.add('<p class="empty">No failures recorded.</p>')
    else:
        if page.charts:
            page.add(f"<figure>{_failure_chart([(n, k.count, k.rate) for n, k in kinds])}</figure>")
        page.add(
            _table(
                ["kind", "rows", "share of all rows"],
                [(_esc(n), _integer(k.count), _percent(k.rate)) for n, k in kinds],
                numeric=(1, 2),
            )
        )
    _exemplars(page, failures.exemplars)
    page.add("</section>")


def _exemplars(page: _Page, exemplars: Sequence[FailureExemplar]) -> None:
    if not exemplars:
        return
    rows = []
    for entry in exemplars:
        preview, uuid, index = entry.response_preview, entry.uuid, entry.problem_idx
        rows.append(
            (
                _esc(entry.category or "—"),
                "—" if index is None else _esc(index),
                "—" if uuid is None else f"<code>{_esc(uuid)}</code>",
                # Model output: escaped, and shown as preformatted text so its layout survives.
                '<pre class="preview">' + ("" if preview is None else _esc(preview)) + "</pre>",
            )
        )
    page.add("<h3>Example failures</h3>")
    page.add(_table(["kind", "problem", "uuid", "response (start)"], rows, numeric=(1,)))


def _pass_at_k(page: _Page, agent: Mapping[str, Any]) -> None:
    series = _pass_series(agent)
    if not series:
        return
    page.add('<section id="pass-at-k"><h2>Accuracy against k</h2>')
    ks = sorted({k for s in series for k, _ in s.points})
    if page.charts and len(ks) > 1:  # one k is a point, not a curve: the table says it all
        page.add(f"<figure>{_pass_chart(series)}</figure>")
    by_label = {s.label: dict(s.points) for s in series}
    labels = [s.label for s in series]
    page.add(
        _table(
            ["k", *labels],
            [(str(k), *(_points(by_label[lbl].get(k)) for lbl in labels)) for k in ks],
            numeric=tuple(range(len(labels) + 1)),
        )
    )
    page.add("</section>")


def _all_metrics(page: _Page, agent: Mapping[str, Any]) -> None:
    if not agent:
        return
    table = _table(
        ["metric", "value"],
        [(f"<code>{_esc(k)}</code>", _metric_cell(v)) for k, v in agent.items()],
        numeric=(1,),
    )
    page.add(
        '<section id="metrics"><h2>All agent metrics</h2>'
        f"<details><summary>{len(agent)} metric{'' if len(agent) == 1 else 's'}, as in "
        "<code>agent_metrics</code></summary>"
        f"{table}</details></section>"
    )


# ------------------------------------------------------------------------------------- page

_CSS: Final = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0;
        --soft: #f6f8fa; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
             sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 28px 24px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 8px; color: var(--muted); font-weight: 600; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.subtitle { margin: 0 0 16px; color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px;
         margin: 16px 0 8px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: var(--soft); }
.card .label { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.card .value { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .detail { font-size: 12.5px; color: var(--muted); }
figure { margin: 8px 0 12px; }
svg.chart { display: block; max-width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 4px; font-size: 14px; }
th, td { text-align: left; vertical-align: top; padding: 6px 10px; border-bottom: 1px solid var(--line); }
th { background: var(--soft); font-weight: 600; }
tbody tr:nth-child(even) { background: #fbfcfd; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre.preview { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em;
              overflow: auto; }
details summary { cursor: pointer; color: var(--accent); margin: 6px 0; }
.notes { border-left: 4px solid #E69F00; background: #fff8e6; padding: 8px 14px; margin: 24px 0; }
.note, .empty { color: var(--muted); }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; }
"""


def render_report(
    metrics: MetricsDocument | Mapping[str, Any], *, title: str = "choicebox report"
) -> str:
    """The report page for a metrics document, as one self-contained HTML string.

    Raises :class:`ReportError` when ``metrics`` is JSON that is no mapping or has no
    ``agent_metrics`` mapping; any other section may be missing or partly malformed.
    """
    notes: list[str] = []
    if not isinstance(metrics, MetricsDocument):
        try:
            metrics = MetricsDocument.from_json(metrics, notes=notes)
        except MetricsError as exc:
            raise ReportError(str(exc)) from None
    agent = metrics.agent_metrics

    page = _Page(charts=_matplotlib_available())
    overall = metrics.accuracy_ci.value if metrics.accuracy_ci is not None else None
    if overall is None:
        overall = _number(agent.get("mean/reward"))
    _summary(page, metrics, overall, title)
    if not page.charts:
        page.notes.append("matplotlib is not installed, so the charts are left out.")
    page.notes.extend(notes)
    _categories(page, metrics, overall)
    _failures(page, metrics)
    _pass_at_k(page, agent)
    _all_metrics(page, agent)
    if page.notes:
        items = "".join(f"<li>{_esc(n)}</li>" for n in page.notes)
        page.add(f'<aside class="notes"><strong>Notes</strong><ul>{items}</ul></aside>')
    page.add(f"<footer>Generated by choicebox {_esc(__version__)}.</footer>")
    body = "\n".join(page.parts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def write_report(
    metrics: MetricsDocument | Mapping[str, Any],
    path: str | Path,
    *,
    title: str = "choicebox report",
) -> None:
    """Render the report and write it to ``path`` (UTF-8), replacing the file atomically."""
    write_page(render_report(metrics, title=title), path)


def write_page(page: str, path: str | Path) -> None:
    """Write an HTML page to ``path`` (UTF-8), replacing the file atomically.

    The page is written to a temporary file beside ``path`` and renamed over it, so a reader
    never sees half a page and a failed write leaves an older page intact.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(page)
        # mkstemp creates the file private (0600); a report is for sharing like any other file.
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
