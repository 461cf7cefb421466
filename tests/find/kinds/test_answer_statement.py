"""The ``answer_statement`` step kind (``choicebox.find.statements``): an answer noun, a link and a
payload, "the answer is (B)", "Final Answer: C", "the correct option is B".

What it reads (every layout: same line, next line, under a heading; every payload form), what it must
not read (a mention, an elimination, a supposition, a letter that is no option, several letters), and
what each of its parameters changes. The modes are rule files whose chain is this one step, with
``robust``'s vocabularies unless a test changes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, Built, one_kind, robust_step


def _step(tmp_path: Path, resolve: str = "first_step", **changed: Any) -> Built:
    return one_kind(tmp_path, "answer_statement", resolve=resolve, **{**robust_step("answer"), **changed})


@pytest.fixture(scope="module")
def statement(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("answer_statement"))


@pytest.fixture(scope="module")
def weighed(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The step under the ``last_position`` policy: every statement it finds is listed."""
    return _step(tmp_path_factory.mktemp("answer_statement"), resolve="last_position")


@pytest.mark.parametrize(
    "output",
    [
        "The answer is (B).",
        "The answer is B",
        "the answer is b.",
        "The correct answer is **B**.",
        "The final answer is: B",
        "Final Answer: B",
        "My pick: B",
        "the correct option is B",
        "The right option here is B.",
        "The answer would be B.",
        "The final answer would therefore be B.",  # an adverb inside the link
        '{"answer": "B"}',
        "The answer is:\nB. optB",
        "### Final Answer\n\n(B)",
        "The answer is B. optB",
        "The answer is 23,500 yards, which is (B).",
        # the relative clause that names the letter closes the payload's line, past a sentence
        "Answer: The factors are $2^3 \\cdot 3^2$. The count is $4 \\cdot 3 = 12$, which is option (B).",
        "The answer is 8.6km-->B",  # an arrow points from the value to its letter
        "The answer is 8.6 km → **(B)**.",
        "The answer is 8.6 km --> B\n\nThat is the distance.",
        "Answer (letter only): B",
        "[Answer] B\n\n[Explanation] It fits.",  # a bracketed label
        "[Final Answer] B",
        '{"choice": "B", "why": "it fits"}',  # a JSON key names the option
        '{"answer": "b", "explanation": "it fits"}',  # a lowercase letter in quotes is a letter
        "Correct answer → B",  # an arrow links
        "<p>Final answer: <b>B</b></p>",  # an inline HTML tag around the letter
        "Selected option: B",
        "My chosen answer is (B).",
        "| Quantity | Value |\n|---|---|\n| ΔS | 0 |\n| **Answer** | **B** |",  # a table's answer row
        "| Quantity | Value |\n|---|---|\n| **Matching option** | **B** |",
        "Correct response: B",  # "response" after a qualifier
        "Correct Answer - B",  # a spaced dash links a label
        "**Final Answer** — (B)",  # ... after the label's markup too
    ],
)
def test_it_reads_the_letter_an_answer_statement_gives(statement: Built, output: str) -> None:
    assert statement.outcome(output) == ("B", None)


@pytest.mark.parametrize(
    ("output", "layout", "payload"),
    [
        ("The answer is (B).", "same line", "letter"),
        ("The answer is:\nB. optB", "next line", "letter with its option's text"),
        ("### Final Answer\n\n(B)", "under a heading", "letter"),
        ("The answer is B. optB", "same line", "letter with its option's text"),
    ],
)
def test_it_says_where_the_payload_stood_and_what_it_was(weighed: Built, output: str, layout: str, payload: str) -> None:
    [found] = weighed.found(output)
    assert (found.kind, found.letters, found.layout, found.payload) == ("commitment", ("B",), layout, payload)


@pytest.mark.parametrize(
    ("output", "kind", "value"),
    [
        ("The answer is (D) is incorrect.", "retraction", ""),
        ("The answer is none of the options.", "no_option", ""),
        ("The answer is 30%.", "value", "30%"),
        ("The answer is (A) or (B).", "hedge", ""),
    ],
)
def test_it_tells_statements_that_name_no_single_letter_apart(weighed: Built, output: str, kind: str, value: str) -> None:
    [found] = weighed.found(output)
    assert (found.kind, found.value) == (kind, value)


