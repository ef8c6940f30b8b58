"""Whole-run aggregates on a retrieval run scored from a TREC run file (`evalkit eval
--save`): the item measures (max_item_share, max_item_share@k, entropy) are computed over
each query's ranking, as over a target's ranked ids; an aggregate over what a target's
response holds (latency, a plugin's aggregate reading ``row.response``) is refused with a
message saying which aggregates apply to such a run, not an internal AttributeError."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit import hookimpl
from evalkit.cli.app import app
from evalkit.core.specs import AggregateSpec
from evalkit.testing import registered_plugin

runner = CliRunner()

# q1 ranks d1 > d2 > d3, q2 ranks d1 > d4, q3 ranks d5 (distinct scores: no tie order)
RUN = ("q1 Q0 d1 1 3.0 bm25\nq1 Q0 d2 2 2.0 bm25\nq1 Q0 d3 3 1.0 bm25\n"
       "q2 Q0 d1 1 3.0 bm25\nq2 Q0 d4 2 2.0 bm25\n"
       "q3 Q0 d5 1 1.0 bm25\n")
QRELS = "q1 0 d1 1\nq2 0 d4 1\nq3 0 d5 1\n"
RANKINGS = {"q1": ["d1", "d2", "d3"], "q2": ["d1", "d4"], "q3": ["d5"]}


def max_share(k: int | None) -> float:
    counts = Counter(d for ids in RANKINGS.values() for d in set(ids[:k]))
    return max(counts.values()) / len(RANKINGS)


def normalised_entropy() -> float:
    counts = Counter(d for ids in RANKINGS.values() for d in set(ids))
    total = sum(counts.values())
    h = -sum(c / total * math.log(c / total) for c in counts.values())
    return h / math.log(len(counts))


def response_ids(rows: Sequence[Any]) -> float:
    """A plugin's aggregate over what a target returned."""
    return sum(len(r.response.ranked_ids) for r in rows) / len(rows)


class ResponsePlugin:
    @hookimpl
    def evalkit_register_aggregates(self) -> list[AggregateSpec]:
        return [AggregateSpec("response_ids", response_ids, higher_is_better=True)]


@pytest.fixture
def artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("run.txt").write_text(RUN)
    Path("qrels.txt").write_text(QRELS)
    res = runner.invoke(app, ["eval", "run.txt", "--qrels", "qrels.txt", "-m", "ndcg@10",
                              "--save", "bm25.jsonl"])
    assert res.exit_code == 0, res.output
    return tmp_path / "bm25.jsonl"


def gate(checks: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    Path("checks.yaml").write_text("checks:\n" + checks)
    res = runner.invoke(app, ["gate", "-c", "checks.yaml", "-r", "bm25.jsonl",
                              "--report", "json:gate.json", *extra])
    document = json.loads(Path("gate.json").read_text()) if res.exit_code in (0, 1) else {}
    return res.exit_code, document, res.output


def test_item_measures_are_computed_over_the_rankings(artifact: Path) -> None:
    code, document, output = gate(
        "  - {id: share, metric: max_item_share, op: '<=', threshold: 1}\n"
        "  - {id: share1, metric: max_item_share@1, op: '<=', threshold: 1}\n"
        "  - {id: share10, metric: max_item_share@10, op: '<=', threshold: 1}\n"
        "  - {id: ent, metric: entropy, op: '>=', threshold: 0}\n")
    assert code == 0, output
    values = {row["name"]: row["value"] for row in document["rows"]}
    assert values["share"] == pytest.approx(max_share(None)) == pytest.approx(2 / 3)
    assert values["share1"] == pytest.approx(max_share(1)) == pytest.approx(2 / 3)
    assert values["share10"] == pytest.approx(max_share(10))
    assert values["ent"] == pytest.approx(normalised_entropy(), rel=1e-12)


def test_a_response_aggregate_says_which_aggregates_apply(artifact: Path) -> None:
    with registered_plugin(ResponsePlugin(), name="resp", distribution="evalkit-resp",
                           version="0.2", installed=True):
        code, _, output = gate(
            "  - {id: mine, metric: response_ids, op: '>=', threshold: 0}\n"
            "  - {id: lat, metric: latency_p95, op: '<=', threshold: 1000}\n")
    assert code == 2
    assert "AttributeError" not in output and "QueryResult" not in output
    shown = " ".join(output.split())
    assert (f"aggregate 'response_ids' (of plugin evalkit-resp 0.2 ({__name__})) cannot be "
            "computed on run 'bm25': it reads `row.response`, which only the rows of a "
            "target's run have, and this is a retrieval run scored from rankings") in shown
    assert "use per-query metrics or the aggregates over ranked ids (max_item_share, " \
        "max_item_share@k, entropy)" in shown
    assert "latency_p95: run rows scored from rankings (a TREC run file, `evalkit eval`) " \
        "have no latency" in shown
