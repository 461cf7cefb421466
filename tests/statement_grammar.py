"""The grammar of answer statements, as test data: cues, layouts, payloads, decorations and what may
stand around a statement, composed into whole responses.

Every part is written once; a response is one choice of each part. A positive composition states
one letter and must be read as that letter; a negative one commits to no single option and must be
read as none. ``tests/find/test_statement_grammar.py`` draws compositions with Hypothesis, and
``python tests/statement_grammar.py MODE`` walks the whole product to say which combinations a mode reads.

The parts are the forms real responses use (the project's own wording, written from the patterns
seen in published model outputs), not the rows themselves.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

# A question's options: texts a model cites after a letter, each unlike the others.
OPTIONS: dict[str, str] = {
    "A": "Light travels slower in glass than in air",
    "B": "Operant conditioning",
    "C": "Sound travels faster in a vacuum",
    "D": "Vitamin B12 deficiency",
    "E": "The mitochondrial membrane potential",
    "F": "12 N",
    "G": "Increased demand for labour",
    "H": "Photosynthesis in the stroma",
}

# Answer cues: what announces the answer. Each is the text before the payload; a layout puts the
# payload on the same line, on the next line, or under it as a heading.
CUES: tuple[str, ...] = (
    "The answer is",
    "The answer is:",
    "The correct answer is",
    "Thus, the correct answer is:",
    "Therefore, the best option is",
    "So the final answer is",
    "The most likely answer is",
    "Answer:",
    "Final Answer:",
    "**Final Answer:**",
    "Correct answer:",
    "My answer:",
    "I'd go with",
    "I choose",
    "Therefore,",
    "So,",
    "By elimination,",
    "If I had to pick one,",
    "The answer would therefore be",
    "Conclusion:",
    "Antwort:",
    "Die Antwort ist",
    "答案：",
    "综上所述，正确答案为",
    "정답은",
    "ดังนั้น คำตอบที่ถูกต้องคือ",  # Thai: no blank between the words
    "最終的な答え：",  # a label that holds a final qualifier
    "Respuesta final:",
)
# Cues that only ever stand as a heading, the payload under them.
HEADINGS: tuple[str, ...] = ("### Final Answer", "**Final Answer**", "## Answer", "Final answer")


class Layout(NamedTuple):
    """How a cue and its payload stand: the joint between them."""

    name: str
    joint: str


LAYOUTS: tuple[Layout, ...] = (
    Layout("same line", " "),
    Layout("next line", "\n"),
    Layout("after a blank line", "\n\n"),
    Layout("in a list item", "\n\n- "),
)
# Answer labels link to their payload by a spaced dash as well as by a colon: "Correct Answer - D".
LABELS: tuple[str, ...] = (
    "Answer", "Final Answer", "**Final Answer**", "Correct answer", "My answer", "Antwort", "Правильный ответ",
)  # fmt: skip
DASH_LAYOUTS: tuple[Layout, ...] = (
    Layout("after a dash", " - "),
    Layout("after an en dash", " – "),
    Layout("after an em dash", " — "),
)
HEADING_LAYOUTS: tuple[Layout, ...] = (
    Layout("under a heading", "\n"),
    Layout("under a heading, blank line", "\n\n"),
)

# Payload forms: a letter and the option's own text, in the decorations models use.
PAYLOADS: dict[str, Callable[[str, str], str]] = {
    "(L)": lambda letter, text: f"({letter})",
    "**L**": lambda letter, text: f"**{letter}**",
    "L.": lambda letter, text: f"{letter}.",
    "L": lambda letter, text: letter,
    "L) text": lambda letter, text: f"{letter}) {text}",
    "L. text": lambda letter, text: f"{letter}. {text}",
    "L: text": lambda letter, text: f"{letter}: {text}",
    "Option L: text": lambda letter, text: f"Option {letter}: {text}",
    "L - text": lambda letter, text: f"{letter} - {text}",
    "text (L)": lambda letter, text: f"{text} ({letter})",
    "**(L) text**": lambda letter, text: f"**({letter}) {text}**",
    "**L. text**": lambda letter, text: f"**{letter}. {text}**",
    "(L) text": lambda letter, text: f"({letter}) {text}",
    "L (text)": lambda letter, text: f"{letter} ({text})",
    "**L (text)**": lambda letter, text: f"**{letter} ({text})**",
    # A lowercase bracketed letter is a part label ("(a) 1/2") unless its own option's text follows.
    "(l) text": lambda letter, text: f"({letter.lower()}) {text}",
    "$L$": lambda letter, text: f"${letter}$",
    "\\boxed{L}": lambda letter, text: f"\\boxed{{{letter}}}",
}

# The option's text alone, no letter (rule 5), after the cues that announce an answer: not after a
# bare concluding word ("Therefore, statement 2 is correct." is prose that may repeat an option).
TEXT_PAYLOADS: dict[str, Callable[[str, str], str]] = {"text": lambda letter, text: text}
TEXT_CUES: tuple[str, ...] = tuple(cue for cue in CUES if cue not in ("Therefore,", "So,", "By elimination,"))

# A payload, then what it excludes: "The answer is (B), not (D).", "Answer: Operant conditioning
# rather than vitamin B12 deficiency." The excluded option is another letter's, in either form.
CONTRASTS: tuple[str, ...] = (", not", " rather than", " instead of")
CONTRASTED_PAYLOADS: tuple[str, ...] = ("(L)", "**L**", "L", "L) text", "L. text", "**L. text**", "text (L)", "text")
EXCLUDED: dict[str, Callable[[str, str], str]] = {
    "(L)": PAYLOADS["(L)"],
    "text": lambda letter, text: f"{text[0].lower()}{text[1:]}",
}

# What stands before a statement, and after it.
BEFORES: dict[str, str] = {
    "nothing": "",
    "reasoning": (
        "Let's think step by step. The force on the block is the mass times the acceleration, "
        "2 kg times 6 m/s^2, which gives 12 units; the other effects are negligible here.\n\n"
    ),
    "reasoning about options": (
        "Option A describes refraction, which is not asked about. Option H happens in plants. "
        "Weighing what remains against the question:\n\n"
    ),
    # gpt-oss's harmony format: what the analysis channel says is reasoning, the final channel answers
    "a reasoning channel": (
        "<|channel|>analysis<|message|>Maybe (A)? Option H happens in plants. Let me settle it."
        "<|end|><|start|>assistant<|channel|>final<|message|>"
    ),
}
AFTERS: dict[str, str] = {
    "nothing": "",
    "a remark": "\n\nThis fits every fact given in the question.",
    "another question": (
        "\n\nQuestion: Which gas makes up most of the air?\nOptions:\nA. Oxygen\nB. Nitrogen\n"
        "C. Argon\nD. Carbon dioxide\nAnswer: Let's think step by step. Most of the air is "
        "nitrogen. The answer is (B)."
    ),
    "a separator and another answer": "\n\n===\n\nThe answer is (A).",
    "a response section for another question": "\n\n== response ==\nAnswer: A",
    "another question, options inline": (
        "\n\nWhat is the capital of France?\n(A) Paris (B) Rome (C) Oslo (D) Bern\nAnswer: (A)"
    ),
    "another question under Q:": "\n\nQ: Which planet is largest?\nA. Mars\nB. Jupiter\nAnswer: A",
    "an answer line beyond the options": "\n\nAnswer: (K)",
}

# Concluding sentences whose predicate is no listed cue: an option cited by letter and own text.
CITATION_LEADS: tuple[str, ...] = (
    "The statement that is not true is",
    "The most likely cause is",
    "This behaviour is best described as",
    "Of the choices given, the one that fits is",
    "Everything points to",
)
CITATION_FORMS: dict[str, Callable[[str, str], str]] = {
    "L. text": lambda letter, text: f"{letter}. {text}.",
    "(L) text": lambda letter, text: f"({letter}) {text}.",
    "L) text": lambda letter, text: f"{letter}) {text}.",
    "**L. text**": lambda letter, text: f"**{letter}. {text}**.",
}
# Verdicts: the letter first, then a judgement of it ("(B) is the most likely explanation."),
# in the references models use for an option.
VERDICT_REFERENCES: dict[str, Callable[[str], str]] = {
    "(L)": lambda letter: f"({letter})",
    "Option L": lambda letter: f"Option {letter}",
    "**L**": lambda letter: f"**{letter}**",
    "Choice L": lambda letter: f"Choice {letter}",
}
VERDICT_TAILS: tuple[str, ...] = (
    "is the correct answer.",
    "is correct.",
    "is the best choice.",
    "is the most likely explanation.",
    "is the most likely to be helpful here.",
    "is the most consistent with the data.",
    "would be the most appropriate.",
    "would be my answer.",
    "is my final choice.",
)

# The option's text alone as the subject of a verdict ("Hence, vitamin B12 deficiency is the correct
# answer."), in the forms that open such a sentence, with the tails whose verdict closes it.
TEXT_VERDICT_SUBJECTS: dict[str, Callable[[str], str]] = {
    "text": lambda text: text,
    "**text**": lambda text: f"**{text}**",
    '"text"': lambda text: f'"{text}"',
    "Hence, text": lambda text: f"Hence, {text[0].lower()}{text[1:]}",
    "Therefore, **text**": lambda text: f"Therefore, **{text}**",
    "So text": lambda text: f"So {text}",
}
TEXT_VERDICT_TAILS: tuple[str, ...] = (
    "is the correct answer.",
    "is correct.",
    "is the best choice.",
    "would be the most appropriate.",
    "is the right answer, given the findings.",
)


# A closing paragraph that is a payload alone, no cue (rule 5 for the text alone): the option's text
# in the decorations models close with, or a letter citing it. Nothing follows it: a remark after
# it would make it no closing line, and text about other questions after it is not read yet (the
# scope ends at another question only after a statement the main steps found, and a closing text is
# a fallback's: tests/find/test_statement_grammar.py holds that gap as an expected failure).
CLOSING_PAYLOADS: dict[str, Callable[[str, str], str]] = {
    **TEXT_PAYLOADS,
    "text.": lambda letter, text: f"{text}.",
    "**text**": lambda letter, text: f"**{text}**",
    "*text*": lambda letter, text: f"*{text}*",
    **{name: PAYLOADS[name] for name in ("L. text", "**L. text**", "(L) text", "L - text")},
}


class Composition(NamedTuple):
    """One response and what it commits to."""

    parts: tuple[str, ...]
    text: str
    expected: str | None


def statements(letter: str) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every cue x layout x payload statement of ``letter``, with the parts that made it."""
    text = OPTIONS[letter]
    for cue, layout, (name, form) in itertools.product(CUES, LAYOUTS, PAYLOADS.items()):
        yield (cue, layout.name, name), f"{cue}{layout.joint}{form(letter, text)}"
    for cue, layout, (name, form) in itertools.product(HEADINGS, HEADING_LAYOUTS, PAYLOADS.items()):
        yield (cue, layout.name, name), f"{cue}{layout.joint}{form(letter, text)}"
    for cue, layout, (name, form) in itertools.product(TEXT_CUES, LAYOUTS, TEXT_PAYLOADS.items()):
        yield (cue, layout.name, name), f"{cue}{layout.joint}{form(letter, text)}"
    for cue, layout, (name, form) in itertools.product(HEADINGS, HEADING_LAYOUTS, TEXT_PAYLOADS.items()):
        yield (cue, layout.name, name), f"{cue}{layout.joint}{form(letter, text)}"
    for cue, layout, (name, form) in itertools.product(LABELS, DASH_LAYOUTS, {**PAYLOADS, **TEXT_PAYLOADS}.items()):
        yield (cue, layout.name, name), f"{cue}{layout.joint}{form(letter, text)}"
    payloads = {**PAYLOADS, **TEXT_PAYLOADS}
    other = _EXCLUDED_LETTER[letter]
    for cue, layout, name, contrast, (excluded, exclude) in itertools.product(
        CUES, LAYOUTS, CONTRASTED_PAYLOADS, CONTRASTS, EXCLUDED.items()
    ):
        if name == "text" and cue not in TEXT_CUES:
            continue
        statement = f"{cue}{layout.joint}{payloads[name](letter, text)}{contrast} {exclude(other, OPTIONS[other])}."
        yield (cue, layout.name, name, f"{contrast.strip(', ')} {excluded}"), statement
    for lead, (name, form) in itertools.product(CITATION_LEADS, CITATION_FORMS.items()):
        yield (lead, "citation", name), f"{lead} {form(letter, text)}"
    for (name, reference), tail in itertools.product(VERDICT_REFERENCES.items(), VERDICT_TAILS):
        yield (tail, "verdict", name), f"{reference(letter)} {tail}"
    for (name, subject), tail in itertools.product(TEXT_VERDICT_SUBJECTS.items(), TEXT_VERDICT_TAILS):
        yield (tail, "text verdict", name), f"{subject(text)} {tail}"


