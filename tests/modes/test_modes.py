"""Tests of choicebox._modes: strict, located rule-file errors; user modes; extension points."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import attrs
import pytest

from choicebox import (
    Context,
    Extraction,
    GradingMode,
    RuleFileError,
    StepKindError,
    UnknownModeError,
    default_registry,
    grade,
    register_step_kind,
    step_kinds,
)
from choicebox._grading import grade_text
from choicebox._modes import RULES_DIR_ENV, ModeRegistry, _Unparsed, load_mode_file, parse_mode
from choicebox.testing import ExampleResult, mcqa_sample, run_mode_examples

BUILTIN_MODES = (
    "lenient_answer_colon",
    "lenient_answer_colon_md",
    "lenient_boxed",
    "mmlu_pro",
    "robust",
    "strict_single_letter_boxed",
)


@pytest.fixture(autouse=True)
def _no_user_rules_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RULES_DIR_ENV, raising=False)


def _parents() -> dict[str, GradingMode]:
    return {mode.id: mode for mode in ModeRegistry.with_builtins()}


def _error(text: str, path: str = "rules/my.yaml") -> RuleFileError:
    with pytest.raises(RuleFileError) as info:
        parse_mode(dedent(text), path=path, parents=_parents())
    return info.value


def _assert_located(error: RuleFileError, line: int, column: int, shown: str) -> None:
    """The error names ``file:line:column``, shows the offending line and a caret under it."""
    assert (error.line, error.column) == (line, column)
    message = str(error)
    assert message.startswith(f"{error.path}:{line}:{column}: ")
    lines = message.splitlines()
    assert lines[1] == f"    {shown}"
    assert lines[2] == "    " + " " * (column - 1) + "^"


# ------------------------------------------------------------------------------ loading errors


def test_a_valid_file_loads() -> None:
    mode, overrides = parse_mode(
        dedent("""\
            version: 1
            id: my_mode
            description: Boxed letters, first box wins.
            chain:
              - kind: boxed_letter
                which: first
                primary: true
            """),
        path="my.yaml",
    )
    assert mode.id == "my_mode"
    assert mode.source == "my.yaml"
    assert overrides is False
    assert [type(entry.step) for entry in mode.chain] == [step_kinds()["boxed_letter"]]
    assert mode.chain[0].primary is True


def test_an_unknown_top_level_key_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chian:
          - kind: boxed_letter
        """)
    _assert_located(error, 4, 1, "chian:")
    assert error.path == "rules/my.yaml"
    assert "unknown key 'chian'" in error.reason
    assert "chain" in error.reason  # the known keys are listed


def test_a_duplicate_top_level_key_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: boxed_letter
        id: other
        """)
    _assert_located(error, 6, 1, "id: other")
    assert "duplicate key 'id'" in error.reason


def test_a_duplicate_key_inside_a_step_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: boxed_letter
            which: last
            which: first
        """)
    _assert_located(error, 7, 5, "    which: first")
    assert "duplicate key 'which'" in error.reason


def test_an_unknown_step_kind_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: boxed_leter
        """)
    _assert_located(error, 5, 5, "  - kind: boxed_leter")
    assert "unknown step kind 'boxed_leter'" in error.reason
    assert "boxed_letter" in error.reason  # the known kinds are listed


def test_an_unknown_step_parameter_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: boxed_letter
            wich: last
        """)
    _assert_located(error, 6, 5, "    wich: last")
    assert "unknown parameter 'wich'" in error.reason
    assert "which" in error.reason


def test_parameters_sit_on_the_step_not_under_a_params_key() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: answer_line
            params:
              labels: [answer]
        """)
    _assert_located(error, 6, 5, "    params:")
    assert "unknown parameter 'params'" in error.reason


def test_a_bad_parameter_value_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: boxed_letter
            which: middle
        """)
    _assert_located(error, 6, 12, "    which: middle")
    assert "which" in error.reason


def test_a_parameter_of_the_wrong_type_is_located() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: answer_line
            markdown: 3
        """)
    _assert_located(error, 6, 15, "    markdown: 3")
    assert "markdown" in error.reason


def test_an_invalid_regex_is_refused_at_load_time() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: regex
            pattern: 'Answer: ([A-D'
        """)
    assert error.path == "rules/my.yaml"
    assert error.line in (5, 6)  # the step or its pattern
    assert error.column is not None
    assert "regex" in str(error)
    assert str(error).splitlines()[1].strip() in ("- kind: regex", "pattern: 'Answer: ([A-D'")


