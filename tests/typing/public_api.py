"""The public API as an integrator types it: checked by ``mypy --strict sdk tests/typing``.

Not a pytest module (the name does not start with ``test_``) and never executed: every use sits in
a function nobody calls. Types are asserted by annotated assignments; each line that must NOT
type-check carries ``# type: ignore[<code>]``, and since ``warn_unused_ignores`` is on, the check
fails the moment such a line starts to type-check (an API that got looser).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

import choicebox
from choicebox import (
    DEFAULT_GRADING_MODE,
    Context,
    Extraction,
    FailureKind,
    GradingMode,
    MCQASample,
    ModelOutput,
    ModeRegistry,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    PromptTemplate,
    Rollout,
    RuleFileError,
    SampleError,
    Step,
    Style,
    Template,
    TemplateError,
    UnknownModeError,
    Verdict,
    WireFormatError,
    default_registry,
    grade,
    register_step_kind,
    response_text,
    templates,
)
from choicebox.jsonl import (
    RAW_FIELD_BYTES,
    UTF8_BOM,
    BadLine,
    JsonlRow,
    dumps,
    iter_jsonl,
    loads,
    raw_fields,
)
from choicebox.server import create_app

AnyMultipleChoice = MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample


def construct_by_style() -> None:
    qa: MultipleChoiceQuestionAnswerSample = MultipleChoiceSample(
        context="Capital of France?", choices=["Paris", "Lyon"], answer_index=0, style="qa"
    )
    stem: MultipleChoiceCompletionSample = MultipleChoiceSample(
        context="The cat sat on the", choices=["mat", "moon"], answer_index=0
    )
    explicit: MultipleChoiceCompletionSample = MultipleChoiceSample(
        context="The cat sat on the", choices=("mat", "moon"), answer_index=0, style="continuation"
    )
    direct_qa = MultipleChoiceQuestionAnswerSample(context="q?", choices=["a", "b"], answer_index=1)
    direct_stem = MultipleChoiceCompletionSample(context="q", choices=["a", "b"], answer_index=1)
    either_style: Style = "qa" if qa.answer_index else "continuation"
    either: AnyMultipleChoice = MultipleChoiceSample(
        context="q", choices=["a", "b"], answer_index=0, style=either_style, extra={"id": 1}
    )
    answer: str = qa.answer
    choices: tuple[str, ...] = stem.choices
    index: int = explicit.answer_index
    extra: Mapping[str, Any] = either.extra
    style: Style = either.style
    print(direct_qa, direct_stem, answer, choices, index, extra, style)


def construction_that_must_not_type_check() -> None:
    MultipleChoiceCompletionSample(context="q", choices=["a", "b"], answer_index=0, style="qa")  # type: ignore[arg-type]
    MultipleChoiceQuestionAnswerSample(
        context="q",
        choices=["a", "b"],
        answer_index=0,
        style="continuation",  # type: ignore[arg-type]
    )
    wrong: MultipleChoiceCompletionSample = MultipleChoiceSample(  # type: ignore[assignment]
        context="q", choices=["a", "b"], answer_index=0, style="qa"
    )
    also_wrong: MultipleChoiceQuestionAnswerSample = MultipleChoiceSample(  # type: ignore[assignment]
        context="q", choices=["a", "b"], answer_index=0
    )
    style_name: str = "qa"
    MultipleChoiceSample(context="q", choices=["a", "b"], answer_index=0, style=style_name)  # type: ignore[call-overload]
    MultipleChoiceSample(context="q", choices=["a", "b"], answer_index=0, style="quiz")  # type: ignore[call-overload]
    MultipleChoiceSample(context="q", choices=["a", "b"], answer_index="0")  # type: ignore[call-overload]
    MultipleChoiceSample("q", ["a", "b"], 0)  # type: ignore[call-overload]
    frozen = MultipleChoiceQuestionAnswerSample(context="q", choices=["a", "b"], answer_index=0)
    frozen.answer_index = 1  # type: ignore[misc]
    print(wrong, also_wrong)


def wire_round_trip(row: Mapping[str, Any]) -> None:
    decoded: AnyMultipleChoice = MultipleChoiceSample.from_wire(row)
    encoded: dict[str, Any] = decoded.to_wire()
    mcqa: MCQASample = MCQASample.from_wire(loads(dumps(encoded, style="python")))
    row_out: dict[str, Any] = mcqa.to_wire()
    compact: bytes = dumps(row_out)
    python_style: bytes = dumps(row_out, style="python")
    dumps(row_out, style="pretty")  # type: ignore[arg-type]
    narrowed: MultipleChoiceQuestionAnswerSample = MultipleChoiceSample.from_wire(row)  # type: ignore[assignment]
    print(compact, python_style, narrowed)


def lettered_questions() -> None:
    sample = MCQASample.from_question(
        "Which is prime?", ["4", "7"], "B", template="answer_colon", uuid="u", metadata={"k": 1}
    )
    by_mapping = MCQASample(
        question="Which is prime?",
        options={"A": "4", "B": "7"},
        expected_answer="B",
        template=Template(output_regex=[r"Answer:\s*([AB])"], template_id="mine"),
    )
    letters: tuple[str, ...] = sample.letters
    text: str = by_mapping.answer_text
    mode: str = sample.grading_mode
    default_mode: str = DEFAULT_GRADING_MODE
    template: Template | None = by_mapping.template
    regexes: tuple[str, ...] = template.output_regex if template else ()
    uuid: str | None = sample.uuid
    sample.expected_answer = "A"  # type: ignore[misc]
    MCQASample.from_question("q", ["a", "b"], "A", template=3)  # type: ignore[arg-type]
    print(letters, text, mode, default_mode, regexes, uuid)


def conversions(mcqa: MCQASample) -> None:
    qa: MultipleChoiceQuestionAnswerSample = mcqa.to_multiple_choice()
    qa_named: MultipleChoiceQuestionAnswerSample = mcqa.to_multiple_choice(style="qa")
    stem: MultipleChoiceCompletionSample = mcqa.to_multiple_choice(style="continuation")
    style: Style = "continuation"
    either: AnyMultipleChoice = mcqa.to_multiple_choice(style)
    back: MCQASample = MCQASample.from_multiple_choice(qa)
    lettered: MCQASample = MCQASample.from_multiple_choice(
        stem, letters="abcd", template="answer_is"
    )
    wrong: MultipleChoiceCompletionSample = mcqa.to_multiple_choice()  # type: ignore[assignment]
    also_wrong: MultipleChoiceQuestionAnswerSample = mcqa.to_multiple_choice("continuation")  # type: ignore[assignment]
    mcqa.to_multiple_choice(style="quiz")  # type: ignore[call-overload]
    MCQASample.from_multiple_choice(mcqa)  # type: ignore[arg-type]
    MCQASample.from_multiple_choice(qa, ["A", "B"])  # type: ignore[call-arg]
    print(qa_named, either, back, lettered, wrong, also_wrong)


def prompt_templates() -> None:
    known: Mapping[str, PromptTemplate] = templates()
    via_module: Mapping[str, PromptTemplate] = choicebox.templates()
    spec = known["boxed_letter"]
    prompt: str = spec.render("Which is prime?", {"A": "4", "B": "7"})
    regexes: tuple[str, ...] = spec.output_regex
    spec.render("Which is prime?", ["4", "7"])  # type: ignore[arg-type]
    print(via_module, prompt, regexes)


def responses(output: ModelOutput, sample: MCQASample) -> None:
    text: str = response_text(output)
    also: str = response_text({"output": []})
    rollout = Rollout(sample=sample, response=output)
    graded: str = rollout.text
    number: int = response_text("x")  # type: ignore[assignment]
    Rollout(sample=sample, response=3)  # type: ignore[arg-type]
    print(text, also, graded, number)


def jsonl(path: Path) -> None:
    rows: Iterator[JsonlRow | BadLine] = iter_jsonl(path)
    for item in rows:
        if isinstance(item, BadLine):
            line: int = item.line
            raw: bytes = item.raw
            column: int | None = item.column
            where: str | None = item.path
            print(line, raw, column, where, str(item))
        else:
            value: Any = item.value
            print(item.line, value)
    iter_jsonl(42)  # type: ignore[arg-type]
    # An error row's copy of a bad line: text or base64, at most RAW_FIELD_BYTES of it.
    fields: dict[str, Any] = raw_fields(b"\xff not json", limit=RAW_FIELD_BYTES)
    marked: bytes = UTF8_BOM
    raw_fields("text")  # type: ignore[arg-type]
    print(fields, marked)


def server() -> None:
    # Grading processes, their deadline and the body deadline are keyword options of the app.
    app = create_app(mode="robust", grade_workers=0, grade_timeout=5.0, body_timeout=10.0)
    print(app.routes)
    create_app(grade_workers="2")  # type: ignore[arg-type]


def errors() -> None:
    try:
        MCQASample.from_wire({})
    except WireFormatError as exc:
        problems: tuple[str, ...] = exc.problems
        coded: list[tuple[str, str]] = [(issue.code, issue.path) for issue in exc.issues]
        first: choicebox.Problem = exc.issues[0]
        print(problems, coded, first.message)
    except SampleError as exc:
        field: str = exc.field
        as_value_error: ValueError = exc
        print(field, as_value_error)


def located_errors(rule: RuleFileError, template: TemplateError) -> None:
    path: str = rule.path  # a rule file error always names its file
    line: int | None = rule.line
    column: int | None = rule.column
    reason: str = rule.reason
    maybe_file: str | None = template.path  # "unknown template" names no file
    never_none: str = template.path  # type: ignore[assignment]
    print(path, line, column, reason, maybe_file, never_none)


@register_step_kind("typing_marker")
@attrs.frozen(kw_only=True)
class MarkerLetter:
    """A step kind as an extension writes one: attrs fields are its parameters."""

    marker: str = ">>"

    def __call__(self, context: Context) -> Extraction | None:
        at = context.text.rfind(self.marker)
        if at < 0:
            return None
        return Extraction(context.text[at + len(self.marker) :][:1] or None, position=at)


def extension_api(sample: MCQASample, output: ModelOutput) -> None:
    kept: type[MarkerLetter] = MarkerLetter  # the decorator returns the class itself
    step: Step = kept(marker="=>")
    context = Context("=> B", {"A": "x", "B": "y"}, regex_timeout=0.1, answer_prefix=None)
    text: str = context.text
    options: Mapping[str, str] = context.options
    found: Extraction | None = step(context)
    if found is not None:
        letter: str | None = found.letter
        why: FailureKind | None = found.failure
        stops: bool = found.final
        print(letter, why, stops)
    registry: ModeRegistry = default_registry()
    with_mine: ModeRegistry = default_registry(["my_rules", Path("more_rules")])
    mode: GradingMode = registry.get("strict_single_letter_boxed")
    verdict: Verdict = grade(sample, output)
    by_name: Verdict = grade(sample, "\\boxed{B}", mode="robust", registry=with_mine)
    by_mode: Verdict = grade(sample, output, mode=mode, regex_timeout=0.5)
    reward: float = verdict.reward
    components: Mapping[str, float] = verdict.reward_components
    answer: str | None = verdict.extracted_answer
    failure: FailureKind | None = verdict.failure
    correct: bool = verdict.correct
    wire: dict[str, Any] = verdict.to_wire()
    try:
        registry.get("no_such_mode")
    except UnknownModeError as exc:
        known: tuple[str, ...] = exc.known
        print(known)
    print(text, options, by_name, by_mode, reward, components, answer, failure, correct, wire)


def extension_api_that_must_not_type_check(sample: MCQASample, verdict: Verdict) -> None:
    @attrs.frozen
    class NotCallable:
        marker: str = ">>"

    @attrs.frozen
    class ReadsAString:
        def __call__(self, text: str) -> Extraction | None:
            return None

    @attrs.frozen
    class ReturnsALetter:
        def __call__(self, context: Context) -> str:
            return "A"

    # A class whose instances are no Step is refused where it is registered.
    register_step_kind("typing_not_callable")(NotCallable)  # type: ignore[type-var]
    register_step_kind("typing_reads_a_string")(ReadsAString)  # type: ignore[type-var]
    register_step_kind("typing_returns_a_letter")(ReturnsALetter)  # type: ignore[type-var]
    register_step_kind(MarkerLetter)  # type: ignore[arg-type]
    not_a_step: Step = "Answer: B"  # type: ignore[assignment]
    Extraction("A", failure="wrong")  # type: ignore[arg-type]
    Context("Answer: B", ["A", "B"])  # type: ignore[arg-type]
    grade(sample, "Answer: B", mode=3)  # type: ignore[arg-type]
    grade(sample, "Answer: B", "robust")  # type: ignore[call-arg]
    verdict.reward = 1.0  # type: ignore[misc]
    wrong_kind: str = verdict.failure  # type: ignore[assignment]
    print(not_a_step, wrong_kind)


def nemo_gym_and_compare(path: Path) -> None:
    from choicebox.compare import Comparison, compare_file, render_html, render_text
    from choicebox.metrics import ConfidenceInterval, aggregate_metrics
    from choicebox.server import GymServerConfig, load_gym_config

    config: GymServerConfig = load_gym_config({"NEMO_GYM_CONFIG_DICT": "", "NEMO_GYM_CONFIG_PATH": ""})
    arguments: list[str] = config.serve_arguments()
    port: int = config.port
    mode: str | None = config.grading_mode
    reply: dict[str, Any] = aggregate_metrics([{"reward": 1.0}], profile=True)
    comparison: Comparison = compare_file(path, before="recorded", after="lenient_boxed")
    change: ConfidenceInterval | None = comparison.change
    page: str = render_html(comparison) + render_text(comparison)
    config.port = 1  # type: ignore[misc]
    compare_file(path, before=None)  # type: ignore[arg-type]
    load_gym_config({"NEMO_GYM_CONFIG_PATH": 1})  # type: ignore[dict-item]
    print(arguments, port, mode, reply, change, page)


def a_model_judge(path: Path, sample: MCQASample, verdict: Verdict) -> None:
    from choicebox.batch import JudgeResult, judge_file
    from choicebox.judge import (
        Judge,
        JudgeCache,
        JudgeEndpoint,
        Judgement,
        JudgePrompt,
        JudgeReport,
        JudgeRequest,
        apply_judgement,
        read_reply,
    )
    from choicebox.metrics import wilson_interval
    from choicebox.render import JudgeFailure
    from choicebox.scoring import (
        JudgeFlag,
        SchemaScore,
        ScorerInput,
        extract_json,
        needs_judge,
        validate_json_schema,
    )

    endpoint = JudgeEndpoint(url="http://localhost:8000/v1", model="judge", api="responses", concurrency=4)
    prompt: str = JudgePrompt.default().render(question="Q", options={"A": "x"}, response="x")
    with Judge(endpoint, prompt=JudgePrompt.from_file(path), cache=JudgeCache(path)) as judge:
        judgements: list[Judgement] = judge.judge_all([JudgeRequest(question="Q", options={"A": "x"}, response="x")])
        result: JudgeResult = judge_file(path, judge, sample=100, seed=1)
    report: JudgeReport = result.report
    calls: int = report.cost.calls
    letter: str | None = judgements[0].letter
    failure: JudgeFailure | None = judgements[0].failure
    judged: Verdict = apply_judgement(verdict, judgements[0], choicebox.default_registry().get("robust"))
    flagged: bool = judged.needs_judge
    judge_letter: str | None = judged.judge_letter
    reading: str | None = read_reply("B", ["A", "B"]).letter
    low, high = wilson_interval(90, 100)
    flag: JudgeFlag = needs_judge(ScorerInput(response="r", target="t"))
    found: dict[str, Any] | None = extract_json('{"answer": "B"}')
    score: SchemaScore = validate_json_schema('{"answer": "B"}', {"type": "object"})
    valid: bool = score["valid"]
    extracted: Mapping[str, Any] | None = score["extracted"]
    JudgeEndpoint(url="http://h/v1", model="m", api="completions")  # type: ignore[arg-type]
    JudgeEndpoint("http://h/v1", "m")  # type: ignore[call-arg]
    Judgement(letter="B", failure="lost", model="m")  # type: ignore[arg-type]
    judged.judge_letter = "C"  # type: ignore[misc]
    no_float: str = score["score"]  # type: ignore[assignment]
    print(prompt, report, calls, letter, failure, flagged, judge_letter, reading, low, high, flag, found,
          valid, extracted, no_float, sample)  # fmt: skip
