"""The inputs of ``benchmarks/hostile/fuzz.py``: hostile model outputs and hostile wire rows.

``generate(seed, index)`` is a pure function: ``random.Random(f"{seed}:{index}")`` draws
everything, so an input is found again from its index alone (``fuzz.py show --index I``).
"""

from __future__ import annotations

import random
from typing import Any

# Mode names a row may carry (fuzz.py grades outputs in every built-in mode, found at run time).
MODES = (
    "strict_single_letter_boxed",
    "lenient_boxed",
    "lenient_answer_colon",
    "lenient_answer_colon_md",
    "robust",
)
TEMPLATES = ("boxed_letter", "boxed_letter", "boxed_letter", "answer_colon", "answer_is")

# --- generating outputs --------------------------------------------------------------------------

DIGIT_ZEROS = [0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xBE6, 0xE50, 0xF20,
               0x1040, 0x17E0, 0x1810, 0xFF10, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7F6]  # fmt: skip
NFKC_DIGITS = ["⁰¹²³⁴⁵⁶⁷⁸⁹", "₀₁₂₃₄₅₆₇₈₉", "⓪①②③④⑤⑥⑦⑧⑨"]
EXPONENT_MARKS = ["e", "E", "e", "E", "ｅ", "Ｅ", "ℯ", "𝐞", "ᵉ"]
SIGNS = ["", "", "", "-", "+", "−", "－", "﹣", "＋"]
RUNS = ["$", "\\boxed{", "{", "}", "\n", " ", "\t", "*", "_", "(", ")", "[", "]", "\\", ":",
        "：", "|", "/", ",", ".", "-", "$ ", "\\$", "\\{", "{a", "\\boxed", "\\fbox{", "\\text{",
        "**", "\r\n", "\u00a0", "\u3000", "or ", "A ", "1,", "e", "<", ">"]  # fmt: skip
PHRASES = ["Answer:", "Answer: ", "**Answer:**", "__Answer__:", "answer:", "ANSWER IS ",
           "The answer is", "The answer is ", "the correct option is ", "Final answer:",
           "final answer: ", "Final Answer: $\\boxed{", "答案：", "答案是", "答えは", "정답: ",
           "Die Antwort ist ", "La respuesta es", "Ответ:", "الإجابة: ", "উত্তর:", "उत्तर है ",
           "<answer>", "</answer>", "<think>", "</think>", "<choice>", "</choice>", "\\boxed{",
           "}", "\\boxed{A}", "\\boxed{B}", "(B)", "option C", "Option D:", "A or B", "A/B",
           "B, C and D", "A-D", "\\text{", "\\fbox{", "\\frac{1}{2}", "\\(", "\\)", "$D$",
           "I'm sorry, I can't help with that.", "\\boxed{\\text{C}}", "\\boxed{C: ", "E. coli",
           "Answer: I think it's B"]  # fmt: skip
LETTERS = [*"ABCDEFGHIJabcdefghij", "Ａ", "Ｂ", "ｃ", "أ", "ب", "ج", "د", "অ", "ব", "ড", "ঢ"]
WORDS = ["red", "green", "blue", "PCR", "E. coli", "Reverse transcription PCR",
         "none of the above", "all of the above", "Tl ⊃ El", "(I), (III) and (IV)", "ELISA", "x",
         "A", "I", "answer"]  # fmt: skip


def _size(rng: random.Random, big: float) -> int:
    if rng.random() < big:
        return int(10 ** rng.uniform(2.7, 3.9))  # 500 .. 8,000
    return int(10 ** rng.uniform(0, 2.3))  # 1 .. 200


def _digits(rng: random.Random, n: int) -> str:
    if rng.random() < 0.2:
        table = rng.choice(NFKC_DIGITS)
        return "".join(rng.choice(table) for _ in range(n))
    zero = rng.choice(DIGIT_ZEROS) if rng.random() < 0.5 else 0x30
    return "".join(chr(zero + rng.randrange(10)) for _ in range(n))


