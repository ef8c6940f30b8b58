"""YAML read within bounds: pyyaml's ``SafeLoader`` with a composer that counts.

Every YAML file evalkit reads (golden sets, checks, eval configs) goes through
:class:`BoundedSafeLoader`, which refuses, with :class:`evalkit.io.limits.LimitError` naming
the line:

* lists and mappings nested more than :data:`~evalkit.io.limits.MAX_DEPTH` levels (pyyaml's
  composer is recursive: 100,000 levels would be a ``RecursionError``);
* more than :data:`~evalkit.io.limits.MAX_YAML_NODES` nodes;
* aliases whose expansion adds more than :data:`~evalkit.io.limits.MAX_ALIAS_NODES` nodes. An
  alias counts as a copy of the node it names, because that is what it becomes for every
  consumer that walks or serialises the data (a 603-byte "billion laughs" names a node of
  387 million nodes). Each node's expanded size is computed once, when it is composed,
  from its children's, so the count costs a few operations per node.

It also refuses a mapping key written twice in one mapping
(:class:`evalkit.io.limits.RepeatedKeyError`, naming both lines). YAML 1.2 forbids it but
pyyaml keeps the last value, so two ``checks:`` lists or two ``threshold:`` lines in one
check would silently drop the first; no file evalkit reads means that.

Numbers in exponent form are read as YAML 1.2 reads them: ``1e-3``, ``1E5``, ``.5e2``,
``-1e308`` and ``1e400`` are floats (YAML 1.1, which pyyaml implements, needs a dot and
a signed exponent, ``1.0e-3``, and reads the others as text, so ``threshold: 1e-3`` would
be refused as not a number). ``1e400`` becomes infinity, refused as not finite by every
numeric setting. Ids, answers and other fields read "as written" keep their text.

Parsing and construction are pyyaml's own; only composition is watched.
:func:`load_marked` also keeps the composed node tree, whose marks give the line of any
location in the data (the line pydantic's error locations are reported at).

The line of a mark (of a node, or of the error :mod:`yaml` raises) is the line an editor
shows: lines end at ``\\n``, ``\\r\\n`` or ``\\r``. YAML 1.1, which pyyaml reads, also
breaks lines at U+0085, U+2028 and U+2029; the parse is pyyaml's, but those characters
do not shift the line numbers of messages.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, NamedTuple

import yaml
from yaml.error import Mark
from yaml.nodes import Node

from evalkit.io.limits import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    MAX_YAML_NODES,
    LimitError,
    RepeatedKeyError,
)

_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
#: the line breaks of YAML 1.1 that end no line in an editor
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")
_LINE_END = re.compile(r"\r\n|\r|\n")


def _line_starts(text: str) -> list[int] | None:
    """The offset of each line's start in ``text`` (lines ending at ``\\n``, ``\\r\\n``,
    ``\\r``), or None when pyyaml counts the lines of ``text`` alike (no U+0085, U+2028,
    U+2029)."""
    if not _YAML_ONLY_BREAKS.search(text):
        return None
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


def _key_text(node: Node) -> str | None:
    """A scalar key's text as written (``1`` and ``"1"`` are one key: golden ids are read
    as text); ``None`` for a merge key (``<<``) or a collection key."""
    if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:merge":
        return None
    return str(node.value)


#: a YAML 1.2 float in exponent form that YAML 1.1 reads as text (no dot, or no sign in
#: the exponent): ``1e-3``, ``1E5``, ``.5e2``, ``5.e2``
_YAML12_EXPONENT = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$")


class SpelledInt(int):
    """An integer YAML read from text that spells it otherwise (``010`` is 8, ``0x1F``,
    ``1_000``, ``+3``): ``source`` is that text, which a message asking to quote the
    value echoes (:func:`as_written`). Equal to, and used as, the plain ``int``."""

    source: str


class SpelledFloat(float):
    """A float YAML read from text that spells it otherwise (``1e3``, ``.5``, ``1_0.5``):
    ``source`` is that text (:class:`SpelledInt`)."""

    source: str


def as_written(value: Any) -> str:
    """``value`` as the YAML file spelled it: the source text of a number read from other
    text (``010``, not ``8``), else ``str(value)``. For messages such as ``quote "010"``."""
    source = getattr(value, "source", None)
    return source if isinstance(source, str) else str(value)


def _spelled(number: Any, text: str) -> Any:
    if isinstance(number, bool) or not isinstance(number, int | float) \
            or str(number) == text:
        return number
    out: SpelledInt | SpelledFloat = (SpelledInt(number) if isinstance(number, int)
                                      else SpelledFloat(number))
    out.source = text
    return out


class BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` within the bounds of this module (class attributes
    ``max_depth``, ``max_nodes`` and ``max_alias_nodes``)."""

    max_depth = MAX_DEPTH
    max_nodes = MAX_YAML_NODES
    max_alias_nodes = MAX_ALIAS_NODES

    def __init__(self, stream: Any) -> None:
        self._starts = _line_starts(stream) if isinstance(stream, str) else None  # marks
        super().__init__(stream)  # takes its first mark
        self._depth = 0
        self._nodes = 0
        self._alias_nodes = 0
        self._sizes: dict[int, int] = {}

    def construct_yaml_int(self, node: Any) -> Any:
        """pyyaml's integer, keeping its text when it spells it otherwise
        (:class:`SpelledInt`)."""
        return _spelled(super().construct_yaml_int(node), str(node.value))

    def construct_yaml_float(self, node: Any) -> Any:
        """pyyaml's float, keeping its text when it spells it otherwise
        (:class:`SpelledFloat`)."""
        return _spelled(super().construct_yaml_float(node), str(node.value))

    def get_mark(self) -> Mark:
        """pyyaml's mark, its line and column those of an editor (the module docstring)."""
        mark = super().get_mark()
        if self._starts is not None:
            line = bisect_right(self._starts, mark.index) - 1
            mark.line, mark.column = line, mark.index - self._starts[line]
        return mark

    def _line(self) -> int | None:
        mark = getattr(self.peek_event(), "start_mark", None)  # type: ignore[no-untyped-call]
        return None if mark is None else int(mark.line) + 1

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        alias = self.check_event(yaml.AliasEvent)
        nested = self.check_event(*_COLLECTION_START)
        line = self._line()
        if nested:
            self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise LimitError(f"lists and mappings nested more than {self.max_depth} "
                                 "levels deep; evalkit refuses deeper nesting", line)
            node: Node | None = super().compose_node(parent, index)
        finally:
            if nested:
                self._depth -= 1
        if node is None:
            return None
        if alias:
            size = self._sizes.get(id(node))
            if size is None:
                raise LimitError("an alias refers to a node that contains it (a recursive "
                                 "anchor); evalkit refuses recursive YAML", line)
            self._alias_nodes += size
            if self._alias_nodes > self.max_alias_nodes:
                raise LimitError(
                    f"aliases expand to more than {self.max_alias_nodes} nodes (an alias "
                    "bomb, or anchors reused far too often); write the values out, or "
                    "reuse them less", line)
            return node
        size = 1
        if isinstance(node, yaml.SequenceNode):
            size += sum(self._sizes.get(id(c), 1) for c in node.value)
        elif isinstance(node, yaml.MappingNode):
            size += sum(self._sizes.get(id(k), 1) + self._sizes.get(id(v), 1)
                        for k, v in node.value)
            _refuse_repeated_keys(node)
        self._sizes[id(node)] = size
        self._nodes += 1
        if self._nodes > self.max_nodes:
            raise LimitError(f"more than {self.max_nodes} YAML nodes; evalkit refuses "
                             "larger YAML", line)
        return node


BoundedSafeLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", _YAML12_EXPONENT, list("-+0123456789."))


def _refuse_repeated_keys(node: yaml.MappingNode) -> None:
    first: dict[str, int] = {}
    for key, _ in node.value:
        ident = _key_text(key)
        if ident is None:
            continue
        line = int(key.start_mark.line) + 1
        if ident in first:
            raise RepeatedKeyError(
                f"key {ident!r} appears twice (first on line "
                f"{first[ident]}); YAML keeps only the last value, so evalkit refuses "
                "it: remove or merge one of them", line)
        first[ident] = line


BoundedSafeLoader.add_constructor("tag:yaml.org,2002:int",
                                  BoundedSafeLoader.construct_yaml_int)
BoundedSafeLoader.add_constructor("tag:yaml.org,2002:float",
                                  BoundedSafeLoader.construct_yaml_float)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` within the bounds of :class:`BoundedSafeLoader`.

    Raises:
        yaml.YAMLError: not YAML (as ``yaml.safe_load``).
        evalkit.io.limits.LimitError: beyond a bound, or a repeated mapping key
            (:class:`RepeatedKeyError`); its ``line`` set.
    """
    loader = BoundedSafeLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


class MarkedYaml(NamedTuple):
    """A YAML document's data and the node tree it was constructed from.

    Attributes:
        data: what ``yaml.safe_load`` returns (``None`` for an empty document).
        root: the root node, whose marks hold every line; ``None`` when empty.
    """

    data: Any
    root: Node | None

    def line(self, loc: Sequence[int | str]) -> int | None:
        """The 1-based line of ``loc`` (mapping keys and list positions from the top, as
        in a pydantic error's ``loc``): the line of its deepest part present in the file
        (a mapping key's own line for a key; the enclosing mapping for a missing key).
        ``None`` for an empty document."""
        node = self.root
        if node is None:
            return None
        line = int(node.start_mark.line) + 1
        for part in loc:
            child: Node | None = None
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                        line, child = int(key.start_mark.line) + 1, value
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
                    and 0 <= part < len(node.value):
                child = node.value[part]
                line = int(child.start_mark.line) + 1
            if child is None:
                break
            node = child
        return line


def load_marked(text: str) -> MarkedYaml:
    """``text`` read as YAML by :class:`BoundedSafeLoader`, keeping the node tree for
    :meth:`MarkedYaml.line`.

    Raises:
        yaml.YAMLError: not YAML.
        evalkit.io.limits.LimitError: beyond a bound, a repeated mapping key
            (:class:`RepeatedKeyError`), or a character YAML does not allow (a NUL); its
            ``line`` set.
    """
    try:
        loader = BoundedSafeLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _unreadable_character(text, exc) from None
    try:
        root = loader.get_single_node()
        data = None if root is None else loader.construct_document(root)
        return MarkedYaml(data, root)
    except yaml.reader.ReaderError as exc:
        raise _unreadable_character(text, exc) from None
    finally:
        loader.dispose()


def _unreadable_character(text: str, exc: yaml.reader.ReaderError) -> LimitError:
    """A character YAML does not allow (pyyaml says "position 17"), with its line."""
    at = int(exc.position)
    ch = text[at] if 0 <= at < len(text) else ""
    line = len(_LINE_END.findall(text, 0, at)) + 1
    what = "a NUL byte" if ch == "\x00" else f"the character U+{ord(ch or chr(0)):04X}"
    hint = (" (is this a binary or UTF-16 file?)" if ch == "\x00" else "")
    return LimitError(f"{what} is not allowed in YAML text{hint}; remove it, or save the "
                      "file as UTF-8 text", line)


__all__ = ["BoundedSafeLoader", "MarkedYaml", "SpelledFloat", "SpelledInt", "as_written",
           "load_marked", "load_yaml"]
