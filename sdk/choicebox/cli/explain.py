"""``choicebox explain``: why an output got its verdict.

It grades one output and prints every statement the mode's steps found, in text order, with what
the resolution policy did with each (chosen, superseded, retracted, conflicting, outside the
question...), then the verdict. The output is given as text, or as a row of a JSONL file (by
line number or by uuid)::

    choicebox explain --text "The answer is (B) or (D). The answer is (D)."
    choicebox explain --text "Answer: optC" --options A=optA B=optB C=optC --mode robust
    choicebox explain rollouts.jsonl --line 12
    choicebox explain rollouts.jsonl.gz --uuid mmlupro-70 --mode mmlu_pro
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final

from choicebox._errors import ChoiceboxError
from choicebox.cli._args import add_rules_dir

__all__ = ["register"]

_EXCERPT: Final = 72


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "explain",
        help="show why an output gets its verdict: the statements found and how they resolved",
        description=(
            "Grade one output and print the statements the mode's steps found, what the "
            "mode's resolution policy did with each, and the verdict. Give the output as "
            "--text, or as a row of FILE (a JSONL file of rows, .gz allowed) by --line or --uuid."
        ),
    )
    parser.add_argument("file", metavar="FILE", nargs="?", help="a JSONL file of rows")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--line", type=int, metavar="N", help="the row on line N of FILE (1-based)")
    where.add_argument("--uuid", metavar="U", help="the row of FILE whose uuid is U")
    parser.add_argument("--text", metavar="TEXT", help="the output to explain ('-' reads stdin)")
    parser.add_argument(
        "--options",
        nargs="+",
        metavar="L=TEXT",
        help="the options of --text as LETTER=TEXT (default: A=optA ... D=optD)",
    )
    parser.add_argument("--question", default="", help="the question of --text, if it matters")
    parser.add_argument("--expected", metavar="L", help="the gold letter of --text (default: none)")
    parser.add_argument(
        "--mode", metavar="M", help="grading mode (default: the row's, or robust for --text)"
    )
    add_rules_dir(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(handler=_explain)


class _UsageError(Exception):
    """A command-line mistake: printed as one line, exit status 2."""


def _explain(args: argparse.Namespace) -> int:
    from choicebox._modes import default_registry  # noqa: PLC0415  the engine loads on use only

    try:
        registry = default_registry(tuple(args.rules_dir))
        verdict, text, mode = _graded(args, registry)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ChoiceboxError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(_as_json(verdict, text, mode), ensure_ascii=False, indent=2))
    else:
        print(_as_text(verdict, text, mode))
    return 0


def _graded(args: argparse.Namespace, registry: Any) -> tuple[Any, str, Any]:
    """(verdict, the text the steps read, the mode) for the output the arguments name."""
    from choicebox._grading import grade, grade_text, reading_text  # noqa: PLC0415  on use only
    from choicebox._rollout import response_text  # noqa: PLC0415  on use only

    if args.text is not None:
        if args.file is not None or args.line is not None or args.uuid is not None:
            raise _UsageError("give --text, or FILE with --line or --uuid, not both")
        text = sys.stdin.read() if args.text == "-" else args.text
        options = _options(args.options)
        mode = registry.get(args.mode or "robust")
        expected = args.expected or next(iter(options))
        if expected not in options:
            raise _UsageError(
                f"--expected {expected!r} is not one of the options {', '.join(options)}"
            )
        verdict = grade_text(text, options, expected, mode, question=args.question)
    else:
        if args.file is None or (args.line is None and args.uuid is None):
            raise _UsageError("give --text TEXT, or FILE with --line N or --uuid U")
        row = _row(Path(args.file), args.line, args.uuid)
        sample = _sample(row)
        mode = registry.get(args.mode or sample.grading_mode)
        if "response" not in row:
            raise _UsageError("the row has no response to explain")
        verdict = grade(sample, row["response"], mode=mode, registry=registry)
        text = response_text(row["response"])
    seen = reading_text(mode, text)
    return verdict, seen if seen is not None else text, mode


def _options(pairs: Sequence[str] | None) -> dict[str, str]:
    if not pairs:
        return {letter: f"opt{letter}" for letter in "ABCD"}
    options: dict[str, str] = {}
    for pair in pairs:
        letter, sep, text = pair.partition("=")
        if not sep or len(letter) != 1 or not letter.isalpha() or not text:
            raise _UsageError(f"--options takes LETTER=TEXT pairs, got {pair!r}")
        options[letter.upper()] = text
    if len(options) < 2:
        raise _UsageError("--options needs at least two options")
    return options


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    from choicebox.jsonl import numbered_lines  # noqa: PLC0415  on use only

    if path.exists() and not path.is_file():  # a device or a pipe would be read for ever
        raise _UsageError(f"{path}: not a regular file")
    with path.open("rb") as raw:
        handle: IO[bytes] = gzip.GzipFile(fileobj=raw) if path.name.endswith(".gz") else raw  # type: ignore[assignment]
        for number, line, whole in numbered_lines(handle):
            yield number, line if whole else b""  # too long to be a row: nothing to explain


def _row(path: Path, line: int | None, uuid: str | None) -> dict[str, Any]:
    import orjson  # noqa: PLC0415  on use only

    for number, raw in _lines(path):
        if line is not None and number != line:
            continue
        if uuid is not None and uuid.encode() not in raw:
            continue
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if line is not None:
                raise _UsageError(f"{path}:{number}: invalid JSON: {exc}") from None
            continue
        if not isinstance(row, dict):
            raise _UsageError(f"{path}:{number}: expected a JSON object")
        if uuid is None or row.get("uuid") == uuid:
            return row
    where = f"line {line}" if line is not None else f"row with uuid {uuid!r}"
    raise _UsageError(f"{path}: no {where}")


def _sample(row: Mapping[str, Any]) -> Any:
    from choicebox._samples import MCQASample  # noqa: PLC0415  on use only

    # A row without options takes them from its prompt, as `choicebox grade` reads it.
    return MCQASample.from_wire(row)


def _excerpt(text: str, start: int, end: int) -> str:
    piece = " ".join(text[start : max(end, start + 1)].split())
    return piece if len(piece) <= _EXCERPT else piece[: _EXCERPT - 1] + "…"


def _as_text(verdict: Any, text: str, mode: Any) -> str:
    lines = [f"mode {mode.id} (resolve: {mode.resolve})"]
    if verdict.candidates:
        lines.append("statements found, in text order:")
    for ruling in verdict.candidates:
        c = ruling.candidate
        letters = ",".join(c.letters) or "-"
        flags = "".join(f" [{flag}]" for flag in ("final", "part", "foreign") if getattr(c, flag))
        note = f": {ruling.note}" if ruling.note else ""
        lines.append(
            f"  {c.start:>6}-{c.end:<6} {c.kind:<14} {letters:<6} {c.step:<16} {ruling.outcome}{note}{flags}"
        )
        lines.append(f"  {'':13} {_excerpt(text, c.start, c.end)!r}  ({c.how})")
        if c.layout or c.payload:
            cue = f"cue {c.cue!r}" if c.cue else "no cue"
            lines.append(f"  {'':13} {cue}, payload {c.payload or '-'}, {c.layout or 'same line'}")
    if not verdict.candidates:
        lines.append("no step found a statement")
    answer = verdict.extracted_answer or "no answer"
    lines.append(f"verdict: {answer}, reward {verdict.reward:g}, step {verdict.step or '-'}")
    if verdict.failure is not None:
        lines.append(f"failure: {verdict.failure}: {verdict.detail}")
    else:
        lines.append(f"why: {verdict.detail}")
    for error in verdict.errors:
        lines.append(f"error: {error}")
    return "\n".join(lines)


def _as_json(verdict: Any, text: str, mode: Any) -> dict[str, Any]:
    return {
        "mode": mode.id,
        "resolve": mode.resolve,
        "verdict": verdict.wire_fields(),
        "candidates": [
            {
                "kind": r.candidate.kind,
                "letters": list(r.candidate.letters),
                "start": r.candidate.start,
                "end": r.candidate.end,
                "step": r.candidate.step,
                "final": r.candidate.final,
                "part": r.candidate.part,
                "how": r.candidate.how,
                "cue": r.candidate.cue,
                "layout": r.candidate.layout,
                "payload": r.candidate.payload,
                "text": _excerpt(text, r.candidate.start, r.candidate.end),
                "outcome": r.outcome,
                "note": r.note,
            }
            for r in verdict.candidates
        ],
    }
