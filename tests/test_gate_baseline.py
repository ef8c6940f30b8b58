"""Baselines: promote, fingerprint, and refusing an incomparable baseline."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit.core.registry import Registry
from evalkit.data.results import QueryResult, RunResult, settings_differences
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.gate import evaluate_gate
from evalkit.gate.baseline import load_baseline, promote
from evalkit.gate.checks import CheckSpec
from evalkit.gate.fingerprint import BaselineError, fingerprint, fingerprint_differences
from evalkit.plugins.default import use_registry

B = 999
REPO = Path(__file__).resolve().parents[1]
IDS = [f"q{i}" for i in range(12)]


def _never(response: Any, case: Any) -> float:
    raise AssertionError("not called")


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        r.register_metric("ndcg@10", higher_is_better=True)(_never)
        r.register_metric("ap", higher_is_better=True)(_never)
        yield r


def header(qrels_sha: str = "a" * 64, ndcg_version: str = "1", plugin_release: str = "0.3.0",
           **extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {
        "plugins": {"evalkit-retrieval": plugin_release},
        "metrics": {"ndcg@10": {"provider": "evalkit-retrieval", "version": ndcg_version},
                    "ap": {"provider": "evalkit-retrieval", "version": "1"}},
        "qrels": {"path": "qrels", "sha256": qrels_sha},
        "relevance_level": 1, "missing": "zero", "depth": None,
    }
    h.update(extra)
    return h


def make_run(name: str, delta: float = 0.0, ids: list[str] = IDS, **hdr: Any) -> RunResult:
    rows = [QueryResult(q, ["d1"], {"ndcg@10": 0.1 * (i % 5) + 0.3 + delta,
                                    "ap": 0.2 + delta})
            for i, q in enumerate(ids)]
    return RunResult(name, rows, header=header(**hdr))


NOREG = [CheckSpec("no_ndcg_regression", "ndcg@10", vs_baseline="no_significant_regression")]


def test_promote_stores_the_fingerprint(reg: Registry, tmp_path: Path) -> None:
    run = make_run("bm25")
    src = run.save(tmp_path / "bm25.jsonl")
    path = promote(src, tmp_path / "base" / "baseline.jsonl")
    assert path.exists()
    first = json.loads(path.read_text().splitlines()[0])
    fp = first["baseline"]["fingerprint"]
    assert first["baseline"]["source"] == str(src)
    assert fp["cases"]["count"] == 12
    ids_json = json.dumps(sorted(IDS), sort_keys=True, separators=(",", ":"))
    assert fp["cases"]["ids_sha256"] == hashlib.sha256(ids_json.encode()).hexdigest()
    assert fp["expected"] == {"source": "qrels", "sha256": "a" * 64}
    assert fp["metrics"]["ndcg@10"] == {"provider": "evalkit-retrieval", "version": "1"}
    assert fp["settings"] == {"relevance_level": 1, "missing": "zero", "depth": None}
    # the release number of the plugin is not part of the fingerprint
    assert "0.3.0" not in json.dumps(fp)
    stored = load_baseline(path)
    assert stored.promoted and stored.name == "bm25" and len(stored.run.per_query) == 12


def test_same_definitions_compare_and_a_new_plugin_release_does_not_matter(
    reg: Registry, tmp_path: Path
) -> None:
    path = promote(make_run("bm25"), tmp_path / "b.jsonl")
    cand = make_run("cand", plugin_release="0.4.0")
    report = evaluate_gate(NOREG, cand, load_baseline(path), n_resamples=B)
    assert report.results[0].verdict == "pass", report.results[0].message


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        ({"ndcg_version": "2"}, ["metric ndcg@10 is defined differently",
                                 "evalkit-retrieval definition v1 in the baseline",
                                 "evalkit-retrieval definition v2 in the run"]),
        ({"qrels_sha": "b" * 64}, ["expected values changed", "qrels", "aaaaaaaaaaaa",
                                   "bbbbbbbbbbbb"]),
        ({"relevance_level": 2}, ["relevance_level changed", "1 in the baseline",
                                  "2 in the run"]),
    ],
)
def test_a_changed_fingerprint_is_an_error_saying_what_changed(
    reg: Registry, tmp_path: Path, change: dict[str, Any], needles: list[str]
) -> None:
    path = promote(make_run("bm25"), tmp_path / "b.jsonl")
    cand = make_run("cand", **change)
    report = evaluate_gate(NOREG, cand, load_baseline(path), n_resamples=B)
    r = report.results[0]
    assert r.verdict == "error"
    for needle in needles:
        assert needle in r.message, (needle, r.message)
    assert report.exit_code == 2


def test_a_changed_definition_of_an_unchecked_metric_does_not_matter(
    reg: Registry, tmp_path: Path
) -> None:
    path = promote(make_run("bm25"), tmp_path / "b.jsonl")
    cand = make_run("cand")
    cand.header["metrics"]["ap"] = {"provider": "evalkit-retrieval", "version": "7"}
    assert evaluate_gate(NOREG, cand, load_baseline(path), n_resamples=B).exit_code == 0


def test_the_kernel_named_paired_evalkit_in_a_stored_baseline_is_the_same_provider(
    reg: Registry, tmp_path: Path
) -> None:
    """Runs and baselines that name ``paired-evalkit`` as the provider of the kernel's
    definitions compare with runs that name ``paired-evalkit-core``, the kernel's
    distribution."""
    base = make_run("bm25")
    base.header["metrics"]["ndcg@10"]["provider"] = "paired-evalkit"
    path = promote(base, tmp_path / "b.jsonl")
    cand = make_run("cand")
    cand.header["metrics"]["ndcg@10"]["provider"] = "paired-evalkit-core"
    report = evaluate_gate(NOREG, cand, load_baseline(path), n_resamples=B)
    assert report.results[0].verdict == "pass", report.results[0].message
    assert settings_differences(base, cand) == []
    # another distribution's definition, or another version, is still a difference
    for provider, version in (("evalkit-retrieval", "1"), ("paired-evalkit-core", "2")):
        cand.header["metrics"]["ndcg@10"] = {"provider": provider, "version": version}
        r = evaluate_gate(NOREG, cand, load_baseline(path), n_resamples=B).results[0]
        assert r.verdict == "error"
        assert ("metric ndcg@10 is defined differently: paired-evalkit definition v1 in the "
                f"baseline, {provider} definition v{version} in the run") in r.message
        assert settings_differences(base, cand) != []


def test_the_example_baseline_compares_with_the_kernel_aggregates_of_now() -> None:
    """A baseline promoted when the kernel's distribution was named ``paired-evalkit``
    (tests/data/schema1/baseline.jsonl) records the kernel's aggregates under that name; the
    kernel registers them as ``paired-evalkit-core``'s, and the two compare as the same."""
    stored = load_baseline(REPO / "tests" / "data" / "schema1" / "baseline.jsonl")
    recorded = stored.fingerprint.aggregates
    assert recorded["latency_p95"] == {"provider": "paired-evalkit", "version": "1"}
    with use_registry():
        now = fingerprint(stored.run)
    assert now.aggregates["latency_p95"] == {"provider": "paired-evalkit-core", "version": "1"}
    kernels = sorted(name for name in recorded
                     if now.aggregates[name]["provider"] == "paired-evalkit-core")
    assert "latency_p95" in kernels
    assert fingerprint_differences(stored.fingerprint, now, aggregates=kernels) == []


