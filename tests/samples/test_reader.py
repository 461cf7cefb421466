"""The one reader of a row (``choicebox._reader``) and the one parser of prompt options.

Every path that reads a NeMo Gym row (``MCQASample.from_wire``, the batch ``Grader`` under
``choicebox grade``, ``choicebox serve`` and ``choicebox audit``) must accept and reject the same
rows and report the same coded problems; the ``Grader``'s verdict must be ``grade``'s on the
decoded sample. A Hypothesis property pins that over generated rows, good and bad; the regression
tests below pin the three places where the readers used to disagree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from choicebox import MCQASample, UnknownModeError, WireFormatError, default_registry, grade
from choicebox._grading import TEMPLATE_STEP, grade_text
from choicebox._problems import PROBLEM_CODES, Problem
from choicebox._prompt_options import listed_options, locate_options
from choicebox._reader import RowReading, read_mcqa_row, read_multiple_choice_row
from choicebox.audit import Audit, audit_row
from choicebox.audit._checks import regex_reads
from choicebox.batch import Grader
from choicebox.server._respond import ClientError, Verifier

FIXTURES = Path(__file__).parents[1] / "fixtures"
EXAMPLE = Path(__file__).parents[2] / "examples" / "rollouts.jsonl"

GRADER = Grader()
VERIFIER = Verifier(default_registry())


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _pairs(prompt: str) -> list[tuple[str, str]]:
    found = listed_options(prompt)
    return list(found.pairs) if found is not None else []


def _responses_object(text: str) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Hmm, (A)?"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        ],
    }


# --- the prompt's options -------------------------------------------------------------------


@pytest.mark.parametrize(
    "listing",
    [
        "A: red\nB: green\nC: blue",
        "A) red\nB) green\nC) blue",
        "(A) red\n(B) green\n(C) blue",
        "[A] red\n[B] green\n[C] blue",
        "A. red\nB. green\nC. blue",
        "  A: red  \r\n\r\nB: green\r\nC: blue\r\n",
    ],
)
def test_the_prompt_options_are_read_in_every_listing_style(listing: str) -> None:
    text = f"Which colour is the sky on a clear day?\n{listing}\nAnswer with a letter."
    assert _pairs(text) == [("A", "red"), ("B", "green"), ("C", "blue")]
    found = listed_options(text)
    assert found is not None
    assert found.text_before(text) == "Which colour is the sky on a clear day?\n"
    # The block a checker locates for those letters is the same listing.
    located = locate_options(text, ["A", "B", "C"])
    assert located is not None
    assert located.pairs == (("A", "red"), ("B", "green"), ("C", "blue"))


def test_the_last_consecutive_run_of_the_prompt_is_its_options() -> None:
    text = (
        "Example:\nA: one\nB: two\nAnswer: B\n\n"
        "A. Einstein once said something.\n"
        "Question:\n[A] cat\n[B] dog\n[C] cow\n[D] eel\nE: stray line, another style"
    )
    assert _pairs(text) == [("A", "cat"), ("B", "dog"), ("C", "cow"), ("D", "eel")]


def test_letters_that_are_no_list_are_no_options() -> None:
    assert _pairs("A: only one option here") == []
    assert _pairs("B: starts late\nC: no A") == []
    assert _pairs("The U.S. and A.B. are not options.\nA.B. test") == []
    assert _pairs("inline A: red B: green") == []
    assert _pairs("a) lower\nb) case") == []  # a reading takes capitals; a row's own may differ
    assert _pairs("A:\nB: the first label has no text") == []


def test_a_listing_with_a_gap_is_located_for_the_letters_a_row_has() -> None:
    found = locate_options("Q\n(A) Granite\n(C) Marble\n(D) Basalt", ["A", "B", "C"])
    assert found is not None
    assert found.letters == ("A", "C", "D")
    assert _pairs("Q\n(A) Granite\n(C) Marble\n(D) Basalt") == []  # but it is no reading


# --- problem codes --------------------------------------------------------------------------

_GOOD: dict[str, Any] = {
    "question": "Which gas do plants absorb?",
    "options": [{"A": "Oxygen"}, {"B": "Carbon dioxide"}],
    "expected_answer": "B",
}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"question": None, "responses_create_params": None}, [("no_question", "input")]),
        ({"question": 3}, [("wrong_type", "question")]),
        ({"question": " \n"}, [("empty_text", "question")]),
        ({"options": "A: O2"}, [("wrong_type", "options")]),
        ({"options": [{"A": "O2"}, "B"]}, [("wrong_type", "options[1]")]),
        ({"options": [{"A": "O2"}, {"AB": "CO2"}]}, [("bad_option_letter", "options[1]")]),
        ({"options": [{"A": "O2"}, {"A": "CO2"}]}, [("duplicate_option_letter", "options[1]")]),
        ({"options": [{"A": "O2"}, {"B": 2}]}, [("wrong_type", "options[1].B")]),
        ({"options": [{"A": "O2"}, {"B": " "}]}, [("empty_text", "options[1].B")]),
        ({"options": [{"A": "O2"}, {"B": None}]}, [("too_few_options", "options")]),
        ({"options": ...}, [("no_listed_options", "options")]),
        ({"expected_answer": "C"}, [("answer_not_an_option", "expected_answer")]),
        ({"expected_answer": ...}, [("missing_field", "expected_answer")]),
        ({"expected_answer": 1}, [("wrong_type", "expected_answer")]),
        ({"grading_mode": ""}, [("empty_text", "grading_mode")]),
        ({"grading_mode": 2}, [("wrong_type", "grading_mode")]),
        ({"uuid": 2}, [("wrong_type", "uuid")]),
        ({"template_metadata": []}, [("wrong_type", "template_metadata")]),
        (
            {"template_metadata": {"output_regex": 5}},
            [("wrong_type", "template_metadata.output_regex")],
        ),
        (
            {"template_metadata": {"answer_prefix": 5}},
            [("wrong_type", "template_metadata.answer_prefix")],
        ),
        ({"responses_create_params": "hi"}, [("wrong_type", "responses_create_params")]),
    ],
)
def test_each_defect_has_its_code_and_path(
    changes: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    row = {**_GOOD, **changes}
    row = {k: v for k, v in row.items() if v is not ...}
    if row.get("question") is None and "question" in row:
        del row["question"]
    found = read_mcqa_row(row)
    assert isinstance(found, list)
    paths = {"input": "$.responses_create_params.input"}
    assert [(p.code, p.path) for p in found] == [
        (code, paths.get(path, f"$.{path}")) for code, path in expected
    ]
    assert {p.code for p in found} <= set(PROBLEM_CODES)
    with pytest.raises(WireFormatError) as caught:
        MCQASample.from_wire(row)
    assert list(caught.value.issues) == found
    assert caught.value.problems == tuple(str(p) for p in found)


def test_a_mapping_whose_keys_are_not_strings_is_no_row() -> None:
    expected = [Problem("wrong_type", "keys must be strings, got int", "$")]
    assert read_mcqa_row({**_GOOD, 7: "x"}) == expected
    with pytest.raises(WireFormatError) as caught:
        MCQASample.from_wire({**_GOOD, 7: "x"})
    assert list(caught.value.issues) == expected


def test_a_rollout_needs_a_response_and_a_sample_does_not() -> None:
    assert isinstance(read_mcqa_row(_GOOD), RowReading)
    assert read_mcqa_row(_GOOD, rollout=True) == [
        Problem("missing_field", "required field missing", "$.response")
    ]


def test_the_context_choices_family_shares_the_vocabulary() -> None:
    row = {"style": "essay", "context": " ", "choices": ["a"], "answer_index": 3, "task_type": "x"}
    found = read_multiple_choice_row(row)
    assert isinstance(found, list)
    assert [(p.code, p.path) for p in found] == [
        ("wrong_value", "$.task_type"),
        ("wrong_value", "$.style"),
        ("empty_text", "$.context"),
        ("too_few_options", "$.choices"),
        ("answer_not_an_option", "$.answer_index"),
    ]
    typed = read_multiple_choice_row({"style": "qa", "context": "c", "choices": ["a", 2]})
    assert isinstance(typed, list)
    assert [(p.code, p.path) for p in typed] == [
        ("wrong_type", "$.choices[1]"),
        ("missing_field", "$.answer_index"),
    ]


def test_a_wire_format_error_built_from_text_keeps_the_text() -> None:
    error = WireFormatError(["a @ $.x", "no path here"])
    assert error.problems == ("a @ $.x", "no path here")
    assert error.issues == (Problem("other", "a", "$.x"), Problem("other", "no path here", "$"))


# --- where the readers disagreed --------------------------------------------------------------


def _bracketed_row() -> dict[str, Any]:
    prompt = (
        "Which gas do plants absorb from the air for photosynthesis?\n"
        "[A] Oxygen\n[B] Carbon dioxide\n[C] Nitrogen\n[D] Helium"
    )
    return {
        "responses_create_params": {"input": [{"role": "user", "content": prompt}]},
        "response": _responses_object("Plants take in carbon dioxide. \\boxed{B}"),
        "expected_answer": "B",
        "uuid": "bracketed-1",
    }


def _gym_rollout_row() -> dict[str, Any]:
    """A row shaped like the rows of NeMo Gym's ``mcqa/data/example_rollouts.jsonl``: the prompt,
    the response and the reward Gym wrote, and no ``options``."""
    prompt = (
        "Answer the following multiple choice question. The last line of your response should be "
        "of the form 'Answer: $LETTER' where LETTER is one of ABCD.\n\n"
        "Which layer of the Sun is visible to the naked eye?\n\n"
        "A: The corona\nB: The photosphere\nC: The core\nD: The radiative zone"
    )
    return {
        "responses_create_params": {"input": [{"role": "user", "content": prompt}]},
        "response": _responses_object("The visible surface is the photosphere.\n\\boxed{B}"),
        "reward": 1.0,
        "expected_answer": "B",
        "extracted_answer": "B",
    }


@pytest.mark.parametrize("make", [_bracketed_row, _gym_rollout_row])
def test_a_row_with_options_only_in_its_prompt_is_read_alike_everywhere(make: Any) -> None:
    row = make()
    sample = MCQASample.from_wire(row)
    assert sample.letters == ("A", "B", "C", "D")
    assert sample.answer_text in {"Carbon dioxide", "The photosphere"}
    expected = grade(sample, row["response"]).to_wire(row)
    expected["options_source"] = "prompt"
    graded = GRADER.grade_row(1, orjson.dumps(row))
    assert graded == expected
    assert graded["reward"] == 1.0
    assert VERIFIER.verify(row) == expected
    assert audit_row(row).findings == ()
    # Writing the sample back gives the row (the response is one of its extra columns): the
    # options stay implied by the prompt.
    assert sample.to_wire() == row


def test_a_row_whose_prompt_lists_no_options_is_refused_alike_everywhere() -> None:
    row = _bracketed_row()
    row["responses_create_params"]["input"][0]["content"] = "Which gas do plants absorb?"
    problem = Problem(
        "no_listed_options",
        "required field missing, and the prompt lists no lettered options",
        "$.options",
    )
    with pytest.raises(WireFormatError) as caught:
        MCQASample.from_wire(row)
    assert caught.value.issues == (problem,)
    assert GRADER.grade_row(1, orjson.dumps(row))["error"] == f"line 1: {problem}"
    with pytest.raises(ClientError) as refused:
        VERIFIER.verify(row)
    assert refused.value.detail == [str(problem)]
    assert [(f.check, f.field) for f in audit_row(row).findings] == [("unreadable_row", "options")]


def test_grade_and_audit_commands_agree_on_rows_with_options_only_in_the_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from choicebox.cli import main

    bad = _bracketed_row()
    bad["responses_create_params"]["input"][0]["content"] = "Which gas do plants absorb?"
    source = tmp_path / "rollouts.jsonl"
    source.write_bytes(
        b"".join(orjson.dumps(r) + b"\n" for r in (_bracketed_row(), _gym_rollout_row(), bad))
    )
    output = tmp_path / "graded.jsonl"
    assert main(["grade", str(source), "-o", str(output), "--workers", "1", "-q"]) == 1
    graded = _rows(output)
    assert [r.get("options_source") for r in graded[:2]] == ["prompt", "prompt"]
    assert [r.get("reward") for r in graded[:2]] == [1.0, 1.0]
    assert graded[2]["error"].startswith("line 3: required field missing, and the prompt lists no")
    capsys.readouterr()
    assert main(["audit", str(source)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["line 3"]  # the row grade refuses, only
    assert "unreadable_row" in out[0]


def test_audit_reads_a_template_regex_exactly_as_grading_does() -> None:
    options = {"A": "Oxygen", "B": "Carbon dioxide", "C": "Nitrogen"}
    pattern = r"Answer:\s*(.+)"
    mode = default_registry().get("strict_single_letter_boxed")
    for response, letter in [("Answer: B) Carbon dioxide", None), ("Answer: B", "B")]:
        verdict = grade_text(response, options, "B", mode, output_regex=(pattern,))
        graded = verdict.extracted_answer if verdict.step == TEMPLATE_STEP else None
        assert regex_reads([pattern], response, options) == graded == letter


# --- the property: every path reads every row alike -----------------------------------------

_LETTER_SETS = ("AB", "ABC", "ABCD", "ABCDEFGHIJ")
_LABELS = ("{l}: {t}", "{l}) {t}", "({l}) {t}", "[{l}] {t}", "{l}. {t}")
_option_text = (
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
        min_size=1,
        max_size=12,
    )
    .map(str.strip)
    .filter(bool)
)
_question_text = st.sampled_from(
    [
        "Which gas do plants absorb?",
        "Which planet is largest?",
        "What is 6 x 7?",
        "Pick the odd one out: A) is not an option here",
    ]
)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_MODES = ("strict_single_letter_boxed", "robust", "lenient_boxed", "lenient_answer_colon")
_TEMPLATES: tuple[Any, ...] = (
    None,
    {},
    {"output_regex": r"Answer:\s*\(?([A-J])\)?"},
    {"output_regex": ["Final: ([A-J])", "(["], "template_id": "t"},
    {"output_regex": r"Answer:\s*(.+)", "answer_prefix": "Answer:", "weight": 2},
)


def _drop(key: str) -> Any:
    return lambda row: {k: v for k, v in row.items() if k != key}


def _set(key: str, value: Any) -> Any:
    return lambda row: {**row, key: value}


def _change_option(value: Any) -> Any:
    """Replace the last option (or add one when the options come from the prompt)."""

    def change(row: dict[str, Any]) -> dict[str, Any]:
        options = row.get("options")
        if not isinstance(options, list):
            options = [{"A": "x"}, {"B": "y"}]
        return {**row, "options": [*options[:-1], value]}

    return change


def _with_prompt(text: str) -> Any:
    return _set("responses_create_params", {"input": [{"role": "user", "content": text}]})


# Each defect (or odd but valid variation) a row can have; a drawn row has up to three.
_DEFECTS: tuple[Any, ...] = (
    _set("question", ""),
    _set("question", " \n"),
    _set("question", 5),
    _set("question", "Which one? (no options here)"),
    _drop("responses_create_params"),
    _set("responses_create_params", ["not", "an", "object"]),
    _set("responses_create_params", {"input": []}),
    _set("responses_create_params", {"input": [{"role": "system", "content": "Be brief."}]}),
    _with_prompt("Which gas do plants absorb? Answer with a letter."),
    _with_prompt("Which gas do plants absorb?\n[A] Oxygen\n[B] Carbon dioxide"),
    _with_prompt("Which gas?\na) Oxygen\nb) Carbon dioxide"),
    _drop("options"),
    _set("options", None),
    _set("options", "A: Oxygen\nB: Carbon dioxide"),
    _set("options", {"A": "Oxygen"}),
    _set("options", [{"A": "Oxygen"}]),
    _set("options", [{"A": "Oxygen", "B": "Carbon dioxide"}, {"C": None}]),
    _change_option({"A": "again"}),
    _change_option({"AB": "x"}),
    _change_option({"1": "x"}),
    _change_option({"": "x"}),
    _change_option({"Q": 3}),
    _change_option({"Q": "  "}),
    _change_option({"Q": None}),
    _change_option("C"),
    _change_option({}),
    _set("expected_answer", "Z"),
    _set("expected_answer", "b"),
    _set("expected_answer", 1),
    _set("expected_answer", None),
    _drop("expected_answer"),
    _set("grading_mode", ""),
    _set("grading_mode", 3),
    _set("grading_mode", None),
    _set("grading_mode", "no_such_mode"),
    _set("uuid", 7),
    _set("template_metadata", None),
    _set("template_metadata", {"output_regex": 5}),
    _set("template_metadata", {"output_regex": ["ok", 5]}),
    _set("template_metadata", {"template_id": 5}),
    _set("template_metadata", {"answer_prefix": ["Answer:"]}),
    _set("template_metadata", "x"),
    _set("response", 5),
    _set("response", {"foo": 1}),
    _set("response", {"output": "x"}),
    _set("response", None),
    _set("response", ""),
    _drop("response"),
)


@st.composite
def rollout_rows(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed rollout row (options in the row or only in its prompt, any listing style,
    any response shape) with up to three defects the readers must agree on."""
    letters = draw(st.sampled_from(_LETTER_SETS))
    texts = draw(st.lists(_option_text, min_size=len(letters), max_size=len(letters)))
    question = draw(_question_text)
    label = draw(st.sampled_from(_LABELS))
    listing = "\n".join(
        label.format(l=letter, t=t) for letter, t in zip(letters, texts, strict=True)
    )
    prompt = draw(
        st.sampled_from(
            [
                f"{question}\n{listing}",
                f"Answer with the letter only.\n\n{question}\n\n{listing}\n\nThink first.",
            ]
        )
    )
    row: dict[str, Any] = {}
    if draw(st.booleans()):
        row["responses_create_params"] = {"input": [{"role": "user", "content": prompt}]}
    else:
        row["responses_create_params"] = {"input": prompt, "temperature": 0.0}
    if draw(st.integers(0, 3)) == 0:
        row["question"] = question
    if draw(st.booleans()):  # else the options are only in the prompt, as in Gym's rollouts
        row["options"] = [{letter: text} for letter, text in zip(letters, texts, strict=True)]
    row["expected_answer"] = draw(st.sampled_from(letters))
    mode = draw(st.sampled_from([None, None, *_MODES]))
    if mode is not None:
        row["grading_mode"] = mode
    if draw(st.booleans()):
        row["uuid"] = "u-1"
    if draw(st.booleans()):
        row["metadata"] = draw(_json_values)
    template = draw(st.sampled_from([..., ..., *_TEMPLATES]))
    if template is not ...:
        row["template_metadata"] = template
    said = draw(st.sampled_from([*letters, "Z"]))
    text = draw(
        st.sampled_from(
            [f"So \\boxed{{{said}}}.", f"Answer: {said}", f"Final: {said}", "", "no idea"]
        )
    )
    row["response"] = draw(
        st.sampled_from(
            [text, _responses_object(text), {"choices": [{"message": {"content": text}}]}]
        )
    )
    extras = st.dictionaries(
        st.sampled_from(["reward", "extracted_answer", "options_source", "_ng_task_index"]),
        _json_values,
        max_size=2,
    )
    row.update(draw(extras))
    for defect in draw(st.lists(st.sampled_from(_DEFECTS), max_size=3)):
        row = defect(row)
    return dict(row)


