"""The commands of the NeMo Gym page (``examples/nemo_gym/README.md``), as a test runs them.

The page's ```` ```bash ```` blocks, in order, are one shell session. A test runs their text with
only the page's placeholders, and the lines that say where Gym's venv and the ready-made venvs
live, replaced (``substitutions``). Each replaced text must be on the page (a test that
substituted nothing would run something the page no longer says), and after the replacements
no placeholder may be left, an elided ``...`` included.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import attrs

from gym_side.launch import head_server_yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "examples" / "nemo_gym" / "README.md"
_BLOCK = re.compile(r"^```bash\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# What a placeholder looks like once the substitutions are done: one left is a page the test
# cannot run as written.
_LEFT = re.compile(r"\b(?:MODEL|HOST|PORT|KEY)\b|/path/to/|\.\.\.|~/|[A-Z]+\.jsonl")


@attrs.frozen(kw_only=True)
class Substitution:
    """Every match of ``pattern`` (a regular expression) becomes ``text``, taken literally."""

    pattern: str
    text: str
    why: str


def bash_blocks(page: Path = PAGE) -> tuple[str, ...]:
    return tuple(_BLOCK.findall(page.read_text(encoding="utf-8")))


def substitutions(
    *, gym_venv: Path, venvs: Path, project: Path, model_address: str
) -> tuple[Substitution, ...]:
    """The page's placeholders and venv locations, in the order they are replaced."""
    return (
        Substitution(
            pattern=re.escape("python3.13 -m venv ~/gym && ~/gym/bin/pip install nemo-gym==0.7.0"),
            text=f": Gym 0.7.0 is installed, in {gym_venv} - tests/gym_side/env.py",
            why="Gym's venv is the tests' cached one (1.4 GB, built once)",
        ),
        Substitution(
            pattern=re.escape("~/gym-venvs"), text=str(venvs), why="the venvs: the test's own"
        ),
        Substitution(
            pattern=r"~/gym(?![\w-])", text=str(gym_venv), why="where Gym's venv is"
        ),
        Substitution(
            pattern=re.escape("/path/to/choicebox"),
            text=str(project),
            why="a copy of this checkout, so the install leaves nothing in the working tree",
        ),
        Substitution(pattern=r"\bHOST:PORT\b", text=model_address, why="the stub model"),
        Substitution(pattern=r"\bMODEL\b", text="stub", why="the stub answers any model name"),
        Substitution(pattern=r"\bKEY\b", text="unused", why="the stub checks no key"),
    )


def commands(blocks: tuple[str, ...], replace: tuple[Substitution, ...]) -> tuple[str, ...]:
    """``blocks`` with ``replace`` done; an error names a substitution the page does not need
    any more, or a placeholder that is left."""
    done = list(blocks)
    for substitution in replace:
        total = 0
        literal = substitution.text.replace("\\", "\\\\")  # re.subn reads backslashes
        for i, block in enumerate(done):
            done[i], count = re.subn(substitution.pattern, literal, block)
            total += count
        if total == 0:
            raise AssertionError(
                f"the page no longer has {substitution.pattern!r} ({substitution.why}): "
                "update tests/gym_side/page.py to what it says now"
            )
    for i, block in enumerate(done):
        if left := _LEFT.search(block):
            raise AssertionError(f"block {i} of the page still has {left.group()!r}:\n{block}")
    return tuple(done)


def gym_command(blocks: tuple[str, ...], subcommand: str) -> list[str]:
    """The words of the one ``$GYM <subcommand>`` command of ``blocks`` (continuation lines
    joined, redirections and ``&`` left in)."""
    found = []
    for block in blocks:
        joined = block.replace("\\\n", " ")
        found += [
            shlex.split(line, comments=True)
            for line in joined.splitlines()
            if line.strip().startswith(f"$GYM {subcommand} ")
        ]
    assert len(found) == 1, f"expected one `$GYM {subcommand}` on the page, found {len(found)}"
    return found[0]


def option(words: list[str], *names: str) -> str:
    """The value given to the first of ``names`` in ``words``."""
    for name in names:
        if name in words:
            return words[words.index(name) + 1]
    raise AssertionError(f"none of {names} in {shlex.join(words)}")


def is_stop(block: str) -> bool:
    """A block that stops servers: one of its commands (not a loop's) is a ``kill``."""
    return any(line.strip().startswith("kill ") for line in block.splitlines())


def script(blocks: tuple[str, ...], *, head_port: int, checkpoints: Path) -> str:
    """``blocks`` as one bash script, with the test's lines between them: a marker in the log,
    Gym's head server on ``head_port`` (in ``env.yaml``, which a block may have rewritten), and
    a checkpoint after each block, where the script waits until the test has looked at what runs
    (``<checkpoints>/<i>`` says block i is done; ``<i>.go`` lets the script go on)."""
    head = (
        "grep -qs '^head_server:' env.yaml || "
        f"printf %s {shlex.quote(head_server_yaml(head_port))} >> env.yaml"
    )
    lines = ["set -eo pipefail"]
    for i, block in enumerate(blocks):
        lines += [
            f"echo '### page block {i}'",
            head,
            block.rstrip("\n"),
            f": > {checkpoints}/{i}",
            f"until [ -e {checkpoints}/{i}.go ]; do sleep 0.2; done",
        ]
    return "\n".join(lines) + "\n"

