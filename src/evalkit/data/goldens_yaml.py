"""The YAML golden reader: a list of cases (or a mapping with ``cases``), ids as written.

YAML 1.1 would read the id ``010`` as 8 and ``12:30`` as 750; this reader takes every id
(``id``, the items of ``expected``/``relevant``, the keys of ``relevance``) from the text
of its node, so ids keep the characters written in the file. The file is composed within
the bounds of :mod:`evalkit.io.bounded_yaml` (which also refuses a repeated key); every
other rule on a record is the model of
:mod:`evalkit.data.goldens_models`, applied by :func:`evalkit.data.goldens.case_from_record`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import (
    GoldenError,
    GoldenSet,
    case_from_record,
    check_unique,
    read_text,
    refuse_other_input,
)
from evalkit.data.goldens_models import selection_of
from evalkit.io.limits import LimitError, check_id

if TYPE_CHECKING:
    import yaml

_NULL_TAG = "tag:yaml.org,2002:null"


def _bounded_id(value: str, where: str, what: str) -> str:
    try:
        return check_id(value, what)
    except LimitError as exc:
        raise GoldenError(f"{where}: {exc}") from None


def load_yaml(path: str | Path) -> GoldenSet:
    """Read a YAML golden file: a list of mappings, or a mapping with a ``cases`` list.

    Ids (``id``, the items of ``expected``/``relevant``, the keys of ``relevance``) and
    ``answers`` keep the exact text written in the file; YAML 1.1's octal (``010``) and sexagesimal
    (``12:30``) readings never apply to them. A scalar ``expected`` is kept as written.
    The file is read within the bounds of :mod:`evalkit.io.bounded_yaml` (nesting, node
    count, alias expansion).

    Raises:
        GoldenError: invalid YAML, a wrong structure, a duplicate key, a rule of this
            module broken, a bound exceeded, or zero cases (file and line named).
    """
    import yaml

    from evalkit.io.bounded_yaml import BoundedSafeLoader
    p = Path(path)
    text = read_text(p)
    refuse_other_input(p)
    loader = BoundedSafeLoader(text)
    records: list[tuple[int, dict[str, Any]]] = []
    try:
        root = loader.get_single_node()
        if root is None:
            raise GoldenError(f"{p}: empty file; zero cases")
        selection = _labels_selection(loader, root, p)
        for node in _yaml_items(root, p):
            lineno = node.start_mark.line + 1
            where = f"{p}:{lineno}"
            record: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = str(key_node.value)
                if key == "id":
                    record[key] = _yaml_id(value_node, where)
                elif key in ("expected", "relevant"):
                    record[key] = _yaml_ids_or_text(loader, value_node, where)
                elif key in ("answers", "tags"):
                    record[key] = _yaml_texts(loader, value_node)
                elif key == "cluster" and isinstance(value_node, yaml.ScalarNode):
                    # as written: 010 and 3.10 stay text; a null is no cluster
                    record[key] = None if value_node.tag == _NULL_TAG and \
                        value_node.style is None else str(value_node.value)
                elif key == "relevance" and isinstance(value_node, yaml.MappingNode):
                    record[key] = {
                        _yaml_id(k, where): loader.construct_object(v, deep=True)
                        for k, v in value_node.value
                    }
                else:
                    record[key] = loader.construct_object(value_node, deep=True)
            records.append((lineno, record))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise GoldenError(f"{p}{line}: invalid YAML ({exc})") from None
    except LimitError as exc:
        line = "" if exc.line is None else f":{exc.line}"
        raise GoldenError(f"{p}{line}: {exc}") from None
    finally:
        loader.dispose()
    cases: list[GoldenCase] = []
    lines_of: dict[str, int] = {}
    for lineno, record in records:
        case = case_from_record(record, f"{p}:{lineno}")
        check_unique(case.id, lineno, lines_of, p)
        cases.append(case)
    gset = GoldenSet(cases, path=p)
    gset.labels_selection = selection
    return gset


def _labels_selection(loader: Any, root: yaml.Node, p: Path) -> tuple[str, int | None] | None:
    """The ``labels_selection`` of a mapping-form file (how its labelled cases were
    chosen: ``{selection: random, seed: S}`` or ``{selection: all}``), or None."""
    import yaml

    if not isinstance(root, yaml.MappingNode):
        return None
    node = next((v for k, v in root.value if k.value == "labels_selection"), None)
    if node is None:
        return None
    where = f"{p}:{node.start_mark.line + 1}"
    value = loader.construct_object(node, deep=True)
    if not isinstance(value, dict):
        raise GoldenError(f"{where}: 'labels_selection' must be a mapping "
                          "({selection: random, seed: 7} or {selection: all})")
    try:
        return selection_of(value)
    except ValueError as exc:
        raise GoldenError(f"{where}: labels_selection: {exc}") from None


def _yaml_items(root: yaml.Node, p: Path) -> list[yaml.MappingNode]:
    import yaml

    seq = root
    if isinstance(root, yaml.MappingNode):
        seq = next((v for k, v in root.value if k.value == "cases"), None)  # type: ignore[assignment]
        if seq is None:
            raise GoldenError(
                f"{p}:{root.start_mark.line + 1}: expected a list of cases or a mapping "
                "with a 'cases' list"
            )
    if not isinstance(seq, yaml.SequenceNode):
        raise GoldenError(f"{p}:{seq.start_mark.line + 1}: expected a list of cases")
    items: list[yaml.MappingNode] = []
    for node in seq.value:
        if not isinstance(node, yaml.MappingNode):
            raise GoldenError(f"{p}:{node.start_mark.line + 1}: a case must be a mapping")
        for k, _ in node.value:  # a repeated key: refused by BoundedSafeLoader
            if not isinstance(k, yaml.ScalarNode):
                raise GoldenError(f"{p}:{k.start_mark.line + 1}: keys must be plain names")
        items.append(node)
    return items


def _yaml_id(node: yaml.Node, where: str) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        raise GoldenError(f"{where}: an id must be a single value, not a list or mapping")
    if node.tag == _NULL_TAG and node.style is None:
        raise GoldenError(f"{where}: missing id (null or empty)")
    text = str(node.value)
    if text == "":
        raise GoldenError(f"{where}: empty id")
    return _bounded_id(text, where, "id")


def _yaml_ids_or_text(loader: yaml.SafeLoader, node: yaml.Node, where: str) -> Any:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return [_yaml_id(item, where) for item in node.value]
    if isinstance(node, yaml.ScalarNode):
        if node.tag == _NULL_TAG and node.style is None:
            return None
        return str(node.value)
    return loader.construct_object(node, deep=True)


def _yaml_texts(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """``answers`` as written: each scalar's text (``yes``, ``3.10`` and ``010`` stay
    text), a null as None (which the model refuses in a list)."""
    import yaml

    def text(item: yaml.Node) -> Any:
        if isinstance(item, yaml.ScalarNode):
            return None if item.tag == _NULL_TAG and item.style is None else str(item.value)
        return loader.construct_object(item, deep=True)

    if isinstance(node, yaml.SequenceNode):
        return [text(item) for item in node.value]
    return text(node)


__all__ = ["load_yaml"]
