"""Vocabulary patterns (``choicebox.find._vocab``): how the words a rule file lists are found."""

from __future__ import annotations

import re

import pytest

from choicebox.find._vocab import whole_words


def test_whole_words_are_words_only_in_scripts_that_space_them() -> None:
    cues = re.compile(whole_words(["not", "不对", "wait"]), re.IGNORECASE)
    for found in ("this is not it", "这是不对的", "Wait."):
        assert cues.search(found), found
    for none in ("nothing awaits", "这是对的"):
        assert cues.search(none) is None, none
    assert re.compile(whole_words([])).search("anything") is None


@pytest.mark.parametrize(
    ("question", "negative"),
    [
        ("All of the following are sedimentary EXCEPT", True),
        ("All of the following are true except:", True),
        ("Each of these is a mammal except which one?", True),
        ("Which of these is NOT sedimentary?", True),
        # "except" in the question's content asks for what is so
        ("Which amendment abolished slavery, except as punishment for a crime?", False),
        ("Which rock is igneous?", False),
    ],
)
def test_a_negative_question_asks_for_what_is_not_so(question: str, negative: bool) -> None:
    from choicebox.find._vocab import NEGATIVE_QUESTION

    assert (NEGATIVE_QUESTION.search(question) is not None) is negative
