"""``choicebox serve`` and NeMo Gym's own mcqa server under the same HTTP load, in one run.

Real rows (NeMo Gym verify rows: ``responses_create_params``, ``response``, ``options``,
``expected_answer`` ...) are replayed as ``POST /verify`` bodies, the same bodies for both
servers. Each server runs as one process pinned to core 0 (``taskset -c 0``; choicebox's grading
processes inherit the pin, so a pool shares that core with the event loop) and is driven by
``wrk`` pinned to core 1, with a Lua script that cycles through the bodies.

* choicebox: ``choicebox serve --workers 1 --mode MODE --grade-workers N`` for each ``N`` in
  ``--grade-workers`` (0 grades everything in the event loop's process; 1 or 2, the default,
  start a pool of grading processes for batches, bodies with sample regexes and bodies over 16
  KiB, which isolates a slow row at the price of an IPC round trip, while a small verify body is
  still graded in the event loop's process).
* Gym: nemo-gym 0.7.0's ``MCQAResourcesServer`` with ``grading_mode: MODE`` in its config, its
  app assembled as ``SimpleServer.run_webserver`` assembles it (``setup_webserver``, liveness
  routes, exception and cancellation middleware, validation handler) and served by uvicorn with
  run_webserver's settings (httptools with TCP keepalive, uvloop, no access log). It runs in the
  Python 3.13 environment ``gym_side_by_side.py`` installs (``~/.cache/choicebox/gym-0.7.0``).

Before the load, every body is sent once to each server and each reply must be 200 with a JSON
object holding a numeric ``reward``; bodies a server rejects are dropped from the load for every
server (and counted), so both grade the same rows. Gym 0.7.0 rejects null
``parallel_tool_calls``/``tool_choice`` in a recorded prompt, so those nulls are dropped from
every body first (the verdict does not depend on them).

Each (server, mode) is loaded ``--repeat`` times for ``--seconds`` after a short warm-up; the
table shows the best run's verifies/s, p50 and p99 and the spread of verifies/s over the runs.
The machine is shared (a fuzzer, other jobs): the best run is the least disturbed one, and the
spread says how disturbed the others were. "CPU us/verify" is the server's CPU time (its process
group: event loop and grading processes) per request, the least over the runs: it does not drop
when another job takes the core, so it is the steadier figure of cost (1e6 / it = verifies/s
that one core could give the server alone).

    python benchmarks/versus_gym/serve_side_by_side.py benchmarks/data/mmlupro/*.jsonl.gz
    python benchmarks/versus_gym/serve_side_by_side.py FILE --seconds 5 --repeat 2 --modes lenient_boxed
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import orjson

GYM_VERSION = "0.7.0"
GYM_MODES = (
    "strict_single_letter_boxed",
    "lenient_boxed",
    "lenient_answer_colon",
    "lenient_answer_colon_md",
)
CHOICEBOX_ONLY_MODES = ("robust",)
DEFAULT_VENV = Path.home() / ".cache" / "choicebox" / f"gym-{GYM_VERSION}"

# Runs in Gym's environment: Gym's mcqa app on a port, as `SimpleServer.run_webserver` builds
# and serves it, minus what needs a head server (config from Hydra, Ray, the server client).
GYM_SERVER = r"""
import sys
from functools import partial
from pathlib import Path
from unittest.mock import MagicMock

import resources_servers  # a namespace package in the nemo-gym wheel
import uvicorn
from fastapi.exceptions import RequestValidationError

sys.path.insert(0, str(Path(next(iter(resources_servers.__path__))) / "mcqa"))
from app import MCQAResourcesServer, MCQAResourcesServerConfig
from nemo_gym.server_utils import (
    GlobalAIOHTTPAsyncClientConfig,
    KeepaliveHttpToolsProtocol,
    ServerClient,
    _validation_exception_handler,
)