def test_a_final_qualifier_marks_a_final_answer_and_a_part_a_scoped_one(weighed: Built) -> None:
    [final] = weighed.found("The final answer is (B).")
    [scoped] = weighed.found("The answer to (a) is (C).")
    assert (final.final, final.part) == (True, False)
    assert (scoped.final, scoped.part) == (False, True)


@pytest.mark.parametrize(
    "output",
    [
        "one option is (C)",  # a mention: an option noun without a qualifier
        "Option A is wrong. The answer is not A.",  # an elimination
        "The answer isn't B",
        "If the question meant kelvin, the answer would be C",  # a supposition
        "The answer is (D) is incorrect.",  # withdrawn
        "So the answers are: (a) B, (b) B, (c) D.",  # part labels with their answers, not option A
        "The answer is none of the options.",
        "The answer is 30%.",  # a value only
        "We need the answer.\nIt is B.",
        "Fill in the answer] B",  # a bracket that closes no label
        'One "choice" is B.',  # a quoted word, no JSON key
        "| Option | Answer | Why |\n|---|---|---|\n| B | no | x |",  # a header cell names no answer
        "The answer | B",  # a bar links only a table's cells
        "| Letter | B |\n| Meaning | beta |",  # a table that names a letter, not the answer
        "Shifting each character by 2, the letter is B, so the plaintext starts with B.",
        'Final answer: "b" stands for the speed of light.',  # a quoted letter talked about
        "The answer is 12, which is not option (B).",  # the clause denies it: no letter given
    ],
)
def test_it_reads_no_answer_without_a_stated_letter(statement: Built, output: str) -> None:
    assert statement.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize(
    "output",
    [
        "So for part (a) the answer is B, for part (b) the answer is D.",
        "In the first part, the answer is B. In the second part, the answer is D.",
        "For question 1 the answer is B; for question 2 the answer is D.",
    ],
)
def test_a_part_named_before_the_statement_scopes_it(weighed: Built, output: str) -> None:
    # The part stood only after the noun ("the answer to (a) is B"); named before it, the
    # statements were read as one response's answers, and the last one won.
    found = weighed.found(output)
    assert [(c.letters, c.part) for c in found] == [(("B",), True), (("D",), True)]


def test_in_robust_one_answer_per_part_named_before_it_is_no_answer() -> None:
    from rule_files import ROBUST

    verdict = ROBUST.grade("So for part (a) the answer is B, for part (b) the answer is D.")
    assert (verdict.extracted_answer, verdict.reward) == (None, 0.0)


def test_a_lowercase_bracketed_letter_with_its_own_options_text_cites_the_option(statement: Built) -> None:
    # "(d) text" reads as a part label, unless the text is option D's own: then it cites D.
    options = {"A": "Louis Pasteur", "B": "Robert Koch", "C": "Joseph Lister", "D": "Alexander Fleming"}
    cited = "The correct answer is (d) Alexander Fleming, who discovered penicillin in 1928."
    assert statement.outcome(cited, options=options) == ("D", None)
    other = "The correct answer is (d) Robert Koch, who discovered penicillin in 1928."
    assert statement.outcome(other, options=options) == (None, "no_answer")


def test_under_a_heading_a_statement_of_no_option_is_read(weighed: Built) -> None:
    # Under a heading only a letter counted, so "no option" there went unread, and a letter the
    # response had only mentioned could become its answer.
    [found] = weighed.found("## Final Answer\nNone of the provided options matches the computed value.")
    assert found.kind == "no_option"


_LONG = {
    "A": "optA",
    "B": " ".join(f"word{i}" for i in range(30)) + ", the end of option B",
    "C": "optC",
    "D": "optD",
}