def test_an_invalid_regex_is_located_at_the_pattern_and_says_why() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: regex
            pattern: 'Answer: ([A-D'
        """)
    _assert_located(error, 6, 14, "    pattern: 'Answer: ([A-D'")
    assert "unterminated character set" in error.reason


@pytest.mark.parametrize(
    ("version_line", "line", "column"),
    [("version: 2", 1, 10), ("version: '1'", 1, 10), ("version: one", 1, 10)],
)
def test_a_bad_version_is_located(version_line: str, line: int, column: int) -> None:
    error = _error(f"{version_line}\nid: m\ndescription: d\nchain:\n  - kind: boxed_letter\n")
    _assert_located(error, line, column, version_line)
    assert "version" in error.reason


def test_a_missing_version_is_refused() -> None:
    error = _error("id: m\ndescription: d\nchain:\n  - kind: boxed_letter\n")
    _assert_located(error, 1, 1, "id: m")
    assert "version None" in error.reason


def test_a_missing_id_is_located() -> None:
    error = _error("version: 1\ndescription: d\nchain:\n  - kind: boxed_letter\n")
    _assert_located(error, 1, 1, "version: 1")
    assert "needs an 'id'" in error.reason


def test_an_empty_id_is_located() -> None:
    error = _error("version: 1\nid: '  '\ndescription: d\nchain:\n  - kind: boxed_letter\n")
    _assert_located(error, 2, 5, "id: '  '")


def test_a_missing_chain_is_refused() -> None:
    error = _error("version: 1\nid: m\ndescription: d\n")
    assert "non-empty 'chain'" in error.reason


def test_invalid_yaml_is_located() -> None:
    error = _error("version: 1\nid: [m\ndescription: d\n")
    assert error.line is not None
    assert error.reason.startswith("invalid YAML")


def test_load_mode_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("version: 1\nid: m\ndescription: d\nchain:\n  - kind: nope\n", encoding="utf-8")
    with pytest.raises(RuleFileError) as info:
        load_mode_file(path)
    assert str(info.value).startswith(f"{path}:5:5: ")


# ------------------------------------------------------------------------------ safe YAML


def test_a_python_object_tag_is_refused_and_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    text = dedent(f"""\
        version: 1
        id: !!python/object/apply:os.system ['touch {marker}']
        description: d
        chain:
          - kind: boxed_letter
        """)
    with pytest.raises(RuleFileError) as info:
        parse_mode(text, path="evil.yaml")
    assert info.value.line == 2
    assert not marker.exists()


def test_a_python_tag_in_a_user_directory_is_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "evil.yaml").write_text(
        dedent(f"""\
            version: 1
            id: evil
            description: !!python/object/apply:os.system ['touch {marker}']
            chain:
              - kind: boxed_letter
            """),
        encoding="utf-8",
    )
    with pytest.raises(RuleFileError):
        ModeRegistry.with_builtins([rules])
    assert not marker.exists()


def test_a_python_tag_on_a_scalar_is_a_rule_file_error() -> None:
    text = (
        "version: 1\nid: !!python/name:os.system\ndescription: d\nchain:\n  - kind: boxed_letter\n"
    )
    with pytest.raises(RuleFileError) as info:
        parse_mode(text, path="evil.yaml")
    assert (info.value.line, info.value.column) == (2, 5)


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\nid: m\ndescription: d\n"
        "deviations: !!python/object/apply:os.system ['echo hi']\nchain:\n  - kind: boxed_letter\n",
        "version: 1\nid: m\ndescription: d\nchain:\n"
        "  - !!python/object:collections.OrderedDict\n    kind: boxed_letter\n",
        "!!python/object:collections.OrderedDict\nversion: 1\nid: m\ndescription: d\n"
        "chain:\n  - kind: boxed_letter\n",
    ],
    ids=["sequence", "step-mapping", "root-mapping"],
)
def test_a_python_tag_on_a_collection_is_refused(text: str) -> None:
    with pytest.raises(RuleFileError):
        parse_mode(text, path="evil.yaml")


# ------------------------------------------------------------------------------ user modes

_FIRST_BOX = """\
version: 1
id: {id}
description: The first boxed letter, not the last.
chain:
  - kind: boxed_letter
    which: first
    primary: true
