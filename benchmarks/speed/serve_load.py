"""Load test of ``choicebox serve`` over loopback: requests/s and latency of /verify and
/verify_batch.

By default it starts one server worker pinned to core 0 (``taskset -c 0``) and drives it from
core 1 with ``wrk`` (Debian package ``wrk``; POST bodies from a generated Lua script). Without
wrk it falls back to a Python asyncio driver (httpx), which is much slower: the report says which
driver ran. Phases, each ``--seconds`` long:

1. ``GET /health`` (trivial): the ceiling of driver + HTTP stack, so the driver is shown not to be
   the bottleneck of the later phases;
2. ``POST /verify`` with ``--connections`` concurrent clients and ~5 KB NeMo Gym-shaped rows;
3. ``POST /verify_batch`` with ``--batch`` rows per request (verdicts/s = requests/s x batch).

    python benchmarks/speed/serve_load.py                  # start a server, 10 s per phase
    python benchmarks/speed/serve_load.py --url http://127.0.0.1:8000 --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

LETTERS = "ABCDEFGHIJ"
TOPICS = [
    "which mineral is hardest",
    "which test detects a point mutation",
    "which gas dominates the atmosphere of Venus",
    "which enzyme unwinds DNA",
]


def build_request(i: int) -> dict[str, Any]:
    """A ~5 KB verify request shaped like a NeMo Gym mcqa rollout row."""
    n_options = 4 + i % 7  # 4 to 10 options, as in GPQA/MMLU-Pro style data
    options = [
        {LETTERS[k]: f"Option {LETTERS[k]} for item {i}: a plausible distractor, number {k}"}
        for k in range(n_options)
    ]
    expected = LETTERS[i % n_options]
    chosen = LETTERS[(i // 3) % n_options]  # about a third of the answers are right
    listing = "\n".join(f"{k}: {v}" for o in options for k, v in o.items())
    prompt = (
        "Answer the following multiple choice question. The last line of your response should "
        "be of the following format: '\\boxed{LETTER}' (without quotes) where LETTER is one of "
        f"the options. Think step by step before answering.\n\nQuestion {i}: {TOPICS[i % 4]}? "
        + "Some context for the question. " * 40
        + "\n\n"
        + listing
    )
    reasoning = (
        "Let me consider each option carefully, weighing the evidence for and against it. " * 26
    )
    text = f"{reasoning}\n\nAfter eliminating the others, the answer is \\boxed{{{chosen}}}"
    return {
        "responses_create_params": {
            "input": [{"role": "user", "content": prompt}],
            "temperature": 0.6,
            "max_output_tokens": 4096,
        },
        "response": {
            "id": f"resp_{i:08d}",
            "created_at": 1767225600.0 + i,
            "model": "nvidia/test-model",
            "object": "response",
            "output": [
                {
                    "id": f"msg_{i:08d}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {"input_tokens": 700, "output_tokens": 600, "total_tokens": 1300},
        },
        "options": options,
        "expected_answer": expected,
        "grading_mode": "strict_single_letter_boxed",
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "metadata": {"source": "serve_load", "index": i},
    }


# --- wrk -------------------------------------------------------------------------------------

LUA = """
local bodies = {}
local path = "%(path)s"
local method = "%(method)s"
local index = 0
function init(args)
  if method == "POST" then
    for line in io.lines(path) do bodies[#bodies + 1] = line end
  end
end
function request()
  if method == "GET" then return wrk.format("GET", nil, nil, nil) end
  index = index %% #bodies + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, bodies[index])
end
"""


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(
    url: str,
    method: str,
    bodies: Path | None,
    *,
    connections: int,
    seconds: float,
    cpu: str | None,
) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % {"path": str(bodies or ""), "method": method})
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", "--latency", "-s", script.name]
    if cpu is not None:
        cmd = ["taskset", "-c", cpu, *cmd]
    out = subprocess.run(
        [*cmd, url], check=True, capture_output=True, text=True, timeout=seconds + 60
    ).stdout
    os.unlink(script.name)
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", out).group(1))  # type: ignore[union-attr]
    lat = {
        p: _ms(v, u)
        for p, v, u in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    }
    bad = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    return {
        "rps": rps,
        "p50_ms": lat.get("50"),
        "p99_ms": lat.get("99"),
        "non_2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(0) if errors else "",
        "raw": out,
    }


# --- asyncio fallback ------------------------------------------------------------------------


async def _drive(
    url: str, method: str, bodies: list[bytes], connections: int, seconds: float
) -> dict[str, Any]:
    latencies: list[float] = []
    non_2xx = 0
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    headers = {"content-type": "application/json"}
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        deadline = time.perf_counter() + seconds

        async def worker(k: int) -> None:
            nonlocal non_2xx
            i = k
            while time.perf_counter() < deadline:
                t = time.perf_counter()
                if method == "GET":
                    reply = await client.get(url)
                else:
                    reply = await client.post(url, content=bodies[i % len(bodies)], headers=headers)
                latencies.append(time.perf_counter() - t)
                non_2xx += reply.status_code >= 300
                i += connections

        start = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(connections)))
        elapsed = time.perf_counter() - start
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "non_2xx": non_2xx,
        "socket_errors": "",
        "raw": "",
    }


# --- main ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_server(
    cpu: str | None, workers: int, grade_workers: int | None
) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "choicebox", "serve", "--port", str(port)]
    cmd += ["--workers", str(workers), "--log-level", "warning"]
    if grade_workers is not None:
        cmd += ["--grade-workers", str(grade_workers)]
    if cpu is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", cpu, *cmd]
    proc = subprocess.Popen(cmd)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("the server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running server (default: start one)")
    parser.add_argument("--seconds", type=float, default=10.0, help="per phase (default 10)")
    parser.add_argument("--connections", type=int, default=64, help="for /verify (default 64)")
    parser.add_argument("--batch", type=int, default=256, help="rows per /verify_batch")
    parser.add_argument("--batch-connections", type=int, default=2)
    parser.add_argument("--server-cpu", default="0", help="taskset list for the server")
    parser.add_argument("--client-cpu", default="1", help="taskset list for the driver")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--grade-workers",
        type=int,
        default=None,
        help="the server's --grade-workers (default: its own)",
    )
    parser.add_argument("--driver", choices=["auto", "wrk", "python"], default="auto")
    args = parser.parse_args()

    driver = args.driver
    if driver == "auto":
        driver = "wrk" if shutil.which("wrk") else "python"
    has_taskset = shutil.which("taskset") is not None
    client_cpu = args.client_cpu if has_taskset else None

    requests = [build_request(i) for i in range(512)]
    verify_bodies = [orjson.dumps(r) for r in requests]
    batches = [
        orjson.dumps({"requests": [requests[(j + k) % len(requests)] for k in range(args.batch)]})
        for j in range(0, len(requests), 64)
    ]
    sizes = [len(b) for b in verify_bodies]
    print(
        f"driver: {driver}; verify body {min(sizes)}-{max(sizes)} bytes "
        f"(mean {sum(sizes) // len(sizes)}); batch body ~{len(batches[0]) // 1024} KiB"
    )

    proc = None
    if args.url:
        base = args.url.rstrip("/")
        print(f"server: {base} (external)")
    else:
        proc, base = _start_server(
            args.server_cpu if has_taskset else None, args.workers, args.grade_workers
        )
        graders = "default" if args.grade_workers is None else args.grade_workers
        print(
            f"server: {base}, {args.workers} worker(s), grade workers {graders}, "
            f"cores {args.server_cpu}; "
            f"driver on cores {client_cpu}"
        )

    # Every body is valid and graded: check one of each before timing.
    check = httpx.post(f"{base}/verify", content=verify_bodies[0], timeout=30)
    assert check.status_code == 200, check.text
    check = httpx.post(f"{base}/verify_batch", content=batches[0], timeout=30)
    assert check.status_code == 200
    assert all("reward" in r for r in check.json()["responses"])

    tmp = Path(tempfile.mkdtemp())
    (tmp / "verify.jsonl").write_bytes(b"\n".join(verify_bodies) + b"\n")
    (tmp / "batch.jsonl").write_bytes(b"\n".join(batches) + b"\n")

    phases = [
        ("GET /health (ceiling)", "GET", "/health", None, verify_bodies, args.connections, 1),
        (
            f"POST /verify, {args.connections} connections",
            "POST",
            "/verify",
            tmp / "verify.jsonl",
            verify_bodies,
            args.connections,
            1,
        ),
        (
            f"POST /verify_batch, {args.batch}/batch, {args.batch_connections} connections",
            "POST",
            "/verify_batch",
            tmp / "batch.jsonl",
            batches,
            args.batch_connections,
            args.batch,
        ),
    ]
    try:
        for name, method, path, file, bodies, conns, per in phases:
            if driver == "wrk":
                result = run_wrk(
                    base + path,
                    method,
                    file,
                    connections=conns,
                    seconds=args.seconds,
                    cpu=client_cpu,
                )
            else:
                result = asyncio.run(_drive(base + path, method, bodies, conns, args.seconds))
            line = (
                f"{name:<52} {result['rps']:>10,.0f} req/s  p50 {result['p50_ms']:.2f} ms  "
                f"p99 {result['p99_ms']:.2f} ms"
            )
            if per > 1:
                line += f"  = {result['rps'] * per:,.0f} verdicts/s"
            if result["non_2xx"]:
                line += f"  NON-2XX: {result['non_2xx']}"
            if result["socket_errors"]:
                line += f"  {result['socket_errors']}"
            print(line, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
