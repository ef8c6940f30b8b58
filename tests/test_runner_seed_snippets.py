"""The seed README's snippets about targets, goldens and extension points, run as written.

The snippet code below is the seed's text. The only substitution is the URL of the
target snippet (a local server on a free port replaces ``localhost:3001``). Names the
snippets assume to exist (``my_ranker``, ``count_unsupported``, ``GoldenSet`` in an
annotation) are provided in the namespace they run in.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalkit.cases import GoldenCase
from evalkit.goldens import GoldenSet
from evalkit.registry import use_registry
from evalkit.targets import TargetResponse

EXTENSION_POINTS = textwrap.dedent('''
    from evalkit import register_metric, register_aggregate, register_loader


    # per-case: (TargetResponse, GoldenCase) -> float
    @register_metric("precision", higher_is_better=True)
    def precision(response, case) -> float:
        hits = sum(1 for i in response.ranked_ids[:3] if i in case.relevant)
        return hits / 3


    # the direction that makes this one a regression is the opposite one
    @register_metric("unsupported_claims", higher_is_better=False)
    def unsupported_claims(response, case) -> float:
        return float(count_unsupported(response.text))


    # whole-run: (Sequence[CaseResult]) -> float
    @register_aggregate("cost_per_query", higher_is_better=False)
    def cost_per_query(rows) -> float:
        return sum(r.response.meta.get("cost_usd", 0.0) for r in rows) / len(rows)


    @register_loader("parquet")  # (Path) -> GoldenSet
    def load_parquet(path) -> GoldenSet: ...
''')

TARGETS_AND_GOLDENS = textwrap.dedent('''
    from evalkit import CallableTarget, HttpTarget, load_goldens

    goldens = load_goldens("goldens/cases.jsonl")  # jsonl | yaml | csv

    local = CallableTarget(my_ranker, name="local")

    with HttpTarget(
        url="http://localhost:3001/api/search",
        name="prod",
        build_payload=lambda case: {"q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
        meta_keys=("cost_usd", "my_custom_field"),
    ) as remote:
        response = remote.invoke(goldens.get("q1"))
''')


def count_unsupported(text: str | None) -> int:
    return 0 if not text else text.count("[?]")


def test_extension_points_snippet_registers_and_scores() -> None:
    from evalkit.evaluation import evaluate
    from evalkit.targets import CallableTarget

    with use_registry() as reg:
        ns: dict[str, Any] = {"count_unsupported": count_unsupported, "GoldenSet": GoldenSet}
        exec(compile(EXTENSION_POINTS, "seed-extension-points", "exec"), ns)
        assert reg.polarity("precision") is True
        assert reg.polarity("unsupported_claims") is False
        assert reg.polarity("cost_per_query") is False
        assert reg.loader("goldens", path="cases.parquet").fn is ns["load_parquet"]

        answers = {
            "a": TargetResponse(ranked_ids=["d1", "d2", "x"], text="fine [?]",
                                meta={"cost_usd": 0.5}),
            "b": TargetResponse(ranked_ids=["y", "z", "d3"], text="[?] [?]",
                                meta={"cost_usd": 1.5}),
        }
        cases = GoldenSet([GoldenCase("a", "qa", relevant=frozenset({"d1", "d2"})),
                           GoldenCase("b", "qb", relevant=frozenset({"d3"}))])
        run = evaluate(CallableTarget(lambda c: answers[c.id], name="sys"), cases,
                       ["precision", "unsupported_claims"], ["cost_per_query"],
                       progress=False)
        assert run.scores("precision") == {"a": 2 / 3, "b": 1 / 3}
        assert run.scores("unsupported_claims") == {"a": 1.0, "b": 2.0}
        assert run.header["aggregates"] == {"cost_per_query": 1.0}
        # a second, different registration of a taken name raises
        from evalkit.registry import RegistryError

        with pytest.raises(RegistryError, match="'precision' is already provided"):
            exec(compile(EXTENSION_POINTS.replace("hits / 3", "hits / 4"), "again", "exec"),
                 dict(ns))


def test_targets_and_goldens_snippet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit_http.testing import Reply, ScriptedServer

    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "cases.jsonl").write_text(
        '{"id": "q1", "query": "pubs near surry hills", "expected": ["p7"]}\n'
    )
    monkeypatch.chdir(tmp_path)
    body = {"results": [{"id": "p7"}, {"id": "p2"}], "cost_usd": 0.002,
            "my_custom_field": "v2", "ignored": 1}
    with ScriptedServer([Reply(200, body)]) as server:
        code = TARGETS_AND_GOLDENS.replace("http://localhost:3001/", server.url)
        ns: dict[str, Any] = {"my_ranker": lambda case: ["p7"]}
        exec(compile(code, "seed-targets", "exec"), ns)
    assert server.requests[0].json() == {"q": "pubs near surry hills"}
    assert server.requests[0].path == "/api/search"
    response = ns["response"]
    assert list(response.ranked_ids) == ["p7", "p2"]
    assert dict(response.meta) == {"cost_usd": 0.002, "my_custom_field": "v2"}
    assert response.latency_ms > 0
    assert ns["goldens"].ids() == ["q1"]
    assert list(ns["local"].invoke(ns["goldens"].get("q1")).ranked_ids) == ["p7"]