def test_a_long_option_cited_on_the_next_line_is_the_payload(statement: Built) -> None:
    # A citation reads an option's opening words (CITED_WORDS): a longer option's text goes on past
    # them, and its line is still a payload.
    output = f"Thus, the correct answer is:\nB. {_LONG['B']}"
    assert statement.outcome(output, options=_LONG) == ("B", None)


def test_an_option_text_alone_on_the_next_line_is_a_value(weighed: Built) -> None:
    text = "Translocation is the movement of nutrients. Theories explain it, in turn."
    options = {"A": "optA", "B": text, "C": "optC", "D": "optD"}
    [found] = weighed.found(f"So the correct answer is:\n{text}", options=options)
    assert (found.kind, found.value) == ("value", text)  # the whole line, past its first stop


@pytest.mark.parametrize("dash", ["-", "–", "—"])
def test_after_a_dash_an_options_whole_text_commits_and_other_values_do_not(weighed: Built, dash: str) -> None:
    [found] = weighed.found(f"Correct Answer {dash} optB.")
    assert (found.kind, found.letters, found.payload) == ("commitment", ("B",), "option's text")
    assert weighed.found(f"Correct Answer {dash} a deficiency of vitamins") == []  # prose, no option
    assert weighed.found(f"Answer {dash} 5 mg") == []  # a value without a link verb is not weighed


def test_prose_on_the_next_line_is_no_value(weighed: Built) -> None:
    output = "So the correct answer is:\nTranslocation is the movement of nutrients. It is explained by theories."
    assert weighed.found(output) == []


def test_several_letters_are_ambiguous(statement: Built) -> None:
    assert statement.outcome("The answer is (A) or (B).") == (None, "ambiguous")
    ten = {letter: f"opt{letter}" for letter in "ABCDEFGHIJ"}
    assert statement.outcome('{"answer": "A or I", "why": "x"}', options=ten) == (None, "ambiguous")


@pytest.mark.parametrize(
    "output",
    [
        "The answer is either B (optB) or D (optD), depending on the dose.",  # an aside between them
        "The answer is B (the second one), or D.",
        "The answer is B veya A olabilir.",  # a word separator: "A" then a word is a letter still
        "The answer is B or A could be.",
    ],
)
def test_letters_with_asides_or_words_after_them_are_still_a_hedge(statement: Built, output: str) -> None:
    assert statement.outcome(output) == (None, "ambiguous")


def test_an_options_text_with_a_comma_in_it_is_read_whole() -> None:
    from rule_files import ROBUST

    rulings = {"A": "Yes, because the owner knew of the dog.", "B": "Yes, because a duty is owed.", "C": "No"}
    assert ROBUST.read("Putting it together.\n\nFinal answer: Yes, because the owner knew of the dog.", options=rulings) == "A"
    assert ROBUST.read("Final answer: Yes, because a duty is owed.", options=rulings) == "B"
    assert ROBUST.read("Final answer: Yes, because of the dog.", options=rulings) is None  # no option's text


def test_an_aside_or_an_article_that_no_letter_follows_is_no_hedge(statement: Built) -> None:
    assert statement.read("The answer is B (optB).") == "B"
    assert statement.read("The answer is B (optB) and D is wrong.") == "B"
    assert statement.read("The answer is B, A common slip is to pick D.") == "B"  # "A" after a comma: the article


@pytest.mark.parametrize(
    "output",
    [
        "The correct answers are A: 100.00 MHz, B: 50 kHz, C: 12.5 kHz, and D: 4.",
        "The answer is (A): 12 N; (C): 4 N.",
    ],
)
def test_letters_listed_each_with_a_value_are_ambiguous(statement: Built, output: str) -> None:
    # Each letter labels one value (the parts of a question answered one by one): several options.
    assert statement.outcome(output) == (None, "ambiguous")


