"""The ``standalone_letter`` step kind (``choicebox.find.text``): a letter standing alone, as the
whole output or its last line (``B``, ``(B)``, ``**B.**``).

What it reads, what it must not read (a letter in prose, a listed option, several letters, a letter
that is no option), and what each of its parameters changes. Every mode here is a rule file whose
chain is this one step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import FOUR, Built, one_kind


@pytest.fixture(scope="module")
def last_line(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("standalone_letter"), "standalone_letter")


@pytest.mark.parametrize(
    "output",
    [
        "B", "b", "B\n", "Thinking\nB", "Thinking\n(B)", "Thinking\n[B]", "Thinking\n**B.**", "Thinking\n$B$", "Thinking\nB.",
        # marks that point at or tick the answer, and the letter named as an option
        "Thinking\n👉 **B**", "Thinking\n✅ B", "Thinking\nOption (B) ✔", "Thinking\n✔️ B", "Thinking\nOption B ✅",
        # one letter said again and again (a degenerate output) is that letter
        "Thinking\nB B B B B B B B B B B B B B B B B B B B",
        "Thinking\n\n#### B",  # the final-answer marker of GSM8K-style outputs
        # a chat template's tokens leaked after it, a code fence around it
        "B.<|im_end|>\n<|endoftext|><|endoftext|>", "Thinking\nB<|eot_id|>", "Thinking\n```\nB\n```",
        "Thinking\nB [/INST]",
    ],
)  # fmt: skip
def test_it_reads_a_letter_alone_on_the_last_line(last_line: Built, output: str) -> None:
    assert last_line.outcome(output) == ("B", None)


@pytest.mark.parametrize(
    "output",
    [
        "B is right",  # a letter in prose
        "Thinking B",
        "Answer: B",
        "Thinking\nB: optB",  # a line listing an option
        "Thinking\nB) optB",
        "Thinking\nnot B",  # an elimination
        "Thinking\nE",  # no option
        "Thinking\nI",
        "Thinking\n✘ B",  # a cross is no tick
        "A: optA\nB: optB\nC:",  # the options listed, cut off at the next letter
        "(A) means x\n(B)",
        "D. optD\n\nB. optB\n\nD. optD\n\nB. optB\n\nD.",  # a loop of restated options, cut off
        "Let's analyze each option.\n\n**Option B**",  # the heading of a review cut off, no tick
        "Let me check each option.\n\n👉 Option B",
        "Thinking\nOption (B) is out",
        "### A\nIt fits.\n### B",  # a heading of a review cut off ("####" alone marks an answer)
    ],
)
def test_it_reads_no_answer_without_a_lone_letter(last_line: Built, output: str) -> None:
    assert last_line.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize(
    "output", ["Thinking\nA or B", "Thinking\nA B", "Thinking\nA, B", "Thinking\nA\nB", "Thinking\nB B A B B"]
)
def test_several_letters_are_ambiguous(last_line: Built, output: str) -> None:
    assert last_line.outcome(output) == (None, "ambiguous")


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_scope_whole_reads_only_an_output_that_is_the_letter(tmp_path: Path, last_line: Built) -> None:
    whole = one_kind(tmp_path, "standalone_letter", scope="whole")
    assert last_line.read("Thinking\nB") == "B"
    assert whole.read("Thinking\nB") is None
    assert whole.read("B") == "B"


def test_parameter_anywhere_takes_the_last_standalone_capital_option_letter(tmp_path: Path, last_line: Built) -> None:
    anywhere = one_kind(tmp_path, "standalone_letter", anywhere=True)
    assert last_line.read("I pick B because it fits") is None
    assert anywhere.read("I pick B because it fits") == "B"
    assert anywhere.read("B then E") == "B"  # E is no option
    assert anywhere.read("Thinking E here") is None


def test_parameter_own_text_reads_a_whole_output_of_a_letter_and_its_options_text(tmp_path: Path) -> None:
    plain = one_kind(tmp_path, "standalone_letter", scope="whole")
    own = one_kind(tmp_path, "standalone_letter", scope="whole", own_text=True)
    assert plain.read("B) optB") is None
    assert own.read("B) optB") == "B"
    assert own.read("B: optB") == "B"
    assert own.read("B) optC") is None  # another option's text
    assert own.read("B) 39.02°", options={**FOUR, "B": "39.02o"}) == "B"  # its own text, written otherwise
    for other in ("B) wrong", "A) I don't know.", "D) (no answer)", "B — because the others do not fit."):
        assert own.read(other) is None, other  # other text may say anything of the letter
    assert own.read("B) 2 C) 3 D) 4") is None  # the options listed
    assert own.read("(b) optC. The answer is (D).") is None  # a part label, and another letter
    assert own.read("A car is fast.") is None
    assert own.outcome("E") == (None, "not_an_option")


def test_parameter_lowercase_accepts_a_lowercase_letter(tmp_path: Path, last_line: Built) -> None:
    assert last_line.read("Thinking\nb") == "B"
    strict = one_kind(tmp_path, "standalone_letter", lowercase=False)
    assert strict.read("Thinking\nb") is None
    assert strict.read("b") is None
