"""The judge's prompt template, its strict reading of replies, and its cache on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from choicebox import JudgeError
from choicebox.judge import NONE, JudgeCache, JudgePrompt, cache_key, read_reply
from choicebox.judge._cache import CachedReply

OPTIONS = {"A": "Granite", "B": "Basalt", "C": "Marble", "D": "Pumice"}

# --- the prompt ----------------------------------------------------------------------------------


def test_the_shipped_prompt_shows_the_question_the_lettered_options_and_the_response() -> None:
    prompt = JudgePrompt.default().render(
        question="Which rock floats on water?", options=OPTIONS, response="The one from volcanoes, full of holes."
    )
    assert "Which rock floats on water?" in prompt
    assert "A. Granite\nB. Basalt\nC. Marble\nD. Pumice" in prompt
    assert "<<<\nThe one from volcanoes, full of holes.\n>>>" in prompt
    assert prompt.rstrip().endswith("Reply with exactly one of: A, B, C, D, or NONE. Reply with that alone: no other words, no punctuation.")
    # The reading rules a hedge falls under are stated, for modes that opt hedges in.
    assert "names several options as its answer" in prompt


def test_text_in_the_response_is_never_read_as_a_placeholder() -> None:
    prompt = JudgePrompt.default().render(question="Q", options=OPTIONS, response="I owe $question and $$5")
    assert "I owe $question and $$5" in prompt


def test_a_user_template_replaces_the_shipped_one(tmp_path: Path) -> None:
    path = tmp_path / "mine.txt"
    path.write_text("Q: $question\n$options\nR: $response\nOne of $letters or NONE. It costs $$0.", encoding="utf-8")
    prompt = JudgePrompt.from_file(path).render(question="Q?", options={"A": "x", "B": "y"}, response="y")
    assert prompt == "Q: Q?\nA. x\nB. y\nR: y\nOne of A, B or NONE. It costs $0."


@pytest.mark.parametrize(
    ("text", "words", "line"),
    [
        ("$question $options", "never shows $response", None),
        ("$question $options $response $answer", "unknown placeholder $answer", None),
        ("$question\n$options $response\ncosts $5", "a '$' that starts no placeholder", 3),
    ],
)
def test_a_bad_template_is_refused_naming_its_file(tmp_path: Path, text: str, words: str, line: int | None) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(JudgeError) as info:
        JudgePrompt.from_file(path)
    assert words in info.value.reason
    assert (info.value.path, info.value.line) == (str(path), line)


def test_a_template_that_is_not_utf8_or_missing_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"$question $options $response caf\xe9")
    with pytest.raises(JudgeError, match="not UTF-8"):
        JudgePrompt.from_file(path)
    with pytest.raises(JudgeError, match="cannot read"):
        JudgePrompt.from_file(tmp_path / "missing.txt")


# --- the reply -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "letter", "failure"),
    [
        ("B", "B", None),
        ("  D\n", "D", None),
        (NONE, None, None),
        ("E", None, "not_an_option"),
        ("b", None, "not_a_letter"),
        ("none", None, "not_a_letter"),
        ("B.", None, "not_a_letter"),
        ("**B**", None, "not_a_letter"),
        ("I think B", None, "not_a_letter"),
        ("A or B", None, "not_a_letter"),
        ("", None, "not_a_letter"),
        ("Ｂ", None, "not_a_letter"),  # a fullwidth letter is no reply in the format asked for
    ],
)
def test_a_reply_is_one_option_letter_or_none_and_anything_else_a_failure(
    reply: str, letter: str | None, failure: str | None
) -> None:
    reading = read_reply(reply, OPTIONS)
    assert (reading.letter, reading.failure) == (letter, failure)


def test_a_failure_quotes_the_reply() -> None:
    assert read_reply("I think B" + "." * 100, OPTIONS).detail.startswith("the judge replied 'I think B.....")


# --- the cache -----------------------------------------------------------------------------------


def test_the_key_is_of_the_model_and_the_prompt() -> None:
    assert cache_key("m", "p") == cache_key("m", "p")
    assert len({cache_key("m", "p"), cache_key("n", "p"), cache_key("m", "q"), cache_key("m\0p", "")}) == 4


def test_replies_are_on_disk_at_once_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    cache = JudgeCache(path)
    cache.put("k1", "m", CachedReply("B", 10, 1))
    # On disk before close: a run killed now keeps the reply.
    assert path.read_bytes().count(b"\n") == 1
    cache.put("k2", "m", CachedReply("I think C"))
    cache.close()
    again = JudgeCache(path)
    assert again.get("k1") == CachedReply("B", 10, 1)
    assert again.get("k2") == CachedReply("I think C", 0, 0)
    assert len(again) == 2
    again.close()


def test_a_torn_last_line_is_cut_off_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    with JudgeCache(path) as cache:
        cache.put("k1", "m", CachedReply("B"))
    with open(path, "ab") as handle:
        handle.write(b'{"key": "k2", "model": "m", "rep')  # a kill mid-write
    with JudgeCache(path) as cache:
        assert (cache.get("k1"), cache.get("k2")) == (CachedReply("B"), None)
        cache.put("k3", "m", CachedReply("C"))
    with JudgeCache(path) as cache:
        assert cache.get("k3") == CachedReply("C")
    assert path.read_bytes().count(b"\n") == 2


def test_a_file_that_is_no_cache_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"key": "k", "model": "m", "reply": "B"}\n{"uuid": "row-1"}\n', encoding="utf-8")
    with pytest.raises(JudgeError) as info:
        JudgeCache(path)
    assert (info.value.line, info.value.source_line) == (2, '{"uuid": "row-1"}')


def test_a_link_or_a_directory_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    os.symlink(target, link)
    with pytest.raises(JudgeError, match="cannot open"):
        JudgeCache(link)
    with pytest.raises(JudgeError):
        JudgeCache(tmp_path)