# The option a contrast excludes, for each letter the compositions state.
_EXCLUDED_LETTER: dict[str, str] = {"A": "C", "B": "D", "C": "G", "D": "B", "E": "H", "F": "A", "G": "C", "H": "E"}


def positives(letters: Sequence[str] = ("B", "C", "D", "G")) -> Iterator[Composition]:
    """Every statement of each letter, with every context before and after it."""
    for letter in letters:
        for parts, statement in statements(letter):
            for (before_name, before), (after_name, after) in itertools.product(
                BEFORES.items(), AFTERS.items()
            ):
                yield Composition(
                    (*parts, before_name, after_name), f"{before}{statement}{after}", letter
                )
        for (name, form), (before_name, before) in itertools.product(CLOSING_PAYLOADS.items(), BEFORES.items()):
            yield Composition(("closing paragraph", name, before_name), f"{before}{form(letter, OPTIONS[letter])}", letter)


# Negative compositions: payloads that name no single option, under every cue.
NEGATIVE_PAYLOADS: dict[str, Callable[[str, str], str]] = {
    "two letters": lambda a, b: f"({a}) or ({b})",
    "a set": lambda a, b: f"{a} and {b}",
    "a slash": lambda a, b: f"{a}/{b}",
    "withdrawn": lambda a, b: f"({a}) is incorrect",
    "not an option": lambda a, b: "(J)",
    "none": lambda a, b: "none of the options",
}


