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
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit_text.reading import response_text, text_parameter, variant_name

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

Scorer = Callable[["TargetResponse", "GoldenCase"], float]
_MISSING = object()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str) -> Any:
    """The JSON value of ``text``, or a private marker when it is not exactly one JSON
    value (``NaN`` and ``Infinity`` refused)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
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
            JSON Schema (``check_schema``), naming the file; from ``fn`` (that case's metric
            error), a response whose JSON nests more than ``MAX_DEPTH`` levels, or a
            schema whose ``$ref`` loops.
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

    cls = validator_for(document)
    try:
        cls.check_schema(document)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "its top level"
        raise ValueError(f"json_schema: {path} is not a valid JSON Schema at {where}: "
                         f"{exc.message}") from None
    validator = cls(document)
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:12]
    name = variant_name("json_schema", {"schema": source})

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
        except RecursionError:  # a schema whose $ref loops without reading the value
            raise ValueError(f"{name}: validating against {path} recursed without end "
                             "(a $ref that refers to itself, such as {\"$ref\": \"#\"}); "
                             "fix the schema") from None
        return 1.0 if valid else 0.0

    fn.__name__ = fn.__qualname__ = "json_schema"
    fn.__doc__ = f"1 when the response's text is JSON that validates against {path}, else 0."
    return name, f"1+schema.{digest}", fn
