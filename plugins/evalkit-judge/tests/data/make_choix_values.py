"""Writes choix_values.json: choix's Bradley-Terry estimates on fixed tie-free comparisons,
which tests/test_pairwise_bradley_terry.py checks evalkit_judge.bradley_terry.fit against
(choix takes seconds to import, so its values are stored; run this to make them again).

    .venv/bin/python plugins/evalkit-judge/tests/data/make_choix_values.py

Each dataset is a list of (winner, loser) comparisons; ``choix.opt_pairwise(n_items,
comparisons, alpha=ALPHA, method="Newton-CG", tol=1e-12)`` minimises
``alpha * sum(theta**2) + sum log(1 + exp(-(theta_w - theta_l)))``, the objective of
evalkit_judge.bradley_terry.fit with penalty ALPHA.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import choix

ALPHA = 0.01
#: the known-answer pairwise scenario of the test: over N_CASES cases, "c" beats "b" on
#: the first 15, "b" beats "a" on the first 12, "c" beats "a" on the first 18 (the other
#: way round on the rest); systems indexed a=0, b=1, c=2.
N_CASES = 20
RULES = {(2, 1): 15, (1, 0): 12, (2, 0): 18}


def scenario() -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for case in range(N_CASES):
        for (x, y), first in RULES.items():
            out.append((x, y) if case < first else (y, x))
    return out


def random_comparisons(n_items: int, n: int, seed: int,
                       strengths: list[float]) -> list[tuple[int, int]]:
    import math

    rng = random.Random(seed)
    out: list[tuple[int, int]] = []
    for _ in range(n):
        i, j = rng.sample(range(n_items), 2)
        p = 1 / (1 + math.exp(strengths[j] - strengths[i]))
        out.append((i, j) if rng.random() < p else (j, i))
    return out


def main() -> None:
    datasets = {
        "three_random": (3, random_comparisons(3, 60, 1, [0.5, 0.0, -0.5])),
        "five_random": (5, random_comparisons(5, 200, 2, [1.0, 0.4, 0.0, -0.3, -1.1])),
        "one_wins_all": (4, [(0, 1), (0, 2), (0, 3), (1, 2), (2, 1), (1, 3), (3, 2),
                             (2, 3), (1, 3)]),
        "pairwise_scenario": (3, scenario()),
    }
    found: list[dict[str, object]] = []
    for name, (n_items, data) in datasets.items():
        theta = choix.opt_pairwise(n_items, data, alpha=ALPHA, method="Newton-CG", tol=1e-12)
        found.append({"name": name, "n_items": n_items,
                                "comparisons": [list(c) for c in data],
                                "opt_pairwise": [float(t) for t in theta]})
    out = {"alpha": ALPHA, "choix_version": getattr(choix, "__version__", "0.4.1"),
           "datasets": found}
    path = Path(__file__).with_name("choix_values.json")
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
