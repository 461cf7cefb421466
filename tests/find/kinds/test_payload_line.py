"""The ``payload_line`` step kind (``choicebox.find.lines``): a payload alone on the response's
first or last line, with no cue ("**D. Stack**" then its explanation).

What it reads, what it must not read (a one-line output, a line of prose, a listing of options,
several letters, a letter that is no option), and what each of its parameters changes. It weighs in
only under a policy that reads every statement, so its modes resolve by ``conclusion`` (robust's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, Built, one_kind

STRUCTURES = {
    "A": "Light travels slower in glass than in air",
    "B": "Operant conditioning",
    "C": "Sound travels faster in a vacuum",
    "D": "Stack",
}


def _step(tmp_path: Path, resolve: str = CONCLUSION, **params: Any) -> Built:
    return one_kind(tmp_path, "payload_line", resolve=resolve, **params)


@pytest.fixture(scope="module")
def line(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("payload_line"))


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("**D. Stack**\n\nExplanation: the others fail.", "D"),
        (" (D) Stack\n\nQuestion: Which is next?", "D"),  # a base model, then the next question
        ("**B**\n\nExplanation", "B"),
        ("(B)\nbecause it is learned", "B"),
        ("( B )\n\nbecause it is learned", "B"),  # blanks inside the brackets
        ("Stack\nbecause it is LIFO", "D"),  # an option's text on the first line
        ("Reasoning first.\nD. Stack", "D"),  # the last line, cited
    ],
)
def test_it_reads_a_payload_alone_on_the_first_or_last_line(line: Built, output: str, letter: str) -> None:
    assert line.outcome(output, options=STRUCTURES) == (letter, None)


@pytest.mark.parametrize(
    "output",
    [
        "D",  # one line: the whole output's kinds read it
        "D. Stack",
        "Reasoning first.\n**B**",  # a lone letter on the last line is standalone_letter's
        "B is wrong\nExplanation",  # prose
        "D. Stack is wrong\nExplanation",
        "**E. Other**\n\nExplanation",  # no option
        "**A or B**\n\nExplanation",  # several letters
        "A. Light travels slower in glass than in air\nB. Operant conditioning",  # a listing
        "Reasoning.\nB. Operant conditioning\nC. Sound travels faster in a vacuum",
    ],
)
def test_it_reads_no_answer_from_a_line_that_is_no_lone_payload(line: Built, output: str) -> None:
    assert line.outcome(output, options=STRUCTURES) == (None, "no_answer")


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("payload_line_leads"), lines=["first"], text_lines=[], leads=True)


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("**D** — a stack serves the last item pushed first.\n\n- A is about light.", "D"),
        ("**(B)** – operant conditioning shapes behaviour by its consequences.\n\nMore.", "B"),
        # a long first line: the answer opens it, its reason goes on
        ("**D** — " + "a stack serves the last item pushed first, " * 8 + "always.\n\nMore.", "D"),
        ("**D** — a stack serves the last item pushed first.", "D"),  # one line
        # the bold going on over the reason
        ("**D — Stack, last in first out.**\n\nA queue serves the first item pushed first.", "D"),
    ],
)
def test_parameter_leads_reads_a_bold_letter_opening_the_first_line_with_its_reason(
    lead: Built, output: str, letter: str
) -> None:
    assert lead.outcome(output, options=STRUCTURES) == (letter, None)


@pytest.mark.parametrize(
    "output",
    [
        "**A** — incorrect, light travels faster in air.\n\nMore.",  # the reason judges it
        "**D** — a stack? Hmm, let me check.\n\nMore.",  # it doubts
        "**D** — just to recap the question first.\n\nMore.",  # its reason is not about its option
        "D — a stack serves the last item pushed first.\n\nMore.",  # a bare letter: a symbol maybe
        "**D.** Identify the stack first.\n\nMore.",  # no dash: a step's heading
        # every option reviewed one a line
        "**A** — about light.\n**B** — about learning.\n**D** — about a stack.",
        "**D** — a stack.\n\n- B: operant conditioning\n- C: sound",  # the options listed after it
        "**D** — a stack? Let me see.\n\nMore.",  # it asks
        "**D** — a stack, I think.\n\nMore.",
        "**D** — a stack vs. **A** — light: which?\n\nMore.",  # another letter led the same way
        "**D** — the stack pushes, so\n\nMore.",  # its reason cut off
        "**D — not a stack, I think.**\n\nMore.",  # the bold going on over a doubt
        "**A — about light.**\n**D — about a stack.**",  # a review, one option a line
    ],
)
def test_parameter_leads_reads_no_letter_judged_doubted_or_one_of_a_review(lead: Built, output: str) -> None:
    assert lead.outcome(output, options=STRUCTURES) == (None, "no_answer")


def test_robust_reads_the_lead_when_nothing_else_commits_before_another_question() -> None:
    # A practice question of the response's own, after it, is text about another question.
    output = (
        "**D** — a stack serves the last item first.\n\n---\n\nHere's a similar practice question:\n\n"
        "**Q:** Which is FIFO?\nA. Queue\nB. Heap\n\n**Answer: A** — a queue."
    )
    assert ROBUST.read(output, options=STRUCTURES) == "D"
    # and a later answer outweighs it
    assert ROBUST.read("**D** — a stack serves the last item first.\n\nSo the answer is (B).", options=STRUCTURES) == "B"


def test_without_leads_a_letter_opening_a_long_first_line_is_not_read(line: Built) -> None:
    assert line.read("**D** — a stack serves the last item pushed first.\n\nMore.", options=STRUCTURES) is None


def test_it_finds_nothing_under_first_step(tmp_path: Path) -> None:
    assert _step(tmp_path, resolve="first_step").read("**B**\n\nExplanation") is None


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_lines_says_which_lines_are_read(tmp_path: Path, line: Built) -> None:
    opening, closing = "**D. Stack**\n\nExplanation: the others fail.", "Reasoning first.\nD. Stack"
    assert (line.read(opening, options=STRUCTURES), line.read(closing, options=STRUCTURES)) == ("D", "D")
    first = _step(tmp_path, lines=["first"])
    assert (first.read(opening, options=STRUCTURES), first.read(closing, options=STRUCTURES)) == ("D", None)
    last = _step(tmp_path, lines=["last"])
    assert (last.read(opening, options=STRUCTURES), last.read(closing, options=STRUCTURES)) == (None, "D")


def test_parameter_lines_after_rule_reads_the_first_line_under_a_rule(tmp_path: Path, line: Built) -> None:
    # A reasoning summary, a rule, then the answer line and its explanation.
    output = "Thought for 6 seconds\n\n**Weighing**\nStacks and queues differ.\n\n---\n\n**D. Stack**\n\nIt is LIFO."
    assert line.read(output, options=STRUCTURES) is None
    ruled = _step(tmp_path, lines=["first", "after_rule", "last"])
    assert ruled.read(output, options=STRUCTURES) == "D"
    [found] = ruled.found(output, options=STRUCTURES)
    assert (found.layout, found.payload) == ("under a rule", "letter")
    # Sections each headed by an option review them: no line under a rule commits.
    sections = "Let me check each.\n\n---\n**B. Operant conditioning**\nNo.\n\n---\n**D. Stack**\nYes, LIFO.\n\nDone."
    assert ruled.read(sections, options=STRUCTURES) is None
    # A rule before a listing of the options: a listing, no payload.
    listing = "Options:\n\n---\nB. Operant conditioning\nD. Stack\n\nThinking more."
    assert ruled.read(listing, options=STRUCTURES) is None


def test_parameter_max_length_is_the_longest_line_looked_at(tmp_path: Path, line: Built) -> None:
    short = _step(tmp_path, max_length=5)
    assert line.read("**D. Stack**\n\nExplanation", options=STRUCTURES) == "D"
    assert short.read("**D. Stack**\n\nExplanation", options=STRUCTURES) is None
    assert short.read("**B**\n\nExplanation", options=STRUCTURES) == "B"


def test_parameter_text_lines_says_where_an_options_text_alone_is_read(tmp_path: Path, line: Built) -> None:
    opening, closing = "Stack\nbecause it is LIFO", "Reasoning first.\n\n**Stack**"
    assert (line.read(opening, options=STRUCTURES), line.read(closing, options=STRUCTURES)) == ("D", None)
    both = _step(tmp_path, text_lines=["first", "last"])
    assert (both.read(opening, options=STRUCTURES), both.read(closing, options=STRUCTURES)) == ("D", "D")


@pytest.mark.parametrize(
    "output",
    [
        "Reasoning first.\nStack",  # right under the line before: it continues that paragraph
        "Steps:\n1. Push.\n2. Pop.\nStack",  # a numbered list, cut off
        "Reasoning first.\n\nOperant conditioning\nStack",  # the options' texts, one a line
        "Reasoning first.\n\nOperant conditioning\n\nStack",  # ... or one a paragraph
        "Reasoning first.\n\nStacks",  # no option's exact text
    ],
)
def test_a_closing_text_must_be_a_paragraph_of_one_options_text(tmp_path: Path, output: str) -> None:
    both = _step(tmp_path, text_lines=["first", "last"])
    assert both.read(output, options=STRUCTURES) is None

