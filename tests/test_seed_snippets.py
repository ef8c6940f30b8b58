"""Every seed README snippet about the registry, metrics, run() and paired_bootstrap runs
as written (the exact text, import paths included), each against a fresh registry.

The snippets are copied verbatim from the paired-evalkit 0.2.0 README; when that README is
reachable (../shared/seed) a test checks that each copy still matches it. The names a
snippet assumes (``search_v1``, ``queries``, ``qrels``, ...) come from small fixtures;
snippet #1 runs on the bundled Vaswani collection with the example's TF-IDF (baseline) and
BM25 (candidate) retrievers, and its numbers are checked against pytrec_eval.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evalkit.core.registry import RegistryError
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet as RealGoldenSet
from evalkit.data.targets import TargetResponse
from evalkit.plugins.default import use_registry

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani"
SEED_README = REPO.parent / "shared" / "seed" / "paired-evalkit-0.2.0-README.md"

# ------------------------------------------------------------------ the snippets, verbatim
SNIPPET_QUICKSTART = '''from evalkit import run, paired_bootstrap

baseline = run("baseline", search_v1, queries, qrels, ["recall@10", "ndcg@10"])
candidate = run("candidate", search_v2, queries, qrels, ["recall@10", "ndcg@10"])

v = paired_bootstrap(candidate, baseline, "ndcg@10")
print(
    f"{v.observed:+.4f}  95% CI [{v.ci_low:+.4f}, {v.ci_high:+.4f}]  p={v.p_value:.4f}"
)
# +0.0207  95% CI [+0.0106, +0.0320]  p=0.0003
if not v.significant:
    raise SystemExit("difference is within noise — don't ship on this evidence")
'''

SNIPPET_IMPORT = '''import evalkit  # the import name is `evalkit`, not `paired_evalkit`
'''

SNIPPET_ROWS = '''@dataclass
class QueryResult:
    query_id: str
    retrieved: list[str]
    metrics: dict[str, float]  # {"recall@1": 1.0, "ndcg@10": 0.63}


@dataclass
class RunResult:
    name: str
    per_query: list[QueryResult]  # always retained

    def mean(self, metric: str) -> float: ...  # aggregates are DERIVED
'''

SNIPPET_METRICS_TABLE = '''METRICS["precision"] = precision_at_k'''

SNIPPET_EXTENSIONS = '''from evalkit import register_metric, register_aggregate, register_loader


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
'''

SNIPPET_RETRIEVAL_METRIC = '''from evalkit.metrics.retrieval import register_retrieval_metric
from evalkit.metrics.core import recall_at_k

# registers "recall@50"
register_retrieval_metric("recall", recall_at_k, 50, higher_is_better=True)
'''

SNIPPET_TARGETS = '''from evalkit import CallableTarget, HttpTarget, load_goldens

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
'''

SNIPPET_JUDGE = '''from evalkit import register_metric
from evalkit.metrics import LLMJudge

judge = LLMJudge(
    rubric="Score 5 if the answer is correct and complete, 1 if it is wrong.",
    model="claude-haiku-4-5",  # required — there is no default
    scale=5,
    cache_path=".evalkit/judge-cache.json",
)
register_metric("helpfulness", higher_is_better=True)(judge)
'''

ALL_SNIPPETS = [
    SNIPPET_QUICKSTART, SNIPPET_IMPORT, SNIPPET_ROWS, SNIPPET_METRICS_TABLE,
    SNIPPET_EXTENSIONS, SNIPPET_RETRIEVAL_METRIC, SNIPPET_TARGETS, SNIPPET_JUDGE,
]


# ------------------------------------------------------------------ fixtures
@dataclass(frozen=True)
class Query:
    id: str
    text: str = ""


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "vaswani_example_retrieval", VASWANI / "retrieval.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vaswani() -> dict[str, Any]:
    """The names snippet #1 assumes, on the bundled Vaswani collection."""
    ex = _load_example()
    bm25, tfidf = ex.build()
    return {
        "search_v1": tfidf,  # the baseline
        "search_v2": bm25,   # the candidate
        "queries": ex.load_queries(),
        "qrels": ex.load_qrels(),
    }


@contextlib.contextmanager
def fresh(plugins: bool = True) -> Iterator[None]:
    with use_registry(plugins=plugins):
        yield