def _graded_as_from_wire(row: dict[str, Any], line: int = 3) -> dict[str, Any]:
    """What the ``Grader`` must write for ``row``: ``grade(MCQASample.from_wire(row), ...)``'s
    verdict, or an error row listing ``from_wire``'s problems (and a missing response)."""
    problems: list[str] = []
    try:
        sample = MCQASample.from_wire(row)
    except WireFormatError as exc:
        problems.extend(exc.problems)
    if row.get("response") is None:
        problems.append("required field missing @ $.response")
    if not problems:
        try:
            verdict = grade(sample, row["response"])
        except UnknownModeError as exc:
            problems.append(f"{exc} @ $.grading_mode")
    if problems:
        error: dict[str, Any] = {"error": f"line {line}: " + "; ".join(problems)}
        if row.get("uuid") is not None:
            error["uuid"] = row["uuid"]
        return {**error, "line": line}
    out = verdict.to_wire(row)
    if "options" not in row:
        out["options_source"] = "prompt"
    else:
        out.pop("options_source", None)
    return out


def _served(row: dict[str, Any]) -> tuple[int, Any]:
    """The server's answer to ``row``: (200, the verify response) or (4xx, the detail)."""
    try:
        return 200, VERIFIER.verify(row)
    except ClientError as exc:
        return exc.status, exc.detail


