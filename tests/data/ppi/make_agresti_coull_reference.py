"""Writes agresti_coull_reference.json: statsmodels' Agresti-Coull interval of a binomial
proportion, the interval evalkit's PPI++ mean of pass/fail labels reduces to when the
judge is unused (lambda 0). Run: python make_agresti_coull_reference.py (statsmodels 0.14+).
"""

import json
from pathlib import Path

from statsmodels.stats.proportion import proportion_confint

CASES = [(20, 20), (0, 20), (7, 12), (3, 15), (1, 50)]
out = [{"passes": k, "n": n, "alpha": 0.05,
        "interval": list(proportion_confint(k, n, alpha=0.05, method="agresti_coull"))}
       for k, n in CASES]
Path(__file__).with_name("agresti_coull_reference.json").write_text(
    json.dumps(out, indent=1) + "\n")
