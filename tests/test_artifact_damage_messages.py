"""What a damaged artifact is called: a second row of a query names both lines (it was
read as "the file was cut short" while one copy silently won), a header line cut short is
named as such (it was "a JSON document (not JSON Lines)"), and a non-finite metric value
is saved as that metric's error, standard JSON, which ``evalkit eval`` warns about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.data.artifact import ArtifactError
from evalkit.data.results import QueryResult, RunResult


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


def _saved(tmp_path: Path, values: dict[str, float]) -> Path:
    run = RunResult("bm25", [QueryResult(q, [], {"ap": v}) for q, v in values.items()],
                    header={"notes": {"num_queries": len(values)}})
    return run.save(tmp_path / "r.jsonl")


@pytest.mark.parametrize("trailer", [True, False])
def test_second_row_names_both_lines(tmp_path: Path, trailer: bool) -> None:
    lines = _saved(tmp_path, {"1": 0.5, "2": 0.25, "3": 0.125}).read_text().splitlines()
    kept = lines if trailer else lines[:-1]  # without the trailer: an unfinished file
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join([*kept[:3], kept[1], *kept[3:]]) + "\n")
    with pytest.raises(ArtifactError) as err:
        RunResult.load(dup)
    assert str(err.value).startswith(f"{dup}:4: query '1' has a second row (first on line 2)")
    res = invoke("eval", str(dup))
    assert res.exit_code == 2 and "query '1' has a second row (first on line 2)" in res.output


@pytest.mark.parametrize("cut", ['{"type": "header"', '{"type": "header", "name": "bm',
                                 '{"type": "hea', '{"type": "header", "n'])
def test_header_cut_short_is_named(tmp_path: Path, cut: str) -> None:
    t = tmp_path / "t.jsonl"
    t.write_text(cut)  # cut between values, inside a key or inside a string value
    res = invoke("eval", str(t))
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {t}:1: the line ends in the middle of a JSON "
                                 "value (the file was cut short?)")
    doc = tmp_path / "doc.json"  # a JSON document over several lines is still that
    doc.write_text('{\n  "a": 1\n}\n')
    assert "a JSON document (not JSON Lines)" in invoke("eval", str(doc)).output


def test_non_finite_value_saved_as_an_error(tmp_path: Path) -> None:
    p = _saved(tmp_path, {"1": 0.5, "2": float("nan")})
    text = p.read_text()
    rows = [json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard {c}"))
            for line in text.splitlines()]
    row2 = next(r for r in rows if r.get("id") == "2")
    assert row2["metrics"] == {} and "nan" in row2["metric_errors"]["ap"]
    res = invoke("eval", str(p))  # as for any metric that failed on a row: no mean
    assert res.exit_code == 2 and "NaN" not in res.output
    assert "warning: metric ap scored on 1 of 2" in " ".join(res.output.split())


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_stored_non_finite_value_is_read_as_a_failed_metric(tmp_path: Path,
                                                             token: str) -> None:
    p = _saved(tmp_path, {"1": 0.5, "2": 0.25})
    lines = p.read_text().splitlines()
    lines[2] = lines[2].replace('"ap": 0.25', f'"ap": {token}')
    lines = lines[:-1]  # a hand-edited file: drop the trailer that no longer matches
    p.write_text("\n".join(lines) + "\n")
    row = next(r for r in RunResult.load(p).per_query if r.query_id == "2")
    assert row.metrics == {} and "not a finite number (read as an error)" in \
        row.metric_errors["ap"]
    res = invoke("eval", str(p))  # as for a value saved as an error: no mean
    assert "warning: metric ap scored on 1 of 2" in " ".join(res.output.split())


def test_lines_ending_in_a_carriage_return_alone_are_named(tmp_path: Path) -> None:
    p = _saved(tmp_path, {"1": 0.5, "2": 0.25})
    cr = tmp_path / "cr.jsonl"
    cr.write_bytes(p.read_bytes().replace(b"\n", b"\r"))
    with pytest.raises(ArtifactError) as err:
        RunResult.load(cr)
    assert str(err.value).startswith(f"{cr}:1: not valid JSON (Extra data at column ")
    assert "carriage return alone" in str(err.value)
    res = invoke("eval", str(cr))
    assert res.exit_code == 2 and "convert them to newlines" in res.output
