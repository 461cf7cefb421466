"""Tests for choicebox.find._boxed: finding boxes in an output and reading what each one says."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox._resources import builtin_grammar
from choicebox.find._boxed import Box, BoxReading, _read_fast, _read_slow, find_boxes, read_box

# ---------------------------------------------------------------------------------------------
# read_box


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("B", "B"),
        ("b", "b"),  # case kept: the caller decides whether lowercase counts
        ("Ｂ", "B"),  # fullwidth, via NFKC
        ("  C  ", "C"),
        ("\nC\n", "C"),
        (r"\text{B}", "B"),
        (r"\textbf{B}", "B"),
        (r"\mathrm{B}", "B"),
        (r"\mathbf{B}", "B"),
        (r"\textit{B}", "B"),
        (r"\textsf{B}", "B"),
        (r"\texttt{B}", "B"),
        (r"\mathit{B}", "B"),
        (r"\operatorname{B}", "B"),
        (r"\text {B}", "B"),
        (r"\text{\textbf{(B)}}", "B"),
        (r"\textbf{\text{ ( B ) }}", "B"),
        ("{B}", "B"),
        ("{{B}}", "B"),
        ("(B)", "B"),
        ("((B))", "B"),
        ("[C]", "C"),
        ("[(C)]", "C"),
        ("**D**", "D"),
        ("$D$", "D"),
        (r"$\mathbf{D}$", "D"),
        (r"**\text{(D)}**", "D"),
        (r"\text{B}\text{}", "B"),
        (r"\boxed{C}", "C"),  # an inner box is a wrapper like any other
        (r"\color{red}{B}", "B"),
        (r"\textcolor{red}{B}", "B"),
        (r"\left( B \right)", "B"),
        (r"\,B\;", "B"),
        ("Option B", "B"),
        ("Choice B", "B"),
        ("option (B)", "B"),
        ("Answer: B", "B"),
        ("The answer is B.", "B"),
        ("B.", "B"),
        ("B)", "B"),
        ("B:", "B"),
        # Digits around a letter read as that letter.
        ("2B", "B"),
        ("B2", "B"),
        ("1. B", "B"),
        ("B or B", "B"),  # one distinct letter is one answer
    ],
)
def test_read_letter(content: str, letter: str) -> None:
    reading = read_box(content)
    assert reading.kind == "letter"
    assert reading.letters == (letter,)
    assert reading.text == letter


@pytest.mark.parametrize(
    ("content", "letter", "text"),
    [
        ("C: text", "C", "text"),
        ("C) text", "C", "text"),
        ("(C) text", "C", "text"),
        ("C. text", "C", "text"),
        ("C - text", "C", "text"),
        ("C : text", "C", "text"),
        ("(C): some text", "C", "some text"),
        ("[C] text", "C", "text"),
        (r"\text{C: text}", "C", "text"),
        (r"\textbf{C)} Karyotyping", "C", "Karyotyping"),
        (r"E: \text{A polygenic risk score for the disease}", "E", "A polygenic risk score for the disease"),
        ("C: Vitamin A deficiency", "C", "Vitamin A deficiency"),
        ("C) organ failure", "C", "organ failure"),
        ("Option C: Karyotyping", "C", "Karyotyping"),
        ("b) lower case label", "b", "lower case label"),
        ("C:   many    spaces  ", "C", "many spaces"),
    ],
)
def test_read_labelled(content: str, letter: str, text: str) -> None:
    reading = read_box(content)
    assert reading.kind == "labelled"
    assert reading.letters == (letter,)
    assert reading.text == text


def test_e_coli_keeps_the_raw_text() -> None:
    # Read as label E with text "coli"; raw lets the caller see "E. coli" is an option text.
    reading = read_box("E. coli")
    assert reading.raw == "E. coli"
    assert reading.kind in {"labelled", "value"}


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("Karyotyping", "Karyotyping"),
        (r"\text{Polymerase Chain Reaction (PCR)}", "Polymerase Chain Reaction (PCR)"),
        ("A polygenic risk score", "A polygenic risk score"),
        ("I think", "I think"),
        ("An apple", "An apple"),
        (r"\frac{1}{2}", r"\frac{1}{2}"),
        ("x^{2}", "x^{2}"),
        ("\\text{  lots   of\n space }", "lots of space"),
        ("C) or gate", "C) or gate"),
        ("None of the above", "None of the above"),
    ],
)
def test_read_text(content: str, text: str) -> None:
    reading = read_box(content)
    assert reading == BoxReading(kind="value", letters=(), text=text, raw=text)


@pytest.mark.parametrize(
    ("content", "letters"),
    [
        ("B, C", ("B", "C")),
        ("B and C", ("B", "C")),
        ("A or B", ("A", "B")),
        ("A/B", ("A", "B")),
        ("A & B", ("A", "B")),
        ("A; B", ("A", "B")),
        ("A, B, and C", ("A", "B", "C")),
        ("A, B, or C", ("A", "B", "C")),
        ("A and/or B", ("A", "B")),
        ("A) or B)", ("A", "B")),
        ("(A) and (B)", ("A", "B")),
        ("(A, B)", ("A", "B")),
        (r"\{A, B\}", ("A", "B")),
        ("[A or B]", ("A", "B")),
        ("both A and C", ("A", "C")),
        ("Options B and C", ("B", "C")),
        (r"\text{B} and \text{C}", ("B", "C")),
        ("A, B, A", ("A", "B")),  # distinct, in order
        ("A-D", ("A", "B", "C", "D")),  # a range names every letter in it
        ("A - C", ("A", "B", "C")),
        ("D-A", ("D", "A")),
        ("A) Karyotyping, B) PCR", ("A", "B")),  # two labelled options is still two answers
    ],
)
def test_read_letters(content: str, letters: tuple[str, ...]) -> None:
    reading = read_box(content)
    assert reading.kind == "hedge"
    assert reading.letters == letters


@pytest.mark.parametrize(
    "content",
    ["", " ", "\n\t", r"\text{}", r"\text{ }", "{}", "**", "$$", r"\,", "{", "}", r"\text{B", "B}"],
)
def test_read_empty(content: str) -> None:
    # Empty and unbalanced contents are no answer.
    reading = read_box(content)
    assert reading.kind == "empty"
    assert reading.letters == ()
    assert reading.text == ""


def test_unbalanced_keeps_raw() -> None:
    assert read_box(r"\text{B").raw == r"\text{B"


def test_long_content_is_text_without_parsing() -> None:
    content = "A " + "x " * 5_000
    reading = read_box(content)
    assert reading.kind == "value"
    assert reading.raw == " ".join(content.split())


@pytest.mark.parametrize(
    "content",
    [
        "B",
        " b ",
        "(C)",
        r"\text{C}",
        r"\textbf{ (C) }",
        r"\mathrm{C}",
        "C: Karyotyping",
        "(C) Karyotyping and PCR",
        "C) organ failure",
        "C. text here",
        "E. coli",
        "a. lower",
        "C : spaced label",
    ],
)
def test_fast_path_agrees_with_grammar(content: str) -> None:
    fast = _read_fast(content)
    assert fast is not None, "the fast path should recognise this common content"
    assert fast == _read_slow(content)


def test_grammar_compiles_strict() -> None:
    pytest.importorskip("interegular", reason="lark's strict mode needs interegular")
    from lark import Lark

    Lark(builtin_grammar("boxed"), parser="lalr", lexer="contextual", strict=True)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_read_box_never_raises(content: str) -> None:
    reading = read_box(content)
    assert reading.kind in {"letter", "labelled", "hedge", "value", "empty"}
    if reading.kind == "hedge":
        assert len(reading.letters) >= 2
    elif reading.kind in {"letter", "labelled"}:
        assert len(reading.letters) == 1


# Strings built from LaTeX-ish pieces reach the interesting paths far more often than st.text().
_LATEXISH = st.lists(
    st.sampled_from(
        ["A", "b", " ", "(", ")", "[", "]", "{", "}", "\\", "text", "boxed", ":", ".", ",", "-",
         "and", "or", "$", "*", "1", "Option ", "\\{", "^", "color", "\\boxed{", "\\text{"]
    ),
    max_size=40,
).map("".join)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(_LATEXISH)
def test_read_box_never_raises_on_latex_like_text(content: str) -> None:
    read_box(content)
    find_boxes(content)


# ---------------------------------------------------------------------------------------------
# find_boxes


def _contents(text: str) -> list[str]:
    return [box.content for box in find_boxes(text)]


@pytest.mark.parametrize(
    ("text", "contents"),
    [
        (r"so \boxed{C}.", ["C"]),
        (r"so \boxed {C}.", ["C"]),
        ("so \\boxed\n{C}.", ["C"]),
        (r"\fbox{A}", ["A"]),
        (r"$\boxed{B}$", ["B"]),
        (r"\[\boxed{\text{B}}\]", [r"\text{B}"]),
        (r"\boxed{A} then \fbox{B} then \boxed{C}", ["A", "B", "C"]),
        (r"\boxed{\frac{1}{2}}", [r"\frac{1}{2}"]),
        (r"\boxed{\{x\}}", [r"\{x\}"]),  # escaped braces neither open nor close
        (r"\boxed{a \\{b} c}", [r"a \\{b} c"]),  # \\ is a line break: the brace after is real
        (r"\boxedx{C}", []),
        ("no box here {}", []),
        (r"}}} \boxed{B}", ["B"]),  # stray closers before a box are ignored
    ],
)
def test_find_boxes_contents(text: str, contents: list[str]) -> None:
    assert _contents(text) == contents


def test_find_boxes_positions() -> None:
    text = r"x \boxed {C} y"
    assert find_boxes(text) == [Box(start=2, end=12, content="C", closed=True)]
    assert text[2:12] == r"\boxed {C}"


def test_json_escaped_box_decodes_to_a_plain_box() -> None:
    decoded = json.loads(r'"The answer is \\boxed{B}"')
    assert decoded == r"The answer is \boxed{B}"
    assert find_boxes(decoded) == [Box(start=14, end=23, content="B", closed=True)]


def test_doubled_backslash_still_finds_the_box() -> None:
    # Text that was escaped twice keeps a literal "\\boxed": the box starts at the last backslash.
    assert find_boxes(r"\\boxed{B}") == [Box(start=1, end=10, content="B", closed=True)]


def test_nested_box_reports_the_outer_one() -> None:
    text = r"\boxed{\boxed{C}} and \boxed{D}"
    assert find_boxes(text) == [
        Box(start=0, end=17, content=r"\boxed{C}", closed=True),
        Box(start=22, end=31, content="D", closed=True),
    ]
    assert read_box(find_boxes(text)[0].content).letters == ("C",)


def test_unclosed_box_runs_to_the_end() -> None:
    text = r"answer: \boxed{\text{C"
    assert find_boxes(text) == [Box(start=8, end=len(text), content=r"\text{C", closed=False)]


def test_unclosed_box_does_not_hide_a_closed_one() -> None:
    text = r"\boxed{A is wrong, so \boxed{C}"
    assert find_boxes(text) == [
        Box(start=0, end=len(text), content=r"A is wrong, so \boxed{C}", closed=False),
        Box(start=22, end=len(text), content="C", closed=True),
    ]


def test_only_the_innermost_unclosed_box_is_reported() -> None:
    text = r"\boxed{A \boxed{B \boxed{C"
    assert find_boxes(text) == [Box(start=18, end=len(text), content="C", closed=False)]


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_find_boxes_never_raises(text: str) -> None:
    boxes = find_boxes(text)
    assert [box.start for box in boxes] == sorted(box.start for box in boxes)
    for box in boxes:
        assert text.startswith(("\\boxed", "\\fbox"), box.start)
        assert box.closed or box.end == len(text)


@settings(max_examples=300, deadline=None)
@given(_LATEXISH)
def test_find_boxes_structure(text: str) -> None:
    for box in find_boxes(text):
        if box.closed:
            assert text[box.end - 1] == "}"
            assert text[box.end - 1 - len(box.content) : box.end - 1] == box.content
        else:
            assert text.endswith(box.content)


# ---------------------------------------------------------------------------------------------
# Scale: these must finish (linear time, no recursion); timings live in benchmarks/speed/boxed_scan.py


def test_scale_nested_braces() -> None:
    n = 10_000
    text = r"\boxed{" + "{" * n + "C" + "}" * n + "}"
    (box,) = find_boxes(text)
    assert box.closed
    assert box.end == len(text)
    assert box.content == "{" * n + "C" + "}" * n
    read_box(box.content)  # over the Lark limit: read as text without parsing


def test_scale_nested_boxes() -> None:
    n = 10_000
    text = r"\boxed{" * n + "C" + "}" * n
    (box,) = find_boxes(text)
    assert box.start == 0
    assert box.closed
    assert box.end == len(text)


def test_scale_unclosed_openers() -> None:
    n = 10_000
    text = r"\boxed{" * n + "C"
    (box,) = find_boxes(text)
    assert box == Box(start=7 * (n - 1), end=len(text), content="C", closed=False)


def test_scale_many_boxes() -> None:
    n = 10_000
    text = " ".join(rf"\boxed{{{'ABCD'[i % 4]}}}" for i in range(n))
    boxes = find_boxes(text)
    assert len(boxes) == n
    assert [read_box(box.content).letters[0] for box in boxes[:8]] == list("ABCDABCD")


def test_scale_five_megabytes() -> None:
    filler = "Let x = {a_i} and consider \\{y\\}. " * (5_000_000 // 30)
    text = filler + r"\boxed{\text{C}}"
    assert len(text) > 5_000_000
    (box,) = find_boxes(text)
    assert read_box(box.content).letters == ("C",)


def test_scale_five_megabytes_unclosed() -> None:
    text = r"\boxed{" + "x { y } " * 650_000
    (box,) = find_boxes(text)
    assert not box.closed
    assert read_box(box.content).kind == "value"