@pytest.mark.parametrize(
    "output",
    [
        "So the answer is (A) if the volume is held constant, but (B) if the pressure is held constant.",
        "Since the question does not say, the correct answer is **(A)** if both are merchants and **(B)** otherwise.",
        "The answer is (B) when friction is ignored and option A when it is not.",
        "**Answer: B if the convention is algebraic; C if the question is about limits.**",
        "The answer is B if we use the old rule, but C if we use the new one.",
        "Without more facts, the answer is (B) if the mailbox rule applies, otherwise (A).",
        # one letter per case: clauses that open with a condition, each with its own letter
        "If the landlord elected, the answer is (B); if he has not yet elected, the answer is (A).",
        "When x > 0 the answer is (B), but if x < 0 the answer is (C).",
    ],
)
def test_one_letter_per_condition_is_ambiguous(statement: Built, output: str) -> None:
    assert statement.outcome(output) == (None, "ambiguous")


@pytest.mark.parametrize(
    "output",
    [
        "The answer is 8.6 km --> B or D.",  # an arrow to a hedge
        "The answer is I = 6 A --> then P = I^2 R → D = 72 J",  # an arrow in a formula
        "The answer is 6 A if R = 2 Ω --> B; if R = 4 Ω --> D.",  # one arrow per case
    ],
)
def test_an_arrow_that_points_to_no_single_closing_letter_names_none(statement: Built, output: str) -> None:
    assert statement.read(output) is None


@pytest.mark.parametrize(
    "output",
    [
        "If we ignore friction, the answer is (B).",
        "If we ignore friction, the answer is (B); if we do not, it is hard to say.",
        "If the gas is ideal, then PV = nRT, and if T doubles, P doubles; the answer is (B).",
        "If the rule applies, (A) is wrong; if not, the answer is (B).",  # a letter ruled out is no case's
        # a counterfactual case is no case: "if this were ..."
        "If the mailbox rule applies, the answer is (B), and if this were a receipt-rule state we would look at (C), but it is not.",
    ],
)
def test_one_case_with_its_letter_is_read(statement: Built, output: str) -> None:
    assert statement.outcome(output) == ("B", None)


def test_one_letter_under_a_condition_alone_is_read(statement: Built) -> None:
    assert statement.outcome("The answer is (B) if we ignore friction.") == ("B", None)
    assert statement.outcome("The answer is (B) for an ideal gas (option A assumes a real one).") == ("B", None)
    # Another letter in the sentence that is excluded or talked about is no other case.
    assert statement.outcome("The answer is (B) if we assume ideal behaviour, not (D).") == ("B", None)
    assert statement.outcome("The answer is (B), assuming ideal behaviour as in option D's derivation.") == ("B", None)


@pytest.mark.parametrize(("output", "letter"), [("Ans: C", "C"), ("**Ans:** C", "C"), ("Reasoning.\n\nAns: D", "D")])
def test_the_short_answer_noun_is_read_as_a_label(output: str, letter: str) -> None:
    assert ROBUST.read(output) == letter


@pytest.mark.parametrize("output", ["The ANS is A network of motor neurons.", ">> ans = B", "Ans is D"])
def test_the_short_answer_noun_is_no_cue_in_prose(output: str) -> None:
    assert ROBUST.read(output) is None


def test_a_number_after_a_word_is_still_a_number() -> None:
    # "Stage 3" is the number 3 (a digit glued to a letter, "G1", is not)
    assert ROBUST.read("Answer: Stage 3 (regional spread)", options={"A": "Stage 1", "B": "Stage 2", "C": "Stage 3"}) == "C"


def test_a_bold_letter_before_its_bracketed_value_is_the_letter() -> None:
    # "**D**(...)": the bold closes before the bracket (not "D**(...)", a power)
    assert ROBUST.read("所以正确答案是 **D**（400 kPa）。", options={"A": "25 kPa", "D": "400 kPa"}) == "D"
    assert ROBUST.read("The answer is **D**(optD).") == "D"
    # a bracket that holds no option's text is a function's argument: "**E**(X)" is no letter E
    assert ROBUST.read("The answer is **E**(X).", options={"A": "2.5", "E": "4.5"}) != "E"


