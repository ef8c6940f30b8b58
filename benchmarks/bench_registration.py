"""Registering N metrics from one plugin costs about N times one, not N squared.

A plugin that generates its metrics (one per label, dataset or keyword list) registers
them on every command that loads plugins. This registers N trivial ``MetricSpec`` named
``m_<i>`` (a name trec_eval's ``base_k`` spelling could read, so each is checked against
the families that could resolve it) from a plugin, with the retrieval plugin's families
loaded first, for N = 200 (the baseline, measured in the same run) and N = 8000, and
prints the time per metric at each N and their ratio: near 1 when registration is
linear, near N_large / N_small (40) when each registration costs time in proportion to
the records already there.

    .venv/bin/python benchmarks/bench_registration.py [--small 200] [--large 8000]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from evalkit.core.pyproject_config import PluginSelection
from evalkit.core.registry import Provider, Registry
from evalkit.core.specs import MetricSpec
from evalkit.plugins.loading import load_plugins

PROVIDER = Provider(module="bench_many.plugin", distribution="bench-many", version="1")


def _zero(response: Any, case: Any) -> float:
    return 0.0


def per_metric(n: int, repeats: int = 3) -> float:
    """The best of ``repeats`` times (seconds) per metric of registering ``n`` metrics."""
    best = float("inf")
    for _ in range(repeats):
        reg = Registry()
        load_plugins(reg, selection=PluginSelection.everything())
        specs = [MetricSpec(f"m_{i}", _zero, higher_is_better=True) for i in range(n)]
        start = time.perf_counter()
        for spec in specs:
            reg.add(spec, PROVIDER, from_plugin=True)
        reg.resolve("M_1")  # a lookup by letter case reads the index once
        best = min(best, (time.perf_counter() - start) / n)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=8000)
    args = parser.parse_args()
    small = per_metric(args.small)
    large = per_metric(args.large, repeats=1)
    print(f"N={args.small}: {small * 1e6:.1f} us per metric (baseline)")
    print(f"N={args.large}: {large * 1e6:.1f} us per metric")
    print(f"ratio of the time per metric, N={args.large} over N={args.small}: "
          f"{large / small:.2f} (1 = linear)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
