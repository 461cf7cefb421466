"""The rows of a data file for the audit: plain JSONL, or JSONL compressed with gzip.

Datasets are often shipped as ``.jsonl.gz``. Read as plain text, every compressed "line" would be
an invalid-JSON finding, so the file is sniffed for the gzip magic bytes (not its name) and
decompressed as it streams.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path

from choicebox.jsonl import BadLine, JsonlRow, is_gzip, iter_jsonl


def read_rows(path: str | Path) -> Iterator[JsonlRow | BadLine]:
    """Each non-blank line of ``path``, decoded (gzip is decompressed on the fly). A device or a
    pipe (``/dev/zero``) is refused: it would be read for ever."""
    if Path(path).exists() and not Path(path).is_file():
        raise OSError(0, "not a regular file", str(path))
    if not is_gzip(path):
        yield from iter_jsonl(path)
        return
    with io.BufferedReader(gzip.GzipFile(path, "rb")) as handle:
        try:
            yield from iter_jsonl(handle)
        except EOFError:
            # A truncated download: the rows before the cut were yielded; say why the rest is not.
            raise OSError(0, "the gzip data ends early: the file is truncated", str(path)) from None
        except gzip.BadGzipFile as exc:
            raise OSError(0, f"not valid gzip data: {exc}", str(path)) from None
