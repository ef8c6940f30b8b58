"""Every YAML file evalkit reads (checks, evalkit.yaml, golden sets, collections) goes
through evalkit.io.bounded_yaml, which reads YAML 1.2 exponent floats (``1e-3``, ``1E5``,
``.5e2``) as numbers, where YAML 1.1 reads them as text (ids stay as written), and names
the line of a character YAML does not allow (pyyaml gives a position)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.io.bounded_yaml import load_marked


@pytest.mark.parametrize(("text", "value"), [
    ("1e-3", 0.001), ("1E5", 100000.0), (".5e2", 50.0), ("-1e308", -1e308),
    ("+2e0", 2.0), ("5.e2", 500.0), ("1.0e-3", 0.001), ("1e400", float("inf")),
])
def test_exponent_forms_are_floats(text: str, value: float) -> None:
    assert load_marked(f"x: {text}\n").data == {"x": value}


@pytest.mark.parametrize("text", ["1e", "e5", "1e-", "'1e-3'", "1e3x", "0x1f"])
def test_other_forms_are_unchanged(text: str) -> None:
    import yaml

    assert load_marked(f"x: {text}\n").data == yaml.safe_load(f"x: {text}\n")


def test_checks_threshold_in_exponent_form(tmp_path: Path) -> None:
    from evalkit.gate.checks import load_checks

    path = tmp_path / "checks.yaml"
    path.write_text("checks:\n  - {id: a, metric: f1, op: '>=', threshold: 1e-3}\n")
    (check,) = load_checks(path)
    assert check.threshold == 0.001


def test_eval_config_number_in_exponent_form(tmp_path: Path) -> None:
    from evalkit.execute.evalconfig import ConfigError, load_eval_config

    cfg = tmp_path / "evalkit.yaml"
    body = ("goldens: g.jsonl\ntarget: {factory: http, kwargs: {url: 'http://127.0.0.1:1/'}}"
            "\nmetrics: [recall@10]\noutput: out.jsonl\n")
    cfg.write_text(body + "requests_per_minute: 6e1\n")
    assert load_eval_config(cfg).requests_per_minute == 60.0
    cfg.write_text(body + "requests_per_minute: 1e400\n")
    with pytest.raises(ConfigError, match="requests_per_minute"):
        load_eval_config(cfg)


def test_yaml_golden_ids_stay_as_written(tmp_path: Path) -> None:
    from evalkit import load_goldens

    path = tmp_path / "g.yaml"
    path.write_text("cases:\n  - {id: 1e3, query: q}\n")
    assert [c.id for c in load_goldens(path)] == ["1e3"]


def test_a_nul_byte_names_its_line(tmp_path: Path) -> None:
    from evalkit.gate.checks import CheckError, load_checks
    from evalkit.io.limits import LimitError

    with pytest.raises(LimitError, match="a NUL byte is not allowed in YAML") as info:
        load_marked("a: 1\r\nb: x\x00\n")
    assert info.value.line == 2
    path = tmp_path / "checks.yaml"
    path.write_bytes(b"checks:\n  - id: a\x00\n")
    with pytest.raises(CheckError, match=r"checks.yaml:2: a NUL byte is not allowed"):
        load_checks(path)
