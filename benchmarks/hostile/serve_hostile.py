"""Hostile clients against a real ``choicebox serve``: does anything stall, hang or echo too much?

Starts ``choicebox serve`` on a free loopback port (one server worker, this interpreter) and
measures, with bounded loops only:

1. how long ``GET /health`` and a normal ``POST /verify`` wait while one hostile ``/verify`` is
   graded (slow model outputs, a catastrophic sample regex, a large body);
2. what the server does with a body shorter than its ``Content-Length``, with connections that
   never send a byte, with a header sent one byte at a time and with an endless header;
3. how many bytes a 422 sends back for a 6 MB bad value, and for a batch of 100 of them;

and issue 24's cases, each while a well-behaved client sends ``GET /health`` and a normal
``POST /verify`` in turn (one at a time, 20 ms apart) and reports their p50, p99 and worst
latency (the goal: p99 under 50 ms):

* case 3, small requests that are costly to grade: four clients send, back to back, /verify
  bodies of 16 KiB or less without sample patterns, each shape at its most costly (a long
  option against many boxes or answer lines, robust on 16 KiB of answer statements), every
  body different (no cache helps); and, in this process, the most the event loop would be held
  by a /verify the server grades inline (``--inline-survey``);
* case 4, starvation: 45 clients (then 120) send /verify with 32 catastrophic sample patterns,
  back to back, while a small /verify_batch is timed; then 45 clients send the same and leave
  at once, and a request that needs a grading process is timed after them;
* case 5, amplified and held replies: the reply to a 1.9 MiB /verify_batch of ``[0,0,...]``
  and to a 1.9 MiB /aggregate_metrics of long metric names, and six clients that ask for a
  large reply and never read it (server and grading processes' memory while they wait, and
  after the send timeout).

    python benchmarks/hostile/serve_hostile.py                 # default server options
    python benchmarks/hostile/serve_hostile.py -- --grade-timeout 5 --header-timeout 2
    python benchmarks/hostile/serve_hostile.py --skip-timeouts  # only the stall and echo figures
    python benchmarks/hostile/serve_hostile.py --cases 3,4,5 --skip-basics   # issue 24's cases only
    PYTHONPATH=OTHER/sdk python benchmarks/hostile/serve_hostile.py --cases 3,4,5 --skip-basics

Arguments after ``--`` go to ``choicebox serve``. With ``PYTHONPATH`` naming another checkout's
``sdk``, the server (and its grading processes) run that code: the figures before a change.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import random
import socket
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
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
        return _rss_mb(self.proc.pid)

    def family_rss_mb(self) -> tuple[int, int]:
        """RSS of the server process and of all its descendants (grading processes, the
        forkserver), in MB."""
        return self.rss_mb(), sum(_rss_mb(pid) for pid in _descendants(self.proc.pid))

    def stop(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode("utf-8", "replace") if self.proc.stderr else ""


def _rss_mb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                children = [int(c) for c in task.read_text().split()]
                found += children
                todo += children
    return found


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


def established(port: int) -> int:
    """TCP connections the server (listening on ``port``) holds open, from ``/proc/net/tcp``:
    a client that never reads cannot tell from its own end, where the kernel keeps what came."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state = fields[1], fields[3]
                if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count


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


# --- issue 24's cases, with a well-behaved client measuring -----------------------------------


