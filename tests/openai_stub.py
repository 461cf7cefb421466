"""A small OpenAI-compatible model server for the judge's tests: a real HTTP server on a port of its
own (``http.server``, one thread per request), speaking ``POST /v1/chat/completions`` and
``POST /v1/responses``. Nothing below the socket is mocked: the judge's client talks to it as it
would to vLLM.

It judges like a tiny reader: the response names exactly one option's text (case-insensitively)
and that option is the reply, else ``NONE``. A marker in the response scripts a fault for that
prompt, so one file can hold a row per fault:

* ``[[stub:429*N]]``, ``[[stub:500*N]]``: the first N requests of that prompt get the status
  (``always`` for every request); a 429 carries ``Retry-After: 0``;
* ``[[stub:400]]``: a 400 (which is not retried);
* ``[[stub:slow*N]]``: the first N requests wait ``slow_seconds`` before answering (``always``);
* ``[[stub:malformed]]``: a 200 whose body is not JSON; ``[[stub:shapeless]]``: JSON, no reply;
* ``[[stub:drop]]``: the connection is closed without a reply;
* ``[[stub:reply=TEXT]]``: the reply is TEXT as written (``I think B``, ``Z``, ``b``).

Every request is recorded (``requests``), so a test counts the calls a run made.

    python tests/openai_stub.py [--port 8000]    # serve until interrupted; prints the base URL
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_MARKER = re.compile(r"\[\[stub:([a-z0-9]+)(?:\*(\d+|always))?(?:=([^\]]*))?\]\]")
_OPTION = re.compile(r"^([A-Z])\. (.*)$", re.MULTILINE)


class StubState:
    """What the server does and has seen: its recorded requests and per-prompt attempt counts."""

    def __init__(self, slow_seconds: float = 1.0) -> None:
        self.slow_seconds = slow_seconds
        self.requests: list[dict[str, Any]] = []
        self.attempts: Counter[str] = Counter()
        self.lock = threading.Lock()

    def record(self, path: str, body: Any, headers: dict[str, str]) -> int:
        """Record a request; how many times its prompt has been asked, this one included."""
        prompt = _prompt_of(body)
        with self.lock:
            self.requests.append({"path": path, "body": body, "headers": headers})
            self.attempts[prompt] += 1
            return self.attempts[prompt]

    def sent(self, prompt: str) -> dict[str, Any]:
        """The last request that asked ``prompt``."""
        with self.lock:
            return next(r for r in reversed(self.requests) if _prompt_of(r["body"]) == prompt)

    @property
    def calls(self) -> int:
        with self.lock:
            return len(self.requests)


def _prompt_of(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    if isinstance(body.get("messages"), list) and body["messages"]:
        return str(body["messages"][-1].get("content", ""))
    return str(body.get("input", ""))


def answer_of(prompt: str) -> str:
    """The stub's reading: the one option whose text the response names, else NONE."""
    head, _, rest = prompt.partition("The response:\n<<<\n")
    response = rest.rpartition("\n>>>")[0].lower()
    options = dict(_OPTION.findall(head.split("The options:\n", 1)[-1]))
    named = [letter for letter, text in options.items() if text.strip() and text.strip().lower() in response]
    return named[0] if len(named) == 1 else "NONE"


def _faulted(count: str | None, attempt: int) -> bool:
    return count == "always" or attempt <= int(count or 1)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet tests
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        state = self.server.state
        path = self.path
        attempt = state.record(path, body, {k.lower(): v for k, v in self.headers.items()})
        if path not in ("/v1/chat/completions", "/v1/responses") or not isinstance(body, dict):
            self._send(404, b'{"error": {"message": "no such route"}}')
            return
        prompt = _prompt_of(body)
        reply = answer_of(prompt)
        for kind, times, value in _MARKER.findall(prompt.rpartition("The response:")[2]):
            count = times or None
            if kind in ("429", "500") and _faulted(count, attempt):
                headers = {"Retry-After": "0"} if kind == "429" else {}
                self._send(int(kind), b'{"error": {"message": "scripted"}}', headers)
                return
            if kind == "400":
                self._send(400, b'{"error": {"message": "bad request"}}')
                return
            if kind == "slow" and _faulted(count, attempt):
                time.sleep(state.slow_seconds)
            if kind == "malformed":
                self._send(200, b'{"choices": [{"message": {"content": "B"')
                return
            if kind == "shapeless":
                self._send(200, b'{"id": "x", "object": "chat.completion"}')
                return
            if kind == "drop":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if kind == "reply":
                reply = value
        usage_in, usage_out = len(prompt.split()), 1
        if path.endswith("/responses"):
            payload = {
                "id": f"resp_{attempt}", "object": "response", "model": body.get("model"), "status": "completed",
                "output": [{"type": "message", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": reply, "annotations": []}]}],
                "usage": {"input_tokens": usage_in, "output_tokens": usage_out, "total_tokens": usage_in + usage_out},
            }  # fmt: skip
        else:
            payload = {
                "id": f"chatcmpl_{attempt}", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out, "total_tokens": usage_in + usage_out},
            }  # fmt: skip
        self._send(200, json.dumps(payload).encode())

    def _send(self, status: int, content: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(content)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout)
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a slow reply's thread does not hold the test run at exit
    state: StubState


@contextmanager
def openai_stub(slow_seconds: float = 1.0, port: int = 0) -> Iterator[tuple[str, StubState]]:
    """A running stub on 127.0.0.1 (port 0: one the system picks): its base URL and its state."""
    server = _Server(("127.0.0.1", port), _Handler)
    server.state = StubState(slow_seconds)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.state
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--slow-seconds", type=float, default=1.0)
    args = parser.parse_args()
    with openai_stub(args.slow_seconds, args.port) as (url, state):
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print(f"{state.calls} requests", flush=True)


if __name__ == "__main__":
    main()