def _check_for(problem: Problem) -> str:
    """The audit check the documentation says reports ``problem``."""
    if problem.path == "$.expected_answer" or problem.code == "answer_not_an_option":
        return "gold_not_in_choices"
    if problem.code == "empty_text" and problem.path.startswith("$.options"):
        return "empty_choice"
    if problem.code == "duplicate_option_letter":
        return "duplicate_choice"
    return "unreadable_row"


def _assert_audit_agrees(found: Audit, problems: list[Problem]) -> None:
    reading_findings = [f for f in found.findings if f.message.startswith("the row does not")]
    if not problems:
        assert not reading_findings, found.findings
        assert not found.checks & {
            "unreadable_row",
            "gold_not_in_choices",
            "empty_choice",
            "not_multiple_choice",  # a row the reader grades is a multiple-choice row
        }
        return
    if found.checks == {"not_multiple_choice"}:
        # Nothing about the row says multiple choice (no options anywhere, no letter for a gold):
        # audit names it a row of another task, which the reader refuses too (problems exist).
        return
    assert {_check_for(p) for p in problems} <= found.checks, (problems, found.findings)
    unreadable = {f.field for f in found.findings if f.check == "unreadable_row"}
    assert unreadable == {
        p.path[2:] if p.path.startswith("$.") else p.path
        for p in problems
        if _check_for(p) == "unreadable_row"
    }


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rollout_rows())
def test_every_path_reads_every_row_alike(row: dict[str, Any]) -> None:
    row = orjson.loads(orjson.dumps(row))  # exactly what a JSONL line decodes to
    # The batch engine: grade(MCQASample.from_wire(row), ...), or from_wire's problems.
    graded = GRADER.grade_row(3, orjson.dumps(row))
    assert graded == _graded_as_from_wire(row)

    # The same problems, by code and path, on every path.
    try:
        sample = MCQASample.from_wire(row)
        sample_problems: list[Problem] = []
    except WireFormatError as exc:
        sample_problems = list(exc.issues)
        sample = None
    reading = GRADER.read(row)
    rollout_problems = reading if isinstance(reading, list) else []
    assert rollout_problems[: len(sample_problems)] == sample_problems
    assert {(p.code, p.path) for p in rollout_problems[len(sample_problems) :]} <= {
        ("missing_field", "$.response"),
        ("unknown_mode", "$.grading_mode"),
    }
    if rollout_problems:
        assert graded["error"] == "line 3: " + "; ".join(map(str, rollout_problems))

    # The server: a 422 listing the same problems first (then any of the response's own).
    status, served = _served(row)
    if rollout_problems:
        assert status == 422
        assert served[: len(rollout_problems)] == [str(p) for p in rollout_problems]
        assert all(
            p.endswith("@ $.response") or "@ $.response." in p
            for p in served[len(rollout_problems) :]
        )
    elif graded.get("grading_failure") == "invalid_output":
        assert (status, served) == (422, graded["grading_detail"].split("; "))
    else:
        assert (status, served) == (200, graded)

    # Audit: each problem is a finding of the check that explains its code.
    _assert_audit_agrees(audit_row(row), sample_problems)

    # A sample built from the reading is one its fully validated constructor accepts as well.
    if sample is not None:
        rebuilt = MCQASample(
            question=sample.question,
            options=dict(sample.options),
            expected_answer=sample.expected_answer,
            grading_mode=sample.grading_mode,
            template=sample.template,
            uuid=sample.uuid,
            metadata=sample.metadata,
            responses_create_params=sample.responses_create_params,
            extra=sample.extra,
            wire_order=sample.wire_order,
        )
        assert rebuilt == sample
        assert MCQASample.from_wire(sample.to_wire()) == sample


