"""The one YAML reader: every YAML file the library reads is bounded, plain data, and every
complaint is located at file:line:column with the line, in the caller's error class."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import AuditConfigError, RuleFileError, TemplateError, _yaml
from choicebox._errors import _FileError
from choicebox._modes import ModeRegistry, load_mode_file, parse_mode
from choicebox._resources import builtin_rule_files, builtin_template_files
from choicebox._templates import parse_template
from choicebox._yaml import MAX_DEPTH, MAX_NODES, MAX_YAML_BYTES, decode, load, read_file
from choicebox.audit import AuditConfig
from choicebox.cli import main

_MODE = "version: 1\nid: {id}\ndescription: d\nchain:\n  - kind: boxed_letter\n"


def _bomb(levels: int) -> str:
    """A billion-laughs file: level k is nine aliases of level k-1, 9**levels leaves in all."""
    lines = [_MODE.format(id="bomb").rstrip("\n"), "deviations:", '  - &a0 ["lol","lol","lol"]']
    for level in range(1, levels + 1):
        lines.append(f"  - &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _load_error(text: str) -> RuleFileError:
    with pytest.raises(RuleFileError) as info:
        load(text, path="f.yaml", error=RuleFileError)
    return info.value


# --- bounds --------------------------------------------------------------------------------------


def test_an_alias_bomb_is_refused_at_the_alias_that_passes_the_bound_and_quickly() -> None:
    started = time.perf_counter()
    error = _error_of_rules(_bomb(8))
    assert time.perf_counter() - started < 1.0  # unbounded, 8 levels took minutes and 1.2 GB
    assert f"more than {MAX_NODES:,} nodes" in error.reason
    assert error.source_line is not None
    assert error.source_line.lstrip().startswith("- &a")
    assert error.column is not None
    assert error.source_line[error.column - 1] == "*"


def _error_of_rules(text: str) -> RuleFileError:
    with pytest.raises(RuleFileError) as info:
        parse_mode(text, path="bomb.yaml")
    return info.value


def test_a_small_alias_tree_within_the_bound_still_loads() -> None:
    data = load(_bomb(3), path="f.yaml", error=RuleFileError)
    assert len(data["deviations"]) == 4
    assert data["deviations"][3][0][0][0] == ["lol", "lol", "lol"]


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "[" * 5000 + "]" * 5000,
        "x: " + "{a: " * 2000 + "1" + "}" * 2000,
        "".join("  " * level + "a:\n" for level in range(MAX_DEPTH + 5)),
        "a: &deep " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*deep" + "]" * 30 + "\n",
    ],
    ids=["flow-sequences", "flow-mappings", "block-mappings", "through-an-alias"],
)
def test_nesting_past_the_bound_is_a_located_error_not_a_recursion_error(text: str) -> None:
    error = _load_error(text)
    assert error.reason == f"nested more than {MAX_DEPTH} levels deep"
    assert error.line is not None
    assert error.column is not None


def test_nesting_at_the_bound_loads() -> None:
    # The root mapping is one level, its lists the other MAX_DEPTH - 1.
    text = "x: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    data = load(text, path="f", error=RuleFileError)
    for _ in range(MAX_DEPTH - 1):
        data = data[0] if isinstance(data, list) else data["x"]
    assert data == []


@pytest.mark.parametrize("text", ["a: &x [1, *x]\n", "a: &x {b: [*x]}\n"])
def test_an_alias_inside_the_collection_it_names_is_refused(text: str) -> None:
    error = _load_error(text)
    assert "inside the collection it names" in error.reason
    assert error.line == 1


def test_a_file_over_the_size_bound_is_refused_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_YAML_BYTES + b"\n")
    with pytest.raises(RuleFileError) as info:
        read_file(path, error=RuleFileError)
    assert f"larger than {MAX_YAML_BYTES:,} bytes" in info.value.reason
    assert info.value.path == str(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_rather_than_read_forever(tmp_path: Path) -> None:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    with pytest.raises(RuleFileError, match="not a regular file"):
        read_file(path, error=RuleFileError)


# --- plain data ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "a: !!python/object:os.system {}\n",
            "YAML tag 'tag:yaml.org,2002:python/object:os.system'",
        ),
        ("a: !!binary aGk=\n", "YAML tag 'tag:yaml.org,2002:binary'"),
        ("a: !!set {x: null}\n", "YAML tag 'tag:yaml.org,2002:set'"),
        ("a: !\n", "YAML tag '!' is not allowed"),  # PyYAML reads null, libyaml ""
        ("a: !!int\n", "invalid value: '' is no int"),  # PyYAML's constructors index into ''
        ("a: !!bool\n", "invalid value: '' is no bool"),
        ("a: !!timestamp\n", "invalid value: '' is no timestamp"),
        ("a: ! [1]\n", "YAML tag '!' is not allowed"),
        ("a: 1\na: 2\n", "duplicate key 'a'"),
        ("? [k]\n: 1\n", "keys must be strings, got list"),
        ("a: 2024-13-45\n", "invalid value: month must be in 1..12"),
        ("a: " + "9" * 5000 + "\n", "invalid value: Exceeds the limit"),
        ("a: 1\nb: x\x00y\n", "invalid YAML: character U+0000 is not allowed"),
        ("a: [1\n", "invalid YAML: while parsing a flow sequence"),
        ("a: 1\n---\nb: 2\n", "invalid YAML: expected a single document"),
    ],
)
def test_what_is_not_plain_data_is_a_located_error(text: str, reason: str) -> None:
    error = _load_error(text)
    assert error.reason.startswith(reason), error.reason
    assert error.line is not None


def test_a_lone_surrogate_is_a_located_error() -> None:
    # libyaml is handed the text as UTF-8, which a lone surrogate cannot be.
    error = _load_error("a: 1\nb: \ud800\n")
    assert error.reason == "invalid YAML: character U+D800 is not allowed"
    assert (error.line, error.column) == (2, 4)


def test_a_nul_character_is_pointed_at() -> None:
    error = _load_error("a: 1\nb: x\x00y\n")
    assert (error.line, error.column) == (2, 5)


def test_every_shipped_yaml_file_reads_as_the_safe_loader_reads_it() -> None:
    files = [*builtin_rule_files(), *builtin_template_files()]
    assert files
    for resource in files:
        text = resource.read_text(encoding="utf-8")
        assert load(text, path=resource.name, error=RuleFileError) == yaml.safe_load(text)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml has one parser")
def test_libyaml_composes_every_shipped_file_into_the_nodes_pyyaml_composes() -> None:
    # The same tags, values and line:column of every node: errors point at the same places.
    def shape(node: yaml.Node) -> object:
        start, end = node.start_mark, node.end_mark
        where = (start.line, start.column, end.line, end.column)
        if isinstance(node, yaml.ScalarNode):
            return (node.tag, node.value, where)
        items = [
            (shape(k), shape(v)) if isinstance(node, yaml.MappingNode) else shape(k)
            for k, v in (
                node.value
                if isinstance(node, yaml.MappingNode)
                else ((item, None) for item in node.value)
            )
        ]
        return (node.tag, where, items)

    assert _yaml._FastBoundedLoader is not _yaml._PythonBoundedLoader
    for resource in [*builtin_rule_files(), *builtin_template_files()]:
        text = resource.read_text(encoding="utf-8")
        fast = _yaml._compose_with(_yaml._FastBoundedLoader, text)
        python = _yaml._compose_with(_yaml._PythonBoundedLoader, text)
        assert fast is not None
        assert python is not None
        assert shape(fast) == shape(python), resource.name


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a:\n\tb: 1\n", "invalid YAML: while scanning for the next token, found character '\\t'"),
        ("a:\t1\n", "invalid YAML: while scanning for the next token, found character '\\t'"),
        ("a: b: c\n", "invalid YAML: mapping values are not allowed here"),
        ("x: " + "[" * 5000 + "]" * 5000, f"nested more than {MAX_DEPTH} levels deep"),
    ],
)
def test_a_text_libyaml_refuses_is_reported_in_pyyaml_s_words(text: str, reason: str) -> None:
    # libyaml says "found character that cannot start any token", and stops 5,000 brackets at
    # its own nesting limit before the composer's bound: PyYAML composes the text again.
    assert _load_error(text).reason.startswith(reason)


def _read_with(loader: Callable[[str], object], text: str) -> object:
    """What ``load`` makes of ``text`` composed by ``loader``: a value, or the complaint."""
    try:
        node = _yaml._compose_with(loader, text)  # type: ignore[arg-type]
    except (yaml.YAMLError, UnicodeError):
        return "refused"
    if node is None:
        return ("value", None)
    try:
        return ("value", _yaml.YamlDocument("f.yaml", text, RuleFileError).value(node))
    except RuleFileError as error:
        return ("error", error.reason, error.line, error.column)


@settings(max_examples=1000, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("ab1: -[]{},&*!'\"#|>?\n\t\\\x00\ud800\ufeffé%@")),
        max_size=40,
    )
)
def test_any_text_reads_as_pyyaml_reads_it(text: str) -> None:
    # Whichever parser read it, a text loads as PyYAML alone loads it: the same plain data, or
    # a located complaint where PyYAML refuses it (the same complaint where PyYAML composes it).
    try:
        loaded: object = ("value", load(text, path="f.yaml", error=RuleFileError))
    except RuleFileError as error:
        loaded = ("error", error.reason, error.line, error.column)
    python = _read_with(_yaml._PythonBoundedLoader, text)
    if python == "refused":
        assert loaded[0] == "error", loaded
        assert loaded[2] is not None  # a complaint has its line
    else:
        assert loaded == python


# --- bytes ---------------------------------------------------------------------------------------


def test_a_byte_that_is_not_utf8_is_located_with_its_line() -> None:
    data = "version: 1\ndescription: café \u00e9\n".encode().replace("é".encode(), b"\xe9", 1)
    with pytest.raises(RuleFileError) as info:
        decode(data, path="latin1.yaml", error=RuleFileError)
    error = info.value
    assert (error.path, error.line, error.column) == ("latin1.yaml", 2, 17)
    assert error.reason == "byte 0xe9 is not UTF-8; the file must be UTF-8"
    assert error.source_line == "description: caf\ufffd \u00e9"
    assert str(error).splitlines()[2] == "    " + " " * 16 + "^"


def test_a_bom_is_accepted() -> None:
    assert decode(b"\xef\xbb\xbfa: 1\n", path="f", error=RuleFileError) == "a: 1\n"


@pytest.mark.parametrize("error_class", [RuleFileError, AuditConfigError, TemplateError])
def test_each_reader_locates_in_its_own_error_class(
    tmp_path: Path, error_class: type[_FileError]
) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"checks:\n  bad: \xff\n")
    with pytest.raises(error_class) as info:
        read_file(path, error=error_class)
    assert (info.value.line, info.value.column) == (2, 8)


def test_load_mode_file_and_the_audit_config_read_through_the_bounded_reader(
    tmp_path: Path,
) -> None:
    rule = tmp_path / "m.yaml"
    rule.write_bytes(_MODE.format(id="m").encode() + b"deviations: ['\xe9']\n")
    with pytest.raises(RuleFileError) as rule_error:
        load_mode_file(rule)
    assert rule_error.value.line == 6
    config = tmp_path / "audit.yaml"
    config.write_text("checks: " + "[" * 100 + "]" * 100 + "\n", encoding="utf-8")
    with pytest.raises(AuditConfigError) as config_error:
        AuditConfig.load(config)
    assert config_error.value.reason == f"nested more than {MAX_DEPTH} levels deep"


def test_a_template_is_read_by_the_same_reader() -> None:
    with pytest.raises(TemplateError) as info:
        parse_template("id: &x [" + ",".join(["*x"] * 3) + "]\n", path="t.yaml")
    assert "inside the collection it names" in info.value.reason
    assert str(info.value).startswith("t.yaml:1:")


def test_an_audit_config_tag_is_refused_with_its_location() -> None:
    text = "checks:\n  empty_choice:\n    enabled: !!binary aGk=\n    severity: error\n"
    with pytest.raises(AuditConfigError) as info:
        AuditConfig.from_yaml(text, source="a.yaml")
    assert (info.value.line, info.value.column) == (3, 14)
    assert "YAML tag" in info.value.reason


# --- rule directories ----------------------------------------------------------------------------


def test_a_link_out_of_the_rules_directory_is_refused_unread(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:the first line must not be shown\n", encoding="utf-8")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "x.yaml").symlink_to(secret)
    with pytest.raises(RuleFileError) as info:
        ModeRegistry.with_builtins([rules])
    assert "root:x" not in str(info.value)
    assert info.value.path == str(rules / "x.yaml")
    assert "outside the directory" in info.value.reason
    assert info.value.source_line is None


def test_a_link_inside_the_rules_directory_and_a_linked_directory_are_read(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "mine.yaml").write_text(_MODE.format(id="mine"), encoding="utf-8")
    (real / "mine.yaml").symlink_to(real / "sub" / "mine.yaml")
    linked = tmp_path / "linked"
    linked.symlink_to(real, target_is_directory=True)
    registry = ModeRegistry.with_builtins([linked])
    assert "mine" in registry


@pytest.mark.parametrize("weight", [".nan", ".inf", "-.inf", ".NaN"])
def test_a_weight_that_is_not_finite_is_refused_where_it_is_written(weight: str) -> None:
    text = _MODE.format(id="w") + f"weights: {{correctness: 1, format: {weight}}}\n"
    with pytest.raises(RuleFileError) as info:
        parse_mode(text, path="w.yaml")
    assert "must be a finite number" in info.value.reason
    assert info.value.line == 6
    source = info.value.source_line
    assert source is not None
    assert info.value.column is not None
    assert source[info.value.column - 1 :].startswith(weight)


# --- through the command line --------------------------------------------------------------------


def test_rules_check_reports_a_bomb_a_deep_file_and_a_link_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        "bomb": _bomb(8),
        "deep": _MODE.format(id="deep") + "deviations: " + "[" * 5000 + "]" * 5000 + "\n",
    }
    for name, text in cases.items():
        directory = tmp_path / name
        directory.mkdir()
        (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
        assert main(["rules", "check", str(directory)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {directory / name}.yaml:")
        assert "Traceback" not in err
    linked = tmp_path / "linked"
    linked.mkdir()
    secret = tmp_path / "secret.yaml"
    secret.write_text("root:x:0:0 must not be shown\n", encoding="utf-8")
    (linked / "x.yaml").symlink_to(secret)
    assert main(["rules", "check", str(linked)]) == 1
    err = capsys.readouterr().err
    assert "outside the directory" in err
    assert "root:x" not in err
