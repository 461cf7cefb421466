"""The judge's HTTP client: one prompt in, the judge's reply text out, over any OpenAI-compatible
endpoint (Chat Completions or Responses: what vLLM, NeMo Gym's model servers and OpenAI serve).

Built on httpx (the ``judge`` extra). Each prompt is one request, retried on the failures that
pass (a 429 or a 5xx status, a timeout, a refused or dropped connection) after a backoff that
doubles from ``backoff`` up to ``max_backoff`` seconds, with jitter, and no shorter than a 429's
``Retry-After`` (within ``max_backoff``). Statuses that will not pass (400, 401, 404) are not
retried. Nothing raises: every outcome is a ``Reply``, a failure with a kind and the words for it.
The reply text is found as the grader finds a model's (``choicebox._rollout.response_text``).
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias
from urllib.parse import urlsplit

import attrs
import orjson

from choicebox._errors import JudgeError, WireFormatError
from choicebox._rollout import response_text
from choicebox.render import JudgeFailure

if TYPE_CHECKING:
    import httpx

__all__ = ["API_KEY_ENV", "Api", "JudgeClient", "JudgeEndpoint", "Reply", "api_key_from_env"]

# The bearer token for the judge's endpoint, if it needs one: read from the environment, never
# from a command line (where ``ps`` and shell histories show it).
API_KEY_ENV: Final = "CHOICEBOX_JUDGE_API_KEY"

Api: TypeAlias = Literal["chat", "responses"]
_PATHS: Final[dict[str, str]] = {"chat": "chat/completions", "responses": "responses"}
# Connecting takes no longer than this, however long a reply may take to be written.
_CONNECT_TIMEOUT: Final = 10.0


def _check_url(instance: JudgeEndpoint, attribute: attrs.Attribute[str], url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise JudgeError(
            f"judge URL {url!r} is no http(s) URL; give the endpoint's base, e.g. http://localhost:8000/v1"
        )
    if parts.query or parts.fragment:
        raise JudgeError(f"judge URL {url!r} has a query or fragment; give the endpoint's base alone")


def api_key_from_env() -> str | None:
    """``$CHOICEBOX_JUDGE_API_KEY``, or ``None`` when it is unset or empty."""
    return os.environ.get(API_KEY_ENV) or None


def _base_url(url: str) -> str:
    # "http://host/v1/" and "http://host/v1" are one endpoint: its paths are appended after a "/".
    return str(url).rstrip("/")


def _positive(instance: JudgeEndpoint, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0):
        raise JudgeError(f"{attribute.name} must be a positive number, not {value!r}")


def _count(minimum: int) -> Callable[[JudgeEndpoint, attrs.Attribute[int], int], None]:
    def check(instance: JudgeEndpoint, attribute: attrs.Attribute[int], value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise JudgeError(f"{attribute.name} must be a whole number of at least {minimum}, not {value!r}")

    return check


def _check_model(instance: JudgeEndpoint, attribute: attrs.Attribute[str], model: str) -> None:
    if not model.strip():
        raise JudgeError("the judge model needs a name (--judge-model)")


def _check_api(instance: JudgeEndpoint, attribute: attrs.Attribute[str], api: str) -> None:
    if api not in _PATHS:
        raise JudgeError(f"unknown judge API {api!r}; known: {', '.join(_PATHS)}")


@attrs.frozen(kw_only=True)
class JudgeEndpoint:
    """Where the judge is and how to call it.

    ``url`` is the endpoint's base (``http://host:8000/v1``): ``chat/completions`` or
    ``responses`` is appended (``api``). ``timeout`` bounds connecting and each wait for the
    reply's bytes; ``retries`` is how many times a request is sent again after a failure that
    may pass; ``concurrency`` how many requests are in flight at once. ``max_tokens`` bounds the
    reply (a letter is one token; a judge that reasons first needs more).
    """

    url: str = attrs.field(validator=_check_url, converter=_base_url)
    model: str = attrs.field(validator=_check_model)
    api: Api = attrs.field(default="chat", validator=_check_api)
    api_key: str | None = attrs.field(default=None, repr=False)
    timeout: float = attrs.field(default=60.0, validator=_positive)
    retries: int = attrs.field(default=3, validator=_count(0))
    backoff: float = attrs.field(default=0.5, validator=_positive)
    max_backoff: float = attrs.field(default=8.0, validator=_positive)
    concurrency: int = attrs.field(default=8, validator=_count(1))
    max_tokens: int = attrs.field(default=16, validator=_count(1))

    def body(self, prompt: str) -> dict[str, Any]:
        """The request body for ``prompt``: greedy decoding, a short reply."""
        if self.api == "chat":
            return {
                "model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": 0.0,
                "max_tokens": self.max_tokens,
            }
        return {"model": self.model, "input": prompt, "temperature": 0.0, "max_output_tokens": self.max_tokens}


@attrs.frozen(kw_only=True)
class Reply:
    """What one prompt got: the reply's text, or why there is none (``failure``, ``detail``).

    ``attempts`` is how many requests were sent; ``reached`` whether any got an HTTP answer
    (a judge that never answers is down, not wrong); the tokens are the endpoint's ``usage``.
    """

    text: str | None
    failure: JudgeFailure | None = None
    detail: str = ""
    attempts: int = 0
    reached: bool = True
    prompt_tokens: int = 0
    completion_tokens: int = 0


class JudgeClient:
    """Sends prompts to one endpoint (thread-safe: one connection pool for every thread)."""

    def __init__(self, endpoint: JudgeEndpoint) -> None:
        try:
            import httpx  # noqa: PLC0415  the judge extra, ~170 ms: only a run that judges loads it
        except ImportError as exc:  # pragma: no cover - the dev and judge installs have it
            raise JudgeError(f"the judge needs httpx ({exc}): pip install 'choicebox[judge]'") from None
        self.endpoint = endpoint
        headers = {"Content-Type": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        self._client: httpx.Client = httpx.Client(
            base_url=endpoint.url + "/",
            headers=headers,
            timeout=httpx.Timeout(endpoint.timeout, connect=min(endpoint.timeout, _CONNECT_TIMEOUT)),
            limits=httpx.Limits(
                max_connections=endpoint.concurrency, max_keepalive_connections=endpoint.concurrency
            ),
        )
        self._random = random.Random()
        self._lock = threading.Lock()

    def ask(self, prompt: str) -> Reply:
        """The judge's reply to ``prompt``, after the retries a failure allows (never raises)."""
        import httpx  # noqa: PLC0415  imported by __init__ already: this only names it here

        endpoint = self.endpoint
        content = orjson.dumps(endpoint.body(prompt))
        path = _PATHS[endpoint.api]
        failure: JudgeFailure = "unreachable"
        detail = ""
        reached = False
        for attempt in range(1, endpoint.retries + 2):
            wait: float | None = None
            try:
                answer = self._client.post(path, content=content)
            except httpx.ConnectTimeout as exc:
                failure, detail = "unreachable", f"connecting timed out: {exc}"
            except httpx.TimeoutException as exc:
                failure, detail = "timeout", f"no reply within {endpoint.timeout:g} s ({type(exc).__name__})"
            except httpx.TransportError as exc:
                failure, detail = "unreachable", f"{type(exc).__name__}: {exc}"
            else:
                reached = True
                status = answer.status_code
                if status == 200:
                    return _read(answer.content, attempts=attempt)
                detail = f"HTTP {status} from {endpoint.url}/{path}: {_snippet(answer.content)}"
                if status == 429:
                    failure, wait = "rate_limited", _retry_after(answer.headers.get("retry-after"))
                elif status >= 500:
                    failure = "http_error"
                else:  # a bad request or a missing model does not pass by waiting
                    return Reply(text=None, failure="http_error", detail=detail, attempts=attempt)
            if attempt <= endpoint.retries:
                time.sleep(self._delay(attempt, wait))
        return Reply(text=None, failure=failure, detail=detail, attempts=endpoint.retries + 1, reached=reached)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before attempt ``attempt + 1``: doubling, half of it jittered, capped."""
        endpoint = self.endpoint
        base = min(endpoint.max_backoff, endpoint.backoff * 2.0 ** (attempt - 1))
        with self._lock:  # random.Random is not safe to share between threads unlocked
            jitter = self._random.uniform(0.5, 1.0)
        delay = base * jitter
        if retry_after is not None:
            delay = max(delay, min(retry_after, endpoint.max_backoff))
        return delay

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read(content: bytes, *, attempts: int) -> Reply:
    """The reply text of a 200 answer's body, and its usage; ``bad_response`` when it has none."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        return _bad(f"the reply is not JSON ({exc}): {_snippet(content)}", attempts)
    if not isinstance(body, dict):
        return _bad(f"the reply is no JSON object: {_snippet(content)}", attempts)
    try:
        text = response_text(body)
    except WireFormatError as exc:
        detail = f"the reply is no Chat Completions or Responses object: {'; '.join(exc.problems)}"
        return _bad(detail, attempts)
    usage = body.get("usage")
    prompt_tokens = completion_tokens = 0
    if isinstance(usage, dict):
        prompt_tokens = _tokens(usage, "prompt_tokens", "input_tokens")
        completion_tokens = _tokens(usage, "completion_tokens", "output_tokens")
    return Reply(text=text, attempts=attempts, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def _bad(detail: str, attempts: int) -> Reply:
    return Reply(text=None, failure="bad_response", detail=detail, attempts=attempts)


def _tokens(usage: dict[str, Any], *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


def _retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` of seconds (an HTTP date is rare from model servers and is not read)."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _snippet(content: bytes) -> str:
    text = content[:120].decode("utf-8", "replace")
    return repr(text + ("…" if len(content) > 120 else ""))
