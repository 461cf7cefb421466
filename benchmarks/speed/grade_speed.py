"""Grading speed: verdicts per second for every built-in mode, on 2 KB, 50 KB and 1 MB outputs.

Each output is synthetic reasoning (sentences and line breaks) ending in an answer format the
mode reads. Timing covers ``choicebox.grade`` end to end (text extraction from a Responses
object is excluded: the output is a string), grammar included. Run on one core:

    taskset -c 0 python benchmarks/speed/grade_speed.py
"""

from __future__ import annotations

import argparse
import random
import time

import choicebox

OPTIONS = {
    "A": "Karyotyping",
    "B": "Polymerase chain reaction",
    "C": "Whole-genome sequencing",
    "D": "Fluorescence in situ hybridisation",
}
FORMATS = {
    "boxed": "Therefore the final answer is $\\boxed{C}$.",
    "boxed_text": "So, the answer: \\[\\boxed{\\text{C: Whole-genome sequencing}}\\]",
    "answer_colon": "Answer: C",
    "answer_md": "**Answer:** C",
    "answer_phrase": "Putting it together, the answer is (C).",
}
MODE_FORMATS = {
    "strict_single_letter_boxed": ("boxed", "boxed_text"),
    "lenient_boxed": ("boxed", "boxed_text"),
    "lenient_answer_colon": ("answer_colon",),
    "lenient_answer_colon_md": ("answer_colon", "answer_md"),
    "robust": tuple(FORMATS),
}
WORDS = [
    "the",
    "mutation",
    "affects",
    "protein",
    "folding",
    "so",
    "option",
    "analysis",
    "suggests",
    "sequencing",
    "because",
    "each",
    "chromosome",
    "copy",
    "carries",
    "a",
    "variant",
    "we",
    "compare",
    "coverage",
    "depth",
    "and",
    "allele",
    "frequency",
]


def reasoning(size: int, rng: random.Random) -> str:
    """About ``size`` characters of prose: sentences of 8-20 words, a line break every few."""
    parts: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize()
        sentence += ".\n" if rng.random() < 0.3 else ". "
        parts.append(sentence)
        total += len(sentence)
    return "".join(parts)


def measure(sample: choicebox.MCQASample, text: str, mode: str, budget: float) -> float:
    """Seconds per call, best of three runs of about ``budget`` seconds each."""
    verdict = choicebox.grade(sample, text, mode=mode)
    assert verdict.extracted_answer == "C", (mode, verdict)
    best = float("inf")
    for _ in range(3):
        calls, start = 0, time.perf_counter()
        while True:
            for _ in range(20):
                choicebox.grade(sample, text, mode=mode)
            calls += 20
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                break
        best = min(best, elapsed / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per measurement")
    args = parser.parse_args()
    rng = random.Random(7)
    sample = choicebox.MCQASample(
        question="Which test finds a specific variant?", options=OPTIONS, expected_answer="C"
    )
    bodies = {size: reasoning(size, rng) for size in (2_000, 50_000, 1_000_000)}
    print(f"{'size':>9} {'mode':<28} {'format':<14} {'verdicts/s':>11} {'µs/call':>9}")
    for size, body in bodies.items():
        for mode, formats in MODE_FORMATS.items():
            for name in formats:
                seconds = measure(sample, body + "\n\n" + FORMATS[name], mode, args.budget)
                print(
                    f"{size:>9} {mode:<28} {name:<14} {1 / seconds:>11,.0f} {seconds * 1e6:>9.1f}"
                )


if __name__ == "__main__":
    main()
