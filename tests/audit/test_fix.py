"""Tests of ``fix`` (choicebox.audit.fix): safe repairs only, each listed, the gold text never moved."""

from __future__ import annotations

import gzip
import json
import re
import string
import unicodedata
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import MCQASample, MultipleChoiceSample, Template
from choicebox.audit import (
    Change,
    FixFileError,
    RowFix,
    audit,
    audit_file,
    audit_row,
    fix,
    fix_file,
    fix_row,
)
from choicebox.audit._tidy import column_layout, tidy

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"
DEFECTS = FIXTURES / "defects.jsonl"
CONTROLS = FIXTURES / "controls.jsonl"
EXAMPLES = Path(__file__).parents[2] / "examples" / "samples.jsonl"
FIXABLE = {"untidy_text", "choice_repeats_label", "prompt_options_mismatch"}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _gold(row: Any) -> str | None:
    """The gold text of a raw row, NFC and whitespace-collapsed, without a copy of its label."""
    if not isinstance(row, dict):
        return None
    if "choices" in row:
        index = row.get("answer_index")
        choices = row["choices"]
        text = choices[index] if isinstance(index, int) and 0 <= index < len(choices) else None
        letter = string.ascii_uppercase[index] if text is not None else ""
    else:
        options = row.get("options")
        if not isinstance(options, list):
            return None
        merged = {k: v for item in options if isinstance(item, dict) for k, v in item.items()}
        letter = row.get("expected_answer") or ""
        text = merged.get(letter)
    if not isinstance(text, str):
        return None
    flat = " ".join(unicodedata.normalize("NFC", text).split())
    for label in (f"{letter}) ", f"({letter}) ", f"{letter}: ", f"{letter}. "):
        flat = flat.removeprefix(label)
    return flat


