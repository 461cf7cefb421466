"""The judge: rows in, judgements out. Renders each row's prompt, answers it from the cache or asks
the endpoint (``concurrency`` at a time), reads the reply strictly, and counts what it cost.

A judge that does not answer is found down once ``breaker`` prompts in a row end without an HTTP
answer (refused connections, timeouts, after their retries): the rest of the run is not sent,
each such row records ``unreachable`` at once, and ``down`` says why. Without that, a judge behind
a dead address would hold a run of 10,000 flagged rows for hours of connect timeouts to tell it
what the first few already had.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from choicebox.render import JudgeFailure

from ._cache import CachedReply, JudgeCache, cache_key
from ._client import JudgeClient, JudgeEndpoint, Reply
from ._prompt import JudgePrompt
from ._reply import read_reply

__all__ = ["Judge", "JudgeCost", "JudgeRequest", "Judgement"]

# A response longer than this is not sent: a judge reads a conclusion, and a prompt of a million
# characters would cost more than every other row together. Real responses are a few thousand.
MAX_RESPONSE_CHARS: Final = 50_000
_BREAKER: Final = 5
# How long Ctrl-C can wait while the workers ask the judge (see ``judge_all``).
_SIGNAL_POLL_SECONDS: Final = 0.1


@attrs.frozen(kw_only=True)
class JudgeRequest:
    """One row for the judge: the question as the model was asked it, the options, the response
    (the text the mode reads: reasoning blocks already removed)."""

    question: str
    options: Mapping[str, str]
    response: str


@attrs.frozen(kw_only=True)
class Judgement:
    """What the judge made of one row: ``letter`` (``None``: it read no single option, or it
    failed and ``failure`` says why), the words for it, the model, and whether the reply came
    from the cache. ``reply`` is the judge's own text, when it wrote one."""

    letter: str | None
    failure: JudgeFailure | None = None
    detail: str = ""
    model: str
    reply: str | None = None
    cached: bool = False


