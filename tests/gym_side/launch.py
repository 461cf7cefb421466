"""Running Gym's commands from a test: free ports, the environment, the stub model.

Gym's head server listens on 11000 unless ``head_server.port`` says otherwise, and every gym
command (``env start``, ``eval run --no-serve``, ``eval reverify``) finds it there; the other
servers get ports Gym probes for itself. A test writes a free port into the ``env.yaml`` of its
working directory, which every gym command run there reads, so two runs (or a server already on
11000) do not collide.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import socket
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

STUB = Path(__file__).parent / "stub_model.py"


# Gym probes for its servers' ports in 10001-20000 (``port_range_low``/``port_range_high``), Ray
# gives its workers 10002-19999, and the kernel hands out its ephemeral range to every bind to
# port 0 and every outgoing connection. A port taken by bind(0) and released is free only until
# the next of those: Ray opens dozens of connections while Gym starts, and one took the port a
# test had written into Gym's config (CI: "Process `choicebox_mcqa` finished unexpectedly").
# So a test's port comes from the gap between Gym's range and the kernel's, which nothing
# else here draws from.
_GYM_AND_RAY_HIGH = 20_000


def _ephemeral_low() -> int:
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text("ascii")
        return int(text.split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def free_port() -> int:
    """A port free now that neither Gym, Ray nor the kernel will hand to anyone else."""
    low, high = _GYM_AND_RAY_HIGH + 1, _ephemeral_low() - 1
    for _ in range(200):
        port = random.randint(low, high) if high > low else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            found: int = sock.getsockname()[1]
            return found
    raise RuntimeError(f"no free port in {low}-{high}")


def gym_environ() -> dict[str, str]:
    """This process's environment, with Ray's telemetry and auth token off and loopback unproxied."""
    return {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "disabled",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "PYTHONUNBUFFERED": "1",
    }


def head_server_yaml(port: int) -> str:
    """The ``env.yaml`` lines that put Gym's head server on ``port``."""
    return f"head_server:\n  port: {port}\n"


def prompt_of(row: Mapping[str, Any]) -> str:
    """A row's user text, as the stub keys its replies (``stub_model.user_text``)."""
    messages = row["responses_create_params"]["input"]
    return "".join(m["content"] for m in messages if m.get("role") == "user")


def write_replies(path: Path, replies: Iterable[tuple[Mapping[str, Any], list[str]]]) -> Path:
    """The stub's table: each row's prompt digest -> the outputs its repeats get, in order."""
    table: dict[str, list[str]] = {}
    for row, outputs in replies:
        digest = hashlib.sha256(prompt_of(row).encode("utf-8")).hexdigest()
        assert digest not in table, f"two rows share a prompt: {row.get('uuid')}"
        table[digest] = outputs
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


@contextlib.contextmanager
def stub_model(table: Path) -> Iterator[int]:
    """The stub model serving ``table`` (see ``stub_model.py``); yields its port."""
    stub = subprocess.Popen(
        [sys.executable, str(STUB), str(table)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert stub.stdout is not None
        yield int(stub.stdout.readline())
    finally:
        stub.terminate()
        stub.wait(timeout=10)
