"""Write confseq_reference.json: the PrPl-EB confidence sequence of the ``confseq``
package (Waudby-Smith, Howard and Ramdas's own implementation) on fixed inputs, which
tests/test_stats_sequential.py compares evalkit.stats.sequential with.

confseq's wheel does not build here (its C++ extension needs an old pybind11), so this
script imports its pure-Python modules from a source checkout:

    git clone https://github.com/gostevehoward/confseq  # commit 70b1ef3
    python make_confseq_reference.py path/to/confseq/src

``confseq.misc`` imports ``multiprocess`` (unused by predmix) and names ``np.float_``
(removed in numpy 2): both are stubbed before the import.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, sys.argv[1])
sys.modules.setdefault("multiprocess", types.ModuleType("multiprocess"))
if not hasattr(np, "float_"):
    np.float_ = np.float64  # type: ignore[attr-defined]

from confseq.predmix import predmix_empbern_twosided_cs  # type: ignore[import-not-found]  # noqa: E402

rng = np.random.default_rng(5)
cases = []
for name, x in (("beta(2,3) x 300", rng.beta(2, 3, size=300)),
                ("bernoulli(0.3) x 120", (rng.random(120) < 0.3).astype(float))):
    for population in (None, 500):
        low, high = predmix_empbern_twosided_cs(x, alpha=0.05, truncation=0.5,
                                                running_intersection=True, N=population)
        cases.append({"name": name, "x": x.tolist(), "alpha": 0.05, "truncation": 0.5,
                      "population": population, "lower": np.asarray(low).tolist(),
                      "upper": np.asarray(high).tolist()})
out = Path(__file__).with_name("confseq_reference.json")
out.write_text(json.dumps({"confseq_commit": "70b1ef3", "cases": cases}) + "\n")
print(f"wrote {out} ({len(cases)} cases)")
