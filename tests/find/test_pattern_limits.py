"""User regexes are bounded before they compile, cached within bounds, and capped per row in
every entry point; a refused pattern is an invalid pattern, never an exception or a 24 GB compile."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from choicebox import grade
from choicebox._grading import grade_text
from choicebox._modes import default_registry
from choicebox._regex import (
    _CACHE,
    MAX_CACHED_PATTERNS,
    MAX_CACHED_SIZE,
    MAX_PATTERN_CHARS,
    MAX_PATTERN_SIZE,
    MAX_PATTERNS_PER_ROW,
    MAX_REPEAT,
    _PatternCache,
    compile_pattern,
    pattern_problem,
    pattern_size,
)
from choicebox._templates import templates
from choicebox.audit import AuditConfig
from choicebox.cli import main
from choicebox.find.regex import RegexStep
from choicebox.testing import mcqa_sample

# --- the limits ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("a{1000000000}", f"the repeat count 1,000,000,000 is over the limit of {MAX_REPEAT:,}"),
        ("a{10000000}", "the repeat count 10,000,000"),
        (f"a{{{MAX_REPEAT + 1}}}", f"the repeat count {MAX_REPEAT + 1:,}"),
        ("a{5,99999999999999999999999}", "the repeat count over 1,000,000,000,000"),
        ("[a-z]{,100000}", "the repeat count 100,000"),
        (r"\p{L}{5000}", "the repeat count 5,000"),
        ("(?:a{1000}){1000}", "expands to about 1,000,000 units"),
        ("((a{100}){100}){100}", "expands to about 1,000,000 units"),
        ("(?:[a-z]{20}|x){1000}", "expands to about 21,000 units"),
        ("(?P<outer>(?<=x)(?:a{900}){900})", "expands to about 810,001 units"),
        ("(?#a comment)(?:a{999}){999}", "expands to about 998,001 units"),
        ("(?:a{100}){201}", "expands to about 20,100 units"),
        ("(?:a{900}b)(?i){300}", "expands to about 270,300 units"),  # flags are no atom
        ("x" * (MAX_PATTERN_CHARS + 1), f"is {MAX_PATTERN_CHARS + 1:,} characters long"),
        ("|".join(f"w{i}" for i in range(20_000)), "characters long"),
    ],
)
def test_a_pattern_past_a_limit_is_refused_before_it_compiles(source: str, reason: str) -> None:
    started = time.perf_counter()
    compiled = compile_pattern(source)
    assert time.perf_counter() - started < 0.5  # a{1000000000} once grew a server to 24 GB
    assert compiled.pattern is None
    assert compiled.error is not None
    assert compiled.error.startswith("invalid pattern ")
    assert reason in compiled.error
    assert len(compiled.error) < 300  # the pattern is shown shortened, never whole


@pytest.mark.parametrize(
    "source",
    [
        f"a{{{MAX_REPEAT}}}",
        "(?:a{100}){200}",
        "x" * MAX_PATTERN_CHARS,
        "(?P<foo>(?P<bar>a){100}){100}",  # group names are no part of the size
        r"(?i)answer\s*[:：]\s*\(?(?P<answer>[A-J])\)?",
        r"[^{}]{0,40}?\{(?:\d{1,3}(?:,\d{3})*)\}",
        "[{5000}]",  # braces in a class are literal: no repeat at all
        r"\{5000\}",
        "(?i)(?:colou?r){e<=1}",
    ],
)
def test_a_pattern_within_the_limits_compiles(source: str) -> None:
    assert pattern_problem(source) is None
    assert compile_pattern(source).pattern is not None


def test_every_shipped_pattern_is_well_within_the_limits() -> None:
    sources: list[str] = []
    for template in templates().values():
        sources += template.output_regex
    for mode in default_registry():
        sources += [p for e in mode.chain if isinstance(e.step, RegexStep) for p in e.step.pattern]
    for check in AuditConfig.default().checks.values():
        sources += [f["instruction"] for f in check.params.get("formats", [])]
    assert len(sources) >= 4
    for source in sources:
        largest, size = pattern_size(source)
        assert largest <= MAX_REPEAT // 10, source
        assert size <= MAX_PATTERN_SIZE // 10, source


_ATOMS = st.sampled_from(
    ["a", "xy", ".", "[a-z]", "[^{}]", "[]a]", "[[:alpha:]]", "[{5}]", r"\d", r"\p{L}", r"\{",
     r"\1", "(?i)", "(?#c{9999})", " ", "#", "{", "{,}", "^"]
)  # fmt: skip
_COUNTS = st.sampled_from(
    ["", "", "*", "+?", "{2}", "{30}", "{0,100}", "{,1000}", "{300,}", "{1000}", "{1000}+", "{5,20}?"]
)


def _wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    prefixes = st.sampled_from(["", "?:", "?P<g>", "?=", "?!", "?>", "?i:", "?x:", "?|"])
    group = st.tuples(prefixes, st.lists(inner, min_size=1, max_size=3)).map(
        lambda pair: f"({pair[0]}{'|'.join(pair[1])})"
    )
    return st.tuples(group | inner, _COUNTS).map("".join)


_PATTERNS = st.recursive(
    st.tuples(_ATOMS, _COUNTS).map("".join),
    lambda inner: st.lists(_wrap(inner), min_size=1, max_size=4).map("".join),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PATTERNS, st.sampled_from([0, regex.VERBOSE]))
def test_a_pattern_the_limits_accept_compiles_quickly(source: str, flags: int) -> None:
    assume(pattern_problem(source) is None)
    started = time.perf_counter()
    with contextlib.suppress(regex.error):
        regex.compile(source, flags | regex.V0, cache_pattern=False)
    assert time.perf_counter() - started < 0.5  # the worst seen in 90,000 such patterns: 35 ms


def test_verbose_spacing_cannot_hide_a_repeat() -> None:
    # Under (?x) the space means nothing, so {5000} repeats the a; both readings are measured.
    assert "repeat count 5,000" in (pattern_problem("(?x)a {5000}") or "")
    assert "expands to about" in (pattern_problem("(?x)(?:a{30} ) {30} # c\n {30}") or "")


def test_the_size_estimate_multiplies_nested_repeats_and_sums_branches() -> None:
    assert pattern_size("abc") == (0, 3)
    assert pattern_size("(?:ab|cd){3}") == (3, 12)
    assert pattern_size("(?:(?:a){4}){5}") == (5, 20)
    assert pattern_size("a*b+c?") == (0, 6)  # the quantifier characters count one each
    assert pattern_size(r"[\]a-z]{7}") == (7, 7)  # a class is one unit whatever it holds


# --- the cache -----------------------------------------------------------------------------------


def test_the_cache_drops_the_least_recently_used_past_either_bound() -> None:
    cache = _PatternCache(max_entries=3, max_size=100)
    entries = {name: compile_pattern(name) for name in "abcde"}
    for name in "abc":
        cache.put((name, 0), entries[name], 10)
    assert cache.get(("a", 0)) is entries["a"]  # a is now the most recently used
    cache.put(("d", 0), entries["d"], 10)
    assert cache.get(("b", 0)) is None
    assert len(cache) == 3
    cache.put(("e", 0), entries["e"], 85)  # over the size bound: c, then a, the oldest, go
    assert cache.get(("c", 0)) is None
    assert cache.get(("a", 0)) is None
    assert cache.get(("d", 0)) is entries["d"]
    assert cache.get(("e", 0)) is entries["e"]
    assert cache.size <= 100


def test_the_shared_cache_stays_within_its_bounds_on_large_patterns() -> None:
    count = MAX_CACHED_SIZE // MAX_PATTERN_SIZE + 3
    for i in range(count):
        # (1 + 98) * 200 = 19,800 units each, just within MAX_PATTERN_SIZE
        assert compile_pattern(f"(?:{chr(0x4E00 + i)}a{{98}}){{200}}").pattern is not None
    assert len(_CACHE) <= MAX_CACHED_PATTERNS
    assert _CACHE.size <= MAX_CACHED_SIZE


def test_a_cached_pattern_is_returned_again() -> None:
    assert compile_pattern("cached (x)") is compile_pattern("cached (x)")


# --- every place a pattern comes from ------------------------------------------------------------
# (a rule file's own pattern, and the regex budget its patterns share: tests/find/kinds/test_regex.py)


def test_a_row_pattern_past_a_limit_is_an_invalid_regex_verdict() -> None:
    sample = mcqa_sample(output_regex="a{1000000000}")
    started = time.perf_counter()
    verdict = grade(sample, "no answer in here")
    assert time.perf_counter() - started < 1.0
    assert verdict.failure == "invalid_regex"
    assert "the repeat count 1,000,000,000" in verdict.detail
    # A row's bad pattern never costs the answer the mode's chain reads.
    assert grade(sample, r"\boxed{B}").reward == 1.0


def _sample_with_patterns(count: int) -> Any:
    return mcqa_sample(output_regex=[r"Pick:\s*([A-D])"] * count)


def test_a_sample_with_more_patterns_than_the_cap_runs_none_of_them() -> None:
    verdict = grade(_sample_with_patterns(MAX_PATTERNS_PER_ROW + 1), "Pick: B")
    assert verdict.extracted_answer is None
    assert verdict.failure == "invalid_regex"
    assert f"{MAX_PATTERNS_PER_ROW + 1} patterns" in verdict.detail
    assert verdict.errors == (verdict.detail,)
    chained = grade(_sample_with_patterns(MAX_PATTERNS_PER_ROW + 1), r"\boxed{B}")
    assert chained.reward == 1.0
    assert len(chained.errors) == 1  # the mode's chain graded; the skipped patterns are noted


def test_a_sample_at_the_cap_runs_its_patterns() -> None:
    verdict = grade(_sample_with_patterns(MAX_PATTERNS_PER_ROW), "Pick: B")
    assert verdict.extracted_answer == "B"
    assert verdict.step == "template_regex"


def test_grade_text_applies_the_cap_too() -> None:
    mode = default_registry().get("strict_single_letter_boxed")
    options = {"A": "a", "B": "b"}
    many = (r"Pick:\s*([A-D])",) * (MAX_PATTERNS_PER_ROW + 1)
    verdict = grade_text("Pick: B", options, "B", mode, output_regex=many)
    assert verdict.extracted_answer is None
    assert "patterns" in verdict.detail
    ok = grade_text("Pick: B", options, "B", mode, output_regex=many[:MAX_PATTERNS_PER_ROW])
    assert ok.extracted_answer == "B"


def test_the_grade_command_applies_the_cap(tmp_path: Path) -> None:
    row = {
        "question": "Which?",
        "options": [{"A": "a"}, {"B": "b"}],
        "expected_answer": "B",
        "responses_create_params": {"input": []},
        "response": "Pick: B",
        "template_metadata": {"output_regex": [r"Pick:\s*([A-D])"] * (MAX_PATTERNS_PER_ROW + 1)},
    }
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps(row) + "\n" + json.dumps({**row, "uuid": "a{1000000000}"}) + "\n")
    huge = {**row, "template_metadata": {"output_regex": "a{1000000000}"}}
    with open(source, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(huge) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["grade", str(source), "-o", str(out), "--workers", "1", "-q"]) == 0
    graded = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["grading_failure"] for r in graded] == ["invalid_regex"] * 3
    assert f"{MAX_PATTERNS_PER_ROW + 1} patterns" in graded[0]["grading_detail"]
    assert "the repeat count 1,000,000,000" in graded[2]["grading_detail"]


def test_a_timed_out_pattern_is_named_shortly() -> None:
    source = "(a|aa)+$" + "x?" * 900
    verdict = grade(mcqa_sample(output_regex=source), "a" * 5000 + "!", regex_timeout=0.01)
    assert verdict.failure == "regex_timeout"
    assert len(verdict.detail) < 200


def test_flag_names_are_the_regex_engines_flags() -> None:
    """``_regex`` spells the flags with ``re``'s values so as not to import ``regex`` until a
    pattern is compiled: they must be the engine's."""
    from choicebox._regex import FLAG_NAMES, IGNORECASE

    assert FLAG_NAMES == {
        "ignorecase": regex.IGNORECASE,
        "multiline": regex.MULTILINE,
        "dotall": regex.DOTALL,
        "verbose": regex.VERBOSE,
    }
    assert IGNORECASE == regex.IGNORECASE


def test_grading_without_patterns_does_not_import_the_regex_engine() -> None:
    script = """
import sys
from choicebox import MCQASample, grade
sample = MCQASample(question="Q?", options={"A": "x", "B": "y"}, expected_answer="B")
assert grade(sample, "The answer is (B).", mode="robust").correct
assert "regex" not in sys.modules, "regex was imported"
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
