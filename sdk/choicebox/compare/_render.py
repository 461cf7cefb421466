"""A comparison as text (``choicebox compare``'s output) and as a self-contained HTML page."""

from __future__ import annotations

import html
from collections.abc import Iterator

from choicebox import __version__

from ._pairs import CLASSES, Comparison, Exemplar, Outcome, VerdictClass

__all__ = ["render_html", "render_text"]


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _signed_points(value: float) -> str:
    return f"{100 * value:+.1f}"


Pair = tuple[VerdictClass, VerdictClass]


def _changed(comparison: Comparison) -> list[tuple[VerdictClass, VerdictClass, int]]:
    """The (before, after) classes that differ, most rows first."""
    found = [
        (before, after, count)
        for (before, after), count in comparison.pairs.items()
        if before != after and count
    ]
    return sorted(found, key=lambda item: (-item[2], CLASSES.index(item[0]), CLASSES.index(item[1])))


def _outcome(outcome: Outcome) -> str:
    if outcome.kind == "ungraded":
        return f"ungraded ({outcome.detail})" if outcome.detail else "ungraded"
    letter = outcome.letter or "—"
    return f"{letter} ({outcome.kind})"


def _accuracy_lines(comparison: Comparison) -> Iterator[str]:
    change = comparison.change
    if change is None:
        yield "accuracy: no row is graded on both sides"
        return
    yield (
        f"accuracy {_percent(comparison.before_accuracy)} -> {_percent(comparison.after_accuracy)}"
        f" on {comparison.paired:,} rows graded on both sides: {_signed_points(change.value)} "
        f"points (95% CI {_signed_points(change.ci_lower)} to {_signed_points(change.ci_upper)}; "
        f"paired bootstrap over rows, {change.resamples:,} resamples)"
    )
    p = comparison.mcnemar_p
    assert p is not None
    yield (
        f"McNemar's exact test: {comparison.gained:,} rows turned correct, "
        f"{comparison.lost:,} turned not correct, p = {p:.3g}"
    )


def render_text(comparison: Comparison) -> str:
    """The comparison as the terminal shows it."""
    lines = [
        f"compare {comparison.path}: {comparison.rows:,} rows",
        f"  before: {comparison.before}",
        f"  after:  {comparison.after}",
        "",
    ]
    width = max(len(c) for c in CLASSES) + 2
    lines.append("before \\ after".ljust(16) + "".join(c.rjust(width) for c in CLASSES))
    for before in CLASSES:
        counts = [comparison.pairs.get((before, after), 0) for after in CLASSES]
        lines.append(before.ljust(16) + "".join(f"{n:,}".rjust(width) for n in counts))
    lines.append("")
    lines.extend(_accuracy_lines(comparison))
    lines.append(f"extracted letter differs on {comparison.letters_changed:,} rows")
    for before, after in _exemplar_keys(comparison):
        count = comparison.pairs.get((before, after), 0)
        lines.append("")
        lines.append(f"{before} -> {after}: {count:,} rows" + (", e.g." if count else ""))
        for example in comparison.exemplars[(before, after)]:
            lines.extend(_text_exemplar(example))
    return "\n".join(lines) + "\n"


def _exemplar_keys(comparison: Comparison) -> list[Pair]:
    changed: list[Pair] = [(b, a) for b, a, _ in _changed(comparison)]
    # Same class, other letter (a wrong letter for another wrong letter) last.
    same = sorted(key for key in comparison.exemplars if key[0] == key[1])
    return [key for key in changed if key in comparison.exemplars] + same


def _text_exemplar(example: Exemplar) -> Iterator[str]:
    where = f"line {example.line}" + (f", uuid {example.uuid}" if example.uuid else "")
    yield (
        f"  {where}: expected {example.expected or '—'}; before {_outcome(example.before)}, "
        f"after {_outcome(example.after)}"
    )
    if example.after.detail and example.after.kind != "ungraded":
        yield f"    after says: {example.after.detail}"
    for text_line in (example.tail or "(no output)").splitlines() or [""]:
        yield f"    | {text_line}"


_CSS = """
body { font: 15px/1.5 system-ui, sans-serif; color: #1f2328; margin: 2rem auto; max-width: 70rem;
       padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #d1d9e0; padding: 0.3rem 0.6rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.same { background: #f6f8fa; color: #59636e; }
pre { background: #f6f8fa; padding: 0.5rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.muted { color: #59636e; }
"""


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def render_html(comparison: Comparison, *, title: str = "choicebox compare") -> str:
    """The comparison as one self-contained HTML page (no scripts, no network)."""
    parts = [
        f"<h1>{_esc(title)}</h1>",
        f"<p><code>{_esc(comparison.path)}</code>: {comparison.rows:,} rows.<br>"
        f"Before: {_esc(comparison.before)}.<br>After: {_esc(comparison.after)}.</p>",
        "<h2>Verdict pairs</h2>",
    ]
    head = "".join(f'<th class="num" scope="col">{_esc(c)}</th>' for c in CLASSES)
    body = []
    for before in CLASSES:
        cells = []
        for after in CLASSES:
            n = comparison.pairs.get((before, after), 0)
            css = "num same" if before == after else "num"
            cells.append(f'<td class="{css}">{n:,}</td>')
        body.append(f'<tr><th scope="row">{_esc(before)}</th>{"".join(cells)}</tr>')
    parts.append(
        f'<table><thead><tr><th scope="col">before \\ after</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
    parts.append("<h2>Accuracy</h2>")
    parts.append("".join(f"<p>{_esc(line)}</p>" for line in _accuracy_lines(comparison)))
    parts.append(f"<p>Extracted letter differs on {comparison.letters_changed:,} rows.</p>")
    for before, after in _exemplar_keys(comparison):
        count = comparison.pairs.get((before, after), 0)
        parts.append(f"<h2>{_esc(before)} → {_esc(after)}: {count:,} rows</h2>")
        for example in comparison.exemplars[(before, after)]:
            where = f"line {example.line}" + (f", uuid {example.uuid}" if example.uuid else "")
            detail = (
                f'<br><span class="muted">after says: {_esc(example.after.detail)}</span>'
                if example.after.detail and example.after.kind != "ungraded"
                else ""
            )
            parts.append(
                f"<p><strong>{_esc(where)}</strong>: expected {_esc(example.expected or '—')}; "
                f"before {_esc(_outcome(example.before))}, after {_esc(_outcome(example.after))}"
                f"{detail}</p><pre>{_esc(example.tail or '(no output)')}</pre>"
            )
    parts.append(f'<p class="muted">Generated by choicebox {_esc(__version__)}.</p>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(parts)
        + "\n</body>\n</html>\n"
    )
