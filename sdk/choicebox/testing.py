"""Helpers for testing grading modes and code that grades, in the spirit of ``structlog.testing``.

``run_mode_examples`` runs the examples a rule file embeds (its ``examples:`` list) and says which
ones pass, so a rule file's own documentation is also its test suite::

    from choicebox.testing import run_mode_examples

    def test_my_mode() -> None:
        failures = [r for r in run_mode_examples("my_mode") if not r.passed]
        assert not failures, "\\n".join(r.describe() for r in failures)

``mcqa_sample`` builds a sample in one line (``mcqa_sample("ABCDE", "E")``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._errors import location
from ._grading import grade_text
from ._modes import GradingMode, ModeExample, ModeRegistry, default_registry
from ._samples import MCQASample, Template
from .render import Verdict

__all__ = ["ExampleResult", "mcqa_sample", "run_mode_examples"]


@attrs.frozen(kw_only=True)
class ExampleResult:
    """One embedded example of a mode, and what the mode made of it.

    ``passed`` is true when the extracted letter equals the example's ``expected`` letter (``None``
    for "no answer") and, if the example names a ``failure``, the verdict's failure kind is it.
    """

    mode: str
    index: int
    example: ModeExample
    verdict: Verdict
    source: str = "<memory>"

    @property
    def expected(self) -> str | None:
        return self.example.expected

    @property
    def got(self) -> str | None:
        return self.verdict.extracted_answer

    @property
    def passed(self) -> bool:
        if self.verdict.extracted_answer != self.example.expected:
            return False
        return self.example.failure is None or self.verdict.failure == self.example.failure

    @property
    def location(self) -> str:
        """``file:line`` of the example in its rule file (the file alone if the line is unknown)."""
        return location(self.source, self.example.line)

    def describe(self) -> str:
        """A one-paragraph account of the example and the result, for failure messages."""
        want = self.example.expected if self.example.expected is not None else "no answer"
        if self.example.failure is not None:
            want = f"{want} (failure {self.example.failure})"
        got = self.verdict.extracted_answer or "no answer"
        if self.verdict.failure is not None and self.verdict.failure != "wrong_answer":
            got = f"{got} (failure {self.verdict.failure}: {self.verdict.detail})"
        status = "ok" if self.passed else "FAILED"
        return (
            f"{self.location}: {self.mode} example #{self.index + 1} {status}\n"
            f"    output:   {self.example.output!r}\n"
            f"    expected: {want}\n"
            f"    got:      {got}"
        )


def run_mode_examples(
    mode: str | GradingMode, *, registry: ModeRegistry | None = None
) -> list[ExampleResult]:
    """Grade every embedded example of ``mode`` (a mode or its name) and report each result.

    A name is looked up in ``registry`` (default: ``default_registry()``). Each example is graded
    with its own options; the gold letter is the example's ``expected`` letter, or the first option
    for an example that expects no answer (so the check is on extraction, not on reward).
    """
    resolved = mode if isinstance(mode, GradingMode) else (registry or default_registry()).get(mode)
    results: list[ExampleResult] = []
    for index, example in enumerate(resolved.examples):
        gold = example.expected if example.expected is not None else next(iter(example.options))
        verdict = grade_text(example.output, example.options, gold, resolved)
        results.append(
            ExampleResult(
                mode=resolved.id,
                index=index,
                example=example,
                verdict=verdict,
                source=resolved.source,
            )
        )
    return results


def mcqa_sample(
    output_letters: str = "ABCD",
    expected: str = "B",
    *,
    options: Mapping[str, str] | None = None,
    question: str = "Which option is right?",
    output_regex: str | list[str] | tuple[str, ...] | None = None,
    answer_prefix: str | None = None,
    **kw: Any,
) -> MCQASample:
    """A sample with options ``opt<letter>`` for each of ``output_letters`` and gold ``expected``.

    ``options`` replaces the generated options; ``output_regex`` and ``answer_prefix`` set the
    sample's template metadata; any other keyword (``grading_mode``, ``uuid``, ``metadata``,
    ``template``, ...) is passed to ``MCQASample``.
    """
    if options is None:
        options = {letter: f"opt{letter}" for letter in output_letters}
    if output_regex is not None or answer_prefix is not None:
        if "template" in kw:
            raise TypeError("pass either template= or output_regex=/answer_prefix=, not both")
        kw["template"] = Template(
            output_regex=output_regex,
            answer_prefix=answer_prefix,
            regex_as_list=isinstance(output_regex, list | tuple),
        )
    return MCQASample(question=question, options=options, expected_answer=expected, **kw)