class Connection:
    """One kept-alive HTTP connection (as Gym's aiohttp client keeps them)."""

    def __init__(self, server: Server, timeout: float = 120.0) -> None:
        self.server = server
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body); status 0 when the connection failed (it is reopened)."""
        headers = {"Content-Type": "application/json"} if body else {}
        try:
            self.conn.request(method, path, body=body or None, headers=headers)
            reply = self.conn.getresponse()
            data = reply.read()
        except (OSError, http.client.HTTPException):
            self.close()
            self.conn = http.client.HTTPConnection(
                "127.0.0.1", self.server.port, timeout=self.timeout
            )
            return 0, {}, b""
        if reply.getheader("connection", "").lower() == "close":
            self.close()
            self.conn = http.client.HTTPConnection(
                "127.0.0.1", self.server.port, timeout=self.timeout
            )
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()


class GoodClient:
    """Sends ``GET /health`` and a normal ``POST /verify`` in turn, one at a time, 20 ms apart,
    and keeps each one's latency. It runs in a process of its own, so that the hostile clients'
    threads (and their hold on this interpreter) do not count in its figures."""

    def __init__(self, server: Server) -> None:
        self.waits: dict[str, list[float]] = {"health": [], "verify": []}
        self.failures = 0
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._pipe, theirs = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_good_client_main, args=(server.port, self._stop, theirs), daemon=True
        )

    def __enter__(self) -> GoodClient:
        self._process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.waits, self.failures = self._pipe.recv()
        self._process.join()

    def summary(self) -> str:
        parts = [f"{name} {_spread(self.waits[name])}" for name in ("health", "verify")]
        failed = f", {self.failures} not 200" if self.failures else ""
        return "good client: " + "; ".join(parts) + failed


def _good_client_main(port: int, stop: Any, pipe: Any) -> None:
    server = Server.__new__(Server)
    server.port = port
    conn = Connection(server, timeout=120)
    waits: dict[str, list[float]] = {"health": [], "verify": []}
    failures = 0
    normal = row(NORMAL_RESPONSE)
    while not stop.is_set():
        for name, method, path, body in (
            ("health", "GET", "/health", b""),
            ("verify", "POST", "/verify", normal),
        ):
            start = time.perf_counter()
            status, _, _ = conn.request(method, path, body)
            waits[name].append(time.perf_counter() - start)
            failures += status != 200
            time.sleep(0.02)
    conn.close()
    pipe.send((waits, failures))


def _spread(seconds: list[float]) -> str:
    """p50 / p99 / worst in ms, and the count."""
    if not seconds:
        return "no requests"
    ordered = sorted(seconds)
    p50 = ordered[len(ordered) // 2]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {p50 * 1e3:.1f} / p99 {p99 * 1e3:.1f} / max {ordered[-1] * 1e3:.1f} ms "
        f"(n={len(ordered)})"
    )


def hammer(
    server: Server, clients: int, make_body: Callable[[], bytes], seconds: float, path: str
) -> list[tuple[int, float, str | None]]:
    """``clients`` threads sending ``path`` back to back for ``seconds``: (status, seconds,
    Retry-After) of every request."""
    results: list[tuple[int, float, str | None]] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        conn = Connection(server, timeout=180)
        while time.monotonic() < stop:
            body = make_body()
            start = time.perf_counter()
            status, headers, _ = conn.request("POST", path, body)
            with lock:
                results.append((status, time.perf_counter() - start, headers.get("retry-after")))
        conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _statuses(results: list[tuple[int, float, str | None]]) -> str:
    counts: dict[int, int] = {}
    for status, _, _ in results:
        counts[status] = counts.get(status, 0) + 1
    shown = ", ".join(f"{count} x {status or 'no reply'}" for status, count in sorted(counts.items()))
    retry = sorted({r for _, _, r in results if r is not None})
    return shown + (f" (Retry-After {', '.join(retry)})" if retry else "")


def _salt() -> str:
    return "".join(random.choices(string.ascii_lowercase, k=12))


def _options(long_a: str) -> list[dict[str, str]]:
    return [{"A": long_a}, {"B": "green"}, {"C": "blue"}, {"D": "1000"}]


def _fill(make: Callable[[int], bytes], limit: int = 16 * 2**10) -> bytes:
    """``make(n)`` for the largest ``n`` whose body is at most ``limit`` bytes."""
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if len(make(mid)) <= limit:
            low = mid
        else:
            high = mid - 1
    return make(low)


def _issue_shape() -> bytes:
    return row(
        "\\boxed{red}" * 660, options=_options(_salt() + "x" * 2438), grading_mode="lenient_boxed"
    )


def _long_option(piece: str, chars: int, mode: str) -> bytes:
    option = "é" + _salt() + "a ," * (chars // 3)
    return _fill(lambda n: row(piece * n, options=_options(option), grading_mode=mode))


def _robust_statements() -> bytes:
    salt = _salt()
    return _fill(lambda n: row("the answer is (A) " * n, options=_options(salt), grading_mode="robust"))


# Each a /verify body of at most 16 KiB without sample patterns, at its most costly: a long
# option compared with every box or answer line (per-sample work done once per box), and the
# costliest linear shape (robust on answer statements). A fresh option text every time.
COSTLY_SMALL: dict[str, Callable[[], bytes]] = {
    "issue's: 2,450-char option, 660 \\boxed{red}, lenient_boxed": _issue_shape,
    "8,000-char option, \\boxed{A: red} x N, lenient_boxed": lambda: _long_option(
        "\\boxed{A: red}", 8_000, "lenient_boxed"
    ),
    "10,000-char option, 'Answer: red' x N, lenient_answer_colon_md": lambda: _long_option(
        "Answer: red\n", 10_000, "lenient_answer_colon_md"
    ),
    "16 KiB of 'the answer is (A)', robust": _robust_statements,
}


def case_3(server: Server, seconds: float) -> None:
    print("== case 3: four clients send costly /verify bodies of 16 KiB or less, back to back")
    with GoodClient(server) as good:
        time.sleep(1)
    print(f"  {'no attack':62s} {good.summary()}")
    for label, make in COSTLY_SMALL.items():
        body = make()
        with GoodClient(server) as good:
            results = hammer(server, 4, make, seconds, "/verify")
        print(
            f"  {label:62s} ({len(body):,} B) {_statuses(results)}, each "
            f"{_spread([t for _, t, _ in results])}"
        )
        print(f"  {'':62s} {good.summary()}")


def inline_survey() -> None:
    """In this process: the longest the event loop is held by a /verify the server grades
    inline, for each costly shape cut to the largest body that the server still grades inline."""
    # Imported here: the server under test may run another checkout's code (PYTHONPATH).
    from choicebox._modes import default_registry
    from choicebox.server._app import SMALL_MAX_BYTES
    from choicebox.server._respond import INLINE_CHARS, NotInline, Verifier, respond

    verifier = Verifier(default_registry())
    print("== case 3, in process: the costliest /verify bodies still graded inline, per mode")
    # The costliest shapes of each mode (of 26 shapes of answer statements, boxes and lines).
    pieces = [
        ("## Final Answer\nB\n", "robust"),
        ("Answer: A or B\n", "robust"),
        ("the answer is (A) ", "robust"),
        ("\\boxed{A} or \\boxed{red} ", "robust"),
        ("Answer: red\n", "lenient_answer_colon_md"),
        ("Answer: A or B\n", "lenient_answer_colon_md"),
        ("A B C D ", "mmlu_pro"),
        ("A) B) C) ", "mmlu_pro"),
        ("\\boxed{A: red}", "lenient_boxed"),
        ("\\fbox{B}", "lenient_boxed"),
        ("\\boxed{A: red}", "strict_single_letter_boxed"),
        ("\\fbox{B}", "strict_single_letter_boxed"),
        ("I think B. Final answer: C. ", "lenient_answer_colon"),
        ("ANSWER: D\n", "lenient_answer_colon"),
    ]
    respond(verifier, "verify", row(NORMAL_RESPONSE))  # compiled patterns, the box parser

    def inline(body: bytes) -> bool:
        try:
            respond(verifier, "verify", body, inline=True)
        except NotInline:
            return False
        return len(body) <= SMALL_MAX_BYTES

    worst: dict[str, tuple[float, str]] = {}
    for piece, mode in pieces:
        for option_chars in (4, 2_000, 5_000):

            def make(n: int, piece: str = piece, mode: str = mode, size: int = option_chars) -> bytes:
                option = "é" + _salt() + "a ," * (size // 3)
                return row(piece * n, options=_options(option), grading_mode=mode)

            if not inline(make(0)):
                continue  # the option alone costs too much
            low, high = 0, 4_000
            while low < high:  # the most repeats still graded inline
                mid = (low + high + 1) // 2
                low, high = (mid, high) if inline(make(mid)) else (low, mid - 1)
            best = float("inf")
            for _ in range(5):
                body = make(low)
                start = time.thread_time()
                respond(verifier, "verify", body, inline=True)
                best = min(best, time.thread_time() - start)
            label = f"{piece.strip()!r} x {low}, option of {option_chars:,} chars, {mode}"
            print(f"  {label:78s} {len(body):6,} B {best * 1e3:6.2f} ms")
            worst[mode] = max(worst.get(mode, (0.0, "")), (best, label))
    for mode, (seconds, label) in sorted(worst.items(), key=lambda item: -item[1][0]):
        limit = INLINE_CHARS[mode]
        print(f"  worst in {mode} (at most {limit:,}): {seconds * 1e3:.2f} ms ({label})")


# Each of the 32 patterns runs to its timeout: about 1 s of a grading process (the row's regex
# budget is four timeouts).
CATASTROPHIC = row(
    "a" * 60 + "!", grading_mode="robust", template_metadata={"output_regex": ["(a|aa)+$"] * 32}
)


def case_4(server: Server, seconds: float) -> None:
    for clients in (45, 120):
        _starve(server, seconds, clients)
    _leave(server)


def _starve(server: Server, seconds: float, clients: int) -> None:
    print(
        f"== case 4: {clients} clients send /verify with 32 catastrophic sample patterns, "
        "back to back"
    )
    small_batch = json.dumps(
        {"requests": [json.loads(row(NORMAL_RESPONSE)) for _ in range(3)]}
    ).encode()
    timed: list[float] = []
    statuses: list[int] = []
    stop = threading.Event()

    def time_small_batches() -> None:
        conn = Connection(server, timeout=300)
        while not stop.is_set():
            start = time.perf_counter()
            status, _, _ = conn.request("POST", "/verify_batch", small_batch)
            timed.append(time.perf_counter() - start)
            statuses.append(status)
            time.sleep(0.2)
        conn.close()

    batches = threading.Thread(target=time_small_batches, daemon=True)
    with GoodClient(server) as good:
        batches.start()
        results = hammer(server, clients, lambda: CATASTROPHIC, seconds, "/verify")
        stop.set()
        batches.join()
    print(f"  hostile: {_statuses(results)}, each {_spread([t for _, t, _ in results])}")
    ok = sum(status == 200 for status in statuses)
    print(f"  a 3-row /verify_batch meanwhile: {ok}/{len(statuses)} answered 200, {_spread(timed)}")
    print(f"  {good.summary()}")


def _leave(server: Server) -> None:
    print("== case 4: 45 clients send the same and leave at once; then a request for the pool")
    for _ in range(45):
        sock = server.connect(5)
        head = (
            f"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(CATASTROPHIC)}\r\n\r\n"
        )
        sock.sendall(head.encode() + CATASTROPHIC)
        sock.close()
    time.sleep(0.5)
    patterned = row("Final: B", template_metadata={"output_regex": [r"Final: ([A-D])"]})
    start = time.perf_counter()
    status, _ = server.request("POST", "/verify", patterned, timeout=300)
    took = time.perf_counter() - start
    print(f"  a /verify with one innocent sample pattern: {status} in {took:.2f} s")


HOLD_SECONDS = 45  # past the default send timeout (30 s)


def case_5(server: Server, seconds: float) -> None:
    print("== case 5: replies amplified and held")
    zeros = b'{"requests":[' + b",".join([b"0"] * 1_000_000) + b"]}"
    before = server.family_rss_mb()
    peak = [0, 0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            rss = server.family_rss_mb()
            peak[0], peak[1] = max(peak[0], rss[0]), max(peak[1], rss[1])
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    start = time.perf_counter()
    status, out = server.request("POST", "/verify_batch", zeros, timeout=300)
    took = time.perf_counter() - start
    done.set()
    watcher.join()
    print(
        f"  /verify_batch of {len(zeros) / 2**20:.1f} MiB of [0,0,...]: {status}, "
        f"{len(out) / 2**20:.2f} MiB reply ({len(out) / len(zeros):.1f}x) in {took:.1f} s; "
        f"RSS server {before[0]} -> peak {peak[0]} MB, grading processes {before[1]} -> "
        f"peak {peak[1]} MB"
    )
    names: dict[str, Any] = {"reward": 1.0, "uuid": "t"}
    index = 0
    while index * 45 < 1_900_000:
        names["metric_" + "n" * 32 + str(index)] = 1.0
        index += 1
    metrics = json.dumps({"verify_responses": [names]}).encode()
    start = time.perf_counter()
    status, out = server.request("POST", "/aggregate_metrics", metrics, timeout=300)
    print(
        f"  /aggregate_metrics of {len(metrics) / 2**20:.1f} MiB of metric names: {status}, "
        f"{len(out) / 2**20:.2f} MiB reply ({len(out) / len(metrics):.1f}x) in "
        f"{time.perf_counter() - start:.1f} s"
    )
    if out and status != 200:
        print(f"    {json.loads(out)['detail'][:160]}")

    # A large reply the server may send: a batch of real-sized rows, about 15 MiB each way.
    one = json.loads(row(NORMAL_RESPONSE, metadata={"pad": "p" * 7_000}))
    batch = json.dumps({"requests": [one] * 2_000}).encode()
    print(f"  six clients ask for the reply to a {len(batch) / 2**20:.1f} MiB /verify_batch and never read it")
    idle = server.family_rss_mb()
    socks = []
    with GoodClient(server) as good:
        for _ in range(6):
            sock = server.connect(None)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            head = (
                f"POST /verify_batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(batch)}\r\n\r\n"
            )
            sock.sendall(head.encode() + batch)
            socks.append(sock)
        held_at = time.monotonic()
        samples = []
        while time.monotonic() - held_at < HOLD_SECONDS:
            time.sleep(1)
            open_now = established(server.port)
            samples.append((time.monotonic() - held_at, *server.family_rss_mb(), open_now))
    for t, srv, workers, still in samples[:: max(1, len(samples) // 8)] + samples[-1:]:
        print(
            f"    after {t:4.0f} s: server {srv} MB, grading processes {workers} MB, "
            f"{still} connections open on the server (6 + the good client's)"
        )
    print(f"    before: server {idle[0]} MB, grading processes {idle[1]} MB; {good.summary()}")
    for sock in socks:
        sock.close()



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-timeouts", action="store_true")
    parser.add_argument("--skip-basics", action="store_true", help="only the cases of --cases")
    parser.add_argument("--cases", default="", help="issue 24's cases to run: 3,4,5")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each attack")
    parser.add_argument(
        "--inline-survey", action="store_true", help="case 3's inline grading cost, in process"
    )
    parser.add_argument("serve_args", nargs="*", help="arguments for choicebox serve (after --)")
    args = parser.parse_args()
    cases = {case.strip() for case in args.cases.split(",") if case.strip()}
    if args.inline_survey:
        inline_survey()
    if args.skip_basics and not cases:
        return
    server = Server(args.serve_args)
    try:
        server.request("POST", "/verify", row(NORMAL_RESPONSE))  # the grading processes are up
        if not args.skip_basics:
            stalls(server)
            echoes(server)
            if not args.skip_timeouts:
                timeouts(server)
        for case, run in (("3", case_3), ("4", case_4), ("5", case_5)):
            if case in cases:
                run(server, args.seconds)
        print(f"server RSS at the end: {server.rss_mb()} MB")
    finally:
        logs = server.stop()
    tracebacks = logs.count("Traceback")
    print(f"tracebacks in the server log: {tracebacks}")


if __name__ == "__main__":
    main()
