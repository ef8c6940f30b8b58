"""The agreement page (``evalkit agreement --report html:PATH``): the table's numbers as
the reference packages compute them on the values written here, the PPI line, and every
name escaped."""

from __future__ import annotations

import numpy as np
import pytest
from evalkit_judge.agreement import judge_agreement
from evalkit_report_html.render import render_html

from evalkit.data.labels import HumanLabels
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse

NAME = "<b>grade</b>&<script>alert(1)</script>"


def test_agreement_page_numbers_and_escaping() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(8)
    ids = [f"c{i}" for i in range(30)]
    human = rng.integers(1, 6, size=30)
    judge = np.clip(human + rng.integers(-1, 2, size=30), 1, 5)
    rows = [CaseResult(c, TargetResponse(text="x"), {NAME: float(j)})
            for c, j in zip(ids, judge, strict=True)]
    run = RunResult("run<1>", rows, {"kind": "target"})
    chosen = ids[:12]
    labels = HumanLabels({c: {NAME: float(human[i])} for i, c in enumerate(chosen)},
                         "random", 4, "labels<x>.jsonl")
    page = render_html(judge_agreement(run, labels, plan_width=1.5))
    assert "<script>alert" not in page and "<b>grade" not in page
    assert "&lt;b&gt;grade&lt;/b&gt;&amp;&lt;script&gt;" in page
    assert "run&lt;1&gt;" in page and "labels&lt;x&gt;.jsonl" in page
    h, j = human[:12].astype(float), judge[:12].astype(float)
    for weights in (None, "linear", "quadratic"):
        assert f"{sk.cohen_kappa_score(j, h, weights=weights):.4f}" in page
    point = ppi_py.ppi_mean_pointestimate(h, j, judge[12:].astype(float))
    assert f"{float(np.ravel(point)[0]):.4f}, 95% CI" in page
    assert "on 12 human labels and 18 judge-only cases" in page
    assert "PPI++ interval of width 1.5 needs" in page
    assert "selection: random (seed 4)" in page
