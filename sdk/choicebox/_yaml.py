"""The one YAML reader of the library: rule files, the audit configuration, prompt templates.

Every YAML file choicebox reads is data a user may have written, so it is read with bounds that a
hostile or broken file cannot get past, and every complaint is located at ``file:line:column``
with the line and a caret, in the caller's error class (``RuleFileError``, ``AuditConfigError``,
``TemplateError``), never a traceback:

* a file holds at most ``MAX_YAML_BYTES`` bytes, in UTF-8 (a BOM is accepted); a byte that is not
  UTF-8 is pointed at;
* collections nest at most ``MAX_DEPTH`` deep (PyYAML's composer recurses once per level, so a
  file of 5,000 ``[`` would otherwise end in ``RecursionError``);
* the document expands to at most ``MAX_NODES`` nodes, an alias counting the whole size of the
  node it names: a 436-byte "billion laughs" file of nine aliases per level is a tree of 9^8
  nodes for anything that walks it, and is refused before anything does; an alias inside the
  collection it names (a cycle) is refused too;
* only plain data: mappings, lists, strings, numbers, booleans, null and timestamps. A tag such as
  ``!!python/object`` is refused, not merely left unconstructed.

``YamlDocument.error`` is the one place that turns a YAML position into a location.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, cast

import yaml
from yaml.composer import Composer, ComposerError

from ._errors import _FileError

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_YAML_BYTES",
    "YamlDocument",
    "compose",
    "decode",
    "load",
    "read_file",
]

MAX_YAML_BYTES: Final = 1 << 20  # 1 MiB: the largest shipped file is 4 KB
MAX_DEPTH: Final = 64  # collections inside collections; the shipped files nest 4 deep
# Nodes after aliases are expanded. The shipped files have about 300; PyYAML composes some 50,000
# nodes a second, so this also bounds the time any file can take to about a second.
MAX_NODES: Final = 50_000

E = TypeVar("E", bound=_FileError)

_PLAIN_TAGS: Final = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("map", "seq", "str", "int", "float", "bool", "null", "timestamp")
)


class _Refused(ComposerError):
    """A bound was passed; the message is the reason alone, not an "invalid YAML" complaint."""


class _Bounds(Composer):
    """PyYAML's composer, counting depth and expanded size while it composes.

    It composes from the events of whichever parser it is mixed with: libyaml's (``CParser``)
    when PyYAML was built with it, which reads a rule file about five times faster than PyYAML's
    own scanner and parser (robust.yaml: 36-40 ms against 6-10 ms, every start of every process),
    else PyYAML's. Composition, and so every bound, stays in this class either way.
    """

    if TYPE_CHECKING:  # supplied by the parser it is mixed with

        def peek_event(self) -> yaml.Event: ...
        def dispose(self) -> None: ...

    def _start_bounds(self) -> None:
        Composer.__init__(self)
        self._depth = 0  # collections open around the node being composed
        self._deepest = 0  # the deepest level reached inside the current node, aliases expanded
        self._expanded = 0  # nodes so far, an alias counting the size of its node
        self._anchored: dict[str, tuple[int, int]] = {}  # anchor -> (expanded size, height)
        self._open: set[str] = set()  # anchors of the collections being composed

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()
        # libyaml's marks are another class with the same line, column and index.
        mark = cast("yaml.Mark", event.start_mark)
        if isinstance(event, yaml.AliasEvent):
            name = str(event.anchor)
            if name in self._open:
                raise _Refused(None, None, f"alias *{name} is inside the collection it names", mark)
            node = super().compose_node(parent, index)  # an undefined alias: PyYAML refuses it
            size, height = self._anchored.get(name, (1, 0))
            self._reach(self._depth + height, mark)
            self._count(size, mark)
            return node
        if getattr(event, "tag", None) == "!":
            # The non-specific tag: PyYAML reads "a: !" as null, libyaml as "". Neither is plain
            # data written plainly, so it is refused as any other tag is, the same under both.
            raise _Refused(None, None, "YAML tag '!' is not allowed: only plain data", mark)
        anchor = getattr(event, "anchor", None)
        collection = isinstance(event, yaml.CollectionStartEvent)
        before, outer_deepest = self._expanded, self._deepest
        start_depth = self._depth
        self._deepest = start_depth
        if collection:
            self._depth += 1
            self._reach(self._depth, mark)
            if anchor is not None:
                self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth = start_depth
            if anchor is not None:
                self._open.discard(anchor)
        self._count(1, mark)
        if anchor is not None:
            self._anchored[anchor] = (self._expanded - before, self._deepest - start_depth)
        self._deepest = max(outer_deepest, self._deepest)
        return node

    def _reach(self, depth: int, mark: yaml.Mark) -> None:
        self._deepest = max(self._deepest, depth)
        if depth > MAX_DEPTH:
            raise _Refused(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)

    def _count(self, nodes: int, mark: yaml.Mark) -> None:
        self._expanded += nodes
        if self._expanded > MAX_NODES:
            raise _Refused(
                None, None, f"expands to more than {MAX_NODES:,} nodes (aliases counted)", mark
            )


class _PythonBoundedLoader(_Bounds, yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        yaml.SafeLoader.__init__(self, stream)
        self._start_bounds()


_FastBoundedLoader: Callable[[str], _Bounds] = _PythonBoundedLoader
if yaml.__with_libyaml__:

    class _LibyamlBoundedLoader(_Bounds, yaml.CSafeLoader):
        def __init__(self, stream: str) -> None:
            yaml.CSafeLoader.__init__(self, stream)
            self._start_bounds()

    _FastBoundedLoader = _LibyamlBoundedLoader


def _compose_with(loader_type: Callable[[str], _Bounds], text: str) -> yaml.Node | None:
    loader = loader_type(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


# What libyaml reads where PyYAML refuses or reads otherwise: a tab between tokens ("a:\t1"), a
# comment right after a block scalar's indicator ("|#"), a byte order mark inside the text
# (libyaml drops one at the start of any line), a "?" inside a plain scalar of a flow collection
# ("[a?]", "{1?}": PyYAML refuses it). Such a text is left to PyYAML alone, so that a file reads
# the same whether PyYAML was built with libyaml or not.
_PYYAML_ONLY: Final = re.compile(r"[\t\ufeff]|[|>][-+0-9]*+#|[\[{,][ \t]*+[^\s'\"\[\]{},#?][^\n\[\]{},]*?\?")


def _composed(text: str) -> yaml.Node | None:
    if _FastBoundedLoader is _PythonBoundedLoader or _PYYAML_ONLY.search(text):
        return _compose_with(_PythonBoundedLoader, text)
    try:
        return _compose_with(_FastBoundedLoader, text)
    except _Refused:
        raise  # a bound: the same refusal, at the same place, as PyYAML's events would give
    except (yaml.YAMLError, UnicodeError):  # libyaml encodes the text: a lone surrogate fails
        pass
    # A text libyaml refuses is composed again by PyYAML, so that every complaint is PyYAML's
    # (libyaml's are vaguer: "found character that cannot start any token" for a tab, with no
    # "'\t'"), and each bound is reported as the bound, not as libyaml's own nesting limit of
    # 1,000, which its scanner meets before the composer sees a 65th level.
    return _compose_with(_PythonBoundedLoader, text)


_SCALARS: Final = yaml.SafeLoader("")  # builds plain scalar values; composes nothing


class YamlDocument(Generic[E]):
    """A composed YAML text: its nodes turn into plain values, and its errors are located."""

    def __init__(self, path: str, text: str, error: type[E]) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.error_type = error

    def error(self, message: str, at: yaml.Node | yaml.Mark | None = None) -> E:
        """``message`` located at a node or mark: ``file:line:column``, the line, a caret."""
        mark = at.start_mark if isinstance(at, yaml.Node) else at
        if mark is None:
            return self.error_type(message, path=self.path)
        line = mark.line
        source = self.lines[line] if 0 <= line < len(self.lines) else None
        return self.error_type(
            message, path=self.path, line=line + 1, column=mark.column + 1, source_line=source
        )

    def value(self, node: yaml.Node) -> Any:
        """The node as plain data; a tag, a duplicate key or a key that is no string is refused.

        Composition bounded the depth, so this recursion is bounded too.
        """
        if node.tag not in _PLAIN_TAGS:
            raise self.error(f"YAML tag {node.tag!r} is not allowed: only plain data", node)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.value(key_node)
                if not isinstance(key, str):
                    raise self.error(f"keys must be strings, got {type(key).__name__}", key_node)
                if key in out:
                    raise self.error(f"duplicate key {key!r}", key_node)
                out[key] = self.value(value_node)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item) for item in node.value]
        try:
            return _SCALARS.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            # A timestamp such as 2024-13-45 or an integer too long to read.
            problem = getattr(exc, "problem", None) or exc
            raise self.error(f"invalid value: {problem}", node) from None
        except (LookupError, AttributeError, TypeError):
            # PyYAML's constructors index into the text: an empty "!!int" or "!!bool" breaks them.
            kind = str(node.tag).rsplit(":", 1)[-1]
            raise self.error(f"invalid value: {node.value!r} is no {kind}", node) from None


def compose(text: str, *, path: str, error: type[E]) -> tuple[YamlDocument[E], yaml.Node | None]:
    """``text`` composed into nodes that know their position; ``None`` for an empty document."""
    document = YamlDocument(path, text, error)
    try:
        node = _composed(text)
    except _Refused as exc:
        raise document.error(str(exc.problem), exc.problem_mark) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = ", ".join(part for part in (exc.context, exc.problem) if part)
        raise document.error(f"invalid YAML: {what}", mark) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, such as NUL
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        message = f"invalid YAML: character U+{code:04X} is not allowed"
        raise document.error(message, _mark_at(text, exc.position)) from None
    except yaml.YAMLError as exc:
        raise document.error(f"invalid YAML: {exc}") from None
    return document, node


def load(text: str, *, path: str, error: type[E]) -> Any:
    """The plain data of ``text`` (``None`` for an empty document), read as ``compose`` reads."""
    document, node = compose(text, path=path, error=error)
    return None if node is None else document.value(node)


def _mark_at(text: str, position: int) -> yaml.Mark:
    line = text.count("\n", 0, position)
    column = position - (text.rfind("\n", 0, position) + 1)
    return yaml.Mark("<text>", position, line, column, None, 0)


def decode(data: bytes, *, path: str, error: type[E]) -> str:
    """The text of a YAML file's bytes: UTF-8, a BOM accepted; a bad byte is located."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line_end = data.find(b"\n", exc.start)
        raw_line = data[line_start : len(data) if line_end == -1 else line_end]
        before = data[line_start : exc.start].decode("utf-8-sig", errors="replace")
        raise error(
            f"byte 0x{data[exc.start]:02x} is not UTF-8; the file must be UTF-8",
            path=path,
            line=data.count(b"\n", 0, exc.start) + 1,
            column=len(before) + 1,
            source_line=raw_line.decode("utf-8", errors="replace").rstrip("\r"),
        ) from None


def read_file(path: str | Path, *, error: type[E], within: str | Path | None = None) -> str:
    """The text of the YAML file at ``path``, at most ``MAX_YAML_BYTES`` of UTF-8.

    With ``within`` (a rules directory), a symbolic link that leads outside that directory is
    refused and nothing behind it is read: a link to ``/etc/passwd`` shows no line of it. Only
    regular files are read (a FIFO would block the reader forever).
    """
    name = str(path)
    target = str(path)
    if within is not None:
        target = os.path.realpath(path)
        root = os.path.realpath(within)
        if os.path.commonpath([root, target]) != root:
            raise error(
                f"a symbolic link to {target}, outside the directory {within}; refused",
                path=name,
            )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if within is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # the resolved path must not become a link
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", path=name) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise error("not a regular file", path=name)
        data = handle.read(MAX_YAML_BYTES + 1)
    if len(data) > MAX_YAML_BYTES:
        raise error(f"larger than {MAX_YAML_BYTES:,} bytes, the limit for a YAML file", path=name)
    return decode(data, path=name, error=error)
