"""Verdict soundness on labelled real outputs, and every row of the row files graded in every mode.

For each built-in mode (or ``--modes``) it prints, against LABELS (one JSON object a line:
``model``, ``uuid``, ``label`` (a letter or null), ``kind``, as in ``benchmarks/data/mmlupro/``):

* agreement with the labels, overall and per label ``kind``;
* letters given on rows whose label is null (the response committed to nothing);
* wrong letters on rows whose label is a letter;

then grades every row of every ``<model>.jsonl[.gz]`` in ROWS_DIR in every mode with the engine
``choicebox grade`` runs (``choicebox.batch.Grader``) and reports error rows by reason and any
internal error (a bug: grading must never raise). A question with a single option is an error
row, by design.

Usage::

    python benchmarks/soundness/soundness.py benchmarks/labels/mmlupro-extra.jsonl benchmarks/data/mmlupro
    python benchmarks/soundness/soundness.py LABELS ROWS_DIR --modes robust --show 20 --no-all-rows

Exit status 1 when ``--min-agree`` / ``--max-false`` (fractions, checked for the first mode) or
``--max-wrong`` is not met, or any row raised an internal error.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from choicebox import MCQASample, SampleError, WireFormatError, default_registry, grade
from choicebox.batch import Grader


def row_files(rows_dir: Path, labels: Path) -> dict[str, Path]:
    """``model -> file`` for every ``<model>.jsonl`` or ``<model>.jsonl.gz`` of the directory
    (the labels file, which may sit there too, is no row file)."""
    found: dict[str, Path] = {}
    for path in sorted(rows_dir.iterdir()):
        if path.resolve() == labels.resolve():
            continue
        for suffix in (".jsonl.gz", ".jsonl"):
            if path.name.endswith(suffix):
                found.setdefault(path.name[: -len(suffix)], path)
    return found


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line.rstrip(b"\n")


def labelled_rows(labels: list[dict[str, Any]], files: dict[str, Path]) -> dict[tuple[str, str], dict[str, Any]]:
    wanted = {(label["model"], label["uuid"]) for label in labels}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for model in sorted({model for model, _ in wanted}):
        if model not in files:
            raise SystemExit(f"no row file for model {model!r} in the rows directory")
        for _, line in raw_lines(files[model]):
            row = json.loads(line)
            if (model, row.get("uuid")) in wanted:
                row.pop("ref", None)
                rows[(model, row["uuid"])] = row
    missing = wanted - set(rows)
    if missing:
        raise SystemExit(f"{len(missing)} labelled rows are not in the row files, e.g. {sorted(missing)[0]}")
    return rows


def score(mode: str, labels: list[dict[str, Any]], rows: dict[tuple[str, str], dict[str, Any]], show: int) -> dict[str, Any]:
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    agree = false_letters = wrong = nulls = crashes = rejected = 0
    misses = []
    for label in labels:
        key = (label["model"], label["uuid"])
        row = rows[key]
        want = label["label"]
        try:
            verdict = grade(MCQASample.from_wire(row), row["response"], mode=mode)
            got, why = verdict.extracted_answer, f"{verdict.failure}: {verdict.detail}"
        except (WireFormatError, SampleError) as exc:  # a row no MCQ verifier may grade
            got, why = None, f"rejected row: {exc}"
            rejected += 1
        except Exception as exc:  # a crash is a finding, not the end of the run
            got, why = f"crash:{type(exc).__name__}", str(exc)
            crashes += 1
        ok = got == want
        agree += ok
        kind = label.get("kind", "?")
        per_kind[kind][0] += ok
        per_kind[kind][1] += 1
        if want is None:
            nulls += 1
            false_letters += got is not None
        elif got is not None and got != want:
            wrong += 1
        if not ok:
            misses.append(f"    {key[0]} {key[1]} [{kind}] label={want} got={got} :: {why[:110]}")
    n = len(labels)
    lettered = n - nulls
    print(
        f"{mode}: agrees {agree}/{n} ({agree / n:.1%}); letters on null-labelled rows "
        f"{false_letters}/{nulls} ({false_letters / max(1, nulls):.1%}); wrong letters "
        f"{wrong}/{lettered}; rejected rows {rejected}; crashes {crashes}"
    )
    print("  per kind: " + ", ".join(f"{k} {a}/{t}" for k, (a, t) in sorted(per_kind.items())))
    for line in misses[:show]:
        print(line)
    return {
        "agree": agree / n,
        "false": false_letters / max(1, nulls),
        "wrong": wrong,
        "crashes": crashes,
    }


def grade_everything(modes: list[str], files: dict[str, Path]) -> int:
    """Grade every row in every mode through ``Grader``; the number of internal errors."""
    internal = 0
    lines = {model: list(raw_lines(path)) for model, path in files.items()}
    total = sum(map(len, lines.values()))
    for mode in modes:
        grader = Grader(mode=mode)
        errors: Counter[str] = Counter()
        answered = 0
        started = time.perf_counter()
        for model, numbered in lines.items():
            for number, raw in numbered:
                out = grader.grade_row(number, raw)
                if "error" in out:
                    reason = out["error"].split(": ", 1)[-1]
                    if reason.startswith("internal error"):
                        internal += 1
                        print(f"  INTERNAL ERROR {model} line {number}: {reason}", file=sys.stderr)
                    errors[reason.split(" @ ")[0][:80] + (" @ " + reason.split(" @ ")[1] if " @ " in reason else "")] += 1
                elif out.get("extracted_answer") is not None:
                    answered += 1
        seconds = time.perf_counter() - started
        bad = sum(errors.values())
        print(
            f"{mode}: {total} rows in {seconds:.1f} s; {total - bad} graded, {answered} with a letter; "
            f"{bad} error rows; internal errors: {sum(n for r, n in errors.items() if r.startswith('internal'))}"
        )
        for reason, count in errors.most_common():
            print(f"    {count} x {reason}")
    return internal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("labels", type=Path)
    parser.add_argument("rows_dir", type=Path)
    parser.add_argument("--modes", help="comma-separated modes (default: every built-in mode)")
    parser.add_argument("--show", type=int, default=0, help="print up to N disagreements per mode")
    parser.add_argument("--no-all-rows", action="store_true", help="skip grading every row")
    parser.add_argument("--min-agree", type=float, default=0.0)
    parser.add_argument("--max-false", type=float, default=1.0)
    parser.add_argument("--max-wrong", type=int, default=None)
    args = parser.parse_args()
    registry = default_registry()
    modes = args.modes.split(",") if args.modes else [m for m in registry.names() if registry.is_builtin(m)]
    labels = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    files = row_files(args.rows_dir, args.labels)
    absent = sorted({label["model"] for label in labels} - set(files))
    if absent:
        # A user who converted only some models' zips scores the labels of those models.
        print(f"no row file for {', '.join(absent)}: their labels are left out", file=sys.stderr)
        labels = [label for label in labels if label["model"] in files]
        if not labels:
            raise SystemExit("no labelled model has a row file in the rows directory")
    rows = labelled_rows(labels, files)
    print(f"{len(labels)} labelled rows ({sum(1 for x in labels if x['label'] is None)} null)")
    results = {mode: score(mode, labels, rows, args.show) for mode in modes}
    failed = False
    first = results[modes[0]]
    if first["agree"] < args.min_agree or first["false"] > args.max_false or first["crashes"]:
        failed = True
    if args.max_wrong is not None and first["wrong"] > args.max_wrong:
        failed = True
    if not args.no_all_rows:
        print()
        failed |= grade_everything(modes, files) > 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    try:
        main()
    except (WireFormatError, SampleError) as exc:
        raise SystemExit(f"error: {exc}") from None