examples:
  - output: "First \\\\boxed{{C}}. Checking shows \\\\boxed{{D}}"
    expected: C
"""


def _write_mode(directory: Path, mode_id: str, text: str = _FIRST_BOX) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{mode_id}.yaml"
    path.write_text(text.format(id=mode_id), encoding="utf-8")
    return path


def test_a_mode_added_as_a_file_is_used_by_grade(tmp_path: Path) -> None:
    _write_mode(tmp_path, "first_box")
    registry = default_registry([tmp_path])
    assert "first_box" in registry
    assert not registry.is_builtin("first_box")
    assert registry.get("first_box").source == str(tmp_path / "first_box.yaml")
    output = "First \\boxed{B}. Checking shows \\boxed{D}"
    verdict = grade(mcqa_sample(), output, mode="first_box", registry=registry)
    assert verdict.extracted_answer == "B"
    assert verdict.mode == "first_box"
    # The built-in strict mode reads the last box on the same text.
    assert grade(mcqa_sample(), output, registry=registry).extracted_answer == "D"
    # The sample may name the new mode itself.
    sample = mcqa_sample(grading_mode="first_box")
    assert grade(sample, output, registry=registry).reward == 1.0


def test_default_registry_is_cached_per_directory_tuple(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    _write_mode(first, "mode_one")
    _write_mode(second, "mode_two")
    one = default_registry([first])
    assert default_registry([first]) is one
    assert default_registry((str(first),)) is one
    both = default_registry([first, second])
    assert both is not one
    assert "mode_one" in both
    assert "mode_two" in both
    assert "mode_two" not in one
    assert "mode_one" not in default_registry()


def test_a_mode_in_the_rules_dir_env_var_is_used_by_grade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_mode(tmp_path / "a", "env_mode_a")
    _write_mode(tmp_path / "b", "env_mode_b")
    output = "First \\boxed{B}. Checking shows \\boxed{D}"
    with pytest.raises(UnknownModeError):
        grade(mcqa_sample(), output, mode="env_mode_a")
    monkeypatch.setenv(RULES_DIR_ENV, f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert grade(mcqa_sample(), output, mode="env_mode_a").extracted_answer == "B"
    assert grade(mcqa_sample(grading_mode="env_mode_b"), output).reward == 1.0
    assert "env_mode_b" in default_registry()


def test_only_yaml_files_are_read(tmp_path: Path) -> None:
    _write_mode(tmp_path, "real_mode")
    (tmp_path / "notes.txt").write_text("not: a rule file", encoding="utf-8")
    (tmp_path / "other.yml").write_text(_FIRST_BOX.format(id="yml_mode"), encoding="utf-8")
    registry = ModeRegistry.with_builtins([tmp_path])
    assert {"real_mode", "yml_mode"} <= set(registry.names())


def test_a_bad_user_file_fails_loudly(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("version: 1\nid: m\n", encoding="utf-8")
    with pytest.raises(RuleFileError) as info:
        ModeRegistry.with_builtins([tmp_path])
    assert info.value.path == str(tmp_path / "bad.yaml")


def test_a_rules_dir_that_is_not_a_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="not a directory"):
        ModeRegistry.with_builtins([tmp_path / "missing"])


@pytest.mark.parametrize("builtin", BUILTIN_MODES)
def test_a_user_file_may_not_shadow_a_builtin(tmp_path: Path, builtin: str) -> None:
    _write_mode(tmp_path, builtin)
    with pytest.raises(RuleFileError) as info:
        ModeRegistry.with_builtins([tmp_path])
    assert "overrides: true" in str(info.value)
    assert info.value.path == str(tmp_path / f"{builtin}.yaml")


def test_a_user_file_may_override_a_builtin_when_it_says_so(tmp_path: Path) -> None:
    _write_mode(tmp_path, "robust", _FIRST_BOX + "overrides: true\n")
    registry = ModeRegistry.with_builtins([tmp_path])
    mode = registry.get("robust")
    assert mode.description == "The first boxed letter, not the last."
    assert not registry.is_builtin("robust")
    verdict = grade(
        mcqa_sample(),
        "First \\boxed{B}. Checking shows \\boxed{D}",
        registry=registry,
        mode="robust",
    )
    assert verdict.extracted_answer == "B"
    # The built-in registry is unchanged.
    assert ModeRegistry.with_builtins().get("robust").resolve == "conclusion"


def test_two_user_files_with_one_id_are_an_error(tmp_path: Path) -> None:
    _write_mode(tmp_path / "a", "twice")
    _write_mode(tmp_path / "b", "twice")
    with pytest.raises(RuleFileError, match="unique"):
        ModeRegistry.with_builtins([tmp_path / "a", tmp_path / "b"])


def test_two_user_files_overriding_one_builtin_are_an_error(tmp_path: Path) -> None:
    _write_mode(tmp_path / "a", "robust", _FIRST_BOX + "overrides: true\n")
    _write_mode(tmp_path / "b", "robust", _FIRST_BOX + "overrides: true\n")
    with pytest.raises(RuleFileError):
        ModeRegistry.with_builtins([tmp_path / "a", tmp_path / "b"])


# ------------------------------------------------------------------------------ extends


def test_extends_appends_the_chain_to_the_parents() -> None:
    mode, _ = parse_mode(
        dedent("""\
            version: 1
            id: boxed_then_line
            description: A boxed letter, else an Answer line.
            extends: strict_single_letter_boxed
            chain:
              - kind: answer_line
                labels: [answer]
            """),
        parents=_parents(),
    )
    assert [entry.id for entry in mode.chain] == ["boxed_letter", "answer_line"]
    assert mode.extends == "strict_single_letter_boxed"
    assert mode.chain[0].primary is True  # inherited
    assert grade(mcqa_sample(), "\\boxed{B}\nAnswer: C", mode=mode).extracted_answer == "B"
    verdict = grade(mcqa_sample(), "Answer: B", mode=mode)
    assert (verdict.extracted_answer, verdict.step, verdict.format) == ("B", "answer_line", 0.0)


def test_extends_inherits_the_policy_and_reasoning_and_may_change_them() -> None:
    text = "version: 1\nid: r2\ndescription: d\nextends: robust\n"
    mode, _ = parse_mode(text, parents=_parents())
    assert mode.resolve == "conclusion"
    assert mode.policy == _parents()["robust"].policy
    assert mode.strip_reasoning is True
    assert len(mode.chain) == len(_parents()["robust"].chain)
    changed, _ = parse_mode(text + "strip_reasoning: false\n", parents=_parents())
    assert changed.strip_reasoning is False


def test_extends_an_unknown_mode_is_located() -> None:
    error = _error("version: 1\nid: m\ndescription: d\nextends: nope\n")
    _assert_located(error, 4, 10, "extends: nope")
    assert "robust" in error.reason  # the known modes are listed


def test_extends_that_is_not_a_string_is_located() -> None:
    error = _error("version: 1\nid: m\ndescription: d\nextends: [robust]\n")
    _assert_located(error, 4, 10, "extends: [robust]")


def test_extending_with_a_clashing_step_id_is_refused() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        extends: strict_single_letter_boxed
        chain:
          - kind: boxed_letter
        """)
    assert "boxed_letter" in error.reason


