"""Turn MMLU-Pro's published per-model outputs into the NeMo Gym rows the benchmarks read.

The public TIGER-AI-Lab/MMLU-Pro repository publishes each model's outputs as a zip under
``eval_results/`` (``model_outputs_<model>_5shots.zip``): one JSON list of records with
``question_id``, ``question``, ``options``, ``answer``, ``category``, ``src`` and the model's text
in ``model_outputs`` or ``generated_text``; some files interleave per-category summary strings in
that list, which are skipped. Download the zips you want (this script does not reach the network)
and give their paths; each becomes ``<out>/<model>.jsonl.gz``, one verify request per record: the
question with its lettered options as the user message, the model's text as a one-message
Responses object, ``options``, ``expected_answer``, ``uuid`` (``mmlupro-<question_id>``) and
``metadata`` (``category``, ``src``, ``model``). ``<out>`` defaults to ``benchmarks/data/mmlupro``,
which git ignores.

Usage::

    python benchmarks/mmlupro_rows.py ZIP [ZIP ...] [--out benchmarks/data/mmlupro]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import string
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path(__file__).parent / "data" / "mmlupro"
_NAME = re.compile(r"model_outputs_(?P<model>.+?)_\d+shots?\.zip\Z")


def model_of(path: Path) -> str:
    match = _NAME.match(path.name)
    if match is None:
        raise SystemExit(f"{path}: not a published MMLU-Pro output file (model_outputs_<model>_5shots.zip)")
    return match["model"]


def records(path: Path) -> Iterator[dict[str, Any]]:
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.endswith(".json"):
                for record in json.loads(archive.read(name)):
                    if isinstance(record, dict):  # not a per-category summary line
                        yield record


def row_of(record: dict[str, Any], model: str) -> dict[str, Any]:
    letters = string.ascii_uppercase
    options = [{letters[i]: text} for i, text in enumerate(record["options"])]
    listed = "\n".join(f"{letter}: {text}" for option in options for letter, text in option.items())
    text = record.get("model_outputs", record.get("generated_text")) or ""
    qid = record["question_id"]
    response = {
        "id": f"resp_{qid}", "created_at": 0.0, "error": None, "incomplete_details": None,
        "instructions": None, "metadata": {}, "model": model, "object": "response",
        "output": [{
            "id": f"msg_{qid}", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
        }],
        "parallel_tool_calls": True, "temperature": 0.0, "tool_choice": "auto", "tools": [],
        "top_p": 1.0, "status": "completed",
    }  # fmt: skip
    return {
        "responses_create_params": {"input": [{"role": "user", "content": f"{record['question']}\n{listed}"}]},
        "response": response,
        "options": options,
        "expected_answer": record["answer"],
        "uuid": f"mmlupro-{qid}",
        "metadata": {"category": record["category"], "src": record["src"], "model": model},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("zips", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for path in args.zips:
        model = model_of(path)
        target = args.out / f"{model}.jsonl.gz"
        count = 0
        # mtime=0: the same zip always gives the same bytes.
        with gzip.GzipFile(target, "wb", mtime=0) as out:
            for record in records(path):
                out.write(json.dumps(row_of(record, model), ensure_ascii=False).encode("utf-8") + b"\n")
                count += 1
        print(f"{target}: {count} rows from {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
