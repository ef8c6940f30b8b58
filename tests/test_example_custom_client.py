"""examples/custom_client: an HTTP-style client over a hand-written golden set, offline.

Expected means are recomputed here from the two search functions directly (no evalkit,
no HTTP), with recall and binary nDCG written out by hand.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from evalkit.plugins.default import use_registry

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "custom_client"
GOLDEN = {  # goldens.yaml, by hand
    "001": ("books about sailing", {"bk-001", "bk-002"}),
    "002": ("baking bread at home", {"bk-003", "bk-004"}),
    "003": ("pasta", {"bk-005", "bk-006"}),
    "004": ("watching birds by the sea", {"bk-007"}),
    "005": ("growing vegetables", {"bk-009", "bk-010"}),
    "006": ("astronomy for beginners", {"bk-011", "bk-012"}),
    "007": ("marathon training", {"bk-013"}),
    "008": ("running in the hills", {"bk-014"}),
    "009": ("navigation on the hills", {"bk-016"}),
    "010": ("italian cooking", {"bk-005", "bk-006"}),
}


def load_example() -> ModuleType:
    sys.path.insert(0, str(EXAMPLE))
    spec = importlib.util.spec_from_file_location("custom_client_evaluate",
                                                  EXAMPLE / "evaluate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recall(ranked: list[str], rel: set[str], k: int) -> float:
    return len(set(ranked[:k]) & rel) / len(rel)


def ndcg10(ranked: list[str], rel: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in rel)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    return dcg / ideal


def test_custom_client_example(
        monkeypatch: pytest.MonkeyPatch,
        reference_bootstrap_t: Callable[..., tuple[float, float, float]]) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the example must not open a socket")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    ex = load_example()
    import bookshop

    with use_registry():
        baseline = ex.run_version("baseline", bookshop.search_v1)
        candidate = ex.run_version("candidate", bookshop.search_v2)
        text = ex.report(baseline, candidate, n_resamples=2000)
    assert baseline.ids() == list(GOLDEN)  # ids kept as written: "001", not 1
    for run, search in ((baseline, bookshop.search_v1), (candidate, bookshop.search_v2)):
        ranked = {q: search(text_, 10) for q, (text_, _) in GOLDEN.items()}
        for metric, fn in (("recall@1", lambda r, g: recall(r, g, 1)),
                           ("recall@5", lambda r, g: recall(r, g, 5)),
                           ("ndcg@10", ndcg10)):
            by_hand = {q: fn(ranked[q], rel) for q, (_, rel) in GOLDEN.items()}
            assert run.scores(metric) == pytest.approx(by_hand, abs=1e-12), metric
        assert run.header["aggregates"]["cost_per_case"] == pytest.approx(0.0004)
        assert run.header["status"] == "complete"
    assert baseline.mean("recall@5") == 0.5 and candidate.mean("recall@5") == 0.95
    lines = text.splitlines()
    # the table's column is as wide as its longest name, so every row lines up
    table = lines[:lines.index("")]
    assert table[0].split() == ["metric", "baseline", "candidate", "delta"]
    assert set(table[1]) == {"-"}
    width = len("max_item_share@1")
    for line in table[2:]:
        assert line[width:width + 2] == "  " and line[:width].strip() == line.split()[0]
        assert len(line) == len(table[0])
    assert "recall@5             0.5000     0.9500   +0.4500" in lines
    assert "max_item_share@1     0.2000     0.2000   +0.0000" in lines
    assert "cost_per_case        0.0004     0.0004   +0.0000" in lines

    # the default test, recomputed here. recall@1 is not a 0/1 metric (it is j/R), so it
    # gets the sign-flip test, joined by the bootstrap-t where the non-zero differences'
    # skewness G1 (scipy) is at least 1: then p is the larger of the two p-values
    by_version = {v: {q: s(t, 10) for q, (t, _) in GOLDEN.items()}
                  for v, s in (("b", bookshop.search_v1), ("c", bookshop.search_v2))}
    diffs = {m: [fn(by_version["c"][q], rel) - fn(by_version["b"][q], rel)
                 for q, (_, rel) in GOLDEN.items()]
             for m, fn in (("recall@1", lambda r, g: recall(r, g, 1)),
                           ("recall@5", lambda r, g: recall(r, g, 5)),
                           ("ndcg@10", ndcg10))}
    stats = pytest.importorskip("scipy.stats")
    kinds = {}
    for m, d in diffs.items():
        observed = abs(sum(d))
        hits = sum(1 for signs in itertools.product((1, -1), repeat=len(d))
                   if abs(sum(s * x for s, x in zip(signs, d, strict=True)))
                   >= observed - 1e-12)
        p = hits / 2 ** len(d)
        # the guard reads the non-zero differences (a tie has no sign), and none when
        # they all have one size; the bootstrap-t runs on them too
        live = [x for x in d if x != 0.0]
        skewed = len({abs(x) for x in live}) > 1 \
            and abs(float(stats.skew(live, bias=False))) >= 1.0
        if skewed:
            p = max(p, reference_bootstrap_t(np.array(live), 42, 2000)[0])
        kinds[m] = skewed
        mean = sum(d) / len(d)
        verdict = "REAL" if p < 0.05 else "not significant"
        how = "randomization+bootstrap-t" if skewed else "randomization, exact"
        assert (f"  {m:<8}  {mean:+.4f}  95% CI [" in text
                and f"p = {p:.4f}  {verdict} ({how})" in text), m
    assert kinds == {"recall@1": False, "recall@5": True, "ndcg@10": True}
    assert "Paired bootstrap (2,000 resamples, candidate - baseline):" in text
    assert "  recall@5  +0.4500  95% CI [" in text
    # ten cases: the bootstrap is labelled as not to be trusted at this n
    note = " ".join(line.strip() for line in lines[lines.index("") + 1:]
                    if line.startswith(("note:", "      ")))
    assert note.startswith("note: only 10 cases.")
    assert "docs/statistics.md" in note and "take the verdict from paired_test" in note
