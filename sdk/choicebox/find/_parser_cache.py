"""The LALR parser of a grammar, built once per machine rather than once per process.

Building the box grammar's parser takes Lark 0.2 to 0.5 s (more with ``interegular`` installed,
which Lark uses to check the terminals for collisions), and every ``choicebox grade`` process and
every worker would pay it on the first box the fast path cannot read. Lark can serialise a built
parser (``Lark.save``/``Lark.load``, about 2 ms to load), so the first process saves it in the
user's cache directory and later ones load it.

The file is named by a digest of everything the parser depends on (the grammar's text, the
options, Lark's version, Python's version), so an edited grammar or an upgraded Lark never loads
a stale parser. The cache is an optimisation only: a file that is missing, truncated or
unreadable is rebuilt, and a cache that cannot be written (read-only home, full disk) is skipped.
Neither ever fails a grade. A file is written under a temporary name and renamed into place, so
concurrent workers never read a half-written one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["cache_dir", "lalr_parser"]

# The options every parser built here gets; part of the cache key.
_OPTIONS: Final = {"parser": "lalr", "lexer": "contextual"}


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/choicebox``, else ``~/.cache/choicebox``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "choicebox"


def _cache_file(name: str, grammar: str) -> Path:
    import lark  # noqa: PLC0415  only a box the fast path cannot read needs Lark

    key = "\0".join(
        [grammar, repr(sorted(_OPTIONS.items())), lark.__version__, sys.version.split()[0]]
    )
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return cache_dir() / f"{name}-{digest}.lark"


def lalr_parser(name: str, grammar: str) -> Lark:
    """The LALR parser (contextual lexer) of ``grammar``, loaded from the cache when a process
    on this machine built it before, else built and saved there (see the module docstring)."""
    from lark import Lark  # noqa: PLC0415  only a box the fast path cannot read needs Lark

    path = _cache_file(name, grammar)
    try:
        with path.open("rb") as handle:
            return Lark.load(handle)
    except Exception:  # missing, truncated or written by another Lark: built afresh below
        pass
    parser = Lark(grammar, **_OPTIONS)
    _save(parser, path)
    return parser


def _save(parser: Lark, path: Path) -> None:
    """Write ``parser`` to ``path`` atomically; any failure leaves the cache as it was."""
    import tempfile  # noqa: PLC0415  10 ms (with shutil) that only writing a cache file needs

    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        with os.fdopen(descriptor, "wb") as handle:
            parser.save(handle)
        os.replace(temporary, path)
        temporary = None
    except Exception:  # a cache that cannot be written only makes the next process slower
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
