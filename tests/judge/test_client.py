"""The judge's HTTP client against a real OpenAI-compatible server on loopback (``openai_stub``):
both APIs, retries with backoff on 429 and 5xx, timeouts, malformed replies, dropped and refused
connections. Nothing is mocked below the socket; no assertion is about time."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from choicebox import JudgeError
from choicebox.judge import JudgeClient, JudgeEndpoint, JudgePrompt
from openai_stub import StubState, openai_stub

OPTIONS = {"A": "Granite", "B": "Basalt", "C": "Marble", "D": "Pumice"}
SLOW = 5.0  # seconds the stub waits on a "slow" prompt: five times the client's timeout below


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[str, StubState]]:
    with openai_stub(slow_seconds=SLOW) as running:
        yield running


def _prompt(response: str) -> str:
    return JudgePrompt.default().render(question="Which rock floats?", options=OPTIONS, response=response)


def _client(url: str, **settings: object) -> JudgeClient:
    defaults: dict[str, object] = {"model": "judge-1", "timeout": 1.0, "retries": 2, "backoff": 0.01, "max_backoff": 0.02}
    return JudgeClient(JudgeEndpoint(url=url, **{**defaults, **settings}))  # type: ignore[arg-type]  # the test's settings


def _calls(state: StubState, prompt: str) -> int:
    return state.attempts[prompt]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_both_apis_get_the_reply_and_its_usage(stub: tuple[str, StubState], api: str) -> None:
    url, state = stub
    prompt = _prompt(f"It floats, so pumice. ({api})")
    with _client(url, api=api) as client:
        reply = client.ask(prompt)
    assert (reply.text, reply.failure, reply.attempts) == ("D", None, 1)
    assert reply.prompt_tokens == len(prompt.split())
    assert reply.completion_tokens == 1
    sent = state.sent(prompt)
    assert sent["path"] == ("/v1/chat/completions" if api == "chat" else "/v1/responses")
    assert sent["body"]["model"] == "judge-1"
    assert sent["body"]["temperature"] == 0.0


@pytest.mark.parametrize("status", ["429", "500"])
def test_a_429_or_500_that_passes_is_retried_until_the_reply(stub: tuple[str, StubState], status: str) -> None:
    url, state = stub
    prompt = _prompt(f"Pumice. [[stub:{status}*2]]")
    with _client(url) as client:
        reply = client.ask(prompt)
    assert (reply.text, reply.failure, reply.attempts) == ("D", None, 3)
    assert _calls(state, prompt) == 3


@pytest.mark.parametrize(("status", "failure"), [("429", "rate_limited"), ("500", "http_error")])
def test_a_status_that_never_passes_is_a_failure_after_every_retry(
    stub: tuple[str, StubState], status: str, failure: str
) -> None:
    url, state = stub
    prompt = _prompt(f"Pumice. [[stub:{status}*always]]")
    with _client(url, retries=3) as client:
        reply = client.ask(prompt)
    assert (reply.text, reply.failure, reply.attempts, reply.reached) == (None, failure, 4, True)
    assert f"HTTP {status}" in reply.detail
    assert _calls(state, prompt) == 4


def test_a_400_is_not_retried(stub: tuple[str, StubState]) -> None:
    url, state = stub
    prompt = _prompt("Pumice. [[stub:400]]")
    with _client(url) as client:
        reply = client.ask(prompt)
    assert (reply.failure, reply.attempts) == ("http_error", 1)
    assert _calls(state, prompt) == 1


def test_a_reply_slower_than_the_timeout_is_a_timeout_after_every_retry(stub: tuple[str, StubState]) -> None:
    url, state = stub
    prompt = _prompt("Pumice. [[stub:slow*always]]")
    with _client(url, retries=1) as client:
        reply = client.ask(prompt)
    assert (reply.text, reply.failure, reply.attempts, reply.reached) == (None, "timeout", 2, False)
    assert _calls(state, prompt) == 2


def test_a_slow_reply_that_passes_is_retried_until_the_reply(stub: tuple[str, StubState]) -> None:
    url, _ = stub
    with _client(url) as client:
        reply = client.ask(_prompt("Pumice. [[stub:slow*1]]"))
    assert (reply.text, reply.attempts) == ("D", 2)


def test_a_slow_reply_within_a_longer_timeout_is_waited_for(stub: tuple[str, StubState]) -> None:
    url, _ = stub
    with _client(url, timeout=30.0) as client:
        reply = client.ask(_prompt("Pumice. [[stub:slow*1]] (patient)"))
    assert (reply.text, reply.attempts) == ("D", 1)


@pytest.mark.parametrize(("marker", "words"), [("malformed", "not JSON"), ("shapeless", "no Chat Completions or Responses object")])
def test_a_reply_that_is_no_model_reply_is_a_bad_response_not_retried(
    stub: tuple[str, StubState], marker: str, words: str
) -> None:
    url, state = stub
    prompt = _prompt(f"Pumice. [[stub:{marker}]]")
    with _client(url) as client:
        reply = client.ask(prompt)
    assert (reply.text, reply.failure, reply.attempts) == (None, "bad_response", 1)
    assert words in reply.detail
    assert _calls(state, prompt) == 1


def test_a_dropped_connection_is_retried_then_unreachable(stub: tuple[str, StubState]) -> None:
    url, state = stub
    prompt = _prompt("Pumice. [[stub:drop]]")
    with _client(url) as client:
        reply = client.ask(prompt)
    assert (reply.failure, reply.attempts, reply.reached) == ("unreachable", 3, False)
    assert _calls(state, prompt) == 3


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there now: connections are refused


def test_a_refused_connection_is_unreachable() -> None:
    with _client(f"http://127.0.0.1:{_closed_port()}/v1") as client:
        reply = client.ask(_prompt("Pumice."))
    assert (reply.text, reply.failure, reply.attempts, reply.reached) == (None, "unreachable", 3, False)


def test_the_api_key_is_sent_as_a_bearer_token(stub: tuple[str, StubState]) -> None:
    url, state = stub
    prompt = _prompt("Pumice (with a key).")
    with _client(url, api_key="sk-test") as client:
        client.ask(prompt)
    sent = state.sent(prompt)
    assert sent["headers"]["authorization"] == "Bearer sk-test"
    assert "sk-test" not in repr(client.endpoint)


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"url": "localhost:8000/v1"}, "is no http(s) URL"),
        ({"url": "ftp://host/v1"}, "is no http(s) URL"),
        ({"url": "http://host/v1?x=1"}, "has a query"),
        ({"model": " "}, "needs a name"),
        ({"api": "completions"}, "unknown judge API 'completions'"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"retries": -1}, "retries must be a whole number of at least 0"),
        ({"concurrency": 0}, "concurrency must be a whole number of at least 1"),
    ],
)
def test_a_bad_endpoint_is_a_clear_error(settings: dict[str, object], words: str) -> None:
    given: dict[str, object] = {"url": "http://127.0.0.1:1/v1", "model": "judge-1", **settings}
    with pytest.raises(JudgeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        JudgeEndpoint(**given)  # type: ignore[arg-type]  # the test's settings


def test_a_trailing_slash_names_the_same_endpoint() -> None:
    assert JudgeEndpoint(url="http://h:1/v1/", model="m") == JudgeEndpoint(url="http://h:1/v1", model="m")


def test_the_cli_names_the_api_key_variable_the_judge_reads() -> None:
    from choicebox.cli import _judging
    from choicebox.judge import API_KEY_ENV

    assert API_KEY_ENV == _judging.API_KEY_ENV
