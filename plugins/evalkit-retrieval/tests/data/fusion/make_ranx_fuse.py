"""Fuse the three runs of this folder with ranx, for every method and normalisation the
fusion tests check, and store what ranx produced in ``ranx_fuse.json`` (run from the
repository root, in an environment with ranx installed; ranx is not a test dependency):

    .venv/bin/pip install ranx==0.3.21
    .venv/bin/python plugins/evalkit-retrieval/tests/data/fusion/make_ranx_fuse.py
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from ranx import Run, fuse

HERE = Path(__file__).resolve().parent
RUNS = ["terrier.run", "bm25.run", "tfidf.run"]
WEIGHTS = [0.5, 0.3, 0.2]
# evalkit's names -> ranx's
METHODS = {"combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min",
           "combanz": "anz", "wsum": "wsum"}
NORMS = {"min-max": "min-max", "max": "max", "sum": "sum", "zmuv": "zmuv", "rank": "rank",
         "borda": "borda", "none": None}
RRF_KS = [60, 10]


def as_lists(run: Run) -> dict[str, list[list[object]]]:
    """Each query's (doc, score) pairs in ranx's order (score descending)."""
    return {q: [[d, float(s)] for d, s in docs.items()] for q, docs in run.to_dict().items()}


def main() -> None:
    runs = [Run.from_file(str(HERE / name), kind="trec") for name in RUNS]
    cases: dict[str, object] = {}
    for method, ranx_method in METHODS.items():
        for norm, ranx_norm in NORMS.items():
            params = {"weights": WEIGHTS} if method == "wsum" else {}
            fused = fuse(runs, norm=ranx_norm, method=ranx_method, params=params)
            cases[f"{method}/{norm}"] = as_lists(fused)
    for k in RRF_KS:
        cases[f"rrf/k={k}"] = as_lists(fuse(runs, norm=None, method="rrf",
                                            params={"k": k}))
    out = {"ranx": version("ranx"), "runs": RUNS, "weights": WEIGHTS, "cases": cases}
    (HERE / "ranx_fuse.json").write_text(json.dumps(out, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
