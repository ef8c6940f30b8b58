"""A key written twice in one mapping is refused, with both lines, in every YAML file
evalkit reads (checks, eval configs, collections, goldens) and in the JSON of goldens,
price tables and schemas: YAML and JSON keep only the last value, which turned a failing
gate green."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.comparison.collections_file import CollectionsFileError, load_collections
from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.results import QueryResult, RunResult
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.gate.checks import CheckError, load_checks
from evalkit.io.bounded_yaml import load_marked, load_yaml
from evalkit.io.limits import RepeatedKeyError, loads_json

TWO_LISTS = """\
checks:
  - id: a
    metric: ap
    op: ">="
    threshold: 0.9
checks:
  - id: b
    metric: ap
    op: ">="
    threshold: 0.1
"""
TWO_THRESHOLDS = """\
checks:
  - id: ap_floor
    metric: ap
    op: ">="
    threshold: 0.9
    threshold: 0.1
"""


def test_loader_names_both_lines() -> None:
    with pytest.raises(RepeatedKeyError) as err:
        load_yaml("a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n")
    assert err.value.line == 5
    assert "key 'c' appears twice" in str(err.value) and "first on line 3" in str(err.value)
    with pytest.raises(RepeatedKeyError):  # flow (JSON) style too
        load_marked('{"x": 1, "x": 2}')
    # the same key in two mappings, and a merge key, are fine
    assert load_yaml("- {a: 1}\n- {a: 2}\n") == [{"a": 1}, {"a": 2}]
    assert load_yaml("base: &b {x: 1}\nover:\n  <<: *b\n  x: 2\n")["over"] == {"x": 2}


@pytest.mark.parametrize(("text", "line", "first", "key"), [
    (TWO_LISTS, 6, 1, "checks"), (TWO_THRESHOLDS, 6, 5, "threshold")])
def test_checks_file(tmp_path: Path, text: str, line: int, first: int, key: str) -> None:
    p = tmp_path / "checks.yaml"
    p.write_text(text)
    with pytest.raises(CheckError) as err:
        load_checks(p)
    assert str(err.value).startswith(f"{p}:{line}: key {key!r} appears twice")
    assert f"first on line {first}" in str(err.value)


def test_gate_cli_refuses_instead_of_passing(tmp_path: Path) -> None:
    from evalkit.cli.app import app

    run = RunResult("r", [QueryResult("q1", [], {"ap": 0.2})]).save(tmp_path / "r.jsonl")
    p = tmp_path / "checks.yaml"
    p.write_text(TWO_LISTS)
    out = CliRunner().invoke(app, ["gate", "-c", str(p), "-r", str(run)])
    assert out.exit_code == 2, out.output
    assert "key 'checks' appears twice" in out.output
    assert "Traceback" not in out.output


def test_eval_config(tmp_path: Path) -> None:
    p = tmp_path / "evalkit.yaml"
    p.write_text("goldens: g.jsonl\ntarget: {factory: 'm:make'}\ngoldens: other.jsonl\n")
    with pytest.raises(ConfigError) as err:
        load_eval_config(p)
    assert str(err.value).startswith(f"{p}:3: key 'goldens' appears twice (first on line 1)")


def test_collections_file(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("- name: a\n  baseline: x\n  candidate: y\n  candidate: z\n")
    with pytest.raises(CollectionsFileError, match=r"c\.yaml:4: key 'candidate' appears twice"):
        load_collections(p)


def test_golden_yaml_and_jsonl(tmp_path: Path) -> None:
    y = tmp_path / "g.yaml"
    y.write_text("- id: q1\n  query: a\n  query: b\n")
    with pytest.raises(GoldenError, match=r"g\.yaml:3: key 'query' appears twice"):
        load_goldens(y)
    j = tmp_path / "g.jsonl"
    j.write_text('{"id": "q1", "query": "a"}\n{"id": "q2", "query": "a", "query": "b"}\n')
    with pytest.raises(GoldenError, match=r"g\.jsonl:2: key 'query' appears twice"):
        load_goldens(j)


def test_json_strict_only_when_asked() -> None:
    text = '{"a": {"b": 1, "b": 2}}'
    assert loads_json(text) == json.loads(text)  # responses, artifacts: as json.loads
    with pytest.raises(RepeatedKeyError, match="key 'b' appears twice"):
        loads_json(text, unique_keys=True)