# Several letters judged together: "(B) or (D) is the correct answer."
VERDICT_JOINS: tuple[str, ...] = (" or ", " and ", ", ", "/", " | ", "; ")

# Options' texts judged in ways that commit to none: two together, a negation, a condition.
TEXT_VERDICT_NEGATIVES: dict[str, Callable[[str, str], str]] = {
    "two texts": lambda a, b: f"{a} or {b.lower()} is the correct answer.",
    "both texts": lambda a, b: f"Both {a.lower()} and {b.lower()} are correct.",
    "negated": lambda a, b: f"{a} is not the correct answer.",
    "supposed": lambda a, b: f"If the smear were microcytic, {a.lower()} would be the correct answer.",
    "condition after": lambda a, b: f"{a} would be correct only if the dose were doubled.",
    "in a question": lambda a, b: f"Is {a.lower()} the correct answer?",
    "a description": lambda a, b: f"{a} is the best studied of these, but it does not fit.",
}


# Closing lines that hold an option's text and commit to none: the options' texts listed, one a line
# or one a paragraph; a numbered list cut off at a number that is an option's text ("19. ...\n20").
CLOSING_NEGATIVES: dict[str, Callable[[str, str], str]] = {
    "two texts, one a line": lambda a, b: f"{a}\n{b}",
    "two texts, one a paragraph": lambda a, b: f"{a}\n\n{b}",
    "a list cut off": lambda a, b: f"1. Weigh the first effect.\n2. Weigh the second effect.\n{b}",
}


