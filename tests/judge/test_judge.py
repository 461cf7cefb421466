"""The ``Judge`` (concurrency, cache, the breaker, what it counts) against a real server on
loopback, and ``apply_judgement``: the reward follows the judge on flagged verdicts only."""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from choicebox import default_registry, grade_text
from choicebox._modes import parse_mode
from choicebox.judge import (
    MAX_RESPONSE_CHARS,
    Judge,
    JudgeCache,
    JudgeEndpoint,
    Judgement,
    JudgeRequest,
    apply_judgement,
)
from openai_stub import StubState, openai_stub

OPTIONS = {"A": "Granite", "B": "Basalt", "C": "Marble", "D": "Pumice"}
ROBUST = default_registry().get("robust")


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[str, StubState]]:
    with openai_stub() as running:
        yield running


def _endpoint(url: str, **settings: Any) -> JudgeEndpoint:
    return JudgeEndpoint(url=url, model="judge-1", **{"backoff": 0.01, "max_backoff": 0.02, "timeout": 5.0, **settings})


def _request(response: str) -> JudgeRequest:
    return JudgeRequest(question="Which rock floats on water?", options=OPTIONS, response=response)


def test_judgements_come_back_in_the_order_of_the_rows(stub: tuple[str, StubState]) -> None:
    url, _ = stub
    texts = [OPTIONS[letter] for letter in "ABCD" * 10]
    with Judge(_endpoint(url, concurrency=4)) as judge:
        judgements = judge.judge_all([_request(f"It is {text}, row {n}.") for n, text in enumerate(texts)])
    assert [j.letter for j in judgements] == list("ABCD" * 10)
    assert judge.cost.prompts == judge.cost.calls == 40


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_cache_answers_a_prompt_asked_before_without_a_call(
    stub: tuple[str, StubState], tmp_path: Path, api: str
) -> None:
    url, state = stub
    request = _request(f"Pumice, asked twice ({api}).")
    with Judge(_endpoint(url, api=api), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        first = judge.judge(request)
    before = state.calls
    with Judge(_endpoint(url, api=api), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        again = judge.judge(request)
        assert (judge.cost.calls, judge.cost.cached, judge.cost.tokens) == (0, 1, 0)
    assert state.calls == before
    assert (first.letter, first.cached, again.letter, again.cached) == ("D", False, "D", True)


def test_another_model_is_another_question(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, state = stub
    request = _request("Pumice, for two models.")
    with Judge(_endpoint(url), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        judge.judge(request)
    before = state.calls
    with Judge(attrs.evolve(_endpoint(url), model="judge-2"), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        assert judge.judge(request).model == "judge-2"
    assert state.calls == before + 1


def test_a_failure_to_reply_is_not_cached_so_a_rerun_tries_again(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, _ = stub
    request = _request("Pumice. [[stub:500*always]]")
    with Judge(_endpoint(url, retries=0), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        assert judge.judge(request).failure == "http_error"
    with Judge(_endpoint(url, retries=0), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        assert judge.judge(request).failure == "http_error"
        assert judge.cost.calls == 1


def test_a_reply_that_is_no_letter_is_cached_with_its_text(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, _ = stub
    request = _request("Pumice. [[stub:reply=Probably D]]")
    with Judge(_endpoint(url), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        first = judge.judge(request)
    with Judge(_endpoint(url), cache=JudgeCache(tmp_path / "c.jsonl")) as judge:
        again = judge.judge(request)
    assert (first.failure, first.reply) == ("not_a_letter", "Probably D")
    assert (again.failure, again.reply, again.cached) == ("not_a_letter", "Probably D", True)


def test_a_judge_that_never_answers_is_found_down_and_the_rest_not_sent() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Judge(_endpoint(f"http://127.0.0.1:{port}/v1", concurrency=1, retries=1), breaker=3) as judge:
        judgements = judge.judge_all([_request(f"Pumice {n}.") for n in range(10)])
    assert [j.failure for j in judgements] == ["unreachable"] * 10
    assert judge.cost.prompts == 3  # then the breaker: the other 7 were never sent
    assert judge.cost.calls == 6
    assert (judge.down or "").startswith("3 prompts in a row got no answer")
    assert judgements[-1].detail.startswith("not sent: the judge was found down earlier in the run")


def test_a_response_over_the_limit_is_not_sent(stub: tuple[str, StubState]) -> None:
    url, state = stub
    before = state.calls
    with Judge(_endpoint(url)) as judge:
        judgement = judge.judge(_request("x" * (MAX_RESPONSE_CHARS + 1)))
    assert (judgement.letter, judgement.failure) == (None, "too_long")
    assert state.calls == before


# --- apply_judgement -------------------------------------------------------------------------------


def _judgement(letter: str | None, failure: Any = None) -> Judgement:
    return Judgement(letter=letter, failure=failure, model="judge-1")


def test_a_flagged_verdict_s_reward_follows_the_judge_and_keeps_the_rule_reading() -> None:
    flagged = grade_text("Rocks full of gas bubbles float.", OPTIONS, "D", ROBUST)
    assert flagged.needs_judge
    right = apply_judgement(flagged, _judgement("D"), ROBUST)
    assert (right.reward, dict(right.reward_components)) == (1.0, {"correctness": 1.0, "format": 0.0, "unambiguous": 1.0})
    assert (right.extracted_answer, right.failure, right.detail) == (None, "no_answer", flagged.detail)
    assert (right.judge_letter, right.judge_model, right.judge_failure) == ("D", "judge-1", None)
    wrong = apply_judgement(flagged, _judgement("B"), ROBUST)
    assert (wrong.reward, wrong.correctness, wrong.unambiguous) == (0.0, 0.0, 1.0)
    for nothing in (_judgement(None), _judgement(None, "timeout")):
        kept = apply_judgement(flagged, nothing, ROBUST)
        assert (kept.reward, kept.reward_components) == (flagged.reward, flagged.reward_components)
        assert kept.judge_failure == nothing.failure


def test_judging_a_judged_verdict_again_gives_the_judge_s_reward_or_the_rules_back() -> None:
    flagged = grade_text("Rocks full of gas bubbles float.", OPTIONS, "D", ROBUST)
    judged = apply_judgement(flagged, _judgement("D"), ROBUST)
    assert apply_judgement(judged, _judgement("D"), ROBUST) == judged
    assert apply_judgement(judged, _judgement(None, "timeout"), ROBUST).reward == flagged.reward


def test_an_unflagged_verdict_keeps_its_reward_whatever_the_judge_says() -> None:
    decided = grade_text("The answer is (A).", OPTIONS, "D", ROBUST)
    hedge = grade_text("The answer is (A) or (D).", OPTIONS, "D", ROBUST)
    for verdict in (decided, hedge):
        judged = apply_judgement(verdict, _judgement("D"), ROBUST)
        assert (judged.reward, judged.reward_components) == (verdict.reward, verdict.reward_components)
        assert judged.judge_letter == "D"


def test_a_judged_reward_is_weighed_by_the_mode_s_weights() -> None:
    weighted, _ = parse_mode(
        "version: 1\nid: w\ndescription: d\njudge: [no_answer]\nweights: {correctness: 0.5, format: 0.25, unambiguous: 0.25}\n"
        "chain:\n  - kind: boxed_letter\n",
        path="w.yaml",
    )
    flagged = grade_text("Pumice, surely.", OPTIONS, "D", weighted)
    assert flagged.needs_judge
    assert apply_judgement(flagged, _judgement("D"), weighted).reward == 0.75  # no format reward


def test_a_judgement_applied_under_another_mode_is_refused() -> None:
    flagged = grade_text("Rocks full of gas bubbles float.", OPTIONS, "D", ROBUST)
    with pytest.raises(ValueError, match="of mode 'robust'"):
        apply_judgement(flagged, _judgement("D"), default_registry().get("lenient_boxed"))


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop


def test_a_signal_that_lands_on_a_worker_thread_still_stops_the_run_at_once() -> None:
    # The kernel hands a process's Ctrl-C to any of its threads. When a worker gets it, Python's
    # handler runs in the main thread only once that thread wakes: here, while every request
    # takes 30 s, the run must end with the first requests, not after all eight.
    with openai_stub(slow_seconds=30.0) as (url, state):
        previous = signal.signal(signal.SIGUSR1, _raise_stop)
        try:
            with Judge(_endpoint(url, concurrency=2, timeout=60.0)) as judge:

                def hit_a_worker() -> None:
                    while state.calls < 2:
                        time.sleep(0.01)
                    worker = next(t for t in threading.enumerate() if t.name == "choicebox-judge")
                    assert worker.ident is not None
                    signal.pthread_kill(worker.ident, signal.SIGUSR1)

                threading.Thread(target=hit_a_worker, daemon=True).start()
                with pytest.raises(_Stop):
                    judge.judge_all([_request(f"Pumice [[stub:slow*always]] {n}.") for n in range(8)])
        finally:
            signal.signal(signal.SIGUSR1, previous)
        assert state.calls == 2  # the two in flight; the other six never sent