def _parse(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line


@pytest.mark.parametrize("source", [DEFECTS, CONTROLS, EXAMPLES], ids=lambda p: p.name)
def test_fixed_file_reaudited_loses_the_fixable_findings(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "fixed.jsonl"
    summary = fix_file(source, output)
    before, after = _lines(source), _lines(output)
    assert len(after) == len(before)  # no row is dropped
    assert summary.rows == len(before)
    audited = {r.line: r for r in audit_file(source)}
    reaudited = {r.line: r for r in audit_file(output)}
    left = {line for line, _ in summary.left_unchanged}
    for line, result in audited.items():
        old, new = _parse(before[line - 1]), _parse(after[line - 1])
        assert _gold(old) == _gold(new), f"line {line}: the gold text moved"
        if line in left:
            assert after[line - 1] == before[line - 1]
            continue
        remaining = reaudited[line].checks & FIXABLE
        assert not remaining, f"line {line}: {reaudited[line].findings}"
        # Nothing the fix did raised a new finding, and the other findings stay.
        assert reaudited[line].checks - FIXABLE == result.checks - FIXABLE


def test_fixable_defects_in_the_fixture_are_fixed(tmp_path: Path) -> None:
    output = tmp_path / "fixed.jsonl"
    fix_file(DEFECTS, output)
    rows = [_parse(line) for line in _lines(output)]
    reaudited = {r.line: r for r in audit_file(output)}
    fixable = [
        (line, row["metadata"]["planted"])
        for line, row in enumerate(rows, start=1)
        if isinstance(row, dict) and row.get("metadata", {}).get("fixable")
    ]
    assert {check for _, check in fixable} == FIXABLE
    for line, check in fixable:
        assert check not in reaudited[line].checks, reaudited[line].findings
    label = next(r for r in rows if isinstance(r, dict) and r.get("uuid") == "d-label")
    assert label["options"] == [
        {"A": "Sydney"},
        {"B": "Canberra"},
        {"C": "Melbourne"},
        {"D": "Perth"},
    ]
    assert "\nA: Sydney\nB: Canberra\n" in label["responses_create_params"]["input"][0]["content"]
    drift = next(r for r in rows if isinstance(r, dict) and r.get("uuid") == "d-prompt-fixable")
    assert "\nC: Marble\n" in drift["responses_create_params"]["input"][0]["content"] + "\n"
    unfixable = next(
        r for r in rows if isinstance(r, dict) and r.get("uuid") == "d-prompt-unfixable"
    )
    assert unfixable == json.loads(
        next(line for line in _lines(DEFECTS) if '"d-prompt-unfixable"' in line)
    )


def test_unchanged_rows_are_written_byte_for_byte(tmp_path: Path) -> None:
    output = tmp_path / "fixed.jsonl"
    summary = fix_file(CONTROLS, output)
    assert output.read_bytes() == CONTROLS.read_bytes()
    assert summary.changed_rows == 0
    assert not (tmp_path / "fixed.jsonl.partial").exists()


def test_changed_rows_keep_the_json_layout_and_padding(tmp_path: Path) -> None:
    row = {
        "question": "Which gas is inert? ",
        "options": [{"A": " Neon"}, {"B": "Oxygen"}, {"C": None}],
        "expected_answer": "A",
        "metadata": {"source": "x"},
        "extra_column": [1, 2],
    }
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(row) + "\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    fix_file(source, output)
    text = output.read_text(encoding="utf-8")
    assert text.startswith('{"question": "Which gas is inert?", "options": [{"A": "Neon"}')
    assert json.loads(text) == {
        **row,
        "question": "Which gas is inert?",
        "options": [{"A": "Neon"}, {"B": "Oxygen"}, {"C": None}],
    }


# --- fix(sample) ---------------------------------------------------------------------------------


def _sample(options: dict[str, str], gold: str = "A", **kwargs: Any) -> MCQASample:
    return MCQASample(question="Which one?", options=options, expected_answer=gold, **kwargs)


def test_fix_lists_each_change() -> None:
    sample = _sample({"A": "A) Paris ", "B": "B) Lyon"}, metadata={"k": [1]}, extra={"x": 1})
    fixed, changes = fix(sample)
    assert dict(fixed.options) == {"A": "Paris", "B": "Lyon"}
    assert [(c.check, c.field) for c in changes] == [
        ("untidy_text", "options.A"),
        ("choice_repeats_label", "options.A"),
        ("choice_repeats_label", "options.B"),
    ]
    assert changes[0] == Change(
        check="untidy_text",
        field="options.A",
        before="A) Paris ",
        after="A) Paris",
        description="tidied the text (Unicode NFC, trimmed, whitespace)",
    )
    assert fixed.metadata is sample.metadata
    assert fixed.extra == sample.extra
    assert audit(fixed).ok


def test_fix_of_a_clean_sample_is_the_sample() -> None:
    sample = MCQASample.from_question("Which is red?", ["Mars", "Venus"], "A")
    assert fix(sample) == (sample, ())


def test_fix_never_strips_a_lone_initial() -> None:
    sample = _sample({"A": "A. Lincoln", "B": "J. Davis"})
    assert fix(sample) == (sample, ())


def test_fix_refuses_a_strip_that_makes_a_duplicate() -> None:
    sample = _sample({"A": "A) Paris", "B": "B) Lyon", "C": "paris"}, gold="C")
    fixed, changes = fix(sample)
    assert fixed is sample
    assert changes
    assert all(not c.applied for c in changes)
    assert any("duplicate_choice" in c.description for c in changes)


def test_fix_rerenders_a_drifted_prompt_only_from_a_shipped_template() -> None:
    base = MCQASample.from_question("Which is a gas?", ["Helium", "Iron", "Salt"], "A")
    drifted = attrs.evolve(base, options={"A": "Helium", "B": "Iron", "C": "Sand"})
    with_id = attrs.evolve(drifted, template=Template(template_id="boxed_letter"))
    fixed, changes = fix(with_id)
    assert [c.check for c in changes] == ["prompt_options_mismatch"]
    prompt = fixed.responses_create_params["input"][0]["content"]  # type: ignore[index]
    assert prompt.endswith("Which is a gas?\nA: Helium\nB: Iron\nC: Sand")
    assert dict(fixed.options) == dict(drifted.options)
    unknown = attrs.evolve(drifted, template=Template(template_id="my_template"))
    kept, refused = fix(unknown)
    assert kept is unknown
    assert [(c.check, c.applied) for c in refused] == [("prompt_options_mismatch", False)]
    assert "'my_template' is not a shipped template" in refused[0].description
    no_id = fix(drifted)
    assert no_id[0] is drifted
    assert "names no template" in no_id[1][0].description


def test_fix_refuses_a_prompt_that_does_not_follow_its_template() -> None:
    sample = MCQASample(
        question="Which is a gas?",
        options={"A": "Helium", "B": "Iron"},
        expected_answer="A",
        template=Template(template_id="boxed_letter"),
        responses_create_params={
            "input": [
                {"role": "user", "content": "My own words. Which is a gas?\nA: Neon\nB: Iron"}
            ]
        },
    )
    fixed, changes = fix(sample)
    assert fixed is sample
    assert "does not provably follow" in changes[0].description


def test_fix_keeps_a_question_read_from_the_prompt() -> None:
    row = {
        "responses_create_params": {
            "input": [{"role": "user", "content": "Pick one.  \nA: Tin \nB: Lead"}]
        },
        "options": [{"A": "Tin "}, {"B": "Lead"}],
        "expected_answer": "A",
    }
    result = fix_row(row)
    assert result.changed
    assert result.row["responses_create_params"] == row["responses_create_params"]
    assert "question" not in result.row
    assert result.row["options"] == [{"A": "Tin"}, {"B": "Lead"}]


def test_fix_of_the_context_choices_family() -> None:
    sample = MultipleChoiceSample(
        context="  The heart pumps ",
        choices=["A) blood", "B) air", "C)  bile"],
        answer_index=0,
        style="continuation",
        extra={"uuid": "u1"},
    )
    fixed, changes = fix(sample)
    assert fixed.context == "The heart pumps"
    assert fixed.choices == ("blood", "air", "bile")
    assert fixed.answer_index == 0
    assert fixed.extra == sample.extra
    assert {c.check for c in changes} == {"untidy_text", "choice_repeats_label"}


def test_fix_rows_that_cannot_be_decoded_are_reported() -> None:
    assert fix_row([1, 2]).problem == "not a JSON object"
    bad = {"question": "Q?", "options": [{"A": "x"}, {"B": "y"}], "expected_answer": "C"}
    result = fix_row(bad)
    assert result.row is bad
    assert result.problem is not None
    assert "not one of the option letters" in result.problem


def test_fix_refuses_non_samples() -> None:
    with pytest.raises(TypeError):
        fix("text")  # type: ignore[type-var]


_TEXT = (
    st.lists(
        st.sampled_from(["a", "b", " ", "\u00a0", "\t", "e\u0301", "\u00e9", ") ", ". "]),
        min_size=1,
        max_size=8,
    )
    .map("".join)
    .filter(lambda t: bool(t.strip()))
)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(_TEXT, min_size=2, max_size=5), gold=st.integers(0, 4), label=st.booleans())
def test_fix_never_reorders_nor_moves_the_gold(texts: list[str], gold: int, label: bool) -> None:
    letters = string.ascii_uppercase[: len(texts)]
    options = {
        letter: (f"{letter}) {text}" if label else text)
        for letter, text in zip(letters, texts, strict=True)
    }
    sample = _sample(options, gold=letters[gold % len(texts)], metadata={"m": 1})
    fixed, changes = fix(sample)
    assert fixed.letters == sample.letters
    assert fixed.expected_answer == sample.expected_answer
    assert fixed.metadata is sample.metadata
    before = " ".join(unicodedata.normalize("NFC", sample.answer_text).split())
    after = " ".join(unicodedata.normalize("NFC", fixed.answer_text).split())
    letter = sample.expected_answer
    own = re.compile(rf"^(?:\({letter}\)|\[{letter}\]|{letter}[):\].])\s*", re.IGNORECASE)
    allowed = {before}
    while own.match(before):  # only copies of its own label may go
        before = own.sub("", before, count=1)
        allowed.add(before)
    assert after in allowed
    if fixed is not sample:
        assert all(c.applied for c in changes)
        assert fix(fixed) == (fixed, ())  # a fixed sample needs no further fix
    texts = list(fixed.options.values())
    columns = column_layout(texts)
    for i, text in enumerate(texts):
        assert tidy(text, choice=True, columns=i in columns) == text or fixed is sample


# --- what fix must leave alone -------------------------------------------------------------------


def _mcqa_row(options: list[str], question: str = "Which one is right?") -> dict[str, Any]:
    return {
        "question": question,
        "options": [{chr(65 + i): text} for i, text in enumerate(options)],
        "expected_answer": "A",
    }


def test_fix_keeps_the_trace_of_an_eaten_latex_backslash() -> None:
    # "\tau_1" written without doubling its backslash reads as a tab and "au_1"; tidying the tab
    # away would leave "au_1", and nobody could tell a command was lost.
    row = _mcqa_row(["\tau_1 = 0.5 s ", "2 s", "3\u0008ullet s"])
    result = fix_row(row)
    assert result.row["options"][0] == {"A": "\tau_1 = 0.5 s "}
    assert result.row["options"][2] == {"C": "3\u0008ullet s"}
    assert not result.changed
    assert audit_row(result.row).checks == {"markup_residue"}


def test_fix_keeps_table_columns_and_part_markers() -> None:
    columns = ["Buy bonds    Increases    Inflation", "Sell bonds    Decreases    Deflation"]
    parts = ["(a) 2.84 L (b) 7.57 L", "(a) 3.00 L (b) 8.00 L", "(a) 2.50 L (b) 7.00 L"]
    for options in (columns, parts):
        row = _mcqa_row(options)
        assert fix_row(row) == RowFix(row=row)
    merged = fix_row(_mcqa_row(["Buy bonds    Increases", "Sell bonds"]))
    assert merged.row["options"][0] == {"A": "Buy bonds Increases"}  # one choice is no table


def test_fix_leaves_stale_labels_to_a_person() -> None:
    row = _mcqa_row(["(C) Increased", "(A) Decreased", "(B) Stayed the same", "(D) Fell "])
    result = fix_row(row)
    assert result.row is row
    assert result.problem is not None
    assert "lettered again" in result.problem


def test_fix_refuses_a_gzip_file_with_a_clear_message(tmp_path: Path) -> None:
    packed = tmp_path / "rows.jsonl.gz"
    packed.write_bytes(gzip.compress(CONTROLS.read_bytes()))
    with pytest.raises(FixFileError, match="gzip-compressed: decompress it first"):
        fix_file(packed, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()
