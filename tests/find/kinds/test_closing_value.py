"""The ``closing_value`` step kind (``choicebox.find.fallbacks``): a complete output whose closing
line ends in one option's full content ("... = 200 lines per mm." with an option "200 lines per mm").

What it reads, what it must not read (an unfinished output, another value, several values, a negated
or supposed value, a value before the close), and what each of its parameters changes. Every mode
here is a rule file whose chain is this one step."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import step_kinds
from rule_files import CONCLUSION, Built, one_kind, robust_step

VALUES = {"A": "200 lines per mm", "B": "300 lines per mm", "C": "12 N", "D": "optD"}


@pytest.fixture(scope="module")
def closing(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("closing_value"), "closing_value", **robust_step("closing_value"))


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("So the grating has d = 5 um, and N = 200 lines per mm.", "A"),
        ("The force is 12 N.", "C"),
        ("Adding the two forces, the net force equals 12 N!", "C"),
        ("Working it out, we get 300 lines per mm.", "B"),
        ("The net force is about 12 N.", "C"),  # a hedge word before the value
        ("Summing up, the grating gives us:\n\n300 lines per mm.", "B"),  # the link closes the line before
        ("So the answer set is:\n[3, 4]", "D"),  # a value that closes with a bracket
        # the closing line's emphasis gives one option's content, whatever leads to it (rule 5)
        ("Working it out.\n\nSo, about **12 N** acts on the block.", "C"),
        ("So the grating would simply have **200 lines per mm.**", "A"),
        ("So the structure responsible is the __300 lines per mm__.", "B"),
        ("So the net force is approximately **12 N**, as expected.", "C"),
        ("Working it out, the net force is 12 N, which is what the scale shows.", "C"),  # a relative clause after it
        ("Adding both pulls, the net force on the block will be 12 N.", "C"),  # a result stated in the future
        ("<Thought>\nWorking it out.\n</Thought>\n<Output>\nThe net force is 12 N.\n</Output>", "C"),  # a section's tag
        ("Working it out.\n\n**Net force on the block: 12 N**", "C"),  # a bold line that labels its result
        ("So, **Net force: 12 N**.", "C"),
        ("よって、この物体にはたらく合力は 12 N です。", "C"),  # Japanese: the topic particle, then the copula
        ("因此，合力为 12 N。", "C"),
    ],
)
def test_it_reads_a_closing_result_that_is_one_options_content(closing: Built, output: str, letter: str) -> None:
    assert closing.outcome(output, options={**VALUES, "D": "[3, 4]"}) == (letter, None)


@pytest.mark.parametrize(
    "output",
    [
        "The force is 12 N",  # not complete: no closing mark
        "The force is 13 N.",  # no option's content
        "The force is 12 N, or 200 lines per mm.",  # several values
        "The force is not 12 N.",  # negated
        "If the force is 12 N, then x.",  # supposed
        "The force is 12 N. We are done.",  # not at the close
        "The forces are listed below.\n12 N",  # no link closes the line before the value
        "So it is **12 N** or **200 lines per mm**.",  # the emphasis gives two options
        "So the net force is 12 N, which is wrong.",  # the relative clause denies it
        "Reviewing them:\n\n3. **12 N**: too small, not the reason.",  # an item of a review
        "So **12 N**: the weight, not the answer.",  # a heading of what follows
        "Let me think.\n**12 N** is wrong.",  # the emphasis denied or doubted
        "It is definitely not **12 N**.",
        "I am unsure whether it is **12 N** or something else.",
        "With twice the mass, the force would be 12 N.",  # supposed: "would be" links no result
        "Working it out.\n\n**Option C: 12 N**",  # a bold line that names an option heads a review
        "Working it out.\n\n**Net force if doubled: 12 N**",  # supposed
        "Hence the net force is $(12 N)",  # cut off inside math that never closes
    ],
)
def test_it_reads_no_answer_without_one_options_content_closing_the_output(closing: Built, output: str) -> None:
    assert closing.outcome(output, options=VALUES) == (None, "no_answer")


def test_superscripts_compare_as_exponents() -> None:
    # "mm²" was "mm2" after NFKC, so a value in superscripts matched no option written with "^".
    from choicebox.find._features import norm_text

    assert norm_text("1 kW/mm²") == norm_text("1Kw/mm^2")
    assert norm_text("7.5 × 10⁻¹ m") == norm_text("7.5 × 10^{-1} m")
    assert norm_text("1 kW/mm²") != norm_text("1 kW/mm2^")


def test_it_is_weighed_as_a_commitment_by_the_conclusion_policy(tmp_path: Path) -> None:
    assert (
        one_kind(tmp_path, "closing_value", resolve=CONCLUSION).read(
            "The force is 12 N.", options=VALUES
        )
        == "C"
    )


def test_it_compares_values_as_values_not_as_strings(closing: Built) -> None:
    # Rule 5, "same value; units and format may differ": the options as MMLU-Pro writes them.
    options = {
        "A": "$-1.32$ $10^{13} \\mathrm{C}$",
        "B": "$24",
        "C": ".23 M",
        "D": "planning, organising, leading, controlling",
        "E": "127.5%",
        "F": "a) Oxygen: Reasonable, b) Nitrogen: Not reasonable, c) Water: Not reasonable",
        "G": "3 and 7",
        "H": "6",
    }
    cases = {
        "So the total charge is approximately −1.32 × 10¹³ C.": "A",
        "**So the net price is $24.00.**": "B",
        "**The resulting molarity is approximately 0.23 M.**": "C",
        "So the typical order is: planning, organising, leading and controlling.": "D",
        "**The selling price is 127.5% of the cost.**": "E",
        "Therefore: a) Oxygen: Reasonable, b) Nitrogen: Not reasonable, c) Water: Not reasonable.": "F",
        "The modes are 3 and 7.": "G",
        "Therefore a) Oxygen: Reasonable, b) Nitrogen: Not reasonable, c) Water: Not reasonable.": "F",
        "So the number of orderings is 6.": "H",
    }
    for output, letter in cases.items():
        assert closing.outcome(output, options=options) == (letter, None), output
    # A unit the question names may be added to an option that gives the number alone.
    rocket = "A rocket rises. Find its maximum height in meters."
    assert closing.outcome("The maximum height is 2041 meters.", options={"A": "2041", "B": "2000"}, question=rocket) == ("A", None)
    assert closing.outcome("The maximum height is 2041 meters.", options={"A": "2041", "B": "2000"}) == (None, "no_answer")
    # Nothing is rounded, a unit must agree, and a quantity "of" something is still one value.
    for output in (
        "The resulting molarity is 0.227 M.",
        "The net price is $24.50.",
        "The selling price is 127.5 kg.",
        "The modes are 3 and 7 and 9.",
        "The selling price is 127.5% or 130%.",
        "(If the discount were a rate, the net price would be $24.)",  # supposed
        "So the number of orderings is 6!",  # a factorial is no "6" closing its sentence
        "Substituting, the molarity = 0.",  # cut off at "0.": it gave no unit of ".23 M"
    ):
        assert closing.outcome(output, options=options) == (None, "no_answer"), output


def _texts(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=12).map("".join)


# The closing line's "last sentence" search closing_value ran before it read the line itself.
_LAST_SENTENCE = re.compile(r"(?:^|(?<=[.!?])\s++(?=[A-Z\\$])|\n)([^\n]*?)\s*$")


@settings(max_examples=400, deadline=None)
@given(_texts(["A", "b", ". ", "! ", "\\", "$", " ", "\t", "\u2003", "x = 2", "\r"]))
def test_the_last_sentence_search_always_returned_the_whole_stripped_line(text: str) -> None:
    line = text.rstrip()
    if line:
        match = _LAST_SENTENCE.search(line)
        assert match is not None
        assert match.group(1) == line


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_max_value_is_the_longest_value_compared(tmp_path: Path, closing: Built) -> None:
    short = one_kind(tmp_path, "closing_value", max_value=5)
    assert closing.read("So N = 200 lines per mm.", options=VALUES) == "A"
    assert short.read("So N = 200 lines per mm.", options=VALUES) is None
    assert short.read("The force is 12 N.", options=VALUES) == "C"


def test_which_is_no_parameter_of_a_kind_that_reads_one_line() -> None:
    assert "which" not in attrs.fields_dict(step_kinds()["closing_value"])


def test_parameter_negations_are_needed_for_a_closing_lines_emphasis(tmp_path: Path) -> None:
    # Without words that deny or doubt, a bold value in the closing line is not read at all: it
    # could be "**12 N** is wrong".
    plain = one_kind(tmp_path, "closing_value")
    assert plain.read("Working it out.\n\nSo, about **12 N** acts on the block.", options=VALUES) is None
    assert plain.read("The force is 12 N.", options=VALUES) == "C"  # the linked value still is


def test_parameter_conditions_make_a_linked_value_supposed(tmp_path: Path) -> None:
    supposed = "(If the force doubles, the net force is 12 N.)"
    assert one_kind(tmp_path, "closing_value").read(supposed, options=VALUES) == "C"
    assert (
        one_kind(tmp_path, "closing_value", conditions=["if"]).read(supposed, options=VALUES)
        is None
    )
    # Only the words before the value count: a value may hold them ("b) Nitrogen: Not reasonable").
    assert (
        one_kind(tmp_path, "closing_value", conditions=["not"]).read(
            "The forces are: not 12 N.", options={**VALUES, "D": "not 12 N"}
        )
        == "D"
    )


def test_parameter_result_labels_make_a_labelled_closing_line_complete(tmp_path: Path, closing: Built) -> None:
    assert closing.read("v = 4.9 m/s here.\n\nFinal force ≈ 12 N", options=VALUES) == "C"
    assert closing.read("Working.\n**Final force:** 12 N", options=VALUES) == "C"  # a colon links it too
    assert closing.read("Working.\nFinal force: 12 N.", options=VALUES) == "C"
    # it doubts, supposes, or states several options: nothing
    assert closing.read("Working.\nFinal force is not 12 N", options=VALUES) is None
    assert closing.read("Working.\nFinal force ≈ 12 N or 300 lines per mm", options=VALUES) is None
    assert closing.read("Working.\nFinal force would be 12 N", options=VALUES) is None
    # asked, or the last of a list of knowns right above it (a blank line makes it a result)
    assert closing.read("Working.\nFinal force ≈ 12 N?", options=VALUES) is None
    assert closing.read("Knowns:\nMass: 2 kg\nFinal force: 12 N", options=VALUES) is None
    assert closing.read("Knowns:\nMass: 2 kg\n\nFinal force: 12 N", options=VALUES) == "C"
    # a line not labelled as the result still needs its closing mark
    assert closing.read("Working.\nNet force ≈ 12 N", options=VALUES) is None
    plain = one_kind(tmp_path, "closing_value", **{**robust_step("closing_value"), "result_labels": []})
    assert plain.read("Working.\nFinal force ≈ 12 N", options=VALUES) is None
    # a lone letter as the labelled result: "**Verdict: C**" (and nothing said of it)
    assert closing.read("| C | fits | ✅ |\n\n**Verdict: C**", options=VALUES) == "C"
    assert closing.read("Review.\n**Verdict:** 12 N.", options=VALUES) == "C"
    assert closing.read("Review.\nVerdict: C is wrong", options=VALUES) is None
    assert closing.read("Review.\nVerdict: E", options=VALUES) is None  # no option
    assert plain.read("Review.\n**Verdict: C**", options=VALUES) is None


FORCES = {"A": "12 N", "B": "24 N", "C": "36 N", "D": "48 N"}


@pytest.mark.parametrize(
    "output",
    [
        # counterfactual, denied, or a first guess: no final statement of the value (rules 5, 6)
        "The net force works out to 25 N. Without friction, the force would be 48 N.",
        "The net force works out to 25 N. Had the mass been doubled, the force would be 48 N.",
        "The net force is 25 N. Otherwise it is 48 N.",
        "The net force is 25 N, which is not listed. A common mistake is 24 N.",
        "The answer cannot be 24 N.",
        "My first guess was 24 N.",
        # an intermediate value before the final one
        "The initial force is 12 N at t = 0, and the final force is 25 N.",
        "The force on the first block is 12 N in magnitude, so the net force is 25 N.",
        # a label's colon: a distractor, a ruled-out value, a restated option
        "The net force is 25 N.\n\nCommon distractor: 24 N.",
        "The net force is 25 N.\n\nRuled out: 24 N.",
        "Summary of options:\nA: 12 N\nB: 24 N\nC: 36 N\nD: 48 N.",
        # a bold heading of a cut-off review
        "Let's check each option.\n\n**Option A: 12 N** is too small since F = 25 N.\n\n**Option B: 24 N**",
    ],
)
def test_it_reads_no_value_that_is_not_the_final_statement(closing: Built, output: str) -> None:
    assert closing.outcome(output, options=FORCES) == (None, "no_answer")


def test_a_ratio_is_one_value(closing: Built) -> None:
    ratios = {"A": "9:3:3:1", "B": "3:1", "C": "1:2:1", "D": "2:1"}
    assert closing.read("So the expected ratio is 1:2:1.", options=ratios) == "C"
    assert closing.read("So the expected ratio is 9:3:3:1.", options=ratios) == "A"


def test_a_qualified_quantity_is_read_only_when_no_other_value_follows(closing: Built) -> None:
    assert closing.read("The tension is 24 N for a light rope.", options=FORCES) == "B"
    for output in (
        "The tension is 24 N for a light rope or 36 N for a heavy one.",
        "The tension is 12 N in case 1, 24 N in case 2, 36 N in case 3, and 48 N in case 4.",
        "The tension is 24 N in the upper rope and 12 N in the lower rope.",
    ):
        assert closing.outcome(output, options=FORCES) == (None, "no_answer"), output


def test_the_questions_own_words_are_no_condition_or_negation(closing: Built) -> None:
    speeds = {"A": "12 m/s", "B": "24 m/s", "C": "36 m/s", "D": "48 m/s"}
    asked = "What is the maximum speed the car can reach without skidding?"
    assert closing.read("The maximum speed without skidding is 24 m/s.", options=speeds, question=asked) == "B"
    assert closing.read("The maximum speed without skidding is 24 m/s.", options=speeds) is None
    liver = {"A": "storing glycogen", "B": "producing insulin", "C": "making bile", "D": "detoxifying"}
    not_question = "Which of the following is not a function of the liver?"
    assert closing.read("The function the liver does not perform is producing insulin.", options=liver, question=not_question) == "B"
