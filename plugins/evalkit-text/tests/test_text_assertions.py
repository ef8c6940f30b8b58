"""contains, regex, json_valid and json_schema: values by hand, names written with the
measure grammar (canonical, round-tripping), and refusals when the name is resolved."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalkit.core.metric_names import split_measure_args
from evalkit.core.registry import RegistryError
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.plugins.default import resolve as resolve_any

CASE = GoldenCase("c", "q")


def resolve(name: str) -> MetricSpec:
    spec = resolve_any(name)
    assert isinstance(spec, MetricSpec)
    return spec


def value(metric: str, text: str | None) -> float:
    result = resolve(metric).fn(TargetResponse(text=text), CASE)
    assert isinstance(result, float)
    return result


@pytest.mark.parametrize(("metric", "text", "expected"), [
    ("contains(text=refund)", "You can ask for a refund.", 1.0),
    ("contains(text=refund)", "You can ask for a Refund.", 0.0),
    ("contains(text=refund,ignore_case=True)", "A REFUND is due", 1.0),
    ("contains(text=refund policy)", "see our refund policy", 1.0),
    ("contains(text='42')", "the answer is 42", 1.0),
    ("contains(text='a,b')", "x a,b y", 1.0),
    (r"regex(pattern=^\d+$)", "12345", 1.0),
    (r"regex(pattern=^\d+$)", "12345 apples", 0.0),
    (r"regex(pattern=\d{3}-\d{4})", "call 555-1234 now", 1.0),
    ("regex(pattern=[0-9])", "no digits", 0.0),
    ("regex(pattern=(yes|no))", "I say no", 1.0),
    ("regex(pattern=^YES,ignore_case=True)", "yes, indeed", 1.0),
    ("json_valid", '{"a": [1, 2.5, null, true]}', 1.0),
    ("json_valid", '  "just a string"\n', 1.0),
    ("json_valid", "{'a': 1}", 0.0),
    ("json_valid", '{"a": NaN}', 0.0),
    ("json_valid", '{"a": 1} trailing', 0.0),
    ("json_valid", "", 0.0),
])
def test_values_by_hand(metric: str, text: str, expected: float) -> None:
    assert value(metric, text) == expected


@pytest.mark.parametrize(("written", "canonical"), [
    ("contains(text=refund)", "contains(text=refund)"),
    ("contains(ignore_case=True, text=refund)", "contains(ignore_case=True,text=refund)"),
    ("contains(text=refund,ignore_case=False)", "contains(text=refund)"),
    ("contains(text=\"42\")", "contains(text='42')"),
    (r"regex(pattern=^\d+$)", r"regex(pattern=^\d+$)"),
    (r"regex(pattern='^\\d+$')", r"regex(pattern=^\d+$)"),
    ("regex(pattern=' x')", "regex(pattern=' x')"),
])
def test_names_are_canonical_and_resolve_to_themselves(written: str, canonical: str) -> None:
    spec = resolve(written)
    assert spec.name == canonical
    assert resolve(spec.name).name == canonical
    assert spec.higher_is_better is True and not spec.needs_judgments and not spec.needs_answers


def test_the_command_line_splits_metrics_outside_parentheses() -> None:
    assert split_measure_args([r"regex(pattern=\d{1,3}),contains(text='a,b'),f1"]) == [
        r"regex(pattern=\d{1,3})", "contains(text='a,b')", "f1"]


@pytest.mark.parametrize(("metric", "message"), [
    ("contains", "contains needs its text: write contains(text=refund)"),
    ("regex", "regex needs its pattern"),
    ("json_schema", "json_schema needs its schema"),
    ("contains(ignore_case=True)", "contains needs its text"),
    ("contains(text=42)", "quote it: contains(text='42')"),
    ("contains(text=refund,ignore_case=1)", "ignore_case of contains must be True or False"),
    ("contains(txt=refund)", "contains takes the parameters text, ignore_case; 'txt'"),
    ("regex(pattern=[a-)", "the pattern '[a-' of regex does not compile"),
    ("json_schema(schema=no/such/schema.json)", "cannot read the schema no/such/schema.json"),
])
def test_bad_parameters_are_refused_when_the_name_is_resolved(metric: str,
                                                              message: str) -> None:
    with pytest.raises(RegistryError) as err:
        resolve(metric)
    assert message in str(err.value)


def test_a_response_of_ranked_ids_only_is_an_error_of_the_case() -> None:
    spec = resolve("contains(text=x)")
    with pytest.raises(ValueError, match="the response has ranked ids and no text"):
        spec.fn(TargetResponse(ranked_ids=["d1"]), CASE)
    # an empty response is the empty text: it scores 0
    assert spec.fn(TargetResponse(), CASE) == 0.0


def test_json_schema_validates_with_the_schema_and_versions_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    schema = {"type": "object", "required": ["answer"],
              "properties": {"answer": {"type": "string"}, "confidence": {"maximum": 1}}}
    Path("answer.json").write_text(json.dumps(schema))
    spec = resolve("json_schema(schema=answer.json)")
    assert spec.name == "json_schema(schema=answer.json)"
    assert value(spec.name, '{"answer": "Paris", "confidence": 0.9}') == 1.0
    assert value(spec.name, '{"answer": "Paris", "confidence": 2}') == 0.0
    assert value(spec.name, '{"answer": 3}') == 0.0
    assert value(spec.name, "not json") == 0.0
    first = spec.version
    assert first.startswith("2+schema.")
    # another schema under the same name is another definition: its version differs
    Path("answer.json").write_text(json.dumps({**schema, "required": []}))
    from evalkit.plugins.default import use_registry

    with use_registry():
        assert resolve("json_schema(schema=answer.json)").version != first


def test_json_schema_refuses_a_file_that_is_not_a_schema(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("broken.json").write_text("{not json")
    Path("bad.json").write_text(json.dumps({"type": "objekt"}))
    with pytest.raises(RegistryError, match=re.escape("the schema broken.json is not JSON")):
        resolve("json_schema(schema=broken.json)")
    with pytest.raises(RegistryError,
                       match=re.escape("bad.json is not a valid JSON Schema at type")):
        resolve("json_schema(schema=bad.json)")


def test_a_catastrophically_backtracking_pattern_is_stopped_as_that_cases_metric_error() -> None:
    # (a+)+$ on 5,000 a's and a '!' backtracks exponentially: re.search would not return
    # in this machine's lifetime, and it holds the GIL, so even SIGTERM waits for it
    from evalkit_text.assertions import SEARCH_TIMEOUT_S

    from evalkit.data.targets import CallableTarget
    from evalkit.execute.target_runner import evaluate

    hostile = "a" * 5000 + "!"
    run = evaluate(CallableTarget(lambda case: TargetResponse(text=hostile), name="t"),
                   [CASE], ["regex(pattern=(a+)+$)", "contains(text=!)", "regex(pattern=!$)"],
                   progress=False)
    (row,) = run.per_query
    assert SEARCH_TIMEOUT_S == 1.0
    assert row.metrics == {"contains(text=!)": 1.0, "regex(pattern=!$)": 1.0}
    message = row.metric_errors["regex(pattern=(a+)+$)"]
    assert "took more than 1 s on this response (5001 characters) and was stopped" in message
    assert run.header["status"] == "complete"


def test_json_schema_refuses_a_schema_nested_too_deep_and_fails_a_looping_ref(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("deep.json").write_text("[" * 200_000 + "]" * 200_000)  # RecursionError in json
    with pytest.raises(RegistryError, match=re.escape(
            "the schema deep.json is refused: nested more than 100 levels deep")):
        resolve("json_schema(schema=deep.json)")
    Path("loop.json").write_text(json.dumps({"$ref": "#"}))
    spec = resolve("json_schema(schema=loop.json)")
    assert spec.fn(TargetResponse(text="not json"), CASE) == 0.0
    with pytest.raises(ValueError, match=re.escape(
            "json_schema(schema=loop.json): validating against loop.json recursed")):
        spec.fn(TargetResponse(text='{"a": 1}'), CASE)


def test_json_schema_refuses_a_schema_file_over_16_mib_without_reading_it_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # valid JSON of 16 MiB + 1 byte: a string of 2**24 - 1 "a"s in quotes
    Path("big.json").write_text('"' + "a" * ((16 << 20) - 1) + '"')
    assert Path("big.json").stat().st_size == (16 << 20) + 1
    with pytest.raises(RegistryError, match=re.escape(
            "the schema big.json is refused: larger than 16 MiB")):
        resolve("json_schema(schema=big.json)")
    # one byte less is read (and refused as no schema only because a string is not one)
    Path("big.json").write_text('"' + "a" * ((16 << 20) - 2) + '"')
    with pytest.raises(RegistryError, match=re.escape("big.json is not a valid JSON Schema")):
        resolve("json_schema(schema=big.json)")
    # a device that never ends is refused before any read (not read for ever)
    with pytest.raises(RegistryError, match="the schema /dev/zero is refused: a pipe or "
                       "device, not a regular file"):
        resolve("json_schema(schema=/dev/zero)")


def test_json_schema_fails_a_response_nested_deeper_than_the_bound_not_the_schema(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a valid recursive schema: arrays of such arrays. At 100 levels the response
    # validates (1.0); at 300 jsonschema's recursion would run out and blame the schema's
    # $ref, so such a response is that case's error, naming the bound
    monkeypatch.chdir(tmp_path)
    Path("nested.json").write_text(json.dumps({"type": "array", "items": {"$ref": "#"}}))
    spec = resolve("json_schema(schema=nested.json)")
    assert spec.fn(TargetResponse(text="[" * 100 + "]" * 100), CASE) == 1.0
    assert spec.fn(TargetResponse(text="[" * 100 + "1" + "]" * 100), CASE) == 0.0
    for depth in (101, 300):
        with pytest.raises(ValueError, match=re.escape(
                "json_schema(schema=nested.json): the response's JSON is nested more than "
                "100 levels deep")):
            spec.fn(TargetResponse(text="[" * depth + "]" * depth), CASE)