port, mode = int(sys.argv[1]), sys.argv[2]
config = MCQAResourcesServerConfig(
    host="127.0.0.1", port=port, entrypoint="app.py", name="mcqa", grading_mode=mode
)
server = MCQAResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
app = server.setup_webserver()
server.setup_liveness(app)
server.setup_exception_middleware(app)
server.setup_cancellation_middleware(app)
app.exception_handler(RequestValidationError)(_validation_exception_handler)
keepalive = GlobalAIOHTTPAsyncClientConfig()
uvicorn.run(
    app,
    host="127.0.0.1",
    port=port,
    timeout_graceful_shutdown=0.5,
    timeout_keep_alive=30,
    http=partial(
        KeepaliveHttpToolsProtocol,
        keepalive=(
            keepalive.global_aiohttp_tcp_keepalive_idle_seconds,
            keepalive.global_aiohttp_tcp_keepalive_interval_seconds,
            keepalive.global_aiohttp_tcp_keepalive_probes,
        ),
    ),
    access_log=False,
    log_level="warning",
)
"""

LUA = """
local bodies = {}
local index = 0
function init(args)
  for line in io.lines("%(path)s") do bodies[#bodies + 1] = line end
end
function request()
  index = index %% #bodies + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, bodies[index])
end
"""


# --- rows -> bodies ----------------------------------------------------------------------------


def read_bodies(paths: list[Path], per_file: int) -> list[bytes]:
    """The first ``per_file`` rows of each file (0: all) as /verify bodies."""
    bodies: list[bytes] = []
    for path in paths:
        opener: Any = gzip.open if path.suffix == ".gz" else open
        taken = 0
        with opener(path, "rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                bodies.append(verify_body(orjson.loads(line)))
                taken += 1
                if per_file and taken >= per_file:
                    break
    return bodies


def verify_body(row: dict[str, Any]) -> bytes:
    """The row as a /verify body both servers read: Gym 0.7.0 refuses its own recorded rollouts,
    whose prompts carry null ``parallel_tool_calls`` and ``tool_choice`` (its defaults apply
    without them). One line, as the Lua script reads one body per line."""
    params = row.get("responses_create_params")
    if isinstance(params, dict):
        for key in ("parallel_tool_calls", "tool_choice"):
            if key in params and params[key] is None:
                del params[key]
    return orjson.dumps(row)


# --- servers -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _pinned(cmd: list[str], cpu: str | None) -> list[str]:
    return ["taskset", "-c", cpu, *cmd] if cpu is not None else cmd


@contextmanager
def serving(cmd: list[str], port: int, log: Path) -> Iterator[tuple[str, int]]:
    """Run the server ``cmd`` (in its own process group, its output to ``log``) until it answers
    on ``port``."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd, cwd=log.parent, env=env, stdout=out, stderr=out, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise SystemExit(
                    f"the server exited with status {proc.returncode}: {cmd}\n{log.read_text()}"
                )
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise SystemExit(f"the server did not answer within 60 s: {cmd}")
        yield base, proc.pid
    finally:
        # The server first, so that it closes its grading processes itself; then whatever of
        # its group is left (choicebox's forkserver).
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def choicebox_cmd(port: int, mode: str, grade_workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "choicebox",
        "serve",
        "--port",
        str(port),
        "--workers",
        "1",
        "--mode",
        mode,
        "--grade-workers",
        str(grade_workers),
        "--log-level",
        "warning",
    ]


# --- checking and loading ----------------------------------------------------------------------


def rejected(base: str, bodies: list[bytes]) -> dict[int, str]:
    """Index -> why, for each body whose reply is not a 200 JSON object with a numeric reward."""
    out: dict[int, str] = {}
    headers = {"content-type": "application/json"}
    with httpx.Client(timeout=30) as client:
        for index, body in enumerate(bodies):
            reply = client.post(f"{base}/verify", content=body, headers=headers)
            if reply.status_code != 200:
                out[index] = f"HTTP {reply.status_code}"
                continue
            try:
                parsed = orjson.loads(reply.content)
            except orjson.JSONDecodeError:
                out[index] = "reply is not JSON"
                continue
            reward = parsed.get("reward") if isinstance(parsed, dict) else None
            if not isinstance(reward, int | float) or isinstance(reward, bool):
                out[index] = "reply has no numeric reward"
    return out


