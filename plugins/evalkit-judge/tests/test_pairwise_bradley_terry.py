"""Bradley-Terry strengths against choix's on the same tie-free comparisons.

choix takes seconds to import, so its estimates are stored in data/choix_values.json by
data/make_choix_values.py (``choix.opt_pairwise(n, comparisons, alpha=0.01,
method="Newton-CG", tol=1e-12)``: the same L2 penalty, 0.01 * sum(theta**2), as
``fit(wins, 0.01)``). The tolerance is 1e-8 (both converge to well below it: measured
agreement 1e-13 to 3e-10).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evalkit_judge.bradley_terry import BT_ALPHA, bootstrap, fit

DATA = json.loads((Path(__file__).parent / "data" / "choix_values.json").read_text())
TOLERANCE = 1e-8


def wins_of(dataset: dict[str, Any]) -> np.ndarray:
    m = dataset["n_items"]
    wins = np.zeros((m, m))
    for w, loser in dataset["comparisons"]:
        wins[w, loser] += 1
    return wins


@pytest.mark.parametrize("dataset", DATA["datasets"], ids=lambda d: d["name"])
def test_fit_agrees_with_choix_opt_pairwise(dataset: dict[str, Any]) -> None:
    assert DATA["alpha"] == BT_ALPHA
    theta = fit(wins_of(dataset), DATA["alpha"])
    assert theta == pytest.approx(dataset["opt_pairwise"], abs=TOLERANCE)
    assert math.fsum(theta) == pytest.approx(0.0, abs=1e-9)  # centred by the penalty


def test_two_systems_by_hand() -> None:
    # 2 items, i beat j a times and lost b times: the unpenalised MLE is d = log(a/b);
    # with a tiny penalty theta = (d/2, -d/2)
    theta = fit(np.array([[0.0, 30.0], [10.0, 0.0]]), alpha=1e-9)
    assert theta[0] - theta[1] == pytest.approx(math.log(3.0), abs=1e-6)
    assert theta[0] == pytest.approx(math.log(3.0) / 2, abs=1e-6)


def test_bootstrap_resamples_cases_and_covers_the_estimate() -> None:
    # 20 cases of 3 systems, each case with one comparison per pair (the scenario)
    scenario = next(d for d in DATA["datasets"] if d["name"] == "pairwise_scenario")
    comps = scenario["comparisons"]
    per_case = np.zeros((20, 3, 3))
    for k, (w, loser) in enumerate(comps):
        per_case[k // 3, w, loser] += 1
    bt = bootstrap(per_case, n_resamples=300, seed=7)
    assert bt.theta == pytest.approx(scenario["opt_pairwise"], abs=TOLERANCE)
    assert np.all(bt.low <= bt.theta) and np.all(bt.theta <= bt.high)
    again = bootstrap(per_case, n_resamples=300, seed=7)
    assert np.array_equal(again.low, bt.low)  # seeded


def test_fit_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="square"):
        fit(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=">= 0"):
        fit(np.array([[0.0, -1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="alpha"):
        fit(np.zeros((2, 2)), alpha=0.0)
