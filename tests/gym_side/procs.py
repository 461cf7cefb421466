"""The processes of a session, read from ``/proc`` (Linux).

A command started with ``start_new_session=True`` leads a session of its own, and whatever it
starts stays in that session unless it calls ``setsid`` itself (Gym's servers, Ray's raylet,
GCS, dashboard and agents, and ``choicebox serve``'s workers do not). So "what is left of it" is
the live processes of that session: zombies are dead and not counted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import attrs


@attrs.frozen(kw_only=True)
class Process:
    pid: int
    parent: int
    name: str  # the kernel's short name (``comm``)
    command: str
    cwd: str | None


def _read(entry: Path, session: int) -> Process | None:
    try:
        stat = (entry / "stat").read_text()
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, parent, _group, sid = stat[stat.rindex(")") + 2 :].split()[:4]
        if int(sid) != session or state in ("Z", "X"):
            return None
        command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        try:
            cwd: str | None = os.readlink(entry / "cwd")
        except OSError:
            cwd = None
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return None  # it ended while being read
    return Process(
        pid=int(entry.name), parent=int(parent), name=name, command=command.strip(), cwd=cwd
    )


def in_session(session: int, keep: Callable[[Process], bool] = lambda _: True) -> list[Process]:
    """The live processes of ``session`` that ``keep`` accepts, by pid."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            process = _read(entry, session)
            if process is not None and keep(process):
                found.append(process)
    return sorted(found, key=lambda p: p.pid)


def wait_until_gone(
    session: int, keep: Callable[[Process], bool], seconds: float
) -> list[Process]:
    """Wait up to ``seconds`` for the processes ``keep`` accepts to end; those still running."""
    deadline = time.monotonic() + seconds
    while (left := in_session(session, keep)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def kill_all(processes: list[Process]) -> None:
    """SIGKILL each of ``processes`` (a test's own, by pid)."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