def test_one_letter_with_its_value_is_read(statement: Built) -> None:
    assert statement.outcome("The answer is B: 50 kHz, as computed.") == ("B", None)
    # A variable after the letter is no second option: "R", "I = 6 A".
    ten = {letter: f"opt{letter}" for letter in "ABCDEFGHIJ"}
    assert statement.outcome("The answer is B: V = 12 V, R = 4 Ω.", options=ten) == ("B", None)
    assert statement.outcome("The answer is (B): V = 12 V, I = 6 A.", options=ten) == ("B", None)
    assert statement.outcome("The answer is A: 12 N, not B: 6 N.") == ("A", None)  # a contrast excludes


def test_a_letter_that_is_not_an_option_is_not_an_answer_under_a_weighing_policy(weighed: Built) -> None:
    assert weighed.outcome("The answer is (E).") == (None, "not_an_option")


def test_a_letter_that_is_not_an_option_is_not_an_answer(statement: Built) -> None:
    assert statement.outcome("The answer is (E).") == (None, "not_an_option")


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_nouns_open_a_statement(tmp_path: Path, statement: Built) -> None:
    assert statement.read("My pick: D") == "D"
    assert statement.read("Final: C") == "C"
    answer_only = _step(tmp_path, nouns=["answer"])
    assert answer_only.read("My pick: D") is None
    assert answer_only.read("Final: C") is None
    assert answer_only.read("The answer is C") == "C"


def test_parameter_qualified_nouns_open_a_statement_after_a_qualifier(tmp_path: Path, statement: Built) -> None:
    assert statement.read("The correct choice is C") == "C"
    assert _step(tmp_path, qualified_nouns=["option"]).read("The correct choice is C") is None


def test_parameter_label_nouns_open_a_statement_before_a_colon_only(tmp_path: Path, statement: Built) -> None:
    assert statement.read("Ans: C") == "C"
    assert statement.read("The ans is C") is None  # prose
    assert statement.read("ANS: C") == "C"  # case does not matter (rule 10)
    assert statement.read("The ANS is A network of motor neurons.") is None  # an acronym in prose
    assert _step(tmp_path, label_nouns=[]).read("Ans: C") is None


def test_parameter_mentions_make_the_noun_after_them_name_another_answer(tmp_path: Path, statement: Built) -> None:
    assert statement.read("The wrong answer is (D).") is None
    assert statement.read("A common wrong answer is optD.") is None
    assert _step(tmp_path, mentions=[]).read("The wrong answer is (D).") == "D"
    assert statement.read("Paris is the capital. The obvious answer is B.") == "B"  # no mention word


def test_parameter_qualifiers_are_what_makes_an_option_noun_an_answer(tmp_path: Path, statement: Built) -> None:
    assert statement.read("The best option is C") == "C"
    correct_only = _step(tmp_path, qualifiers=["correct"])
    assert correct_only.read("The best option is C") is None
    assert correct_only.read("The correct option is C") == "C"


@pytest.mark.parametrize(
    ("output", "letter"),
    [("My pick (B)", "B"), ("Answer (B)", "B"), ("The answer (B) fits.", "B"), ("Answer key: B", "B"),
     ("**Answer key: B**", "B"), ("Students often pick (A) because they confuse the two.", None)],
)  # fmt: skip
def test_a_noun_before_its_bracketed_letter_needs_an_owner_or_an_opening(tmp_path: Path, output: str, letter: str | None) -> None:
    # "pick" is a noun in "My pick (B)" and a verb in "Students often pick (A)"
    assert _step(tmp_path, resolve=CONCLUSION).read(output) == letter


def test_parameter_final_qualifiers_mark_an_explicit_final_answer(tmp_path: Path) -> None:
    output = "The answer is (A)\nThe complete answer is (B)"
    assert _step(tmp_path, resolve=CONCLUSION).read(output) == "B"  # the final marker wins
    assert _step(tmp_path, resolve=CONCLUSION, final_qualifiers=["final"]).outcome(output) == (None, "conflicting")


def test_parameter_links_join_the_noun_to_its_payload(tmp_path: Path, statement: Built) -> None:
    assert statement.read("The answer would be C") == "C"
    is_only = _step(tmp_path, links=["is"])
    assert is_only.read("The answer would be C") is None
    assert is_only.read("The answer is C") == "C"
    assert is_only.read("Answer: C") == "C"  # a colon links whatever the list