def group_cpu_seconds(group: int) -> float:
    """CPU time (user + system) used so far by the live processes of process group ``group``:
    the server and, for choicebox, its grading processes. Unlike requests/s on a shared
    machine, CPU time per request does not drop when another job takes the core."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended meanwhile
        # After the name come state, ppid, pgrp, ...: utime and stime are the 12th and 13th.
        if int(fields[2]) == group:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(
    url: str, script: Path, *, connections: int, seconds: float, cpu: str | None
) -> dict[str, Any]:
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency", "-s", str(script)]
    out = subprocess.run(
        [*_pinned(cmd, cpu), url], check=True, capture_output=True, text=True, timeout=seconds + 60
    ).stdout
    rps = re.search(r"Requests/sec:\s*([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    if rps is None or total is None:
        raise SystemExit(f"cannot read wrk's output:\n{out}")
    lat = {
        p: _ms(v, u)
        for p, v, u in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    }
    bad = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", out)
    errors = re.search(r"Socket errors:(.*)", out)
    return {
        "rps": float(rps.group(1)),
        "requests": int(total.group(1)),
        "p50": lat.get("50", float("nan")),
        "p99": lat.get("99", float("nan")),
        "non_2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1).strip() if errors else "",
    }


def load(
    base: str, group: int, script: Path, args: argparse.Namespace, client_cpu: str | None
) -> dict[str, Any]:
    """The best of ``--repeat`` runs, with the spread of requests/s, the least server CPU time
    per request and the error totals."""
    url = f"{base}/verify"
    run_wrk(url, script, connections=args.connections, seconds=args.warmup, cpu=client_cpu)
    runs = []
    for _ in range(args.repeat):
        before = group_cpu_seconds(group)
        run = run_wrk(
            url, script, connections=args.connections, seconds=args.seconds, cpu=client_cpu
        )
        run["cpu_us"] = (group_cpu_seconds(group) - before) / max(run["requests"], 1) * 1e6
        runs.append(run)
    best = max(runs, key=lambda r: r["rps"])
    return {
        **best,
        "low": min(r["rps"] for r in runs),
        "cpu_us": min(r["cpu_us"] for r in runs),
        "non_2xx": sum(r["non_2xx"] for r in runs),
        "socket_errors": "; ".join(r["socket_errors"] for r in runs if r["socket_errors"]),
    }


# --- main --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", type=Path, help="JSONL(.gz) files of verify rows")
    parser.add_argument("--rows", type=int, default=500, help="rows per file (0: all)")
    parser.add_argument("--seconds", type=float, default=10.0, help="per timed run (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="untimed run first (seconds)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per server and mode")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument(
        "--modes",
        default=",".join((*GYM_MODES, *CHOICEBOX_ONLY_MODES)),
        help="comma-separated; Gym runs those it has (default: Gym's four and robust)",
    )
    parser.add_argument(
        "--grade-workers",
        default="0,1,2",
        help="choicebox serve --grade-workers values to measure (default 0,1,2)",
    )
    parser.add_argument("--servers", default="choicebox,gym", help="which to run")
    parser.add_argument("--gym-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--server-cpu", default="0", help="taskset list for each server")
    parser.add_argument("--client-cpu", default="1", help="taskset list for wrk")
    args = parser.parse_args()

    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed (Debian package wrk)")
    has_taskset = shutil.which("taskset") is not None
    server_cpu = args.server_cpu if has_taskset else None
    client_cpu = args.client_cpu if has_taskset else None
    modes = [m for m in args.modes.split(",") if m]
    servers = set(args.servers.split(","))
    grade_workers = [int(n) for n in args.grade_workers.split(",") if n]
    gym_python = args.gym_venv / "bin" / "python"
    if "gym" in servers and not gym_python.exists():
        raise SystemExit(
            f"no Gym environment at {args.gym_venv}: run benchmarks/versus_gym/gym_side_by_side.py once "
            "(it installs nemo-gym there), or pass --gym-venv"
        )

    bodies = read_bodies(args.files, args.rows)
    sizes = sorted(len(b) for b in bodies)
    print(
        f"{len(bodies)} bodies from {len(args.files)} file(s); {sizes[0]}-{sizes[-1]} bytes, "
        f"median {sizes[len(sizes) // 2]}; {args.connections} connections; server on cores "
        f"{server_cpu}, wrk on cores {client_cpu}; best of {args.repeat} x {args.seconds:g} s",
        flush=True,
    )

    scratch = Path(tempfile.mkdtemp(prefix="serve_side_by_side-"))
    gym_script = scratch / "gym_server.py"
    gym_script.write_text(GYM_SERVER)

    # (label, config, mode, command-builder) for every server to load.
    plan: list[tuple[str, str, str, Any]] = []
    for mode in modes:
        if "choicebox" in servers:
            for n in grade_workers:
                config = "inline" if n == 0 else f"pool of {n}"
                plan.append(
                    ("choicebox", config, mode, lambda p, m=mode, n=n: choicebox_cmd(p, m, n))
                )
        if "gym" in servers and mode in GYM_MODES:
            plan.append(
                (
                    "gym",
                    "uvicorn",
                    mode,
                    lambda p, m=mode: [str(gym_python), str(gym_script), str(p), m],
                )
            )

    # Every body once to each server; only the bodies every server grades go into the load.
    dropped: dict[int, str] = {}
    checked: Counter[str] = Counter()
    try:
        for label, config, mode, build in plan:
            port = _free_port()
            command = _pinned(build(port), server_cpu)
            with serving(command, port, scratch / "server.log") as (base, _):
                bad = rejected(base, bodies)
            checked[f"{label} {config} {mode}"] = len(bad)
            for index, why in bad.items():
                dropped.setdefault(index, f"{label} {mode}: {why}")
        kept = [b for i, b in enumerate(bodies) if i not in dropped]
        print(f"checked every body on each server: {len(kept)} graded (200, JSON, reward) by all")
        for name, count in checked.items():
            if count:
                print(f"  {name}: {count} rejected")
        for why, count in Counter(dropped.values()).most_common(5):
            print(f"  dropped {count}: {why}")
        if not kept:
            raise SystemExit("no body was graded by every server")
        body_file = scratch / "bodies.jsonl"
        body_file.write_bytes(b"\n".join(kept) + b"\n")
        script = scratch / "verify.lua"
        script.write_text(LUA % {"path": str(body_file)})

        head = (
            f"{'server':<10} {'config':<10} {'mode':<28} {'verifies/s':>10} {'(low)':>8} "
            f"{'p50 ms':>7} {'p99 ms':>7} {'CPU us/verify':>13}  errors"
        )
        print("\n" + head + "\n" + "-" * len(head), flush=True)
        for label, config, mode, build in plan:
            port = _free_port()
            command = _pinned(build(port), server_cpu)
            with serving(command, port, scratch / "server.log") as (base, group):
                result = load(base, group, script, args, client_cpu)
            errors = f"non-2xx {result['non_2xx']}" if result["non_2xx"] else "0"
            if result["socket_errors"]:
                errors += f"; sockets: {result['socket_errors']}"
            print(
                f"{label:<10} {config:<10} {mode:<28} {result['rps']:>10,.0f} "
                f"{result['low']:>8,.0f} {result['p50']:>7.2f} {result['p99']:>7.2f} {result['cpu_us']:>13.0f}  {errors}",
                flush=True,
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
