"""The ``answer_line`` step kind (``choicebox.find.answer_line``): a label, a colon and a payload to
the end of the line, ``Answer: B``.

What it reads (the payload forms, the label's layouts), what it must not read, and what each of its
parameters changes. A labelled line is a commitment in itself: the prose around it (a condition) is
not weighed. Every mode here is a rule file whose chain is this one step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import TEN, Built, one_kind


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("answer_line"), "answer_line")


@pytest.mark.parametrize(
    "output",
    [
        "Answer: B",
        "Answer: (B)",
        "Answer: [B]",
        "Answer: $B$",
        "Answer: **B**",
        "Answer: \\boxed{B}",
        "Answer: option B",
        "Answer: B) optB",
        "Answer: optB",  # the option's text
        "answer: b",  # any case
        "ANSWER:   B  ",
        "Answer：B",  # a fullwidth colon
        "**Answer:** B",  # markup after the colon is the payload's
        "Answer:\nB",  # the payload on the next line
        "Reasoning first.\nAnswer: B\nBecause it fits.",
        "Final answer: B",  # the label inside a longer one
    ],
)
def test_it_reads_the_payload_of_a_labelled_line(lenient: Built, output: str) -> None:
    assert lenient.outcome(output) == ("B", None)


def test_the_last_labelled_line_counts(lenient: Built) -> None:
    assert lenient.read("Answer: A\nOn reflection:\nAnswer: C") == "C"


@pytest.mark.parametrize(
    "output",
    [
        "The answer is B.",  # a mention: no label and colon
        "Answer B",
        "My answer would be B",
        "Answer: not B",  # an elimination
        "Option B. Answer: none",
        "Answer: zzz",
        "Answer: definitely",  # a word that starts with a letter
    ],
)
def test_it_reads_no_answer_without_a_labelled_letter(lenient: Built, output: str) -> None:
    assert lenient.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize("output", ["Answer: A or B", "Answer: A/B", "Answer: B, C", "Answer: A and D"])
def test_several_letters_are_ambiguous(lenient: Built, output: str) -> None:
    assert lenient.outcome(output) == (None, "ambiguous")


def test_a_letter_that_is_not_an_option_is_not_an_answer(lenient: Built) -> None:
    assert lenient.outcome("Answer: E") == (None, "not_an_option")
    assert lenient.outcome("Answer: E", options=TEN) == ("E", None)


def test_it_reports_every_labelled_line_to_a_policy_that_weighs_them(tmp_path: Path) -> None:
    verdict = one_kind(tmp_path, "answer_line", resolve="last_position").grade("Answer: A\nnoise\nAnswer: E\nAnswer: C")
    found = [(r.candidate.kind, r.candidate.letters, r.outcome) for r in verdict.candidates]
    assert found == [("commitment", ("A",), "superseded"), ("unreadable", (), "ignored"), ("commitment", ("C",), "chosen")]


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_labels_names_the_lines_read(tmp_path: Path) -> None:
    final = one_kind(tmp_path, "answer_line", labels=["final answer"])
    assert final.read("Final answer: B\nAnswer: C") == "B"
    assert final.read("Answer: C") is None
    assert one_kind(tmp_path, "answer_line", labels=["答案"]).read("答案：C") == "C"


def test_parameter_markdown_allows_decorations_around_the_label(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("**Answer**: B") is None
    marked = one_kind(tmp_path, "answer_line", markdown=True)
    assert marked.read("**Answer**: B") == "B"
    assert marked.read("__Answer__: B") == "B"


def test_parameter_word_start_requires_the_label_to_start_a_word(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("FinalAnswer: B") == "B"
    starting = one_kind(tmp_path, "answer_line", word_start=True)
    assert starting.read("FinalAnswer: B") is None
    assert starting.read("Final answer: B") == "B"


@pytest.mark.parametrize(
    ("output", "lenient_reads", "strict_reads"),
    [
        ("Answer: (B)", "B", None),
        ("Answer: option B", "B", None),
        ("Answer: B) optB", "B", None),
        ("Answer: B", "B", "B"),
        ("Answer: optB", "B", "B"),
        ("Answer: \\text{B}", "B", "B"),
        ("Answer: A or B", None, None),
    ],
)
def test_parameter_payload_strict_reads_a_lone_letter_or_an_option_text_only(
    tmp_path: Path, lenient: Built, output: str, lenient_reads: str | None, strict_reads: str | None
) -> None:
    assert lenient.read(output) == lenient_reads
    assert one_kind(tmp_path, "answer_line", payload="strict").read(output) == strict_reads


def test_parameter_last_capital_takes_the_payloads_last_standalone_capital(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("Answer: the capital B") is None
    assert one_kind(tmp_path, "answer_line", last_capital=True).read("Answer: the capital B") == "B"


def test_parameter_which_picks_the_first_or_the_last_line(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("Answer: A\nAnswer: B") == "B"
    assert one_kind(tmp_path, "answer_line", which="first").read("Answer: A\nAnswer: B") == "A"


def test_parameter_fallback_walks_past_lines_that_name_nothing(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("Answer: A\nAnswer: zzz") is None
    walking = one_kind(tmp_path, "answer_line", fallback=True)
    assert walking.read("Answer: A\nAnswer: zzz") == "A"
    assert walking.read("Answer: A\nAnswer: E") == "A"  # past a letter that is no option too


def test_parameter_lowercase_accepts_a_lowercase_letter(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("Answer: b") == "B"
    assert one_kind(tmp_path, "answer_line", lowercase=False).read("Answer: b") is None


def test_parameter_sample_prefix_reads_after_the_samples_own_answer_prefix(tmp_path: Path, lenient: Built) -> None:
    assert lenient.read("Die Antwort ist B", answer_prefix="Die Antwort ist") is None
    prefixed = one_kind(tmp_path, "answer_line", sample_prefix=True)
    assert prefixed.read("Die Antwort ist B", answer_prefix="Die Antwort ist") == "B"
    assert prefixed.read("Answer: C\nDie Antwort ist B", answer_prefix="Die Antwort ist") == "B"
    assert prefixed.read("Die Antwort ist B") is None  # a sample without a prefix