CONTRASTED_NEGATIVES: tuple[str, ...] = ("two letters", "a set", "a slash", "not an option")


def negatives(pairs: Sequence[tuple[str, str]] = (("B", "D"), ("C", "G"))) -> Iterator[Composition]:
    """Every cue x layout x negative payload, and every verdict on two letters joined, with every
    context before it."""
    for a, b in pairs:
        for cue, layout, (name, form) in itertools.chain(
            itertools.product(CUES, LAYOUTS, NEGATIVE_PAYLOADS.items()),
            itertools.product(LABELS, DASH_LAYOUTS, NEGATIVE_PAYLOADS.items()),
        ):
            for before_name, before in BEFORES.items():
                yield Composition(
                    (cue, layout.name, name, before_name), f"{before}{cue}{layout.joint}{form(a, b)}", None
                )
        # Naming no single option, then excluding a third: still none.
        third = next(letter for letter in OPTIONS if letter not in (a, b))
        for cue, layout, name, contrast, (excluded, exclude), (before_name, before) in itertools.product(
            CUES, LAYOUTS, CONTRASTED_NEGATIVES, CONTRASTS, EXCLUDED.items(), BEFORES.items()
        ):
            statement = f"{cue}{layout.joint}{NEGATIVE_PAYLOADS[name](a, b)}{contrast} {exclude(third, OPTIONS[third])}."
            yield Composition((cue, layout.name, name, f"{contrast.strip(', ')} {excluded}", before_name), f"{before}{statement}", None)
        for (name, reference), join, tail in itertools.product(VERDICT_REFERENCES.items(), VERDICT_JOINS, VERDICT_TAILS):
            for before_name, before in BEFORES.items():
                yield Composition(
                    (tail, "verdict on two letters", name, before_name),
                    f"{before}{reference(a)}{join}{reference(b)} {tail}", None,
                )  # fmt: skip
        for (name, form), (before_name, before) in itertools.product(TEXT_VERDICT_NEGATIVES.items(), BEFORES.items()):
            yield Composition(
                ("text verdict", name, before_name), f"{before}{form(OPTIONS[a], OPTIONS[b])}", None
            )
        for (name, form), (before_name, before) in itertools.product(CLOSING_NEGATIVES.items(), BEFORES.items()):
            yield Composition(
                ("closing paragraph", name, before_name), f"{before}{form(OPTIONS[a], OPTIONS[b])}", None
            )


