"""JSON checks on a response's text that score 1 or 0: ``json_valid`` and
``json_schema(schema=PATH)``.

``json_valid`` is 1 when the whole text (surrounding whitespace allowed) is one JSON
value by RFC 8259: Python's :func:`json.loads`, with ``NaN``, ``Infinity`` and
``-Infinity``, which JSON does not have, refused. ``json_schema(schema=PATH)`` is 1 when
the text is valid JSON and the value validates against the JSON Schema in the file
``PATH`` (relative to the working directory), with the ``jsonschema`` library's
validator for the schema's ``$schema`` (draft 2020-12 when it names none; ``format`` is
not asserted, as the specification's default). The schema file (at most 16 MiB, nested
at most 100 levels: :mod:`evalkit.io.limits`) is read, and checked with
``check_schema``, when the metric's name is resolved, so a missing, oversized or
invalid schema is refused before any call; the metric's definition version carries the digest of the
schema, so a baseline scored with another schema is known to differ.

Scoring reads nothing but the response: a ``$ref`` resolves only within the schema file
(or to a metaschema bundled with ``jsonschema``), through a ``referencing`` registry that
retrieves nothing, and every reference is checked when the name is resolved. Every
regular expression the schema carries (``pattern``, ``patternProperties``, and the
``patternProperties`` that ``additionalProperties`` excludes) is searched with
:func:`evalkit_text.patterns.search`, the bounded engine of ``regex(...)``; a schema with
``unevaluatedProperties`` beside ``patternProperties``, which ``jsonschema`` matches with
:mod:`re` internally, is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit_text.patterns import compile_pattern, search
from evalkit_text.reading import response_text, text_parameter, variant_name

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

Scorer = Callable[["TargetResponse", "GoldenCase"], float]
_MISSING = object()


def parse_json(text: str) -> Any:
    """The JSON value of ``text``, or a private marker when it is not exactly one JSON
    value (``NaN`` and ``Infinity`` refused)."""
    from evalkit.io.limits import refuse_constant

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except (ValueError, RecursionError):
        return _MISSING


def json_valid(response: TargetResponse, case: GoldenCase) -> float:
    """1 when the response's text is one JSON value (RFC 8259), else 0."""
    return 0.0 if parse_json(response_text(response, "json_valid")) is _MISSING else 1.0


def json_schema_scorer(schema: Any = None) -> tuple[str, str, Scorer]:
    """``(canonical name, definition version, fn)`` of ``json_schema(schema=PATH)``.

    Raises:
        ValueError: no path, a file that is missing, larger than
            :data:`evalkit.io.limits.MAX_METRIC_FILE_BYTES` (16 MiB), not UTF-8 JSON,
            nested more than :data:`evalkit.io.limits.MAX_DEPTH` levels, or not a valid
            JSON Schema (``check_schema``), a ``$ref`` that does not resolve within the
            file, ``unevaluatedProperties`` beside ``patternProperties``, naming the file;
            from ``fn`` (that case's metric error), a response whose JSON nests more than
            ``MAX_DEPTH`` levels, a schema whose ``$ref`` loops, or a pattern search
            stopped after :data:`evalkit_text.patterns.SEARCH_TIMEOUT_S` seconds.
    """
    source = text_parameter("json_schema", "schema", schema,
                            "json_schema(schema=schemas/answer.json)")
    path = Path(source)
    from evalkit.io.limits import MAX_DEPTH, LimitError, check_depth, loads_json, read_capped

    try:  # bounded: a schema of gigabytes, or nested 100,000 deep, is refused at once
        raw = read_capped(path).decode("utf-8-sig")
        document = loads_json(raw, unique_keys=True)
    except OSError as exc:
        raise ValueError(f"json_schema: cannot read the schema {path}: "
                         f"{exc.strerror or exc}") from None
    except LimitError as exc:
        raise ValueError(f"json_schema: the schema {path} is refused: {exc}") from None
    except ValueError as exc:  # UnicodeDecodeError included
        raise ValueError(f"json_schema: the schema {path} is not JSON ({exc})") from None
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for
    from referencing.exceptions import Unresolvable

    cls = validator_for(document)
    try:
        cls.check_schema(document)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "its top level"
        raise ValueError(f"json_schema: {path} is not a valid JSON Schema at {where}: "
                         f"{exc.message}") from None
    name = variant_name("json_schema", {"schema": source})
    registry = _refs_inside(document, cls, path)
    validator = _bounded(cls, name)(document, registry=registry)
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:12]

    def fn(response: TargetResponse, case: GoldenCase) -> float:
        value = parse_json(response_text(response, name))
        if value is _MISSING:
            return 0.0
        try:  # a value this deep would exhaust the validator's recursion, not the schema
            check_depth(value, MAX_DEPTH)
        except LimitError:
            raise ValueError(f"{name}: the response's JSON is nested more than "
                             f"{MAX_DEPTH} levels deep; json_schema validates values "
                             f"nested at most {MAX_DEPTH} levels") from None
        try:
            valid = validator.is_valid(value)
        except Unresolvable as exc:  # the check when it was named found every $ref
            raise ValueError(f"{name}: a $ref of {path} did not resolve within it ({exc}); "
                             "inline what it refers to") from None
        except RecursionError:  # a schema whose $ref loops without reading the value
            raise ValueError(f"{name}: validating against {path} recursed without end "
                             "(a $ref that refers to itself, such as {\"$ref\": \"#\"}); "
                             "fix the schema") from None
        return 1.0 if valid else 0.0

    fn.__name__ = fn.__qualname__ = "json_schema"
    fn.__doc__ = f"1 when the response's text is JSON that validates against {path}, else 0."
    return name, f"{VERSION}+schema.{digest}", fn


