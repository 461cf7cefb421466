"""The LALR parser of a grammar, built once per machine rather than once per process.

Building the box grammar's parser takes Lark 0.2 to 0.5 s (more with ``interegular`` installed,
which Lark uses to check the terminals for collisions), and every ``choicebox grade`` process and
every worker would pay it on the first box the fast path cannot read. So the first process saves
the built parser in the user's cache directory and later ones load it (about 6 ms).

What is saved is data, never code: Lark's own serialisable form of the parser (its rules,
terminals and parse table, what ``lark.Lark.memo_serialize`` gives and the standalone generator
embeds) as JSON, read back with ``json`` and ``Lark._load_from_dict``. ``Lark.save``/``Lark.load``
would pickle it, and unpickling a file that someone else wrote into a shared cache (a cluster's
home, a container volume) runs their code in every grading process. A file is also read only
when it and its directory belong to the user and nobody else may write to them, and only when its
options are the ones this module builds with (no transformer, callbacks or post-lexer), so a
planted file cannot even swap in another grammar.

The file is named by a digest of everything the parser depends on (the grammar's text, the
options, Lark's version, Python's version, the file format), so an edited grammar or an upgraded
Lark never loads a stale parser. The cache is an optimisation only: a file that is missing,
truncated, unreadable or refused is rebuilt, and a cache that cannot be written (read-only home,
full disk, a directory someone else owns) is skipped. Neither ever fails a grade. A file is
written under a temporary name and renamed into place, so concurrent workers never read a
half-written one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["cache_dir", "lalr_parser"]

# The options every parser built here gets; part of the cache key, and what a loaded file must say.
_OPTIONS: Final = {"parser": "lalr", "lexer": "contextual"}
_FORMAT: Final = "lark-memo-json-1"
# Options a loaded file must leave unset: each would hand the parser something to call.
_NO_CALLABLES: Final = ("postlex", "transformer", "tree_class", "edit_terminals")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/choicebox``, else ``~/.cache/choicebox``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "choicebox"


def _cache_file(name: str, grammar: str) -> Path:
    import lark  # noqa: PLC0415  only a box the fast path cannot read needs Lark

    key = "\0".join(
        [grammar, repr(sorted(_OPTIONS.items())), lark.__version__, sys.version.split()[0], _FORMAT]
    )
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return cache_dir() / f"{name}-{digest}.json"


def lalr_parser(name: str, grammar: str) -> Lark:
    """The LALR parser (contextual lexer) of ``grammar``, loaded from the cache when a process
    of this user built it before, else built and saved there (see the module docstring)."""
    from lark import Lark  # noqa: PLC0415  only a box the fast path cannot read needs Lark

    path = _cache_file(name, grammar)
    loaded = _load(path)
    if loaded is not None:
        return loaded
    parser = Lark(grammar, **_OPTIONS)
    if _trusted(path.parent, missing_ok=True):
        _save(parser, path)
    return parser


def _trusted(path: Path, *, missing_ok: bool = False) -> bool:
    """``path`` belongs to this user and no one else may write to it (POSIX; elsewhere the
    platform's own permissions decide)."""
    getuid = getattr(os, "getuid", None)
    try:
        info = path.stat()
    except FileNotFoundError:
        return missing_ok
    except OSError:
        return False
    if getuid is None:
        return True
    return info.st_uid == getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _load(path: Path) -> Lark | None:
    """The parser saved at ``path``, or ``None`` when there is none this process may use."""
    from lark import Lark  # noqa: PLC0415  only a box the fast path cannot read needs Lark

    if not (_trusted(path.parent) and _trusted(path)):
        return None
    try:
        saved = json.loads(path.read_bytes())
        data, memo = saved["data"], _int_keys(saved["memo"])
        options = data["options"]
        if any(options.get(key) != value for key, value in _OPTIONS.items()):
            return None
        if any(options.get(key) for key in _NO_CALLABLES) or options.get("lexer_callbacks"):
            return None
        loaded: Lark = Lark._load_from_dict(_int_keys(data), memo)  # type: ignore[no-untyped-call]
        return loaded
    except Exception:  # truncated, written by another Lark, or not ours: built afresh
        return None


def _int_keys(value: Any) -> Any:
    """JSON turned the parse table's state numbers and the memo's ids (dict keys) into strings;
    no other key of Lark's data is made of digits."""
    if isinstance(value, dict):
        return {
            int(k) if isinstance(k, str) and k.isdigit() else k: _int_keys(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_int_keys(item) for item in value]
    return value


def _save(parser: Lark, path: Path) -> None:
    """Write ``parser``'s data to ``path`` atomically; any failure leaves the cache as it was."""
    import tempfile  # noqa: PLC0415  10 ms (with shutil) that only writing a cache file needs

    from lark.grammar import Rule  # noqa: PLC0415  with the parser, as above
    from lark.lexer import TerminalDef  # noqa: PLC0415  with the parser, as above

    temporary: str | None = None
    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        encoded = json.dumps({"format": _FORMAT, "data": data, "memo": memo}).encode("utf-8")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(encoded)
        os.replace(temporary, path)
        temporary = None
    except Exception:  # a cache that cannot be written only makes the next process slower
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