def test_a_user_file_may_extend_another_user_file_in_the_same_directory(tmp_path: Path) -> None:
    # "a_child" sorts before "z_parent": the registry must load the parent first.
    _write_mode(tmp_path, "z_parent")
    (tmp_path / "a_child.yaml").write_text(
        "version: 1\nid: a_child\ndescription: d\nextends: z_parent\n"
        "chain:\n  - kind: answer_line\n",
        encoding="utf-8",
    )
    registry = ModeRegistry.with_builtins([tmp_path])
    assert [e.id for e in registry.get("a_child").chain] == ["boxed_letter", "answer_line"]


# ------------------------------------------------------------------------------ custom step kinds


@register_step_kind("test_marker_letter")
@attrs.frozen(kw_only=True)
class MarkerLetter:
    """The letter right after the last ``marker`` (a toy step kind for the tests)."""

    marker: str = ">>"

    def __call__(self, context: Context) -> Extraction | None:
        at = context.text.rfind(self.marker)
        end = at + len(self.marker)
        if at < 0 or end >= len(context.text):
            return None
        letter = context.text[end]
        if letter not in context.options:
            return Extraction(None, failure="not_an_option", detail="marker", final=False)
        return Extraction(letter, position=at, clean=True, detail="after the marker")


def test_a_custom_step_kind_is_used_from_yaml() -> None:
    assert step_kinds()["test_marker_letter"] is MarkerLetter
    mode, _ = parse_mode(
        dedent("""\
            version: 1
            id: marker_mode
            description: The letter after a marker, else a boxed letter.
            chain:
              - kind: test_marker_letter
                id: marker
                marker: "=>"
                primary: true
              - kind: boxed_letter
                which: last
            """),
        parents=_parents(),
    )
    assert mode.chain[0].step == MarkerLetter(marker="=>")
    verdict = grade(mcqa_sample(), "=>B, though \\boxed{C}", mode=mode)
    assert (verdict.extracted_answer, verdict.step, verdict.format) == ("B", "marker", 1.0)
    assert grade(mcqa_sample(), "\\boxed{B}", mode=mode).step == "boxed_letter"


