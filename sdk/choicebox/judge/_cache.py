"""The judge's replies on disk, keyed by the prompt, so that a rerun asks the judge nothing twice.

The cache is a JSON Lines journal: each reply the judge wrote (a letter, NONE, or a reply that is
neither: what the judge said to that prompt) is appended as one line the moment it arrives, so a
run that is stopped keeps every reply it paid for, and the next run asks only for the rest. A
failure to get a reply (a timeout, a 5xx, a refused connection) is not a reply and is not kept:
the next run tries again. The key is the SHA-256 of the judge model's name and the prompt, so a
changed template, response or model is a new question. A torn last line (a kill mid-write) is cut
off when the journal is opened; any other line that is not an entry is an error naming the line.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path
from typing import Final, NamedTuple

import orjson

from choicebox._errors import JudgeError

__all__ = ["CachedReply", "JudgeCache", "cache_key"]

_FIELDS: Final = ("key", "model", "reply", "prompt_tokens", "completion_tokens")


class CachedReply(NamedTuple):
    """A reply kept in the cache: what the judge wrote, and what it cost when it was asked."""

    reply: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


def cache_key(model: str, prompt: str) -> str:
    """The key of ``prompt`` put to ``model``."""
    digest = hashlib.sha256(model.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(prompt.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class JudgeCache:
    """Replies by ``cache_key``: in memory, and in the journal at ``path`` when one is given.

    Thread-safe: the judge's workers put replies as they arrive. Opened without following a
    symbolic link, and only a regular file is read or appended to.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._entries: dict[str, CachedReply] = {}
        self._lock = threading.Lock()
        self._fd: int | None = None
        if self.path is not None:
            self._fd = self._open(self.path)

    def _open(self, path: Path) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(path, flags, 0o666)
        except OSError as exc:
            raise JudgeError(f"cannot open the judge cache: {exc.strerror}", path=str(path)) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise JudgeError("the judge cache must be a regular file", path=str(path))
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
            good = self._load(data, str(path))
            if good != len(data):
                os.ftruncate(fd, good)  # the torn line of a run that was killed mid-write
            os.lseek(fd, 0, os.SEEK_END)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _load(self, data: bytes, path: str) -> int:
        """Read the journal's entries; the length of its complete lines."""
        good = 0
        for number, raw in enumerate(data.splitlines(keepends=True), start=1):
            if not raw.endswith(b"\n"):
                break  # the torn last line
            try:
                entry = orjson.loads(raw)
                key, reply = entry["key"], entry["reply"]
                tokens = int(entry.get("prompt_tokens", 0)), int(entry.get("completion_tokens", 0))
                if not isinstance(key, str) or not isinstance(reply, str):
                    raise TypeError
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
                raise JudgeError(
                    "this line is no judge cache entry (a file choicebox did not write?); "
                    "delete the file or give another --judge-cache",
                    path=path, line=number, source_line=raw.decode("utf-8", "replace").rstrip("\n"),
                ) from None  # fmt: skip
            self._entries[key] = CachedReply(reply, *tokens)
            good += len(raw)
        return good

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, model: str, reply: CachedReply) -> None:
        """Keep ``reply``, and append it to the journal at once."""
        line = orjson.dumps(
            dict(zip(_FIELDS, (key, model, reply.reply, reply.prompt_tokens, reply.completion_tokens), strict=True)),
            option=orjson.OPT_APPEND_NEWLINE,
        )
        with self._lock:
            self._entries[key] = reply
            if self._fd is not None:
                view = memoryview(line)
                while view:
                    view = view[os.write(self._fd, view) :]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
