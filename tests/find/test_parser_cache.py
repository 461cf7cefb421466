"""Tests for choicebox.find._parser_cache: the box grammar's parser built once per machine."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import lark
import pytest
from lark import Token, Tree

from choicebox._resources import builtin_grammar
from choicebox.find import _parser_cache
from choicebox.find._parser_cache import cache_dir, lalr_parser

CONTENTS = ["B", "(B)", "option B", "A and C", "answer: (C)", "2B", "the answer is B", "B, D"]


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "choicebox"


def _shape(node: object) -> object:
    """A parse tree as rule names and (type, text) tokens: a loaded parser names its rules
    with plain strings where a built one uses ``Token('RULE', ...)``, which reads the same."""
    if isinstance(node, Token):
        return (node.type, str(node))
    assert isinstance(node, Tree)
    return (str(node.data), [_shape(child) for child in node.children])


def _parses(parser: object, contents: list[str]) -> list[object]:
    out: list[object] = []
    for content in contents:
        try:
            out.append(_shape(parser.parse(content)))  # type: ignore[attr-defined]
        except Exception as exc:  # a refusal is part of what is compared
            out.append(type(exc).__name__)
    return out


def test_cache_dir_follows_xdg(cache_home: Path) -> None:
    assert cache_dir() == cache_home


def test_first_build_is_saved_and_later_loads_parse_the_same(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grammar = builtin_grammar("boxed")
    built = lalr_parser("boxed", grammar)
    saved = list(cache_home.iterdir())
    assert [p.suffix for p in saved] == [".json"]  # and no temporary file left behind

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parser was built again instead of loaded")

    monkeypatch.setattr(lark.Lark, "__init__", no_build)
    loaded = lalr_parser("boxed", grammar)
    assert loaded.options.parser == "lalr"
    assert loaded.options.lexer == "contextual"
    assert _parses(loaded, CONTENTS) == _parses(built, CONTENTS)


def test_another_grammar_gets_another_file(cache_home: Path) -> None:
    grammar = builtin_grammar("boxed")
    lalr_parser("boxed", grammar)
    lalr_parser("boxed", grammar + "\n// edited\n")
    assert len(list(cache_home.glob("boxed-*.json"))) == 2


def test_a_broken_cache_file_is_rebuilt(cache_home: Path) -> None:
    grammar = builtin_grammar("boxed")
    reference = _parses(lalr_parser("boxed", grammar), CONTENTS)
    (saved,) = cache_home.iterdir()
    saved.write_bytes(saved.read_bytes()[:100])  # truncated, as by a crash mid-write elsewhere
    assert _parses(lalr_parser("boxed", grammar), CONTENTS) == reference
    assert _parses(lalr_parser("boxed", grammar), CONTENTS) == reference  # rewritten whole


def test_an_unwritable_cache_never_fails_grading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    parser = lalr_parser("boxed", builtin_grammar("boxed"))
    assert _parses(parser, ["(B)"]) == [("start", [("single", [("LETTER", "B")])])]
    assert blocker.read_text() == "a file where the cache directory would go"


def test_a_failing_save_leaves_no_temporary_file(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_parser_cache.os, "replace", full_disk)
    parser = _parser_cache.lalr_parser("boxed", builtin_grammar("boxed"))
    assert _parses(parser, ["(B)"]) == [("start", [("single", [("LETTER", "B")])])]
    assert list(cache_home.iterdir()) == []


class _Planted:
    """What someone else might write into a shared cache: unpickling it writes a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    real = lark.Lark.__init__

    def counting(self: lark.Lark, *args: object, **kwargs: object) -> None:
        built.append(1)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lark.Lark, "__init__", counting)
    return built


def test_a_planted_pickle_never_runs(cache_home: Path, tmp_path: Path) -> None:
    grammar = builtin_grammar("boxed")
    reference = _parses(lalr_parser("boxed", grammar), CONTENTS)
    (saved,) = cache_home.iterdir()
    marker = tmp_path / "code-ran"
    planted = pickle.dumps(_Planted(marker))
    saved.write_bytes(planted)  # where the parser is read from
    saved.with_suffix(".lark").write_bytes(planted)  # where a pickling version read it from
    assert _parses(lalr_parser("boxed", grammar), CONTENTS) == reference
    assert not marker.exists()
    assert json.loads(saved.read_bytes())["format"]  # rebuilt and saved as data again


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_a_file_others_may_write_is_not_read(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grammar = builtin_grammar("boxed")
    lalr_parser("boxed", grammar)
    (saved,) = cache_home.iterdir()
    saved.chmod(0o666)
    built = _builds(monkeypatch)
    lalr_parser("boxed", grammar)
    assert built == [1]  # refused and built afresh
    assert not saved.stat().st_mode & 0o022  # and replaced by a file of the user's alone


def test_a_file_with_other_options_is_not_read(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file that names a transformer or another parser is not what this module builds.
    grammar = builtin_grammar("boxed")
    lalr_parser("boxed", grammar)
    (saved,) = cache_home.iterdir()
    for key, value in (("transformer", "os.system"), ("parser", "earley"), ("lexer_callbacks", {"A": "x"})):
        content = json.loads(saved.read_bytes())
        content["data"]["options"][key] = value
        saved.write_text(json.dumps(content), encoding="utf-8")
        saved.chmod(0o600)
        built = _builds(monkeypatch)
        lalr_parser("boxed", grammar)
        assert built == [1], key
        monkeypatch.undo()
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home.parent))