#: the definition version of ``json_schema``'s validation, before ``+schema.<digest>``
#: (2: patterns searched with ``regex`` and a time limit, ``$ref`` only within the file)
VERSION = "2"

#: keywords whose values are instance data, not subschemas: not searched for ``$ref``s
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def _refuse_retrieval(uri: str) -> Any:
    raise LookupError(f"{uri} is not inside the schema file, and json_schema reads no other "
                      "file and no network")


def _refs_inside(document: Any, cls: Any, path: Path) -> Any:
    """A ``referencing`` registry that retrieves nothing, after checking that every
    ``$ref`` (``$dynamicRef``, ``$recursiveRef``) of ``document`` resolves within it (or
    to a metaschema bundled with ``jsonschema``), and that it does not combine
    ``unevaluatedProperties`` with ``patternProperties``.

    Raises:
        ValueError: a ``$ref`` that does not resolve so, naming the file, the ref, where it
            is and the fix (inline it); ``unevaluatedProperties`` beside
            ``patternProperties`` in a draft 2019-09 or 2020-12 schema.
    """
    from jsonschema_specifications import REGISTRY as METASCHEMAS
    from referencing import Registry, Specification
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    # ``retrieve`` is the attrs alias of the private field, which mypy's attrs plugin
    # does not know
    registry: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
    specification = specification_with(cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
                                       default=Specification.OPAQUE)
    root = METASCHEMAS.combine(registry).resolver_with_root(
        specification.create_resource(document))
    seen: set[str] = set()

    def walk(node: Any, resolver: Any, where: str) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, resolver, f"{where}/{i}")
            return
        if not isinstance(node, dict):
            return
        # a subschema with its own $id changes the base its refs resolve against ("$id"
        # as a property name of "properties" is no id: TypeError)
        with contextlib.suppress(TypeError, AttributeError):
            resolver = resolver.in_subresource(specification.create_resource(node))
        seen.update(k for k in ("unevaluatedProperties", "patternProperties") if k in node)
        for key, value in node.items():
            if key in _REF_KEYWORDS and isinstance(value, str):
                try:
                    resolver.lookup(value)
                except Unresolvable:
                    inside = value.startswith("#")
                    raise ValueError(
                        f"json_schema: the schema {path} has {key} {value!r} at "
                        f"{where or '/'}, which "
                        + ("does not point to anything in the file" if inside else
                           "refers outside the file") + "; "
                        "json_schema resolves references only within its schema file and "
                        "reads no other file and no network while scoring: inline what it "
                        "refers to (under \"$defs\", as {\"$ref\": \"#/$defs/NAME\"})"
                    ) from None
            elif key not in _DATA_KEYWORDS:
                walk(value, resolver, f"{where}/{key}")

    walk(document, root, "")
    if "unevaluatedProperties" in cls.VALIDATORS and seen == {"unevaluatedProperties",
                                                              "patternProperties"}:
        raise ValueError(
            f"json_schema: the schema {path} uses unevaluatedProperties and "
            "patternProperties; jsonschema matches patternProperties for "
            "unevaluatedProperties with Python's re, which cannot be stopped on a pattern "
            "that backtracks, so json_schema refuses the pair: use additionalProperties "
            "beside patternProperties instead")
    return registry


def _bounded(cls: Any, name: str) -> Any:
    """``cls`` (a ``jsonschema`` validator class) extended so that ``pattern``,
    ``patternProperties`` and ``additionalProperties`` (which matches the
    ``patternProperties`` beside it) search with :func:`evalkit_text.patterns.search`:
    the ``regex`` engine with its time limit, never :mod:`re`; ``name`` starts the
    error of a search stopped at the limit."""
    from jsonschema.exceptions import ValidationError
    from jsonschema.validators import extend

    def matches(source: str, text: str, where: str) -> bool:
        return search(compile_pattern(source, name), text, name, where)

    def pattern(validator: Any, source: Any, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not matches(
                source, instance, "a string of the response"):
            yield ValidationError(f"{instance!r} does not match {source!r}")

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for source, subschema in patterns.items():
            for key, value in instance.items():
                if matches(source, key, "a property name of the response"):
                    yield from validator.descend(value, subschema, path=key,
                                                 schema_path=source)

    def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        known = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extras = [key for key in instance if key not in known and not any(
            matches(source, key, "a property name of the response") for source in patterns)]
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            yield ValidationError(f"additional properties are not allowed ({extras!r})")

    keywords = {"pattern": pattern, "patternProperties": pattern_properties,
                "additionalProperties": additional_properties}
    # only the draft's own keywords: extend() would add the others to it
    wanted = {k: fn for k, fn in keywords.items() if k in cls.VALIDATORS}
    return extend(cls, wanted)  # type: ignore[no-untyped-call]
