"""The ``answer_label`` step kind (``choicebox.find.statements``): an answer label and a colon
("Antwort: C", "答案：C", "الإجابة: ب"), or an answer phrase and its payload ("Die Antwort ist (D)").

What it reads (every script, labels and phrases), what it must not read (a label without its colon, a
longer word, a payload that is no letter, several letters, a letter that is no option), and what each
of its parameters changes. The modes are rule files whose chain is this one step, with ``robust``'s
labels and phrases unless a test changes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox.find.statements import AnswerLabel
from rule_files import CONCLUSION, ROBUST, Built, one_kind, robust_step


def _step(tmp_path: Path, resolve: str = "first_step", **changed: Any) -> Built:
    return one_kind(tmp_path, "answer_label", resolve=resolve, **{**robust_step("answer_label"), **changed})


@pytest.fixture(scope="module")
def label(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("answer_label"))


@pytest.mark.parametrize(
    "output",
    [
        "Antwort: C",
        "Antwort:\nC",
        "**Antwort:** (C)",
        "答案：C",
        "答案: C",
        "综上所述，正确答案为 (C)。",  # "为", "is", as well as "是"
        "**正确选项：C**",  # "the correct option"
        "Respuesta: c",
        "Die Antwort ist (C).",
        "La respuesta es C",
        "la respuesta correcta es la C",
        "答えは C",
        "정답: C",
        "Jawaban akhir: C",  # "final answer", the qualifier after the noun
        "Respuesta final: C",
        "सही उत्तर C है।",  # "the correct answer C is": the verb after the letter
        "Letter: C",
        "Option Selected: C",
        "Conclusion: C.",
        "**Conclusion:** **C**",
        "Следовательно, ответ (C).",  # opening its clause, a label links to a bracketed letter
        "Antwort (C)",
        "Ответ — C",  # or by a spaced dash
        "Câu trả lời: C",
        "Câu trả lời đúng là C.",
        # the word for an option before the letter, in the language of the label
        "La respuesta correcta es la letra C.",
        "La respuesta correcta es la opción C.",
        "A resposta correta é a letra C.",
        "La bonne réponse est la lettre C.",
        "La risposta corretta è la lettera C.",
        "Jawaban yang benar adalah opsi C.",
        "Правильный ответ: вариант C.",
        "Правильный ответ — C.",  # a phrase links by a spaced dash too
        "Правильный ответ — это C.",
        "ดังนั้น คำตอบที่ถูกต้องคือ **C** ครับ",  # Thai, no blank between the words
        "Svar: C",
        "Відповідь: C",
        "Η σωστή απάντηση είναι η C.",
        "Răspunsul corect este C.",
        "Jawapan yang betul ialah C.",
        "Ang tamang sagot ay C.",
        # the keys of structured outputs, past the key's closing quote
        '{"selected_option": "C", "rationale": "A is wrong"}',
        '<tool_call>\n{"name": "submit", "arguments": {"answer_choice": "(C)"}}\n</tool_call>',
        "答え：C",
        "【答案】C\n\n【解析】本题考查……",  # a label in lenticular brackets
        "综上，应选C。",
        "故本题选Ｃ。",  # a full-width letter
    ],
)
def test_it_reads_the_payload_of_a_label_or_a_phrase(label: Built, output: str) -> None:
    assert label.outcome(output) == ("C", None)


def test_a_text_with_a_dotted_capital_i_is_read(label: Built) -> None:
    # "İ" lowercases to two characters: the lowercased text was refused as misaligned, and no
    # label was looked for in a Turkish response that named Istanbul.
    assert label.outcome("İstanbul'un fethi 1453 yılındadır.\n\nDoğru cevap **C** şıkkıdır.") == ("C", None)


def test_it_reads_letters_of_other_scripts(label: Built) -> None:
    assert label.outcome("الإجابة: ب") == ("B", None)


def test_a_value_before_a_closing_copula_is_that_options_content() -> None:
    # Korean and Japanese close the sentence with "is" after the value: "정답은 대동법입니다"
    # (a value is an option's content under a policy that weighs statements: robust's).
    options = {"A": "균역법", "B": "대동법", "C": "영정법", "D": "호패법"}
    assert ROBUST.outcome("따라서 정답은 **대동법**입니다. 😊", options=options) == ("B", None)
    assert ROBUST.outcome("答えは**大阪**です。", options={"A": "東京", "B": "大阪", "C": "京都"}) == ("B", None)
    # a Chinese full stop ends the value
    books = {"A": "《周髀算经》", "B": "《九章算术》", "C": "《孙子算经》"}
    assert ROBUST.outcome("因此，正确答案是《九章算术》。", options=books) == ("B", None)
    # Turkish's copula is a suffix after an apostrophe, on ASCII values too
    turkish = {"A": "1.23 m/s²", "B": "2.45 m/s²", "C": "Ankara", "D": "İzmir"}
    assert ROBUST.outcome("Doğru cevap 2,45 m/s²'dir.", options=turkish) == ("B", None)
    assert ROBUST.outcome("Doğru cevap Ankara'dır.", options=turkish) == ("C", None)
    # "is not" is no copula to take off: the value names no option
    assert ROBUST.outcome("정답은 대동법이 아닙니다.", options=options) == (None, "no_answer")


def test_a_cyrillic_lookalike_letter_counts_only_before_that_options_text() -> None:
    # "В" (Cyrillic) is drawn like "B"; in a Cyrillic listing it is the third option (А, Б, В).
    options = {"A": "Закон Ома", "B": "Закон Кулона", "C": "Закон Фарадея", "D": "Закон Ампера"}
    assert ROBUST.outcome("**Правильный ответ: В) Закон Кулона.**", options=options) == ("B", None)
    assert ROBUST.outcome("Правильный ответ: В) Закон Фарадея.", options=options) == (None, "no_answer")
    assert ROBUST.outcome("Правильный ответ: В.", options=options) == (None, "no_answer")


_ROBUST_LABELS = AnswerLabel(**robust_step("answer_label"))
# Pieces of robust's labels and phrases, with the letters their gates look for alone.
_GATE_PIECES = [
    "α", "απάντηση", "η σωστή απάντηση είναι", "в", "відповідь", "правильна відповідь", "á", "válasz",
    "a helyes válasz", "ค", "คำตอบ", "คำตอบคือ", "答案", "答", "정답은", "svar", "rätt svar är", "ä",
    "antwort", ":", "：", " — ", " ", "\n", "c", "(c)", "x",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_GATE_PIECES), max_size=10).map("".join))
def test_the_gate_before_the_label_pattern_never_hides_a_match(text: str) -> None:
    # The gate is a necessary condition of the pattern: wherever the pattern matches, it is open.
    if _ROBUST_LABELS._pattern.search(text) is not None:
        assert any(map(text.__contains__, _ROBUST_LABELS._ascii_gates)) or _ROBUST_LABELS._holds_other_word(text)


def test_a_greek_letter_alone_does_not_open_the_gate_of_a_greek_label() -> None:
    assert not _ROBUST_LABELS._holds_other_word("the α particle is a helium nucleus")
    assert _ROBUST_LABELS._holds_other_word("η σωστή απάντηση είναι η c")


def test_the_last_label_counts(label: Built) -> None:
    assert label.read("Antwort: A\nAntwort: C") == "C"


@pytest.mark.parametrize(
    "output",
    [
        "Antwort C",  # a label needs its colon (or a spaced dash, or a bracketed letter)
        "Antworten: C",  # a longer word
        "Antwort: optC",  # no letter: a value
        "Antwort: nicht B",
        "Antwort: A oder B",
        "The answer is C.",
        "It shows habitat selection (C) and care.",  # a label word inside a clause is prose
        "Die Antwort (C) ist falsch.",  # the same: "Antwort" does not open its clause
        "Conclusion: A is wrong, it ignores friction.",  # a letter that opens a clause is its subject
        "In conclusion, the energy is conserved.",  # no colon, no letter
    ],
)
def test_it_reads_no_answer_without_a_labelled_letter(label: Built, output: str) -> None:
    assert label.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize(
    "output",
    [
        "Antwort: A, B",
        "Antwort: (A) or (B)",
        # "or" and "and" in the label's own language
        "Ответ: B или C.",
        "Đáp án: B hoặc C.",
        "Respuesta: B o C",
        "Réponse : B ou C",
        "Antwort: B oder C",
        "答案：B或C",
        "Jawaban: B atau C",
        "答案：B、C",  # the enumeration comma
        "정답은 B와 C입니다.",  # Korean "and"
        "답: B 또는 C",
        "答えはBとCです。",  # Japanese "and"
    ],
)
def test_several_letters_are_ambiguous(label: Built, output: str) -> None:
    assert label.outcome(output) == (None, "ambiguous")


def test_letters_listed_each_with_a_value_are_ambiguous_after_a_label_too(label: Built) -> None:
    assert label.outcome("Antwort: A: 100 MHz, B: 50 kHz, C: 12.5 kHz") == (None, "ambiguous")
    assert label.outcome("Antwort: C: 12.5 kHz") == ("C", None)


def test_a_capital_i_before_a_modal_is_the_pronoun_unless_be_follows(label: Built) -> None:
    ten = {letter: f"opt{letter}" for letter in "ABCDEFGHIJ"}
    assert label.read("Conclusion: I would not trust any of these options.", options=ten) is None
    assert label.read("Conclusion: I can't tell.", options=ten) is None
    assert label.read("Conclusion: I would be the best fit.", options=ten) == "I"
    assert label.read("Conclusion: I", options=ten) == "I"


def test_a_capital_e_between_letters_is_option_e_not_the_word_e(label: Built) -> None:
    five = {"A": "optA", "B": "optB", "C": "optC", "D": "optD", "E": "optE"}
    assert label.outcome("Respuesta: B e C", options=five) == (None, "ambiguous")  # "B and C"
    assert label.outcome("Respuesta:\nE\nE\nE", options=five) == ("E", None)  # no "e" joins them


def test_a_letter_that_is_not_an_option_is_not_an_answer_under_a_weighing_policy(tmp_path: Path) -> None:
    assert _step(tmp_path, resolve="last_position").outcome("Antwort: E") == (None, "not_an_option")


def test_a_letter_that_is_not_an_option_is_not_an_answer(label: Built) -> None:
    assert label.outcome("Antwort: E") == (None, "not_an_option")


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_labels_need_a_colon_after_them(tmp_path: Path, label: Built) -> None:
    assert label.read("Respuesta: B") == "B"
    german = _step(tmp_path, labels=["antwort"], phrases=[])
    assert german.read("Respuesta: B") is None
    assert german.read("Antwort: B") == "B"
    assert german.read("Die Antwort ist (D).") is None  # a phrase, not a label


def test_parameter_phrases_need_no_colon(tmp_path: Path, label: Built) -> None:
    assert label.read("Die richtige Antwort ist (D).") == "D"
    plain = _step(tmp_path, phrases=["die antwort ist"])
    assert plain.read("Die richtige Antwort ist (D).") is None
    assert plain.read("Die Antwort ist (D).") == "D"


def test_parameter_adverbs_may_follow_a_phrase(tmp_path: Path, label: Built) -> None:
    for output in ("Die richtige Antwort ist daher **D**.", "Die Antwort ist also D.",
                   "La respuesta correcta es, por lo tanto, la D.", "La risposta corretta è quindi la D."):  # fmt: skip
        assert label.read(output) == "D", output
    assert label.read("Die Antwort ist also nicht D, sondern C.") != "D"
    assert label.outcome("La respuesta correcta es, por lo tanto, la B o la C.") == (None, "ambiguous")  # an article each
    assert _step(tmp_path, adverbs=[]).read("Die richtige Antwort ist daher **D**.") is None
    assert _step(tmp_path, adverbs=[]).read("Die richtige Antwort ist **D**.") == "D"


@pytest.mark.parametrize(
    ("output", "lenient_reads", "strict_reads"),
    [("Antwort: C", "C", "C"), ("Antwort: (C)", "C", "C"), ("Antwort: C. optC", "C", None), ("Antwort: C weil", "C", None)],
)
def test_parameter_payload_strict_reads_a_lone_letter_ending_its_line(
    tmp_path: Path, label: Built, output: str, lenient_reads: str, strict_reads: str | None
) -> None:
    assert label.read(output) == lenient_reads
    assert _step(tmp_path, payload="strict").read(output) == strict_reads


def test_parameter_which_picks_the_first_or_the_last_label(tmp_path: Path, label: Built) -> None:
    assert label.read("Antwort: A\nAntwort: C") == "C"
    assert _step(tmp_path, which="first").read("Antwort: A\nAntwort: C") == "A"



@pytest.mark.parametrize(
    "output", ["答え：A\n最終的な答え：C", "Respuesta: A\nRespuesta final: C", "Jawaban: A\nJawaban akhir: C", "정답: A\n최종 답: C"]
)
def test_parameter_final_qualifiers_make_a_label_an_explicit_final_marker(tmp_path: Path, output: str) -> None:
    # Two labels one after the other are a run of answers (rule 2), unless the later is final.
    assert _step(tmp_path, resolve=CONCLUSION).read(output) == "C"
    assert _step(tmp_path, resolve=CONCLUSION, final_qualifiers=[]).outcome(output) == (None, "conflicting")


def test_reasoning_in_a_script_without_spaces_is_no_run(tmp_path: Path) -> None:
    # "答え：E ... 答え：B" with sentences between: the later answer revises the first (rule 1).
    output = "答え：E\n\n日本国憲法は1946年11月3日に公布されました。ただし、設問は施行日です。\n\n答え：B"
    assert _step(tmp_path, resolve=CONCLUSION).read(output) == "B"
    assert _step(tmp_path, resolve=CONCLUSION).outcome("答え：E\n答え：B") == (None, "conflicting")