def test_a_custom_step_kind_checks_its_parameters() -> None:
    error = _error("""\
        version: 1
        id: m
        description: d
        chain:
          - kind: test_marker_letter
            marke: "=>"
        """)
    _assert_located(error, 6, 5, '    marke: "=>"')
    assert "marker" in error.reason


def test_a_clashing_step_kind_name_needs_replace() -> None:
    @attrs.frozen
    class Other:
        def __call__(self, context: Context) -> Extraction | None:
            return None

    with pytest.raises(StepKindError, match="already registered"):
        register_step_kind("boxed_letter")(Other)
    with pytest.raises(StepKindError, match="already registered"):
        register_step_kind("test_marker_letter")(Other)
    assert step_kinds()["test_marker_letter"] is MarkerLetter
    # Registering the same class again is harmless.
    assert register_step_kind("test_marker_letter")(MarkerLetter) is MarkerLetter


def test_replace_takes_over_a_step_kind_name() -> None:
    @attrs.frozen
    class First:
        def __call__(self, context: Context) -> Extraction | None:
            return None

    @attrs.frozen
    class Second:
        def __call__(self, context: Context) -> Extraction | None:
            return Extraction("A")

    register_step_kind("test_replaceable")(First)
    register_step_kind("test_replaceable", replace=True)(Second)
    assert step_kinds()["test_replaceable"] is Second


def test_a_step_kind_must_be_an_attrs_class() -> None:
    class Plain:
        def __call__(self, context: Context) -> Extraction | None:
            return None

    with pytest.raises(StepKindError, match="attrs class"):
        register_step_kind("test_plain")(Plain)
    assert "test_plain" not in step_kinds()


# ------------------------------------------------------------------------------ embedded examples


def _builtin_examples() -> Iterator[tuple[str, int]]:
    for mode in ModeRegistry.with_builtins():
        for index in range(len(mode.examples)):
            yield mode.id, index


@pytest.mark.parametrize(("mode", "index"), list(_builtin_examples()))
def test_every_builtin_example_passes(mode: str, index: int) -> None:
    result = run_mode_examples(mode)[index]
    assert result.passed, result.describe()


@pytest.mark.parametrize("mode", BUILTIN_MODES)
def test_every_builtin_mode_has_examples(mode: str) -> None:
    results = run_mode_examples(mode)
    assert len(results) >= 5
    assert all(isinstance(r, ExampleResult) for r in results)
    assert {r.mode for r in results} == {mode}


def test_run_mode_examples_reports_a_failing_example() -> None:
    mode, _ = parse_mode(
        dedent("""\
            version: 1
            id: wrong_examples
            description: d
            chain:
              - kind: boxed_letter
            examples:
              - output: "\\\\boxed{B}"
                expected: B
              - output: "\\\\boxed{B}"
                expected: C
              - output: "\\\\boxed{A} or \\\\boxed{B}"
                expected: null
                failure: not_an_option
            """),
        path="w.yaml",
    )
    results = run_mode_examples(mode)
    assert [r.passed for r in results] == [True, False, False]
    assert results[1].got == "B"
    assert results[1].expected == "C"
    assert results[1].location == "w.yaml:9"
    assert "w.yaml:9" in results[1].describe()
    assert "FAILED" in results[1].describe()
    assert "ambiguous" in results[2].describe()


