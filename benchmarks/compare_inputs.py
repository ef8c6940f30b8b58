"""Seeded synthetic run artifacts for bench_compare.py: a baseline and 20 candidates,
five metrics, 10,000 queries, and the values the previous implementation gave on them.

Per query the baseline's ``ap``, ``ndcg@10``, ``precision@10`` and ``recall@100`` are
Beta(2, 5) draws and a candidate adds normal noise (clipped to [0, 1]) whose mean grows
with the candidate's number, so some comparisons are significant and some not. ``rr``
changes on about one query in eight, by a right-skewed amount, so its differences are
skewed and the default test ("auto") adds the bootstrap-t on them: the benchmark runs
both of the default procedure's paths. Query ids are ``q00000`` .. ``q09999``, written in
a shuffled order (as a run's rows come, not sorted).

``reference`` computes, with the statistics core (``evalkit.stats.compare_runs``, the
default test, interval and Holm correction, B = 10,000, seed 42), each comparison's
observed difference, interval, p-value and adjusted p-value, against the baseline and
all-pairs; :func:`write_reference` stores them (``repr`` of each float, so equality is
exact) in ``data/compare_reference.json.gz``, which the benchmark checks every run
against. The stored file was written by the implementation before the compare speed-up.

    .venv/bin/python benchmarks/compare_inputs.py --write-reference
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

METRICS = ("ap", "ndcg@10", "precision@10", "recall@100", "rr")
REFERENCE = Path(__file__).with_name("data") / "compare_reference.json.gz"


def write_runs(folder: Path, n: int = 10_000, candidates: int = 20) -> list[Path]:
    """Write the baseline and ``candidates`` run artifacts into ``folder``; their paths,
    baseline first."""
    from evalkit.data.results import QueryResult, RunResult

    rng = np.random.default_rng(33)
    ids = [f"q{i:05d}" for i in range(n)]
    order = rng.permutation(n)
    base = rng.beta(2.0, 5.0, (n, len(METRICS)))
    paths = []

    def save(name: str, vals: np.ndarray) -> None:
        rows = [QueryResult(ids[i], [], dict(zip(METRICS, map(float, vals[i]), strict=True)))
                for i in order.tolist()]
        paths.append(RunResult(name, rows).save(folder / f"{name}.jsonl"))

    save("baseline", base)
    for k in range(candidates):
        vals = np.clip(base + rng.normal(0.0005 * k, 0.08, base.shape), 0.0, 1.0)
        moved = rng.random(n) < 0.125
        vals[:, 4] = np.clip(base[:, 4] + moved * rng.exponential(0.05 + 0.01 * k, n), 0, 1)
        save(f"cand{k + 1:02d}", vals)
    return paths


def reference(paths: Sequence[Path], all_pairs: bool) -> list[list[Any]]:
    """``[name_a, name_b, metric, method, observed, ci_low, ci_high, p, p_adjusted]`` per
    comparison, in the family's order (floats as ``repr`` strings)."""
    from evalkit.data.results import RunResult
    from evalkit.stats import compare_runs

    runs = [RunResult.load(p) for p in paths]
    fam = compare_runs(runs[0], runs[1:], list(METRICS), all_pairs=all_pairs)
    return [[r.name_a, r.name_b, r.metric, r.method,
             *(repr(math.nan if x is None else float(x))
               for x in (r.observed, r.ci_low, r.ci_high, r.p_value, r.p_adjusted))]
            for r in fam.results]


#: how far an inversion interval's end may move from the stored one, as a share of the
#: interval's width: the root search ends where the resampled sums' tie tolerance says,
#: and that tolerance (twice the rounding error of the sums, evalkit.stats.bootstrap
#: tie_tolerance) moved the ends by a few units in the last place when it replaced
#: 1e-10 x max|d|; observed differences and p-values stay equal bit for bit
END_TOLERANCE = 1e-12


def same_values(have: Sequence[Any], want: Sequence[Any]) -> tuple[bool, bool]:
    """(equal bit for bit, equal with the interval ends within :data:`END_TOLERANCE` of
    the width) of two rows ``[..., method, observed, ci_low, ci_high, p, p_adjusted]``."""
    if list(have) == list(want):
        return True, True
    head_h, head_w = list(have[:4]), list(want[:4])
    obs_h, lo_h, hi_h, p_h, pa_h = (float(x) for x in have[4:])
    obs_w, lo_w, hi_w, p_w, pa_w = (float(x) for x in want[4:])
    if head_h != head_w or [repr(obs_h), repr(p_h), repr(pa_h)] != \
            [repr(obs_w), repr(p_w), repr(pa_w)]:
        return False, False
    width = abs(hi_w - lo_w) if math.isfinite(hi_w - lo_w) else 1.0
    close = all((math.isnan(a) and math.isnan(b)) or a == b
                or abs(a - b) <= END_TOLERANCE * max(width, 1e-300)
                for a, b in ((lo_h, lo_w), (hi_h, hi_w)))
    return False, close


def write_reference() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_runs(Path(tmp))
        doc = {"baseline": reference(paths, False), "all_pairs": reference(paths, True)}
    REFERENCE.parent.mkdir(exist_ok=True)
    with gzip.open(REFERENCE, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(f"wrote {REFERENCE}: {len(doc['baseline'])} + {len(doc['all_pairs'])} comparisons")


def load_reference() -> dict[str, list[list[Any]]]:
    with gzip.open(REFERENCE, "rt") as f:
        return json.load(f)  # type: ignore[no-any-return]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-reference", action="store_true")
    if parser.parse_args().write_reference:
        write_reference()
    sys.exit(0)