def run_snippet(code: str, names: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Execute ``code`` as a module body with ``names`` predefined; return globals and stdout."""
    module = ModuleType("seed_snippet")
    glb: dict[str, Any] = module.__dict__
    glb.update(names)
    out = io.StringIO()
    sys.modules["seed_snippet"] = module  # dataclasses look their module up
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<seed README snippet>", "exec"), glb)
    finally:
        sys.modules.pop("seed_snippet", None)
    return glb, out.getvalue()


# ------------------------------------------------------------------ the copies are exact
@pytest.mark.skipif(not SEED_README.exists(), reason="the seed README is not reachable")
@pytest.mark.parametrize("snippet", ALL_SNIPPETS, ids=lambda s: s.split("\n")[0][:40])
def test_snippet_is_a_verbatim_copy(snippet: str) -> None:
    assert snippet in SEED_README.read_text(encoding="utf-8")


# ------------------------------------------------------------------ snippet 1, on Vaswani
def test_quickstart_runs_as_written_on_vaswani(vaswani: dict[str, Any]) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with fresh():
        glb, printed = run_snippet(SNIPPET_QUICKSTART, vaswani)
    v = glb["v"]
    line = re.fullmatch(
        r"([+-]\d\.\d{4})  95% CI \[([+-]\d\.\d{4}), ([+-]\d\.\d{4})\]  p=(\d\.\d{4})\n", printed
    )
    assert line is not None, printed
    assert v.significant and v.name_a == "candidate" and v.name_b == "baseline"
    assert v.n_queries == 93 and v.n_resamples == 10_000

    # independent values: trec_eval (pytrec_eval) on the same rankings
    qrels = {q: {d: 1 for d in docs} for q, docs in vaswani["qrels"].items()}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10"})

    def per_query(search: Any) -> dict[str, dict[str, float]]:
        run = {}
        for q in vaswani["queries"]:
            ranked = search(q)
            run[q.id] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
        return ev.evaluate(run)  # type: ignore[no-any-return]

    base, cand = per_query(vaswani["search_v1"]), per_query(vaswani["search_v2"])
    ids = sorted(qrels)
    expected = statistics.fmean(cand[q]["ndcg_cut_10"] - base[q]["ndcg_cut_10"] for q in ids)
    assert v.observed == pytest.approx(expected, abs=1e-9)
    assert glb["baseline"].mean("recall@10") == pytest.approx(
        statistics.fmean(base[q]["recall_10"] for q in ids), abs=1e-9
    )
    assert float(line.group(1)) == pytest.approx(expected, abs=5e-5)
    assert v.ci_low <= v.observed <= v.ci_high
    # the p floor of the seed: (0 + 1) / (10_000 + 1) when no resample is as extreme
    assert 1 / 10_001 <= v.p_value <= 1.0


def test_quickstart_raises_system_exit_when_not_significant() -> None:
    queries = [Query("q1"), Query("q2"), Query("q3")]
    qrels = {"q1": {"a"}, "q2": {"b"}, "q3": {"c"}}

    def same(query: Query) -> list[str]:
        return ["a", "b", "c"]

    with fresh(), pytest.raises(SystemExit, match="within noise"):
        run_snippet(SNIPPET_QUICKSTART, {"search_v1": same, "search_v2": same,
                                         "queries": queries, "qrels": qrels})


def test_import_name_is_evalkit() -> None:
    with fresh():
        glb, _ = run_snippet(SNIPPET_IMPORT, {})
    assert glb["evalkit"].__name__ == "evalkit"
    assert glb["evalkit"].run is not None and glb["evalkit"].paired_bootstrap is not None


def test_row_types_have_the_seed_fields() -> None:
    from evalkit import QueryResult, RunResult

    glb, _ = run_snippet(SNIPPET_ROWS, {"dataclass": dataclass})
    for seed_cls, ours in ((glb["QueryResult"], QueryResult), (glb["RunResult"], RunResult)):
        ours_fields = {f.name for f in fields(ours)}
        assert {f.name for f in fields(seed_cls)} <= ours_fields
    assert callable(RunResult.mean)
    r = RunResult("r", [QueryResult("q1", ["a"], {"recall@1": 1.0}),
                        QueryResult("q2", ["b"], {"recall@1": 0.0})])
    assert r.mean("recall@1") == 0.5


def test_run_raises_on_a_query_missing_from_qrels() -> None:
    from evalkit import run

    with fresh(), pytest.raises(KeyError, match="q2"):
        run("r", lambda q: ["a"], [Query("q1"), Query("q2")], {"q1": {"a"}}, ["recall@10"])


# ------------------------------------------------------------------ METRICS["precision"] = fn
def precision_at_k(retrieved: list[str], relevant: set[str], k: int) -> float:
    """The client's own precision@k: relevant ids among the first k, over k."""
    return sum(1 for d in retrieved[:k] if d in relevant) / k


def test_metrics_table_assignment_adds_a_family() -> None:
    from evalkit import polarity, run
    from evalkit.runner import METRICS

    with fresh(plugins=False):
        run_snippet(SNIPPET_METRICS_TABLE, {"METRICS": METRICS, "precision_at_k": precision_at_k})
        result = run("r", lambda q: ["a", "x", "b"], [Query("q1")], {"q1": {"a", "b"}},
                     ["precision@3", "precision@2"])
        assert result.per_query[0].metrics == {"precision@3": 2 / 3, "precision@2": 0.5}
        with pytest.raises(RegistryError, match="polarity"):
            polarity("precision@3")


def precision_over_retrieved(retrieved: list[str], relevant: set[str], k: int) -> float:
    """A client's precision that divides by the ids returned (not k): tells the client's
    function and the plugin's apart on a short ranking."""
    top = retrieved[:k]
    return sum(1 for d in top if d in relevant) / len(top)


def test_metrics_table_snippet_runs_with_the_plugins_installed() -> None:
    """The seed's ``METRICS["precision"] = precision_at_k`` runs unchanged although
    evalkit-retrieval provides ``precision@k``: as a dict's assignment, it replaces the
    family (with a warning) until ``del METRICS["precision"]`` gives the plugin's back."""
    from evalkit import run
    from evalkit.runner import METRICS

    with fresh():
        if "precision" not in METRICS:
            pytest.skip("no installed plugin provides a precision@k family")
        plugin_fn = METRICS["precision"]
        with pytest.warns(UserWarning, match=r"replaces the precision@k family of evalkit-ret"):
            run_snippet(SNIPPET_METRICS_TABLE,
                        {"METRICS": METRICS, "precision_at_k": precision_over_retrieved})
        assert METRICS["precision"] is precision_over_retrieved
        # 1 relevant id among the 2 returned: the client's 1/2, where P@5 is 1/5
        result = run("r", lambda q: ["a", "x"], [Query("q1")], {"q1": {"a"}},
                     ["precision@5", "P@5"])
        assert result.per_query[0].metrics == {"precision@5": 0.5}
        del METRICS["precision"]
        assert METRICS["precision"] is plugin_fn
        result = run("r", lambda q: ["a", "x"], [Query("q1")], {"q1": {"a"}}, ["P@5"])
        assert result.per_query[0].metrics == {"precision@5": 0.2}


# ------------------------------------------------------------------ extension points
class GoldenSet:
    """Stand-in for the return annotation the loader snippet names."""


def count_unsupported(text: str | None) -> int:
    """Stand-in: sentences marked ``[unsupported]``."""
    return (text or "").count("[unsupported]")


def test_extension_points_register_with_polarity() -> None:
    from evalkit import polarity, registered, run
    from evalkit.plugins.default import default_registry

    with fresh():
        glb, _ = run_snippet(SNIPPET_EXTENSIONS,
                             {"count_unsupported": count_unsupported, "GoldenSet": GoldenSet})
        names = registered()
        for name in ("precision", "unsupported_claims", "cost_per_query"):
            assert name in names
        assert polarity("precision") is True
        assert polarity("unsupported_claims") is False
        assert polarity("cost_per_query") is False
        assert default_registry().loader("goldens", name="parquet").fn is glb["load_parquet"]
        assert default_registry().loader("goldens", path="cases.parquet").name == "parquet"

        # the per-case metric scores run() rows: 2 of the first 3 ids are relevant
        result = run("r", lambda q: ["a", "x", "b", "c"], [Query("q1")],
                     {"q1": {"a", "b", "c"}}, ["precision"])
        assert result.per_query[0].metrics["precision"] == pytest.approx(2 / 3)

        # the same function again is a no-op; another function under the name raises,
        # and so does an aggregate that takes a metric's name
        glb["register_metric"]("precision", higher_is_better=True)(glb["precision"])
        with pytest.raises(RegistryError, match="precision"):
            glb["register_metric"]("precision", higher_is_better=True)(lambda r, c: 0.0)
        with pytest.raises(RegistryError, match="precision"):
            glb["register_aggregate"]("precision", higher_is_better=True)(lambda rows: 0.0)


def test_polarity_is_required() -> None:
    from evalkit import register_metric

    with fresh(), pytest.raises((RegistryError, TypeError)):
        register_metric("no_polarity")(lambda r, c: 0.0)  # type: ignore[call-arg]


# ------------------------------------------------------------------ register_retrieval_metric
def test_register_retrieval_metric_adds_recall_at_50() -> None:
    from evalkit import polarity, run

    with fresh():
        run_snippet(SNIPPET_RETRIEVAL_METRIC, {})
        assert polarity("recall@50") is True
        ranked = [f"d{i}" for i in range(60)]
        relevant = {"d0", "d49", "d50", "d59"}  # two inside the first 50, two after
        result = run("r", lambda q: ranked, [Query("q1")], {"q1": relevant}, ["recall@50"])
        assert math.isclose(result.per_query[0].metrics["recall@50"], 0.5)
        # registering it again, as written, is a no-op
        run_snippet(SNIPPET_RETRIEVAL_METRIC, {})


# ------------------------------------------------------------------ paired_bootstrap's contract
def test_paired_bootstrap_signature_and_fields() -> None:
    import inspect

    from evalkit import QueryResult, RunResult, paired_bootstrap

    params = inspect.signature(paired_bootstrap).parameters
    assert list(params)[:5] == ["a", "b", "metric", "n_resamples", "seed"]
    assert params["n_resamples"].default == 10_000 and params["seed"].default == 42
    a = RunResult("a", [QueryResult(f"q{i}", [], {"m": i / 10}) for i in range(10)])
    b = RunResult("b", [QueryResult(f"q{i}", [], {"m": 0.0}) for i in range(10)])
    v = paired_bootstrap(a, b, "m")
    for name in ("observed", "ci_low", "ci_high", "p_value", "significant", "metric",
                 "name_a", "name_b", "n_queries", "n_resamples"):
        assert hasattr(v, name)
    assert v.observed == pytest.approx(0.45) and (v.name_a, v.name_b) == ("a", "b")
    assert (v.metric, v.n_queries, v.n_resamples) == ("m", 10, 10_000)
    # pairing is by query id: shuffling one run's rows changes nothing
    shuffled = RunResult("a", list(reversed(a.per_query)))
    assert paired_bootstrap(shuffled, b, "m") == v


# ------------------------------------------------------------------ targets and goldens


def test_extension_points_snippet_registers_and_scores() -> None:
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.target_runner import evaluate

    with use_registry() as reg:
        ns: dict[str, Any] = {"count_unsupported": count_unsupported, "GoldenSet": GoldenSet}
        exec(compile(SNIPPET_EXTENSIONS, "seed-extension-points", "exec"), ns)
        assert reg.polarity("precision") is True
        assert reg.polarity("unsupported_claims") is False
        assert reg.polarity("cost_per_query") is False
        assert reg.loader("goldens", path="cases.parquet").fn is ns["load_parquet"]

        answers = {
            "a": TargetResponse(ranked_ids=["d1", "d2", "x"], text="fine [unsupported]",
                                meta={"cost_usd": 0.5}),
            "b": TargetResponse(ranked_ids=["y", "z", "d3"], text="[unsupported] [unsupported]",
                                meta={"cost_usd": 1.5}),
        }
        cases = RealGoldenSet([GoldenCase("a", "qa", relevant=frozenset({"d1", "d2"})),
                           GoldenCase("b", "qb", relevant=frozenset({"d3"}))])
        run = evaluate(CallableTarget(lambda c: answers[c.id], name="sys"), cases,
                       ["precision", "unsupported_claims"], ["cost_per_query"],
                       progress=False)
        assert run.scores("precision") == {"a": 2 / 3, "b": 1 / 3}
        assert run.scores("unsupported_claims") == {"a": 1.0, "b": 2.0}
        assert run.header["aggregates"] == {"cost_per_query": 1.0}
        # a second, different registration of a taken name raises
        with pytest.raises(RegistryError, match="'precision' is already provided"):
            exec(compile(SNIPPET_EXTENSIONS.replace("hits / 3", "hits / 4"), "again", "exec"),
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
        code = SNIPPET_TARGETS.replace("http://localhost:3001/", server.url)
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


# ------------------------------------------------------------------ the import paths of 0.2
#: ``runner.METRICS`` is named in the README's prose and its table of metric tables
SEED_PROSE_PATHS = ("from evalkit.runner import METRICS, run",)


def _seed_import_lines() -> list[str]:
    """Every ``import``/``from ... import`` line of the README's Python snippets."""
    text = SEED_README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
            if re.match(r"(from evalkit[\w.]* import |import evalkit)", line)]


@pytest.mark.skipif(not SEED_README.exists(), reason="the seed README is not reachable")
def test_every_import_of_the_seed_readme_works_in_a_fresh_interpreter() -> None:
    lines = [*_seed_import_lines(), *SEED_PROSE_PATHS]
    assert "from evalkit.metrics import LLMJudge" in lines and len(lines) >= 9
    code = "\n".join([*lines, "print('ok')"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert (out.returncode, out.stdout) == (0, "ok\n"), out.stderr


def test_evalkit_runner_is_the_table_run_scores_with() -> None:
    import evalkit
    import evalkit.runner

    assert evalkit.runner.METRICS is evalkit.METRICS and evalkit.runner.run is evalkit.run
    assert sorted(evalkit.runner.__all__) == ["METRICS", "run"]
    with fresh():
        # recall_at_k through the 0.2 paths: 2 of the 3 relevant ids in the first 4
        from evalkit.metrics.core import recall_at_k

        assert evalkit.runner.METRICS["recall"] is recall_at_k
        assert recall_at_k(["a", "x", "b", "y", "c"], {"a", "b", "c"}, 4) == 2 / 3
        result = evalkit.runner.run("r", lambda q: ["a", "x", "b", "y", "c"], [Query("q1")],
                                    {"q1": {"a", "b", "c"}}, ["recall@4"])
        assert result.per_query[0].metrics == {"recall@4": 2 / 3}


def test_evalkit_metrics_llmjudge_is_the_judge_plugins() -> None:
    evalkit_judge = pytest.importorskip("evalkit_judge")
    from evalkit.metrics import LLMJudge

    assert LLMJudge is evalkit_judge.LLMJudge


def test_module_paths_0_2_never_had_are_not_answered() -> None:
    """Only real modules import: ``import evalkit`` installs no finder of its own."""
    code = ("import importlib.util, sys, evalkit\n"
            "print([str(f) for f in sys.meta_path if 'evalkit' in type(f).__module__],"
            " [n for n in ('evalkit.results', 'evalkit.registry', 'evalkit.reporters')"
            " if importlib.util.find_spec(n) is not None])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert (out.returncode, out.stdout) == (0, "[] []\n"), out.stderr


# ------------------------------------------------------------------ LLM-as-judge
def test_llm_judge_snippet_registers_a_judge_that_grades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snippet as written (no client, no base URL): the judge reaches the Messages API
    through the environment, here a local imitation of it."""
    from evalkit_judge.testing import MessagesAPIServer, tool_reply

    from evalkit import polarity
    from evalkit.core.specs import MetricSpec
    from evalkit.plugins.default import default_registry

    monkeypatch.chdir(tmp_path)
    with MessagesAPIServer(lambda request: tool_reply(4, model=request["model"])) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        with fresh():
            glb, _ = run_snippet(SNIPPET_JUDGE, {})
            assert polarity("helpfulness") is True
            metric = default_registry().resolve("helpfulness")
            assert isinstance(metric, MetricSpec)
            case = GoldenCase(id="q1", query="What is the capital of France?")
            assert metric.fn(TargetResponse(text="Paris"), case) == 4.0
    assert glb["judge"].model == "claude-haiku-4-5"
    (request,) = server.requests
    assert request["model"] == "claude-haiku-4-5"
    (tool,) = request["tools"]
    assert tool["input_schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert "Score 5 if the answer is correct and complete" in json.dumps(request)
    assert (tmp_path / ".evalkit" / "judge-cache.json").is_file()