def option_listing(letters: Sequence[str], *, style: str = "L. text") -> str:
    """The options restated, one per line: a listing, which commits to none of them."""
    form = PAYLOADS[style]
    return "\n".join(form(letter, OPTIONS[letter]) for letter in letters)


def coverage(mode: str) -> tuple[Counter[str], Counter[str], int, int]:
    """Walk the whole product in ``mode``: per part, how many positive compositions were read as
    their letter out of how many, and how many negative ones were read as none out of how many."""
    import choicebox  # here, so that importing the grammar costs nothing

    sample = choicebox.MCQASample.from_question("Which of the following is right?", list(OPTIONS.values()), "B")
    read: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for composition in positives():
        right = choicebox.grade(sample, composition.text, mode=mode).extracted_answer == composition.expected
        for part in ("all", *composition.parts):
            total[part] += 1
            read[part] += right
    none = sum(
        choicebox.grade(sample, composition.text, mode=mode).extracted_answer is None
        for composition in negatives()
    )
    return read, total, none, sum(1 for _ in negatives())


if __name__ == "__main__":
    import sys

    for name in sys.argv[1:] or ["robust"]:
        read, total, none, negative = coverage(name)
        print(f"{name}: positives read {read['all']}/{total['all']} ({read['all'] / total['all']:.1%}); "
              f"negatives read as none {none}/{negative}")
        for part in total:
            if part != "all" and read[part] < total[part]:
                print(f"  {part!r}: {read[part]}/{total[part]}")
