"""``response_excerpt``: the one trimming rule of what a person is shown of a response (metrics'
failure previews read its start, ``choicebox compare``'s exemplars its end)."""

from __future__ import annotations

from choicebox._rollout import response_excerpt
from choicebox.compare._pairs import _tail
from choicebox.metrics._records import response_preview

RESPONSE = {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "abcdef  \n"}]}]}


def test_the_start_is_cut_without_a_mark() -> None:
    assert response_excerpt(RESPONSE, 3) == "abc"
    assert response_excerpt("xy", 3) == "xy"


def test_the_end_drops_trailing_blanks_and_marks_the_cut() -> None:
    assert response_excerpt(RESPONSE, 3, end=True) == "…def"
    assert response_excerpt(RESPONSE, 6, end=True) == "abcdef"


def test_an_unreadable_response_has_no_excerpt() -> None:
    assert response_excerpt({"output": 5}, 3) is None
    assert response_excerpt(7, 3, end=True) is None


def test_previews_and_tails_are_that_rule() -> None:
    row = {"response": RESPONSE}
    assert response_preview(row) == response_excerpt(RESPONSE, 200)
    assert _tail(row) == response_excerpt(RESPONSE, 240, end=True)
    assert response_preview({"response": 7}) == ""
    assert _tail({"response": 7}) == ""
