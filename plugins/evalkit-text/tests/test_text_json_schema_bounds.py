"""json_schema's bounds on what a schema makes it do while scoring: every regular
expression the schema carries (pattern, patternProperties, and additionalProperties,
which matches them) is searched with regex(...)'s bounded engine and 1 s limit, and a
$ref resolves only within the schema file (no other file, no network), checked when the
name is resolved."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from evalkit.core.registry import RegistryError
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.plugins.default import resolve as resolve_any

CASE = GoldenCase("c", "q")
#: (a+)+$ backtracks exponentially on a run of a's that ends otherwise: re.search would
#: not return on this in the machine's lifetime (and holds the GIL, so SIGTERM waits)
HOSTILE = "a" * 5000 + "!"


def resolve(name: str) -> MetricSpec:
    spec = resolve_any(name)
    assert isinstance(spec, MetricSpec)
    return spec


def score(spec: MetricSpec, value: object) -> float:
    result = spec.fn(TargetResponse(text=json.dumps(value)), CASE)
    assert isinstance(result, float)
    return result


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh working directory and registry (a resolved name is kept per registry)."""
    from evalkit.plugins.default import use_registry

    monkeypatch.chdir(tmp_path)
    with use_registry():
        yield tmp_path


def test_schema_patterns_keep_their_values_under_the_bounded_engine(here: Path) -> None:
    Path("s.json").write_text(json.dumps({
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }))
    spec = resolve("json_schema(schema=s.json)")
    assert score(spec, {"code": "ABC-12"}) == 1.0
    assert score(spec, {"code": "abc-12"}) == 0.0   # pattern
    assert score(spec, {"code": "ABC-1", "x-n": 3}) == 1.0
    assert score(spec, {"x-n": "three"}) == 0.0     # patternProperties' subschema
    assert score(spec, {"y": 3}) == 0.0             # additionalProperties: false
    assert spec.version.startswith("2+schema.")


@pytest.mark.parametrize(("schema", "response", "where"), [
    ({"properties": {"x": {"type": "string", "pattern": "(a+)+$"}}},
     {"x": HOSTILE}, "a string of the response"),
    ({"patternProperties": {"(a+)+$": {"type": "integer"}}},
     {HOSTILE: 1}, "a property name of the response"),
    ({"properties": {"b": {}}, "patternProperties": {"(a+)+$": {}},
      "additionalProperties": False},
     {HOSTILE: 1}, "a property name of the response"),
    ({"propertyNames": {"pattern": "(a+)+$"}}, {HOSTILE: 1}, "a string of the response"),
])
def test_a_backtracking_schema_pattern_is_stopped_as_that_cases_metric_error(
        here: Path, schema: dict[str, object], response: dict[str, object],
        where: str) -> None:
    Path("s.json").write_text(json.dumps(schema))
    run = _evaluate(json.dumps(response), ["json_schema(schema=s.json)", "json_valid"])
    (row,) = run.per_query
    assert row.metrics == {"json_valid": 1.0}
    message = row.metric_errors["json_schema(schema=s.json)"]
    assert message.startswith(
        "metric 'json_schema(schema=s.json)' failed on case 'c': json_schema(schema=s.json): "
        "the search for the pattern '(a+)+$' took more than 1 s on "
        f"{where} (5001 characters) and was stopped")
    assert run.header["status"] == "complete"


def _evaluate(text: str, metrics: list[str]):  # type: ignore[no-untyped-def]
    from evalkit.execute.target_runner import evaluate

    return evaluate(CallableTarget(lambda case: TargetResponse(text=text), name="t"),
                    [CASE], metrics, progress=False)


def test_unevaluated_properties_beside_pattern_properties_is_refused(here: Path) -> None:
    # jsonschema matches patternProperties for unevaluatedProperties with plain re
    Path("u.json").write_text(json.dumps({"patternProperties": {"^a": True},
                                          "unevaluatedProperties": False}))
    with pytest.raises(RegistryError, match=re.escape(
            "the schema u.json uses unevaluatedProperties and patternProperties")):
        resolve("json_schema(schema=u.json)")
    # either alone is fine, and so is the pair in draft 7, which has no
    # unevaluatedProperties keyword
    Path("v.json").write_text(json.dumps({"properties": {"a": True},
                                          "unevaluatedProperties": False}))
    assert score(resolve("json_schema(schema=v.json)"), {"a": 1, "b": 2}) == 0.0
    Path("d7.json").write_text(json.dumps({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "patternProperties": {"^a": True}, "unevaluatedProperties": False}))
    assert score(resolve("json_schema(schema=d7.json)"), {"b": 2}) == 1.0


@pytest.fixture()
def server() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 that serves {"type": "integer"} and records each path
    asked for."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", asked
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_a_remote_ref_is_refused_when_named_and_never_fetched(
        here: Path, server: tuple[str, list[str]]) -> None:
    url, asked = server
    Path("remote.json").write_text(json.dumps(
        {"type": "object", "properties": {"x": {"$ref": f"{url}/s.json"}}}))
    with pytest.raises(RegistryError) as caught:
        resolve("json_schema(schema=remote.json)")
    message = str(caught.value)
    assert (f"the schema remote.json has $ref '{url}/s.json' at /properties/x, which refers "
            "outside the file") in message
    assert 'inline what it refers to (under "$defs"' in message
    assert asked == []


def test_a_ref_to_another_file_or_to_nothing_in_the_file_is_refused(here: Path) -> None:
    Path("other.json").write_text(json.dumps({"type": "integer"}))
    Path("file.json").write_text(json.dumps({"allOf": [{"$ref": "other.json"}]}))
    with pytest.raises(RegistryError, match=re.escape(
            "the schema file.json has $ref 'other.json' at /allOf/0, which refers outside "
            "the file")):
        resolve("json_schema(schema=file.json)")
    Path("dangling.json").write_text(json.dumps({"$ref": "#/$defs/missing"}))
    with pytest.raises(RegistryError, match=re.escape(
            "the schema dangling.json has $ref '#/$defs/missing' at /, which does not point "
            "to anything in the file")):
        resolve("json_schema(schema=dangling.json)")


def test_refs_within_the_file_resolve_with_its_ids_and_bundled_metaschemas(here: Path) -> None:
    # a local pointer, an embedded resource named by a relative $id, the 2020-12
    # metaschema (bundled with jsonschema), and a "$ref" inside const, which is data
    Path("local.json").write_text(json.dumps({
        "$id": "https://example.com/root.json",
        "$defs": {"word": {"type": "string"}, "n": {"$id": "n.json", "type": "integer"}},
        "properties": {
            "w": {"$ref": "#/$defs/word"},
            "n": {"$ref": "n.json"},
            "s": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
            "c": {"const": {"$ref": "http://127.0.0.1:9/never"}},
        },
    }))
    spec = resolve("json_schema(schema=local.json)")
    assert score(spec, {"w": "x", "n": 1, "s": {"type": "string"},
                        "c": {"$ref": "http://127.0.0.1:9/never"}}) == 1.0
    assert score(spec, {"w": 1}) == 0.0
    assert score(spec, {"n": "1"}) == 0.0
    assert score(spec, {"s": {"type": 5}}) == 0.0
