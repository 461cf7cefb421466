"""Vocabulary patterns (``choicebox.find._vocab``): how the words a rule file lists are found."""

from __future__ import annotations

import re

from choicebox.find._vocab import whole_words


def test_whole_words_are_words_only_in_scripts_that_space_them() -> None:
    cues = re.compile(whole_words(["not", "不对", "wait"]), re.IGNORECASE)
    for found in ("this is not it", "这是不对的", "Wait."):
        assert cues.search(found), found
    for none in ("nothing awaits", "这是对的"):
        assert cues.search(none) is None, none
    assert re.compile(whole_words([])).search("anything") is None
