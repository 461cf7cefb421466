"""Time find_boxes + read_box on typical and pathological outputs; prints µs per call.

Run with ``python benchmarks/speed/boxed_scan.py`` (``PYTHONPATH=sdk`` before the package is
installed). The numbers are figures to watch, not assertions: tests only check that the
pathological inputs finish with the right structure.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from choicebox.find._boxed import find_boxes, read_box

_PARAGRAPH = (
    "We need to determine which technique detects the chromosomal abnormality. "
    "Karyotyping shows large-scale changes, while PCR amplifies a target {sequence}; "
    "with $x_{i}^{2}$ reads and \\frac{1}{2} coverage, option B fails. "
)


def _reasoning(size: int) -> str:
    body = (_PARAGRAPH * (size // len(_PARAGRAPH) + 1))[: size - 30]
    return body + "\n\nThe answer is $\\boxed{C}$."


def _grade(text: str) -> str | None:
    boxes = find_boxes(text)
    if not boxes:
        return None
    reading = read_box(boxes[-1].content)
    return reading.letters[0] if reading.kind == "letter" else None


def _time(label: str, call: Callable[[], object], *, number: int) -> None:
    best = min(timeit.repeat(call, number=number, repeat=5)) / number
    print(f"{label:<44} {best * 1e6:>12.1f} µs")


def main() -> None:
    cases: list[tuple[str, str, int]] = [
        ("2 KB reasoning, ends in \\boxed{C}", _reasoning(2_000), 20_000),
        ("50 KB reasoning", _reasoning(50_000), 1_000),
        ("1 MB reasoning", _reasoning(1_000_000), 20),
        ("5 MB reasoning", _reasoning(5_000_000), 5),
        ("10,000 nested braces in a box", "\\boxed{" + "{" * 10_000 + "C" + "}" * 10_000 + "}", 50),
        ("10,000 nested boxes", "\\boxed{" * 10_000 + "C" + "}" * 10_000, 50),
        ("10,000 unclosed openers", "\\boxed{" * 10_000 + "C", 50),
        ("10,000 boxes", " ".join(f"\\boxed{{{'ABCD'[i % 4]}}}" for i in range(10_000)), 20),
        ("5 MB unclosed box", "\\boxed{" + "x { y } " * 650_000, 5),
    ]
    assert _grade(cases[0][1]) == "C"
    print(f"{'input':<44} {'find+read':>15}")
    for label, text, number in cases:
        _time(label, lambda text=text: _grade(text), number=number)

    print()
    print(f"{'read_box alone':<44} {'per call':>15}")
    for content in ["C", "\\text{\\textbf{(C)}}", "C: Karyotyping", "A, B, and C", "Karyotyping"]:
        _time(f"  cached {content!r}", lambda content=content: read_box(content), number=100_000)
    from choicebox.find._boxed import _read_slow

    for content in ["\\text{\\textbf{(C)}}", "A, B, and C", "E: \\text{A polygenic risk score}"]:
        _time(f"  uncached grammar {content!r}", lambda c=content: _read_slow(c), number=2_000)


if __name__ == "__main__":
    main()
