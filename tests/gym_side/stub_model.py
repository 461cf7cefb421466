"""A stand-in for a model server: answers OpenAI Responses calls with recorded outputs.

    python tests/gym_side/stub_model.py REPLIES.json     # prints the port it listens on

``REPLIES.json`` maps the SHA-256 of a request's user text (the joined text of its user
messages, or its ``input`` string) to a list of output texts; the n-th request with that text
gets the n-th output (cycling), so with one request at a time the repeats of a task get the
outputs in order. A request whose text is not in the table gets HTTP 404, which fails the rollout
visibly. Only the standard library: it runs under any Python.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def user_text(body: dict[str, Any]) -> str:
    given = body.get("input")
    if isinstance(given, str):
        return given
    parts = []
    for message in given or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [c.get("text", "") for c in content if isinstance(c, dict)]
    return "".join(parts)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def response(body: dict[str, Any], text: str, prompt: str, n: int) -> dict[str, Any]:
    prompt_tokens, output_tokens = len(prompt) // 4 + 1, len(text) // 4 + 1
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model") or "stub",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt_tokens + output_tokens,
        },
    }


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        table: dict[str, list[str]] = json.load(handle)
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            prompt = user_text(body)
            key = digest(prompt)
            outputs = table.get(key)
            if not self.path.endswith("/responses") or not outputs:
                self.send_error(404, f"no recorded output for {self.path} {key[:12]}")
                return
            with lock:
                n = seen[key]
                seen[key] += 1
            data = json.dumps(response(body, outputs[n % len(outputs)], prompt, n)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
