"""Grading time against output length on adversarial outputs: it must grow linearly.

For each built-in mode and each shape below, outputs of 10 KB to 5 MB (doubling) are graded
against the options red / green / blue / 1000; it prints seconds per size and the ratio of each
size's time to the previous one (about 2 for linear work, about 4 for quadratic). The shapes
are the ones that once made a pattern backtrack (issue 12):

* ``digits``: ``"Answer: " + "1" * n + "x"`` (a number that never ends)
* ``boxed_digits``: ``"\\boxed{" + "1" * n + "x}"``
* ``dollars``: ``"Answer: " + "$" * n + "x"`` (a math wrapper that never closes)
* ``newlines``: ``"The answer is" + "\\n" * n``
* ``separator``: ``"Answer: A" + "$" * n + "-B"`` (a gap between two letters)
* ``answers``: ``"The answer is " * (n / 14)`` (a statement every few characters)
* ``tags``: ``"<answer>" * (n / 8)`` (openers that never close)
* ``unicode``: ``n`` characters of seeded random Unicode
* ``ticks``, ``rules``, ``criteria``, ``conditions``, ``arrows``: the shapes of the kinds added
  later (ticked options, lines under a rule, criterion statements, one letter per condition, a
  letter after an arrow), repeated; then ``leads`` ... ``remarks`` and ``adverbs`` ...
  ``sentences``, those of later rules, ``reviews`` ... ``terms``, round 21's, and ``examples``
  ... ``commas``, rounds 22 and 23, and ``hedged_asides`` ... ``linked``, round 24

Usage::

    python benchmarks/hostile/linearity.py [--max-bytes 5000000] [--modes robust,...] [--shapes ...]

A size whose grading takes longer than ``--stop`` seconds ends that shape's series.
Exit status 1 when a doubling costs more than ``--max-ratio`` times the previous size (at sizes
of at least 160 KB, where timer noise is small).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from choicebox import default_registry, grade_text

OPTIONS = {"A": "red", "B": "green", "C": "blue", "D": "1000"}


def _unicode(n: int) -> str:
    rng = random.Random(12)
    # Code points from every plane that holds text, surrogates left out.
    ranges = [(0x20, 0x7E), (0xA0, 0x2FFF), (0x3000, 0x9FFF), (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1D400, 0x1D7FF)]
    chars = []
    for _ in range(n):
        lo, hi = ranges[rng.randrange(len(ranges))]
        chars.append(chr(rng.randint(lo, hi)))
    return "".join(chars)


SHAPES: dict[str, Callable[[int], str]] = {
    "digits": lambda n: "Answer: " + "1" * n + "x",
    "boxed_digits": lambda n: "\\boxed{" + "1" * n + "x}",
    "dollars": lambda n: "Answer: " + "$" * n + "x",
    "newlines": lambda n: "The answer is" + "\n" * n,
    "separator": lambda n: "Answer: A" + "$" * n + "-B",
    "answers": lambda n: "The answer is " * (n // 14),
    "tags": lambda n: "<answer>" * (n // 8),
    "unicode": _unicode,
    # the kinds added later: a listing of crossed options, rules before payload lines, criterion
    # clauses, conditions after a letter, letters under arrows
    "ticks": lambda n: "A) red ❌\nB) green ✅\n" * (n // 20),
    "rules": lambda n: "---\n**B) green**\n" * (n // 16),
    "criteria": lambda n: "the answer that is " * (n // 19),
    "conditions": lambda n: "The answer is (B) if (C) if " * (n // 28),
    "arrows": lambda n: "The answer is 1 --> B --> " * (n // 26),
    # this session's kinds: a bold lead on a long first line, restated options each called the
    # answer, withdrawals, label nouns, remarks in brackets
    "leads": lambda n: "**C** — " + "the cycle oxidizes acetyl " * (n // 25),
    "in_turn": lambda n: "".join(f"{x}. opt{x} is the correct answer. Because.\n" for x in "ABCD") * (n // 160),
    "withdrawals": lambda n: "I withdraw (B) " * (n // 15),
    "labels": lambda n: "ans: answer: ans " * (n // 17),
    "remarks": lambda n: "The answer is S phase (" + "synthesis " * (n // 10),
    # a later session's: adverbs after links, asides between hedged letters, withdrawals of the
    # answer with conditions, a labelled closing line, an option's text as a long sentence
    "adverbs": lambda n: "The answer, therefore, is therefore " * (n // 36),
    "asides": lambda n: "The answer is B (green) or " * (n // 27),
    "retractions": lambda n: "The answer is (B). If so, I'll retract my answer, " * (n // 50),
    "verdicts": lambda n: "Verdict: " + "blue " * (n // 5),
    "sentences": lambda n: "red " * (n // 4) + "is red.",
    # round 21's readings: a review list, harmony channels, a copula after a long value, a value
    # line's closing "which is" clause, lookalike letters, an expression's terms
    "reviews": lambda n: "- it is needed here (A).\n- it is wrong (so C is wrong).\n" * (n // 50),
    "channels": lambda n: "<|channel|>final<|message|><|return|> " * (n // 39),
    "copulas": lambda n: "정답은 " + "*" * n + "입니다",
    "which": lambda n: "Answer: it is 12" + ", which is" * (n // 10),
    "lookalikes": lambda n: "Answer: В) " + "red " * (n // 4),
    "terms": lambda n: "The answer is " + "1 + " * (n // 4),
    # rounds 22 and 23: format examples in code spans, numbered options, restated listings, a
    # table's selection column, a bold labelled closing line, closing tags, CJK particles, leaked
    # chat-template tokens, decimal commas
    "examples": lambda n: "Answer: B. Use the format `Answer: X`, where X is " * (n // 50),
    "numbered": lambda n: "The answer is option number " + "2" * n,
    "restated": lambda n: "The answer is A.\n" + "(A) red\n(B) green\n" * (n // 18),
    "selection": lambda n: "| Option | Colour | Selected |\n|---|---|---|\n" + "| A | red |  |\n" * (n // 16),
    "bold_label": lambda n: "**" + "net force " * (n // 10) + ": 1000**",
    "closing_tags": lambda n: "Working it out." + "</output>" * (n // 9),
    "particles": lambda n: "よって、" + "濃度は" * (n // 3) + " 1000 です。",
    "templates": lambda n: "Answer: B" + "[/INST]<|eot_id|>" * (n // 17),
    "commas": lambda n: "The answer is " + "2,4" * (n // 3),
    # round 24: hedging asides, supposed cases, sections with options of their own, linked values
    "hedged_asides": lambda n: "The answer is B (or possibly C) " * (n // 32),
    "supposed": lambda n: "If it is so, the answer is B.\n" * (n // 30),
    "sections": lambda n: "Question: Which?\nA. x\nB. y\nC. z\nAnswer: (B)\n" * (n // 43),
    "linked": lambda n: "Answer: the speed is " + "about " * (n // 6) + "1000",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--min-bytes", type=int, default=10_000)
    parser.add_argument("--max-bytes", type=int, default=5_000_000)
    parser.add_argument("--modes", help="comma-separated modes (default: every built-in mode)")
    parser.add_argument("--shapes", help=f"comma-separated shapes (default: {','.join(SHAPES)})")
    parser.add_argument("--stop", type=float, default=20.0, help="end a series after a call this slow")
    parser.add_argument("--max-ratio", type=float, default=3.0)
    args = parser.parse_args()
    registry = default_registry()
    modes = args.modes.split(",") if args.modes else [m for m in registry.names() if registry.is_builtin(m)]
    shapes = args.shapes.split(",") if args.shapes else list(SHAPES)
    sizes = []
    size = args.min_bytes
    while size <= args.max_bytes:
        sizes.append(size)
        size *= 2
    worst = 0.0
    print("CPU seconds per call at each size (bytes); x = ratio to the previous size")
    for shape in shapes:
        texts = {n: SHAPES[shape](n) for n in sizes}
        for mode_name in modes:
            mode = registry.get(mode_name)
            cells = []
            previous = None
            for n in sizes:
                started = time.process_time()
                grade_text(texts[n], OPTIONS, "A", mode)
                seconds = time.process_time() - started
                ratio = seconds / previous if previous else None
                if ratio is not None and n >= 160_000:
                    worst = max(worst, ratio)
                cells.append(f"{seconds:8.4f}" + (f" x{ratio:4.1f}" if ratio is not None else "      "))
                previous = seconds
                if seconds > args.stop:
                    cells.append("(stopped)")
                    break
            print(f"{shape:<13} {mode_name:<27} " + "  ".join(cells), flush=True)
    print(f"sizes: {', '.join(f'{n // 1000} KB' for n in sizes)}; worst ratio per doubling at >= 160 KB: {worst:.2f}")
    sys.exit(1 if worst > args.max_ratio else 0)


if __name__ == "__main__":
    main()
