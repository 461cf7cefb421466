"""Shipped prompt templates: they load, render a question and its options by plain substitution,
and build Gym samples whose ``output_regex`` reads the answer format the prompt asks for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import regex

from choicebox import MCQASample, PromptTemplate, SampleError, TemplateError, templates
from choicebox._templates import parse_template

TEMPLATE_DIR = Path(__file__).parents[2] / "sdk" / "choicebox" / "prompt_templates"
OPTIONS = {"A": "Mercury", "B": "Venus", "C": "Earth"}


def test_every_template_file_is_loaded_under_its_file_name() -> None:
    expected = sorted(p.stem for p in TEMPLATE_DIR.glob("*.yaml"))
    assert {"answer_colon", "answer_is", "boxed_letter"} <= set(expected)
    assert expected == sorted(templates())
    for template_id, template in templates().items():
        assert template_id == template.id
        assert template.grading_mode
        assert "{question}" in template.prompt
        assert "{options}" in template.prompt


def test_boxed_letter_renders_the_gym_prompt() -> None:
    expected = (
        "You should output your final response letter inside \\boxed{} and nothing else "
        "You can first think step-by-step. Which planet is closest to the Sun?\n"
        "A: Mercury\nB: Venus\nC: Earth"
    )
    assert expected == templates()["boxed_letter"].render(
        "Which planet is closest to the Sun?", OPTIONS
    )


def test_answer_colon_renders_the_letters() -> None:
    prompt = templates()["answer_colon"].render("Closest?", OPTIONS)
    assert "where LETTER is one of ABC." in prompt
    assert prompt.endswith("Closest?\n\nA) Mercury\nB) Venus\nC) Earth")


def test_placeholders_inside_the_question_or_options_are_not_expanded() -> None:
    template = PromptTemplate(
        id="t",
        description="",
        grading_mode="m",
        option_line="{letter}. {text}",
        prompt="[{letters}] {question}\n{options}",
        output_regex=(),
    )
    rendered = template.render(
        "Why {options} and {letters}?", {"A": "{letter} {text}", "B": "{question}"}
    )
    expected = "[AB] Why {options} and {letters}?\nA. {letter} {text}\nB. {question}"
    assert expected == rendered


@pytest.mark.parametrize("template_id", ["answer_colon", "answer_is", "boxed_letter"])
def test_from_question_uses_the_template_prompt_mode_and_regex(template_id: str) -> None:
    spec = templates()[template_id]
    sample = MCQASample.from_question("Closest to the Sun?", OPTIONS, "A", template=template_id)
    assert spec.grading_mode == sample.grading_mode
    assert sample.responses_create_params is not None
    expected_input = [{"role": "user", "content": spec.render("Closest to the Sun?", OPTIONS)}]
    assert expected_input == sample.responses_create_params["input"]
    if spec.output_regex:
        assert sample.template is not None
        assert spec.output_regex == sample.template.output_regex
        assert template_id == sample.template.template_id
        assert isinstance(sample.to_wire()["template_metadata"]["output_regex"], list)
    else:
        assert sample.template is None


@pytest.mark.parametrize(
    ("template_id", "response", "letter"),
    [
        ("answer_colon", "Reasoning...\nAnswer: C", "C"),
        ("answer_colon", "Answer: (b)", "b"),
        ("answer_is", "Thinking.\nANSWER IS B", "B"),
        ("answer_is", "ANSWER IS (A)", "A"),
    ],
)
def test_template_regex_reads_the_answer_format_its_prompt_asks_for(
    template_id: str, response: str, letter: str
) -> None:
    (pattern,) = templates()[template_id].output_regex
    match = regex.search(pattern, response)
    assert match is not None
    assert letter == match.group(1)


def test_from_question_letters_a_plain_list() -> None:
    sample = MCQASample.from_question(
        "Closest?", ["Mercury", "Venus"], "B", uuid="u", metadata={"k": 1}
    )
    expected = {"A": "Mercury", "B": "Venus"}
    assert expected == dict(sample.options)
    expected_uuid = "u"
    assert expected_uuid == sample.uuid
    expected_metadata = {"k": 1}
    assert expected_metadata == sample.metadata


def test_from_question_keeps_an_explicit_grading_mode() -> None:
    sample = MCQASample.from_question(
        "q?", OPTIONS, "A", template="answer_is", grading_mode="custom"
    )
    expected = "custom"
    assert expected == sample.grading_mode


def test_from_question_output_survives_the_wire() -> None:
    sample = MCQASample.from_question("Closest?", OPTIONS, "A", template="answer_colon")
    assert sample == MCQASample.from_wire(sample.to_wire())


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        (
            {"template": "nope"},
            TemplateError,
            "known templates: answer_colon, answer_is, boxed_letter",
        ),
        ({"options": [f"t{i}" for i in range(27)]}, TemplateError, "27 options"),
        ({"options": "ABC"}, TemplateError, "single string"),
        ({"expected_answer": "Q"}, SampleError, "expected_answer"),
    ],
)
def test_from_question_refuses_what_it_cannot_render(
    kwargs: dict[str, Any], error: type[Exception], text: str
) -> None:
    arguments: dict[str, Any] = {"question": "q?", "options": OPTIONS, "expected_answer": "A"}
    arguments.update(kwargs)
    with pytest.raises(error) as caught:
        MCQASample.from_question(**arguments)
    assert isinstance(caught.value, ValueError)
    assert text in str(caught.value)


def test_templates_function_stays_callable_after_loading_the_template_files() -> None:
    # The data subpackage `choicebox.templates` shares the public function's name; importing the
    # subpackage would rebind `choicebox.templates` to a module. Checked in a fresh interpreter,
    # since this session may have imported the subpackage already.
    code = (
        "import choicebox\n"
        "first = sorted(choicebox.templates())\n"
        "assert callable(choicebox.templates), choicebox.templates\n"
        "assert first == sorted(choicebox.templates())\n"
        "print(' '.join(first))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    expected = "answer_colon answer_is boxed_letter"
    assert expected == result.stdout.strip(), result.stderr


_GOOD_TEMPLATE = """\
version: 1
id: mine
description: d
grading_mode: robust
option_line: "{letter}) {text}"
prompt: "{question}\\n{options}"
"""


def test_a_template_file_parses_into_its_template() -> None:
    template = parse_template(_GOOD_TEMPLATE + "output_regex: ['([A-D])']\n", path="t.yaml")
    assert template == PromptTemplate(
        id="mine",
        description="d",
        grading_mode="robust",
        option_line="{letter}) {text}",
        prompt="{question}\n{options}",
        output_regex=("([A-D])",),
    )


@pytest.mark.parametrize(
    ("text", "head", "shown", "column"),
    [
        (_GOOD_TEMPLATE + "prompt_text: x\n", "t.yaml:7:1: unknown key 'prompt_text'", "prompt_text: x", 1),
        (_GOOD_TEMPLATE.replace('prompt: "', 'prompt: ['), "t.yaml:7:", None, None),
        (_GOOD_TEMPLATE.replace("id: mine", "id: 7"), "t.yaml:2:5: 'id' must be a string", "id: 7", 5),
        (_GOOD_TEMPLATE.replace("grading_mode: robust\n", ""), "t.yaml:1:1: a template needs 'grading_mode'", "version: 1", 1),
        (_GOOD_TEMPLATE + "output_regex: x\n", "t.yaml:7:15: 'output_regex' must be a list of strings", "output_regex: x", 15),
        ("- a list\n", "t.yaml:1:1: a template must be a mapping", "- a list", 1),
    ],
)
def test_a_bad_template_file_is_located(
    text: str, head: str, shown: str | None, column: int | None
) -> None:
    with pytest.raises(TemplateError) as caught:
        parse_template(text, path="t.yaml")
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(head), lines[0]
    assert caught.value.path == "t.yaml"
    if shown is not None and column is not None:
        assert lines[1:] == [f"    {shown}", "    " + " " * (column - 1) + "^"]
