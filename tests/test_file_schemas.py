"""`evalkit schema checks|config|goldens`: JSON Schemas (draft 2020-12) that the jsonschema
library accepts, that the repository's real files satisfy, that refuse what the loaders
refuse, and that docs/schemas/ holds up to date for the examples' editor modelines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.file_schemas import KINDS, json_schema
from evalkit.gate.checks import CheckError, parse_checks

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

REAL_FILES = [
    ("checks", "examples/gate/checks.yaml"),
    ("checks", "examples/custom_client/checks.yaml"),
    ("goldens", "examples/custom_client/goldens.yaml"),
    ("config", "examples/custom_client/evalkit.yaml"),
    ("checks", "examples/llm_offline/checks.yaml"),
    ("goldens", "examples/llm_offline/goldens.yaml"),
    ("config", "examples/llm_offline/v1.yaml"),
    ("config", "examples/llm_offline/v2.yaml"),
]


def printed(kind: str) -> dict[str, Any]:
    res = runner.invoke(app, ["schema", kind])
    assert res.exit_code == 0, res.output
    schema: dict[str, Any] = json.loads(res.stdout)
    return schema


def validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(printed(kind))


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_printed_schema_is_valid_json_schema_and_kept_in_docs(kind: str) -> None:
    schema = printed(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema == json_schema(kind)
    stored = ROOT / "docs" / "schemas" / f"{kind}.schema.json"
    assert json.loads(stored.read_text()) == schema, (
        f"{stored} is stale: evalkit schema {kind} > {stored.relative_to(ROOT)}")


@pytest.mark.parametrize(("kind", "path"), REAL_FILES)
def test_the_real_files_satisfy_their_schema(kind: str, path: str) -> None:
    text = (ROOT / path).read_text()
    errors = list(validator(kind).iter_errors(yaml.safe_load(text)))
    assert errors == [], [e.message for e in errors]
    # the modeline names the stored schema, which exists
    (modeline,) = re.findall(r"^# yaml-language-server: \$schema=(\S+)$", text, re.M)
    assert (ROOT / path).parent.joinpath(modeline).resolve() == \
        ROOT / "docs" / "schemas" / f"{kind}.schema.json"


def test_the_documented_eval_configs_satisfy_the_schema() -> None:
    docs = (ROOT / "docs" / "runner.md").read_text() + (
        ROOT / "docs" / "configuration.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", docs, re.S)
    configs = [yaml.safe_load(b) for b in blocks if "goldens:" in b and "target:" in b]
    assert len(configs) >= 2
    for config in configs:
        assert list(validator("config").iter_errors(config)) == [], config


def test_golden_jsonl_lines_satisfy_the_row_schema() -> None:
    schema = printed("goldens")
    lines = ['{"id": 42, "query": "q", "expected": ["d1"], "topic": "x"}',
             '{"id": "a", "query": null, "relevance": {"d1": 2}}']
    for line in lines:
        assert validator("goldens").is_valid([json.loads(line)])
    row = {"$defs": schema["$defs"], **schema["$defs"]["GoldenRow"]}
    assert not jsonschema.Draft202012Validator(row).is_valid({"id": 1.5, "query": "q"})
    assert not jsonschema.Draft202012Validator(row).is_valid({"id": "a"})


CHECKS_CASES = [
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1}]},
    {"checks": [{"id": "a", "metric": "m", "vs_baseline": "no_significant_regression",
                 "alpha": 0.1, "scope": ["x"], "level": "warn"}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1,
                 "vs_baseline": "no_significant_regression"}]},       # both
    {"checks": [{"id": "a", "metric": "m"}]},                          # neither
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1, "alpha": 0.1}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">", "threshold": 1}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": "1"}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1, "treshold": 1}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1, "scope": []}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1, "scope": [8]}]},
    {"checks": [{"id": "a", "metric": "m", "op": ">=", "threshold": 1, "level": "error"}]},
    {"checks": [{"id": "a", "metric": "m", "vs_baseline": "no_significant_regression",
                 "alpha": 1}]},
    {"checks": [{"id": "", "metric": "m", "op": ">=", "threshold": 1}]},
    {"checks": []},
    {"gates": []},
]


@pytest.mark.parametrize("doc", CHECKS_CASES)
def test_the_checks_schema_refuses_what_load_checks_refuses(doc: dict[str, Any]) -> None:
    try:
        parse_checks(doc)
        loads = True
    except CheckError:
        loads = False
    assert validator("checks").is_valid(doc) == loads


CONFIG_CASES = [
    {},
    {"plugins": ["evalkit-retrieval"]},
    {"local_plugins": ["mine"]},
    {"metrics": []},
    {"metrics": [], "aggregates": ["latency_p50"]},
    {"target": {"kwargs": {}}},
    {"target": {"factory": "a b:c"}},
    {"target": {"factory": "http", "kwargs": {"url": "x"}}},
    {"max_concurrency": 0},
    {"max_concurrency": "8"},
    {"name": "x" * 257},
    {"checks": "c.yaml", "baseline": "b.jsonl", "reporters": ["junit:r.xml", "json:-"]},
    {"reporters": ["junit"]},
    {"gate": {}},
    {"output": None},
    {"requests_per_minute": 1e-9},
    {"requests_per_minute": 1 / 60},
    {"tokens_per_minute": 59.5},
    {"tokens_per_minute": 60},
]


@pytest.mark.parametrize("change", CONFIG_CASES)
def test_the_config_schema_refuses_what_the_loader_refuses(tmp_path: Path,
                                                           change: dict[str, Any]) -> None:
    doc: dict[str, Any] = {"goldens": "g.jsonl", "target": {"factory": "m:make"},
                           "metrics": ["recall@1"], "output": "o.jsonl", **change}
    path = tmp_path / "evalkit.yaml"
    path.write_text(yaml.safe_dump(doc))
    try:
        load_eval_config(path)
        loads = True
    except ConfigError:
        loads = False
    assert validator("config").is_valid(doc) == loads


def test_an_unknown_kind_is_a_usage_error() -> None:
    res = runner.invoke(app, ["schema", "gate"])
    assert res.exit_code == 2
    assert res.stderr == "error: KIND: expected one of checks, config, goldens\n"
