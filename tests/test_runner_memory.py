"""evaluate(keep_responses=False), what `evalkit run` passes: a row's response body is
released once written, the aggregates and the finished artifact stay the same."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path
from typing import Any

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.target_runner import evaluate


class Body(list[str]):
    """A ranked-id list that can be weakly referenced (``list`` cannot)."""


def _target(bodies: list[weakref.ref[Any]]) -> CallableTarget:
    def answer(case: GoldenCase) -> TargetResponse:
        ids = Body([f"{case.id}-d{i}" for i in range(50)] + ["d1"])
        bodies.append(weakref.ref(ids))
        return TargetResponse(ranked_ids=ids, text="answer " + case.id,
                              raw={"ids": list(ids)}, latency_ms=1.0 + int(case.id[1:]))
    return CallableTarget(answer, name="big")


def _run(tmp_path: Path, keep: bool, bodies: list[weakref.ref[Any]]) -> Any:
    gset = GoldenSet([GoldenCase(id=f"q{i}", query="x", expected=["d1"])
                      for i in range(12)])
    out = tmp_path / f"{keep}.jsonl"
    run = evaluate(_target(bodies), gset, ["recall@10"],
                   ["latency_p95", "max_item_share@10", "entropy"], max_concurrency=3,
                   artifact=out, keep_responses=keep, progress=False)
    return run, out


def _comparable(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for obj in lines:
        for key in ("created", "finished", "sha256"):
            obj.pop(key, None)
    return lines


def test_bodies_released_once_written(tmp_path: Path) -> None:
    bodies: list[weakref.ref[Any]] = []
    run, _ = _run(tmp_path, False, bodies)
    gc.collect()
    assert len(bodies) == 12
    assert all(ref() is None for ref in bodies)  # no ranked-id list is held any more
    for row in run.per_query:
        assert row.response is not None and row.response.raw is None
        assert len(row.response.ranked_ids) == 1 and len(row.response.text) == 1


def test_kept_by_default_and_results_equal(tmp_path: Path) -> None:
    kept: list[weakref.ref[Any]] = []
    full, full_path = _run(tmp_path, True, kept)
    gc.collect()
    assert all(ref() is not None for ref in kept)  # the API's rows keep their responses
    assert all(len(r.response.ranked_ids) == 51 for r in full.per_query)
    light, light_path = _run(tmp_path, False, [])
    assert light.header["aggregates"] == full.header["aggregates"]
    assert set(light.header["aggregates"]) == {"latency_p95", "max_item_share@10",
                                               "entropy"}
    assert [r.metrics for r in light.per_query] == [r.metrics for r in full.per_query]
    assert _comparable(light_path) == _comparable(full_path)


def test_samples_and_resume_equal(tmp_path: Path) -> None:
    gset = GoldenSet([GoldenCase(id=f"q{i}", query="x", expected=["d1"]) for i in range(6)])
    outs = {}
    for keep in (True, False):
        out = tmp_path / f"s{keep}.jsonl"
        run = evaluate(_target([]), gset, ["recall@10"], ["max_item_share@10", "entropy"],
                       max_concurrency=2, artifact=out, keep_responses=keep, epochs=2,
                       progress=False)
        again = evaluate(_target([]), gset, ["recall@10"], ["max_item_share@10", "entropy"],
                         max_concurrency=2, artifact=out, keep_responses=keep, epochs=2,
                         resume=True, progress=False)
        assert again.header["aggregates"] == run.header["aggregates"]
        outs[keep] = (run, _comparable(out))
    assert outs[True][0].header["aggregates"] == outs[False][0].header["aggregates"]
    assert [r.metrics for r in outs[True][0].per_query] == \
        [r.metrics for r in outs[False][0].per_query]
    assert outs[True][1] == outs[False][1]


def test_resume_and_rescore_return_rows_without_bodies(tmp_path: Path) -> None:
    from evalkit.execute.rescore import rescore

    goldens = tmp_path / "cases.jsonl"
    goldens.write_text("".join(json.dumps({"id": f"q{i}", "query": "x", "expected": ["d1"]})
                               + "\n" for i in range(6)))
    out = tmp_path / "run.jsonl"
    evaluate(_target([]), goldens, ["recall@10"], ["entropy"], artifact=out, progress=False)
    whole = out.read_bytes()
    lines = whole.splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:4]))  # three rows kept, no trailer
    resumed = evaluate(_target([]), goldens, ["recall@10"], ["entropy"], artifact=out,
                       resume=True, keep_responses=False, progress=False)
    rescored = rescore(out, ["recall@10"], keep_responses=False)
    for run in (resumed, rescored):
        assert all(len(r.response.ranked_ids) == 1 and len(r.response.text) == 1
                   and r.response.raw is None for r in run.per_query)
    assert rescored.header["aggregates"] == resumed.header["aggregates"]
    assert _comparable(out)[1:-1] == [json.loads(x) for x in whole.splitlines()[1:-1]]
