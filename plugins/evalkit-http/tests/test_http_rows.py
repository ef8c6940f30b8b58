"""What a row keeps of an HTTP response: the output and meta always, the raw body up to
``max_raw_bytes`` (64 KiB of JSON by default, ``None`` for all of it); a cut raw body is
said so on the row, and rescoring with a metric that reads it is refused by name.

Expected sizes are the lengths of the JSON bodies as the server sends them
(``json.dumps`` of the same object), computed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evalkit_http import HttpTarget
from evalkit_http.testing import Reply, ScriptedServer

from evalkit.cases import GoldenCase
from evalkit.evaluation import evaluate, rescore
from evalkit.goldens import GoldenSet
from evalkit.registry import use_registry
from evalkit.results import ArtifactError, RunResult
from evalkit.rows import DEFAULT_MAX_RAW_BYTES

SMALL = {"ranked_ids": ["d1"], "cost_usd": 0.5}
LARGE = {"ranked_ids": ["d1"], "cost_usd": 0.5, "pad": "x" * 100_000}
GOLDENS = GoldenSet([GoldenCase("small", "a", expected=["d1"]),
                     GoldenCase("large", "b", expected=["d1"])])


def serve(request: Any, index: int) -> Reply:
    return Reply(200, LARGE if request.json()["id"] == "large" else SMALL)


def rows_of(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: r for r in lines[1:] if r["type"] == "row"}  # not the trailer


def run_with(tmp_path: Path, **kw: Any) -> tuple[RunResult, Path, list[int]]:
    seen: list[int] = []
    artifact = tmp_path / "run.jsonl"
    with use_registry() as reg:
        @reg.register_metric("pad_len", higher_is_better=True)
        def pad_len(response: Any, case: GoldenCase) -> float:
            seen.append(len(response.raw.get("pad", "")))
            return float(len(response.raw.get("pad", "")))

        with ScriptedServer(handler=serve) as server, \
                HttpTarget(server.url, name="svc", meta_keys=("cost_usd",), **kw) as t:
            run = evaluate(t, GOLDENS, ["recall@1", "pad_len"], progress=False,
                           artifact=artifact, max_concurrency=1)
    return run, artifact, seen


def test_a_large_raw_body_is_cut_from_the_row_but_seen_by_metrics(tmp_path: Path) -> None:
    assert len(json.dumps(SMALL)) <= DEFAULT_MAX_RAW_BYTES < len(json.dumps(LARGE))
    run, artifact, seen = run_with(tmp_path)
    assert sorted(seen) == [0, 100_000]  # during the run, the whole body
    assert run.header["status"] == "complete"
    rows = rows_of(artifact)
    assert rows["small"]["response"]["raw"] == SMALL
    assert "raw_cut" not in rows["small"]["response"]
    large = rows["large"]["response"]
    assert large["raw"] is None and large["raw_cut"] == len(json.dumps(LARGE))
    assert large["ranked_ids"] == ["d1"] and large["meta"] == {"cost_usd": 0.5}
    assert artifact.stat().st_size < 10_000
    by_id = {r.case_id: r for r in run.per_query}
    assert by_id["large"].response.raw is None  # memory bounded too
    assert by_id["large"].response.raw_cut == len(json.dumps(LARGE))


def test_rescore_refuses_a_metric_that_reads_a_cut_raw_body(tmp_path: Path) -> None:
    _, artifact, _ = run_with(tmp_path)
    with use_registry() as reg:
        @reg.register_metric("pad_len", higher_is_better=True)
        def pad_len(response: Any, case: GoldenCase) -> float:
            return float(len(response.raw.get("pad", "")))

        with pytest.raises(ArtifactError) as info:
            rescore(artifact, ["recall@1", "pad_len"], goldens=GOLDENS,
                    output=tmp_path / "re.jsonl")
        assert not (tmp_path / "re.jsonl").exists()  # refused before writing
        again = rescore(artifact, ["recall@1"], goldens=GOLDENS, output=tmp_path / "re.jsonl")
    message = str(info.value)
    assert "cannot rescore metric 'pad_len': it reads response.raw" in message
    assert f"the raw body of case 'large' ({len(json.dumps(LARGE))} bytes) was not kept" \
        in message
    assert again.header["status"] == "complete"
    assert rows_of(tmp_path / "re.jsonl")["large"]["response"]["raw_cut"] == \
        len(json.dumps(LARGE))


def test_raw_bodies_are_kept_in_full_when_asked(tmp_path: Path) -> None:
    _, artifact, _ = run_with(tmp_path, max_raw_bytes=None)
    assert rows_of(artifact)["large"]["response"]["raw"] == LARGE
    with use_registry() as reg:
        @reg.register_metric("pad_len", higher_is_better=True)
        def pad_len(response: Any, case: GoldenCase) -> float:
            return float(len(response.raw.get("pad", "")))

        out = rescore(artifact, ["pad_len"], goldens=GOLDENS, output=tmp_path / "re.jsonl")
    assert out.scores("pad_len") == {"small": 0.0, "large": 100_000.0}


def test_max_raw_bytes_zero_keeps_no_raw_body(tmp_path: Path) -> None:
    _, artifact, _ = run_with(tmp_path, max_raw_bytes=0)
    rows = rows_of(artifact)
    assert rows["small"]["response"]["raw_cut"] == len(json.dumps(SMALL))
    assert rows["small"]["response"]["raw"] is None