@attrs.frozen(kw_only=True)
class JudgeCost:
    """What judging cost so far: prompts judged, requests sent (``calls``, retries included),
    replies taken from the cache, tokens the endpoint reported, and seconds spent judging."""

    prompts: int = 0
    calls: int = 0
    retries: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Judge:
    """A judge at ``endpoint``, with its prompt template and its cache (in memory if none is
    given). Use it as a context manager, or ``close`` it: that ends its connections and threads
    and writes the cache to disk."""

    def __init__(
        self,
        endpoint: JudgeEndpoint,
        *,
        prompt: JudgePrompt | None = None,
        cache: JudgeCache | None = None,
        breaker: int = _BREAKER,
        max_response_chars: int = MAX_RESPONSE_CHARS,
    ) -> None:
        self.endpoint = endpoint
        self.prompt = prompt if prompt is not None else JudgePrompt.default()
        self.cache = cache if cache is not None else JudgeCache()
        self._client = JudgeClient(endpoint)
        self._stopped = threading.Event()
        self._breaker = breaker
        self._max_response = max_response_chars
        self._lock = threading.Lock()
        self._cost = JudgeCost()
        self._silent = 0  # prompts in a row that got no HTTP answer
        self._down: str | None = None

    @property
    def cost(self) -> JudgeCost:
        with self._lock:
            return self._cost

    @property
    def down(self) -> str | None:
        """Why the judge was found down (see the module docstring), or ``None``."""
        with self._lock:
            return self._down

    def judge_all(self, requests: Sequence[JudgeRequest]) -> list[Judgement]:
        """The judgement of each request, in their order; ``concurrency`` of them at a time.

        The workers are daemon threads, started per call: a run stopped with Ctrl-C ends at once
        instead of waiting out the requests in flight (a pool's threads are joined at exit, and a
        judge that hangs would hold the process for its whole timeout).
        """
        if self._stopped.is_set():
            raise RuntimeError("this judge is closed (or was stopped): make a new one")
        started = time.monotonic()
        results: list[Judgement | None] = [None] * len(requests)
        failed: list[BaseException] = []
        todo = iter(enumerate(requests))
        lock = threading.Lock()

        def work() -> None:
            while not self._stopped.is_set():
                with lock:
                    item = next(todo, None)
                if item is None:
                    return
                try:
                    results[item[0]] = self.judge(item[1])
                except BaseException as exc:  # a bug: raised again in the caller's thread
                    failed.append(exc)
                    self._stopped.set()
                    return

        workers = [
            threading.Thread(target=work, name="choicebox-judge", daemon=True)
            for _ in range(min(self.endpoint.concurrency, len(requests)))
        ]
        try:
            for worker in workers:
                worker.start()
            for worker in workers:
                # Joined a moment at a time: a signal the kernel hands to a worker thread (Ctrl-C
                # goes to any thread of the process) only sets a flag, which this thread reads
                # between waits; a join without a timeout would sleep until the worker is done.
                while worker.is_alive():
                    worker.join(_SIGNAL_POLL_SECONDS)
        except BaseException:
            self._stopped.set()  # the workers take no more rows; those in flight are cut off
            raise
        finally:
            self._add(seconds=time.monotonic() - started)
        if failed:
            raise failed[0]
        return [result for result in results if result is not None]

    def judge(self, request: JudgeRequest) -> Judgement:
        """The judgement of one row (never raises on anything the judge does)."""
        model = self.endpoint.model
        letters = tuple(request.options)
        if len(request.response) > self._max_response:
            return Judgement(
                letter=None, failure="too_long", model=model,
                detail=f"the response is {len(request.response):,} characters, more than the {self._max_response:,} a judge is sent",
            )  # fmt: skip
        prompt = self.prompt.render(question=request.question, options=request.options, response=request.response)
        key = cache_key(model, prompt)
        kept = self.cache.get(key)
        if kept is not None:
            self._add(prompts=1, cached=1)
            return self._reading(kept.reply, letters, cached=True)
        down = self.down
        if down is not None:
            return Judgement(
                letter=None, failure="unreachable", model=model,
                detail=f"not sent: the judge was found down earlier in the run ({down})",
            )  # fmt: skip
        reply = self._client.ask(prompt)
        self._count(reply)
        if reply.text is None:
            assert reply.failure is not None
            return Judgement(letter=None, failure=reply.failure, detail=reply.detail, model=model)
        self.cache.put(key, model, CachedReply(reply.text, reply.prompt_tokens, reply.completion_tokens))
        return self._reading(reply.text, letters, cached=False)

    def _reading(self, text: str, letters: tuple[str, ...], *, cached: bool) -> Judgement:
        reading = read_reply(text, letters)
        return Judgement(
            letter=reading.letter, failure=reading.failure, detail=reading.detail,
            model=self.endpoint.model, reply=text, cached=cached,
        )  # fmt: skip

    def _count(self, reply: Reply) -> None:
        with self._lock:
            cost = self._cost
            self._cost = attrs.evolve(
                cost,
                prompts=cost.prompts + 1,
                calls=cost.calls + reply.attempts,
                retries=cost.retries + max(0, reply.attempts - 1),
                prompt_tokens=cost.prompt_tokens + reply.prompt_tokens,
                completion_tokens=cost.completion_tokens + reply.completion_tokens,
            )
            if reply.reached:
                self._silent = 0
                return
            self._silent += 1
            if self._silent >= self._breaker and self._down is None:
                self._down = f"{self._silent} prompts in a row got no answer; the last: {reply.detail}"

    def _add(self, *, prompts: int = 0, cached: int = 0, seconds: float = 0.0) -> None:
        with self._lock:
            cost = self._cost
            self._cost = attrs.evolve(
                cost, prompts=cost.prompts + prompts, cached=cost.cached + cached, seconds=cost.seconds + seconds
            )

    def close(self) -> None:
        """End the judge: no more rows are taken, its connections are closed and its cache is
        flushed to disk (a reply that arrives later is not kept)."""
        self._stopped.set()
        self._client.close()
        self.cache.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