def test_parameter_adverbs_may_follow_the_link_or_stand_between_commas_before_it(tmp_path: Path, statement: Built) -> None:
    for output in ("The answer is therefore B.", "The answer is hence **B**.", "The answer, therefore, is B.",
                   "The correct option is clearly (B)", "The answer is, in fact, B."):  # fmt: skip
        assert statement.read(output) == "B", output
    assert statement.read("The answer is therefore not B.") is None  # the payload still decides
    assert statement.outcome("The answer is probably B or C.") == (None, "ambiguous")
    assert statement.read("The answer is clearly wrong for B.") is None  # an adverb, then no payload
    plain = _step(tmp_path, adverbs=[])
    assert plain.read("The answer is hence **B**.") is None
    assert plain.read("The answer, therefore, is B.") is None
    assert plain.read("The answer is B.") == "B"


def test_parameter_conditions_make_a_conditional_link_a_supposition(tmp_path: Path, statement: Built) -> None:
    output = "If the question meant kelvin, the answer would be C"
    assert statement.read(output) is None
    assert _step(tmp_path, conditions=[]).read(output) == "C"
    assert statement.read("If it is kelvin, fine. The answer is C") == "C"  # not in its sentence


@pytest.mark.parametrize(
    ("output", "lenient_reads", "strict_reads"),
    [
        ("The answer is B", "B", "B"),
        ("The answer is (B).", "B", "B"),
        ("The answer is B. optB", "B", None),
        ("The answer is B because it fits.", "B", None),
    ],
)
def test_parameter_payload_strict_reads_a_lone_letter_ending_its_line(
    tmp_path: Path, statement: Built, output: str, lenient_reads: str, strict_reads: str | None
) -> None:
    assert statement.read(output) == lenient_reads
    strict = _step(tmp_path, payload="strict")
    assert strict.read(output) == strict_reads
    assert strict.outcome("The answer is (A) or (B).") == (None, "no_answer")


def test_parameter_which_picks_the_first_or_the_last_statement(tmp_path: Path, statement: Built) -> None:
    output = "The answer is (A). Later: the answer is (C)."
    assert statement.read(output) == "C"
    assert _step(tmp_path, which="first").read(output) == "A"


def test_parameter_part_words_name_the_parts_a_statement_may_answer(tmp_path: Path) -> None:
    output = "For case (a) the answer is B, for case (b) the answer is D."
    cases = _step(tmp_path, resolve="last_position", part_words=["part", "case"])
    assert [c.part for c in cases.found(output)] == [True, True]
    parts_only = _step(tmp_path, resolve="last_position", part_words=["part"])
    assert [c.part for c in parts_only.found(output)] == [False, False]


def test_in_robust_one_answer_per_case_named_before_it_is_no_answer() -> None:
    from rule_files import ROBUST

    verdict = ROBUST.grade("For case (a) the answer is B, for case (b) the answer is D.")
    assert (verdict.extracted_answer, verdict.failure) == (None, "conflicting")


@pytest.mark.parametrize(
    ("output", "outcome"),
    [
        ('{"answer": "B", "reasoning": "the parol evidence rule", "answer": "C"}', (None, "ambiguous")),
        ('```json\n{\n  "answer": "B",\n  "why": "x",\n  "answer": "C"\n}\n```', (None, "ambiguous")),
        ('{"answer": "B", "answer": "B"}', ("B", None)),  # the same letter twice
        ('{"answer": "B"}\n\nOn reflection:\n{"answer": "C"}', ("C", None)),  # two objects: a revision
    ],
)
def test_two_answers_in_one_json_object_name_two_options(tmp_path: Path, output: str, outcome: tuple[str | None, str | None]) -> None:
    # A duplicate key: a JSON parser keeps the last value, but nothing marks either as final (rule 2).
    assert _step(tmp_path, resolve=CONCLUSION).outcome(output) == outcome