def _number(rng: random.Random, big: float) -> str:
    n = rng.choice([1, 1, 2, 3, 17, 309, 400]) if rng.random() > big else _size(rng, 1.0)
    mantissa = _digits(rng, n)
    shape = rng.random()
    if shape < 0.2:
        mantissa = mantissa[:1] + "." + _digits(rng, rng.randint(1, 5))
    elif shape < 0.3:
        groups = [_digits(rng, 3) for _ in range(rng.randint(1, 4))]
        mantissa = ",".join([mantissa[:3], *groups])
    out = rng.choice(SIGNS) + mantissa
    if rng.random() < 0.6:
        exponent = str(rng.choice([1, 5, 8, 23, 308, 309, 400, 401, 999, 4300, 99999999]))
        if rng.random() < 0.3:
            exponent = _digits(rng, len(exponent))
        out += rng.choice(EXPONENT_MARKS) + rng.choice(["", "", "-", "+", "−"]) + exponent
    return out


def _unicode(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.03:
            out.append(chr(rng.randrange(0xD800, 0xE000)))  # a lone surrogate
        elif r < 0.1:
            out.append(chr(rng.randrange(0x300, 0x370)))  # combining marks
        elif r < 0.6:
            out.append(chr(rng.randrange(0x20, 0x3000)))
        else:
            code = rng.randrange(0x20, 0x30000)
            out.append("x" if 0xD800 <= code < 0xE000 else chr(code))
    return "".join(out)


def _option_texts(rng: random.Random, count: int, big: float) -> list[str]:
    options = []
    for _ in range(count):
        r = rng.random()
        if r < 0.35:
            options.append(_number(rng, big))
        elif r < 0.45:
            options.append(_digits(rng, _size(rng, big)) + rng.choice(["", "", "x", ".", "e"]))
        elif r < 0.55:
            options.append(rng.choice(PHRASES).strip() or "p")
        elif r < 0.6:
            options.append(_unicode(rng, rng.randint(1, 12)).strip() or "u")
        else:
            suffix = "" if rng.random() < 0.7 else f" {rng.randint(0, 99)}"
            options.append(rng.choice(WORDS) + suffix)
    return options


def _text(rng: random.Random, options: list[str], big: float) -> tuple[str, list[str]]:
    tags, parts = [], []
    kinds = ["number", "digits", "run", "unicode", "phrase", "letter", "option", "word"]
    for kind in rng.choices(kinds, [18, 8, 22, 8, 20, 10, 8, 6], k=rng.randint(1, 6)):
        tags.append(kind)
        if kind == "number":
            parts.append(_number(rng, big))
        elif kind == "digits":
            parts.append(_digits(rng, _size(rng, big)) + rng.choice(["", "x", "}", "$", "e"]))
        elif kind == "run":
            run = rng.choice(RUNS)
            parts.append(run * max(1, _size(rng, big) // len(run)))
            tags[-1] = f"run[{run!r}]"
        elif kind == "unicode":
            parts.append(_unicode(rng, _size(rng, big)))
        elif kind == "phrase":
            parts.append(rng.choice(PHRASES))
        elif kind == "letter":
            parts.append(rng.choice(LETTERS))
        elif kind == "option":
            parts.append(rng.choice(options))
        else:
            parts.append(rng.choice(WORDS))
    glue = "" if rng.random() < 0.7 else rng.choice(["", " ", "\n"])
    return glue.join(parts), tags


# --- generating rows -----------------------------------------------------------------------------

PATTERNS = ["a{1000000000}", "a{10000000}", "(?:a{1000}){1000}", "(a+)+$", "(a|aa)+$", "([",
            "(?P<unclosed", "x" * 5000, "|".join(f"w{i}" for i in range(3000)),
            r"Answer:\s*([A-J])", r"(?i)answer\s*[:：]\s*\(?([A-J])\)?", r"\p{L}{1000}",
            "(?x) a {5000}", "(?:.*)*\\d", r"\d+(?:,\d+)*$", "(?<a>x)(?&a)" * 50]  # fmt: skip
ROW_KEYS = ["question", "options", "expected_answer", "grading_mode", "template_metadata",
            "uuid", "metadata", "responses_create_params", "response", "task_type", "extra_key"]  # fmt: skip


def _nested(rng: random.Random, depth: int) -> Any:
    value: Any = rng.choice(["x", 1, None, "A"])
    for _ in range(depth):
        value = [value] if rng.random() < 0.7 else {"k": value}
    return value


def _hostile_value(rng: random.Random, big: float) -> Any:
    shape = rng.randrange(12)
    if shape == 0:
        return _nested(rng, rng.choice([10, 100, 1000, 3000]))
    if shape == 1:
        return "x" * (200_000 if rng.random() < big else rng.randint(0, 300))
    if shape == 2:
        return rng.choice([float("nan"), float("inf"), -float("inf"), 1e308, -0.0])
    if shape == 3:
        return rng.choice([10**400, -(10**30), 2**63, 0, True, False])
    if shape == 4:
        return None
    if shape == 5:
        return [rng.choice(["A", 1, None, [], {}]) for _ in range(rng.randint(0, 5))]
    if shape == 6:
        return {rng.choice(["", "A", "output_regex", "\ud800"]): rng.choice([1, "x", [], None])}
    if shape == 7:
        return _unicode(rng, rng.randint(0, 40))
    if shape == 8:
        return rng.choice([*LETTERS, "", " ", "AB", "Z", "\ud800"])
    if shape == 9:
        return rng.choice([*MODES, "no_such_mode", "", "ROBUST"])
    if shape == 10:
        return rng.choice(PHRASES)
    return _number(rng, big)


def _options(rng: random.Random, big: float) -> Any:
    count = rng.choice([0, 1, 2, 4, 10, 26, 40])
    letters = [chr(ord("A") + i) if i < 26 else f"A{i}" for i in range(count)]
    items: list[Any] = [{letter: text} for letter, text in zip(letters, _option_texts(rng, count, big), strict=True)]
    for _ in range(rng.randint(0, 3)):
        if items and rng.random() < 0.5:
            items[rng.randrange(len(items))] = rng.choice(
                [{"A": "dup"}, {"": "empty"}, {"é": "x"}, {"B": ""}, {"C": 5}, {"A": "a", "B": "b"}, "x", [], None]
            )
    return items


def _row(rng: random.Random, big: float, output: dict[str, Any]) -> dict[str, Any]:
    options = [{chr(ord("A") + i): text} for i, text in enumerate(output["options"])]
    row: dict[str, Any] = {
        "question": "Which one?",
        "options": options,
        "expected_answer": output["expected"],
        "grading_mode": rng.choice(MODES),
        "responses_create_params": {"input": [{"role": "user", "content": "Which one?"}]},
        "response": output["text"],
    }
    if rng.random() < 0.5:
        patterns = [rng.choice(PATTERNS) for _ in range(rng.choice([1, 1, 2, 5, 33, 60]))]
        row["template_metadata"] = {"output_regex": patterns[0] if len(patterns) == 1 else patterns}
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(ROW_KEYS)
        if key == "options" and rng.random() < 0.6:
            row[key] = _options(rng, big)
        elif key == "template_metadata" and rng.random() < 0.6:
            row[key] = {"output_regex": _hostile_value(rng, big), "answer_prefix": _hostile_value(rng, big)}
        elif key == "response" and rng.random() < 0.5:
            content = [{"type": "output_text", "text": _hostile_value(rng, big)}]
            row[key] = {"output": [{"type": "message", "role": "assistant", "content": content}]}
        elif rng.random() < 0.1:
            row.pop(key, None)
        else:
            row[key] = _hostile_value(rng, big)
    return row


def generate(seed: int, index: int, big: float = 0.05) -> dict[str, Any]:
    """Input ``index`` of the campaign ``seed``: an output to grade and a row to decode."""
    rng = random.Random(f"{seed}:{index}")
    options = _option_texts(rng, rng.randint(2, 10), big)
    expected = chr(ord("A") + rng.randrange(len(options)))
    text, tags = _text(rng, options, big)
    output = {"options": options, "expected": expected, "template": rng.choice(TEMPLATES),
              "text": text, "tags": tags}  # fmt: skip
    return {"index": index, "output": output, "row": _row(rng, big, output)}