def test_different_cases_against_a_stored_baseline(reg: Registry, tmp_path: Path) -> None:
    path = promote(make_run("bm25"), tmp_path / "b.jsonl")
    cand = make_run("cand", ids=[*IDS[:-1], "q99"])
    report = evaluate_gate(NOREG, cand, load_baseline(path), n_resamples=B)
    r = report.results[0]
    assert r.verdict == "error"
    assert "only in the run (q99)" in r.message and "only in the baseline (q11)" in r.message


def test_threshold_checks_ignore_the_baseline_fingerprint(
    reg: Registry, tmp_path: Path
) -> None:
    path = promote(make_run("bm25"), tmp_path / "b.jsonl")
    cand = make_run("cand", ndcg_version="2")
    checks = [CheckSpec("floor", "ap", op=">=", threshold=0.2)]
    assert evaluate_gate(checks, cand, load_baseline(path)).exit_code == 0


def test_promote_refuses_errored_or_empty_runs(reg: Registry, tmp_path: Path) -> None:
    rows = [CaseResult("a", TargetResponse(), {"m": 1.0}),
            CaseResult("b", None, {}, error="boom")]
    with pytest.raises(BaselineError, match=r"1 errored case\(s\) \(b\)"):
        promote(RunResult("r", rows), tmp_path / "x.jsonl")
    with pytest.raises(BaselineError, match="no rows"):
        promote(RunResult("r", []), tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_target_run_fingerprint_uses_the_golden_hash(reg: Registry) -> None:
    rows = [CaseResult("a", TargetResponse(), {"ndcg@10": 1.0})]
    with_goldens = RunResult("r", rows, header={"goldens": {"path": "g.jsonl",
                                                            "sha256": "c" * 64}})
    fp = fingerprint(with_goldens)
    assert (fp.expected_source, fp.expected_sha256) == ("goldens", "c" * 64)
    other = fingerprint(RunResult("r", rows, header={"goldens": {"sha256": "d" * 64}}))
    diffs = fingerprint_differences(fp, other)
    assert len(diffs) == 1 and "the golden file" in diffs[0]


def test_a_plain_run_can_serve_as_baseline(reg: Registry, tmp_path: Path) -> None:
    plain = make_run("bm25").save(tmp_path / "plain.jsonl")
    base = load_baseline(plain)
    assert not base.promoted
    report = evaluate_gate(NOREG, make_run("cand", delta=-0.1), base, n_resamples=B)
    assert report.results[0].verdict == "fail"


def test_drop_rankings_keeps_metrics_only(reg: Registry, tmp_path: Path) -> None:
    run = make_run("bm25")
    full = load_baseline(promote(run, tmp_path / "full.jsonl"))
    slim = load_baseline(promote(run, tmp_path / "slim.jsonl", drop_rankings=True))
    assert full.run.per_query[0].retrieved == ["d1"]
    assert all(r.retrieved == [] for r in slim.run.per_query)
    assert slim.fingerprint == full.fingerprint
    assert slim.run.scores("ndcg@10") == run.scores("ndcg@10")
