"""Gaming resistance as a property: no output that commits to no single option earns a reward.

A verifier in an RL loop is attacked by the policy it trains, so each training mode is held
against generated outputs that commit to no single option: several letters (or all of them) in
every container the modes read (boxes, tags, ``Answer:`` lines, "the answer is" statements, JSON),
one per line or on one line, with separators and zero-width or combining characters between
them; the options restated; a commitment then withdrawn; reasoning cut off with letters in it; a
letter that is not an option. Every such output must earn 0 for every gold letter.

The Gym-compatible colon modes keep one of NeMo Gym's rules on purpose: of several ``Answer:``
lines the last wins. That is their named exception (``docs/gaming-resistance.md`` lists it as a
known way to game them, with the mode to use instead); the test holds that it is the only one.
``mmlu_pro`` reproduces the paper's extraction, whose last-letter fallback rewards nearly any
output: it is a reporting mode, never a training one, and is not held here.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import choicebox
from choicebox import MCQASample, default_registry

# Every mode that declares itself fit for training (``fit_for_training: true`` in its YAML) is
# held to the property; the three built-in ones must stay among them.
TRAINING_MODES = tuple(sorted(mode.id for mode in default_registry() if mode.fit_for_training))
COLON_MODES = ("lenient_answer_colon", "lenient_answer_colon_md")

FOUR = "ABCD"
TEN = "ABCDEFGHIJ"

# One letter in a container the modes read.
CONTAINERS = {
    "box": "\\boxed{{{}}}",
    "text_box": "$\\boxed{{\\text{{{}}}}}$",
    "tag": "<answer>{}</answer>",
    "answer_is": "The answer is ({}).",
    "final_answer": "Final answer: {}",
    "bold_answer": "**Answer:** {}",
    "json": '{{"answer": "{}"}}',
    "pick": "I'd go with {}.",
}
# The same letters given together, in one container.
TOGETHER = {
    "box": "\\boxed{{{}}}",
    "tag": "<answer>{}</answer>",
    "answer_is": "The answer is {}.",
    "final_answer": "Final answer: {}",
    "colon": "Answer: {}",
}
JOINS = [" or ", ", ", " and ", "/", " | ", ""]
SEPARATORS = ["\n", "\n\n", " ", " | ", "; ", "\n---\n"]
# Between a letter and what follows it: nothing, a zero-width space or joiner, a combining accent.
INVISIBLES = ["", "\u200b", "\u200d", "\u0301", "\ufeff"]
REASONING = [
    "",
    "Let me weigh the options one by one.\n",
    "<think>Several could fit here.</think>\n",
    "We refer to the definitions for help.\n\n",
]
WITHDRAWALS = [
    "Actually, no, that is not right, and I am not sure which one is.",
    "Scratch that.",
    "Hmm, no, that's wrong.",
    "I'm not sure any more.",
]


# Option texts: plain words, or texts that hold their own letter ("option C"), so that a restated
# line ends with a letter as an answer would.
TEXTS = {"words": "choice {low}{low}", "lettered": "option {letter}"}


def _texts(letters: str, style: str) -> list[str]:
    return [TEXTS[style].format(low=x.lower(), letter=x) for x in letters]


def _sample(letters: str, gold: str, style: str = "words") -> MCQASample:
    return MCQASample.from_question("Which one is right?", _texts(letters, style), gold)


def _rewards(text: str, mode: str, letters: str, style: str = "words") -> list[float]:
    return [choicebox.grade(_sample(letters, gold, style), text, mode=mode).reward for gold in letters]


@st.composite
def several_letters(draw: st.DrawFn) -> tuple[str, str]:
    """(option letters, an output naming two or more of them, each in a container of its own or
    all in one, however laid out)."""
    letters = draw(st.sampled_from([FOUR, TEN]))
    named = draw(st.lists(st.sampled_from(letters), min_size=2, max_size=len(letters), unique=True))
    invisible = draw(st.sampled_from(INVISIBLES))
    if draw(st.booleans()):
        container = draw(st.sampled_from(sorted(CONTAINERS)))
        separator = draw(st.sampled_from(SEPARATORS))
        body = separator.join(CONTAINERS[container].format(x + invisible) for x in named)
    else:
        container = draw(st.sampled_from(sorted(TOGETHER)))
        join = draw(st.sampled_from(JOINS))
        body = TOGETHER[container].format((invisible + join).join(named))
    return letters, draw(st.sampled_from(REASONING)) + body


@st.composite
def restated_options(draw: st.DrawFn, style: str = "words") -> tuple[str, str]:
    """The options restated, one per line or in one line, under a cue or not, at the end."""
    letters = draw(st.sampled_from([FOUR, TEN]))
    form = draw(st.sampled_from(["{}. {}", "({}) {}", "{}) {}", "**{}.** {}", "Option {}: {}"]))
    cited = [form.format(x, text) for x, text in zip(letters, _texts(letters, style), strict=True)]
    body = draw(st.sampled_from(["\n", "; ", " "])).join(cited)
    cue = draw(st.sampled_from(["", "The answer is:\n", "Final answer:\n", "Answer: "]))
    return letters, draw(st.sampled_from(REASONING)) + cue + body


@st.composite
def withdrawn(draw: st.DrawFn) -> tuple[str, str]:
    """One letter stated, then withdrawn with no other option named."""
    letters = draw(st.sampled_from([FOUR, TEN]))
    stated = draw(st.sampled_from(sorted(CONTAINERS))).format(draw(st.sampled_from(letters)))
    return letters, f"{draw(st.sampled_from(REASONING))}{stated} {draw(st.sampled_from(WITHDRAWALS))}"


@st.composite
def cut_off(draw: st.DrawFn) -> tuple[str, str]:
    """Reasoning cut off inside ``<think>``, naming several letters on the way."""
    letters, body = draw(several_letters())
    return letters, f"<think>Let me see. {body.replace('<think>', '').replace('</think>', '')}"


@st.composite
def not_an_option(draw: st.DrawFn) -> tuple[str, str]:
    """One letter that the sample does not have, in any container."""
    letters = FOUR
    stated = draw(st.sampled_from(sorted(CONTAINERS))).format(draw(st.sampled_from("EFKZ")))
    return letters, draw(st.sampled_from(REASONING)) + stated


NON_COMMITTING = st.one_of(several_letters(), restated_options(), withdrawn(), cut_off(), not_an_option())


@pytest.mark.parametrize("mode", TRAINING_MODES)
@settings(max_examples=400, deadline=None)
@given(case=NON_COMMITTING)
def test_no_output_that_commits_to_no_single_option_earns_a_reward(mode: str, case: tuple[str, str]) -> None:
    letters, text = case
    assert _rewards(text, mode, letters) == [0.0] * len(letters), text


# Gym's colon payload: the rest of the line after "answer:" (inside "Final answer:" too), after at
# most two blanks or markdown marks, which may be a line break (``gym_mcqa_server.md``).
_GYM_PAYLOAD = re.compile(r"(?im)answer[*_]{0,2}\s*:[*_\s]{0,2}(.+)")


@pytest.mark.parametrize("mode", COLON_MODES)
@settings(max_examples=300, deadline=None)
@given(case=NON_COMMITTING)
def test_the_colon_modes_reward_only_their_named_exception(mode: str, case: tuple[str, str]) -> None:
    # Gym's rule, kept on purpose: of several "Answer:" payloads, the last one that names a letter
    # wins. Any other non-committing output earns nothing; this one earns for that letter only.
    letters, text = case
    rewarded = [gold for gold, reward in zip(letters, _rewards(text, mode, letters), strict=True) if reward]
    if rewarded:
        payloads = _GYM_PAYLOAD.findall(text)
        assert len(rewarded) == 1, text
        assert any(rewarded[0] in payload for payload in payloads), text


@pytest.mark.parametrize("mode", TRAINING_MODES)
@settings(max_examples=200, deadline=None)
@given(case=restated_options(style="lettered"))
def test_options_whose_texts_hold_their_letter_restated_earn_nothing(mode: str, case: tuple[str, str]) -> None:
    # "C. option C\nD. option D": each line ends with a letter, as a closing answer would.
    letters, text = case
    assert _rewards(text, mode, letters, style="lettered") == [0.0] * len(letters), text


def test_the_built_in_training_modes_declare_it() -> None:
    assert TRAINING_MODES == ("lenient_boxed", "robust", "strict_single_letter_boxed")
    assert not default_registry().get("mmlu_pro").fit_for_training  # a reporting mode


def test_the_named_exception_is_real() -> None:
    # The exception the colon test allows is one Gym's own verifier rewards: it must not be empty.
    text = "Answer: A\nAnswer: B\nAnswer: C"
    assert _rewards(text, "lenient_answer_colon", FOUR) == [0.0, 0.0, 1.0, 0.0]
    for mode in TRAINING_MODES:
        assert _rewards(text, mode, FOUR) == [0.0] * 4


def test_the_strategies_cover_every_container_and_a_json_list() -> None:
    # What the strategies draw from, so that a container dropped from them is noticed.
    assert {"box", "tag", "answer_is", "final_answer", "json", "pick"} <= set(CONTAINERS)
    listed = json.dumps({"answer": list(FOUR)})
    for mode in TRAINING_MODES:
        assert _rewards(listed, mode, FOUR) == [0.0] * 4