def test_the_engine_grades_the_fixture_rows_and_their_variants_as_from_wire_does() -> None:
    rows = (
        _rows(FIXTURES / "rollouts_mixed.jsonl")
        + _rows(EXAMPLE)
        + _rows(FIXTURES / "gym_rows.jsonl")
    )
    rows = [r for r in rows if isinstance(r.get("responses_create_params"), dict)]
    checked = graded = 0
    for row in rows:
        base = row if "response" in row else {**row, "response": "So \\boxed{B}."}
        for variant in _variants(base):
            out = GRADER.grade_row(3, orjson.dumps(variant))
            assert out == _graded_as_from_wire(variant), variant
            checked += 1
            graded += "error" not in out
    assert checked > 1000
    assert graded > checked // 3  # not only error rows


def _variants(row: dict[str, Any]) -> list[dict[str, Any]]:
    """``row`` and mutations of it, good and bad, that every reader must read alike."""
    first_user = row["responses_create_params"]["input"][-1]["content"]
    options = [{"A": "red"}, {"B": "green"}, {"C": "blue"}, {"D": "grey"}]
    without = {k: v for k, v in row.items() if k != "options"}
    return [
        row,
        without,
        {**row, "options": options},
        {**row, "options": [*options, {"E": None}]},  # Gym pads option lists with nulls
        {**row, "options": [{"A": "red", "B": "green"}, {"C": "blue"}]},
        {**row, "options": [{"A": "red"}, {"A": "again"}]},
        {**row, "options": [{"A": "red"}, {"B": "  "}]},
        {**row, "options": [{"AB": "red"}, {"B": "green"}]},
        {**row, "options": None},
        {**row, "options": [{"A": "only"}]},
        {**row, "expected_answer": "Z"},
        {**row, "expected_answer": 1},
        {**row, "grading_mode": ""},
        {**row, "grading_mode": "robust"},
        {**row, "grading_mode": 3},
        {**row, "grading_mode": "no_such_mode"},
        {**row, "uuid": 7},
        {**row, "question": first_user},
        {**without, "question": first_user},
        {**row, "question": "Which one? (no options here)"},
        {**without, "question": "Which one? (no options here)"},
        {**row, "question": "   "},
        {**row, "question": 5},
        {**row, "responses_create_params": "nope"},
        {**row, "responses_create_params": {"input": []}},
        {**row, "template_metadata": None},
        {**row, "template_metadata": {}},
        {**row, "template_metadata": "x"},
        {**row, "template_metadata": {"output_regex": "([A-D])\\s*$", "answer_prefix": "Answer:"}},
        {**row, "template_metadata": {"output_regex": ["Final: ([A-D])", "(["]}},
        {**row, "template_metadata": {"output_regex": 5}},
        {**row, "template_metadata": {"template_id": 5}},
        {**row, "response": 5},
        {**row, "response": {"foo": 1}},
        {**row, "response": {"output": "x"}},
        {**row, "response": ""},
        {**row, "response": "I am sorry, I cannot answer that."},
        {**row, "response": "<think>\\boxed{A}"},
        {k: v for k, v in row.items() if k != "response"},
        {k: v for k, v in row.items() if k != "expected_answer"},
    ]
