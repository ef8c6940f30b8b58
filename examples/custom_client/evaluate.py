"""Evaluate two versions of a search client against a hand-written golden set, offline.

Both versions are called through ``HttpTarget`` exactly as a deployed search API would
be (JSON request, JSON answer, ``extract``, a meta field), but the transport is answered
in-process by ``bookshop.py``, so nothing touches the network. The script prints each
version's metric means, then paired tests of candidate minus baseline, case by case:
evalkit's default test (``paired_test``) and the paired bootstrap, with a note on
how far ten cases can be trusted.

    .venv/bin/python examples/custom_client/evaluate.py
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import bookshop  # noqa: E402  (this example's pretend search API)

from evalkit import HttpTarget, RunResult, load_goldens, paired_bootstrap  # noqa: E402
from evalkit.execute.target_runner import evaluate  # noqa: E402
from evalkit.report.formatting import interval, signed  # noqa: E402
from evalkit.stats import DEFAULT_METHOD, paired_test  # noqa: E402

METRICS = ["recall@1", "recall@5", "ndcg@10"]
#: cost_per_case is built in: the mean of the ``cost_usd`` the API reports per call
AGGREGATES = ["max_item_share@1", "cost_per_case"]


def run_version(name: str, search: bookshop.Search) -> RunResult:
    """Evaluate one version of the client over the golden set (no network)."""
    goldens = load_goldens(HERE / "goldens.yaml")
    with HttpTarget(
        url="http://bookshop.invalid/api/search",
        name=name,
        build_payload=lambda case: {"q": case.query, "limit": 10},
        extract=lambda body: [hit["sku"] for hit in body["hits"]],
        meta_keys=("cost_usd",),
        transport=bookshop.transport(search),
    ) as target:
        return evaluate(target, goldens, METRICS, AGGREGATES, max_concurrency=4,
                        progress=False)


#: docs/statistics.md: bootstrap intervals reject too often at small n; use them from here on
BOOTSTRAP_MIN_N = 300


def report(baseline: RunResult, candidate: RunResult, n_resamples: int = 10_000) -> str:
    """The metric table and the paired comparison, as printed by :func:`main`."""
    width = max(len(name) for name in ["metric", *METRICS, *AGGREGATES])
    head = f"{'metric':<{width}}  {'baseline':>9}  {'candidate':>9}  {'delta':>8}"
    lines = [head, "-" * len(head)]
    rows = [(m, baseline.mean(m), candidate.mean(m)) for m in METRICS] + [
        (a, baseline.header["aggregates"][a], candidate.header["aggregates"][a])
        for a in AGGREGATES
    ]
    for name, b, c in rows:
        lines.append(f"{name:<{width}}  {b:>9.4f}  {c:>9.4f}  {c - b:>+8.4f}")

    n = len(baseline.per_query)
    mwidth = max(len(m) for m in METRICS)
    lines += ["", f"paired_test, the default test (method {DEFAULT_METHOD!r}), candidate - "
              f"baseline, {n} cases:"]
    for m in METRICS:
        t = paired_test(candidate, baseline, m, n_resamples=n_resamples, seed=42)
        verdict = "REAL" if t.significant else "not significant"
        how = t.method + (", exact" if t.exact else "")
        lines.append(
            f"  {m:<{mwidth}}  {signed(t.observed)}  95% CI {interval(t.ci_low, t.ci_high)}  "
            f"{t.p_display()}  {verdict} ({how})"
        )
    lines += ["", f"Paired bootstrap ({n_resamples:,} resamples, candidate - baseline):"]
    for m in METRICS:
        v = paired_bootstrap(candidate, baseline, m, n_resamples=n_resamples, seed=42)
        verdict = "REAL" if v.significant else "not significant"
        lines.append(
            f"  {m:<{mwidth}}  {signed(v.observed)}  95% CI {interval(v.ci_low, v.ci_high)}  "
            f"{v.p_display()}  {verdict}"
        )
    if n < BOOTSTRAP_MIN_N:
        note = (
            f"note: only {n} cases. At this n the bootstrap's interval rejects too often "
            f"(docs/statistics.md: use it from n = {BOOTSTRAP_MIN_N}), so take the verdict "
            "from paired_test; its intervals are wide too, and a real difference can go "
            "undetected."
        )
        lines += ["", textwrap.fill(note, width=88, subsequent_indent="      ")]
    return "\n".join(lines)


def main() -> int:
    baseline = run_version("baseline", bookshop.search_v1)
    candidate = run_version("candidate", bookshop.search_v2)
    print(report(baseline, candidate))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
