"""Hostile clients against a real ``choicebox serve``: does anything stall, hang or echo too much?

Starts ``choicebox serve`` on a free loopback port (one server worker, this interpreter) and
measures, with bounded loops only:

1. how long ``GET /health`` and a normal ``POST /verify`` wait while one hostile ``/verify`` is
   graded (slow model outputs, a catastrophic sample regex, a large body);
2. what the server does with a body shorter than its ``Content-Length``, with connections that
   never send a byte, with a header sent one byte at a time and with an endless header;
3. how many bytes a 422 sends back for a 6 MB bad value, and for a batch of 100 of them.

    python benchmarks/hostile/serve_hostile.py                 # default server options
    python benchmarks/hostile/serve_hostile.py -- --grade-timeout 5 --header-timeout 2
    python benchmarks/hostile/serve_hostile.py --skip-timeouts  # only the stall and echo figures

Arguments after ``--`` go to ``choicebox serve``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any

OPTIONS = [{"A": "red"}, {"B": "green"}, {"C": "blue"}, {"D": "1000"}]
NORMAL_RESPONSE = r"The colour is \boxed{A}."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    def __init__(self, extra: list[str]) -> None:
        self.port = free_port()
        cmd = [sys.executable, "-m", "choicebox", "serve", "--port", str(self.port)]
        self.proc = subprocess.Popen(
            [*cmd, "--log-level", "warning", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/health", timeout=1)[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit("the server did not answer /health within 60 s")

    def connect(self, timeout: float | None = 120.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def request(
        self, method: str, path: str, body: bytes = b"", timeout: float = 120.0
    ) -> tuple[int, bytes]:
        """(status, response body) of one request on a fresh connection; status 0 if none."""
        with self.connect(timeout) as sock:
            head = (
                f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            sock.sendall(head.encode() + body)
            chunks = []
            while chunk := sock.recv(1 << 20):
                chunks.append(chunk)
        raw = b"".join(chunks)
        status = int(raw.split(b" ", 2)[1]) if raw else 0
        return status, raw.partition(b"\r\n\r\n")[2]

    def rss_mb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) // 1024
        return -1

    def stop(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode("utf-8", "replace") if self.proc.stderr else ""


def row(response: str, **fields: Any) -> bytes:
    value: dict[str, Any] = {
        "question": "Q?",
        "options": OPTIONS,
        "expected_answer": "A",
        "responses_create_params": {"input": []},
        "response": response,
    }
    value.update(fields)
    return json.dumps(value).encode()


def stall(server: Server, label: str, body: bytes) -> None:
    """Send ``body`` to /verify; meanwhile poll /health and a normal /verify; worst waits."""
    waits: dict[str, list[float]] = {"health": [], "verify": []}
    done = threading.Event()
    normal = row(NORMAL_RESPONSE)

    def poll(name: str, method: str, path: str, payload: bytes) -> None:
        while not done.is_set():
            start = time.perf_counter()
            with contextlib.suppress(OSError):
                server.request(method, path, payload)
            waits[name].append(time.perf_counter() - start)
            time.sleep(0.05)

    pollers = [
        threading.Thread(target=poll, args=("health", "GET", "/health", b"")),
        threading.Thread(target=poll, args=("verify", "POST", "/verify", normal)),
    ]
    for thread in pollers:
        thread.start()
    time.sleep(0.3)
    start = time.perf_counter()
    status, _ = server.request("POST", "/verify", body)
    took = time.perf_counter() - start
    time.sleep(0.2)
    done.set()
    for thread in pollers:
        thread.join()
    health, verify = max(waits["health"]) * 1e3, max(waits["verify"]) * 1e3
    print(
        f"  {label:44s} {status} in {took:6.2f} s | worst /health {health:7.1f} ms, "
        f"normal /verify {verify:7.1f} ms"
    )


def is_open(sock: socket.socket) -> bool:
    """False once the server has closed its side (after a 408 or not)."""
    sock.setblocking(False)
    try:
        while True:
            if sock.recv(65536) == b"":
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def first_line(sock: socket.socket, wait: float) -> str:
    sock.settimeout(wait)
    try:
        got = sock.recv(4096)
    except TimeoutError:
        return "nothing (still open)"
    except OSError as exc:
        return f"closed ({exc.__class__.__name__})"
    return got.split(b"\r\n", 1)[0].decode("latin-1") if got else "closed without a reply"


def stalls(server: Server) -> None:
    print("== one hostile /verify at a time, with /health and a normal /verify polled every 50 ms")
    stall(
        server,
        "1.5 KB 'Answer: $$$...x' (robust)",
        row("Answer: " + "$" * 1500 + "x", grading_mode="robust"),
    )
    stall(
        server,
        "12k digits 'Answer: 111...x' (robust)",
        row("Answer: " + "1" * 12000 + "x", grading_mode="robust"),
    )
    padded = row(
        "Answer: " + "1" * 12000 + "x", grading_mode="robust", metadata={"pad": "p" * 70_000}
    )
    stall(server, "the same in an 82 KB body", padded)
    regexes = {"output_regex": ["(a|aa)+$"] * 32}
    stall(
        server,
        "32 x '(a|aa)+$' sample regexes",
        row("a" * 60 + "!", grading_mode="robust", template_metadata=regexes),
    )
    stall(
        server,
        "5 MB of text (robust)",
        row("Some reasoning. " * 327_680 + "Answer: B", grading_mode="robust"),
    )


def timeouts(server: Server) -> None:
    print("== slow and idle clients")
    short = server.connect(None)
    short.sendall(b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    start = time.perf_counter()
    answer = first_line(short, 75)  # the default body timeout is 60 s
    print(f"  Content-Length 100, 1 byte sent: {answer} after {time.perf_counter() - start:.1f} s")
    short.close()

    idle = [server.connect(None) for _ in range(500)]
    trickle = server.connect(None)
    start = time.perf_counter()
    sent = 0
    for byte in b"GET /health HTTP/1.1\r\nX-a: " + b"b" * 200:
        try:
            trickle.sendall(bytes([byte]))
        except OSError:
            break
        sent += 1
        time.sleep(0.2)
        if time.perf_counter() - start > 20:
            break
    still = sum(map(is_open, idle))
    print(
        f"  500 connections that send nothing: {still} still open after "
        f"{time.perf_counter() - start:.0f} s"
    )
    print(f"  a header sent 1 byte / 0.2 s: open={is_open(trickle)} after {sent} bytes")
    for sock in [*idle, trickle]:
        sock.close()

    endless = server.connect(None)
    endless.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    sent = 0
    try:
        while sent < 64 * 2**20:
            endless.sendall(b"X-Pad: " + b"p" * 1000 + b"\r\n")
            sent += 1009
    except OSError:
        pass
    answer = first_line(endless, 5)
    print(f"  an endless header: {answer} after {sent / 1024:,.0f} KB sent")
    endless.close()
    start = time.perf_counter()
    status = server.request("GET", "/health")[0]
    print(f"  afterwards /health: {status} in {(time.perf_counter() - start) * 1e3:.1f} ms")


def echoes(server: Server) -> None:
    print("== what a 422 sends back")
    status, out = server.request("POST", "/verify", row("x", grading_mode=["x" * 6_000_000]))
    print(f"  a 6 MB bad grading_mode: {status}, {len(out):,} bytes")
    bad = json.loads(row("x", grading_mode=["y" * 100_000]))
    status, out = server.request(
        "POST", "/verify_batch", json.dumps({"requests": [bad] * 100}).encode()
    )
    print(f"  /verify_batch of 100 rows with a 100 KB bad value: {status}, {len(out):,} bytes")
    status, out = server.request("POST", "/verify", b'{"response": "' + b"\xff" * 1000 + b'"}')
    print(f"  1 KB of invalid UTF-8: {status}, {len(out):,} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-timeouts", action="store_true")
    parser.add_argument("serve_args", nargs="*", help="arguments for choicebox serve (after --)")
    args = parser.parse_args()
    server = Server(args.serve_args)
    try:
        server.request("POST", "/verify", row(NORMAL_RESPONSE))  # the grading processes are up
        stalls(server)
        echoes(server)
        if not args.skip_timeouts:
            timeouts(server)
        print(f"server RSS at the end: {server.rss_mb()} MB")
    finally:
        logs = server.stop()
    tracebacks = logs.count("Traceback")
    print(f"tracebacks in the server log: {tracebacks}")


if __name__ == "__main__":
    main()