def test_strategy_is_the_old_name_of_resolve() -> None:
    registry = default_registry()
    for name in ("robust", "strict_single_letter_boxed"):
        mode = registry.get(name)
        assert mode.strategy == mode.resolve
    assert registry.get("robust").strategy == "conclusion"
# --- built-ins parsed on first use ---------------------------------------------------------------


def _parsed_names(registry: ModeRegistry) -> set[str]:
    return {name for name in registry.names() if isinstance(registry._modes[name], GradingMode)}


def test_a_built_in_mode_is_parsed_when_first_used_with_its_parents() -> None:
    registry = ModeRegistry.with_builtins()
    assert registry.names() == sorted(BUILTIN_MODES)
    assert _parsed_names(registry) == set()  # listing the names parses nothing
    assert registry.get("lenient_boxed").extends == "strict_single_letter_boxed"
    assert _parsed_names(registry) == {"lenient_boxed", "strict_single_letter_boxed"}
    assert registry.is_builtin("robust")
    assert "robust" in registry
    assert _parsed_names(registry) == {"lenient_boxed", "strict_single_letter_boxed"}
    assert [mode.id for mode in registry] == sorted(BUILTIN_MODES)  # iterating parses them all
    assert _parsed_names(registry) == set(BUILTIN_MODES)


def test_a_user_mode_extends_a_built_in_not_parsed_yet(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "mine.yaml").write_text(
        "version: 1\nid: mine\ndescription: d\nextends: lenient_boxed\n", encoding="utf-8"
    )
    registry = ModeRegistry.with_builtins([rules])
    assert registry.get("mine").chain == registry.get("lenient_boxed").chain
    assert not registry.is_builtin("mine")


def test_a_built_in_file_must_declare_its_name_as_its_id() -> None:
    registry = ModeRegistry()
    text = "version: 1\nid: other\ndescription: d\nchain:\n  - kind: boxed_letter\n"
    registry._modes["named"] = _Unparsed("<builtin>/named.yaml", text)
    with pytest.raises(RuleFileError, match="its own name as its id, 'named', not 'other'") as info:
        registry.get("named")
    assert info.value.path == "<builtin>/named.yaml"
    with pytest.raises(RuleFileError):  # still unparsed: asking again says the same
        registry.get("named")


def test_a_bad_parameter_is_located_from_cattrs_structured_errors(tmp_path: Path) -> None:
    """The parameter is found from the notes cattrs attaches, not its message, and a value
    cattrs has no words for is described by its own error."""
    (tmp_path / "m.yaml").write_text(
        "version: 1\nid: m\ndescription: d\nchain:\n  - kind: payload_line\n    lines: [first, middle]\n",
        encoding="utf-8",
    )
    with pytest.raises(RuleFileError) as raised:
        ModeRegistry.with_builtins([tmp_path]).get("m")
    message = str(raised.value)
    assert "m.yaml:6:12:" in message
    assert "middle not in literal" in message
    assert "unknown error" not in message


def test_a_renamed_step_kind_is_named_with_its_new_name() -> None:
    # `conclusion` is the resolution policy; the sentence finder it also named is now
    # `concluding_sentence`, and a rule file with the old name is told so, at the entry.
    body = "version: 1\nid: m\ndescription: d\nchain:\n  - kind: conclusion\n    words: [so]\n"
    with pytest.raises(RuleFileError, match="'conclusion' was renamed 'concluding_sentence'") as caught:
        parse_mode(body, path="m.yaml")
    assert "m.yaml:5" in str(caught.value)
    mode, _ = parse_mode(body.replace("kind: conclusion", "kind: concluding_sentence"), path="m.yaml")
    options = {"A": "one", "B": "two", "C": "three"}
    assert grade_text("Thinking it over. So, B.", options, "B", mode).correct


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_rule_file_that_is_no_regular_file_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    with pytest.raises(RuleFileError, match="not a regular file") as raised:
        ModeRegistry.with_builtins([tmp_path])
    assert "zero.yaml" in str(raised.value)
