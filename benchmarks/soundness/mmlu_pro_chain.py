"""The built-in ``mmlu_pro`` mode against the MMLU-Pro paper's own answer extraction, row by row.

The paper's evaluation code (TIGER-AI-Lab/MMLU-Pro, ``evaluate_from_local.py``) extracts the
answer with three regexes in turn, reproduced here verbatim::

    re.search(r"answer is \\(?([A-J])\\)?", text)               # extract_answer
    re.search(r".*[aA]nswer:\\s*([A-J])", text)                 # extract_again
    re.search(r"\\b[A-J]\\b(?!.*\\b[A-J]\\b)", text, re.DOTALL)    # extract_final

(no random guess here: the paper's API script guesses a random letter when all three fail). For
every row of every ``<model>.jsonl[.gz]`` in ROWS_DIR this prints, per model and in total, the
accuracy of that chain and of ``choicebox grade --mode mmlu_pro`` (``choicebox.batch.Grader``),
their difference in percentage points, and the rows whose letters differ, by reason. Rows that
choicebox rejects (a question with a single option) are left out of both accuracies and counted.

Usage::

    python benchmarks/soundness/mmlu_pro_chain.py benchmarks/data/mmlupro [--show 10] [--max-pp 0.05]

Exit status 1 when an accuracy differs by more than ``--max-pp`` percentage points.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from choicebox import response_text
from choicebox.batch import Grader

_FIRST = re.compile(r"answer is \(?([A-J])\)?")
_AGAIN = re.compile(r".*[aA]nswer:\s*([A-J])")
_FINAL = re.compile(r"\b[A-J]\b(?!.*\b[A-J]\b)", re.DOTALL)


def paper_chain(text: str) -> str | None:
    """The paper's extract_answer / extract_again / extract_final, without the random guess."""
    match = _FIRST.search(text)
    if match:
        return match.group(1)
    match = _AGAIN.search(text)
    if match:
        return match.group(1)
    match = _FINAL.search(text)
    return match.group(0) if match else None


def rows_of(path: Path) -> Iterator[tuple[int, bytes]]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line.rstrip(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("rows_dir", type=Path)
    parser.add_argument("--show", type=int, default=5, help="rows to show per kind of difference")
    parser.add_argument("--max-pp", type=float, default=0.05)
    args = parser.parse_args()
    grader = Grader(mode="mmlu_pro")
    files = sorted(
        p
        for p in args.rows_dir.iterdir()
        if p.name.endswith((".jsonl", ".jsonl.gz")) and not p.name.startswith("labels")
    )
    total = Counter[str]()
    differences: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    worst = 0.0
    for path in files:
        counts = Counter[str]()
        for number, raw in rows_of(path):
            row = orjson.loads(raw)
            out = grader.grade_row(number, raw)
            expected = row.get("expected_answer")
            chain = paper_chain(response_text(row["response"]))
            if "error" in out:
                counts["rejected"] += 1
                counts["rejected_chain_right"] += chain == expected
                continue
            ours = out["extracted_answer"]
            options = {letter for item in row["options"] for letter, text in item.items() if text is not None}
            counts["rows"] += 1
            counts["chain_right"] += chain == expected
            counts["ours_right"] += out["reward"] == 1.0
            if chain != ours:
                why = "the chain's letter is not an option" if chain is not None and chain not in options else "other"
                differences[why] += 1
                if shown[why] < args.show:
                    shown[why] += 1
                    print(f"  {path.name}:{number} chain={chain} mmlu_pro={ours} ({out['grading_failure']}): {why}")
        total.update(counts)
        pp = 100 * (counts["ours_right"] - counts["chain_right"]) / max(1, counts["rows"])
        worst = max(worst, abs(pp))
        print(
            f"{path.name}: {counts['rows']} rows; chain {counts['chain_right'] / counts['rows']:.4%}, "
            f"mmlu_pro {counts['ours_right'] / counts['rows']:.4%} ({pp:+.3f} pp); "
            f"{counts['rejected']} rejected rows (the chain gets {counts['rejected_chain_right']} of them right)"
        )
    pp = 100 * (total["ours_right"] - total["chain_right"]) / max(1, total["rows"])
    worst = max(worst, abs(pp))
    print(
        f"all: {total['rows']} rows; chain {total['chain_right'] / total['rows']:.4%}, "
        f"mmlu_pro {total['ours_right'] / total['rows']:.4%} ({pp:+.3f} pp); "
        f"letters differ on {sum(differences.values())} rows: "
        + (", ".join(f"{n} {why}" for why, n in differences.most_common()) or "none")
    )
    sys.exit(1 if worst > args.max_pp else 0)


if __name__ == "__main__":
    main()
