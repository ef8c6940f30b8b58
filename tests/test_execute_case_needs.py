"""What a metric needs of each case (``MetricSpec.needs``): declared on the record,
checked before anything is scored on every path, refused naming the metric and what the
cases lack."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evalkit.core.hookspecs import hookimpl
from evalkit.core.providers import Provider
from evalkit.core.registry import RegistryError
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.case_needs import (
    MissingCaseFieldsError,
    UnansweredCasesError,
    UnjudgedCasesError,
)
from evalkit.execute.rescore import rescore
from evalkit.execute.run_evaluator import evaluate_run
from evalkit.execute.run_retriever import run
from evalkit.execute.scoring import resolve_metrics
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry
from evalkit.testing import check_conformance
from evalkit.testing.child_runs import EVALKIT_COMMAND

PLUGIN = '''
import evalkit
from evalkit.core.specs import MetricSpec


def overlap(response, case):
    """1 when the response's text is one of the case's answers (0 when it has none)."""
    return float(response.text in case.answers)


@evalkit.hookimpl
def evalkit_register_metrics():
    return [MetricSpec("answer_overlap", overlap, True, needs=("answers",))]
'''


def test_a_plugin_metric_that_needs_answers_is_refused_on_a_trec_run(tmp_path: Path) -> None:
    (tmp_path / "answer_plugin.py").write_text(PLUGIN)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["answer_plugin"]\n')
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 r\nq2 Q0 d2 1 1.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    proc = subprocess.run([*EVALKIT_COMMAND, "eval", "run.trec", "--qrels", "qrels.txt",
                           "-m", "answer_overlap"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""  # no mean of 0 printed
    assert proc.stderr == (
        "error: answer_overlap needs reference answers, but the 2 queries scored against "
        "qrels (a TREC run's) have none, only relevance judgments: 'q1', 'q2'. Score it on "
        "a golden set that gives reference answers (evalkit run, evaluate()), or drop this "
        "metric\n")
    # the retrieval measures need judgments only: the same files score
    ok = subprocess.run([*EVALKIT_COMMAND, "eval", "run.trec", "--qrels", "qrels.txt",
                         "-m", "P@1", "--json"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr


def test_a_context_key_is_needed_on_every_path() -> None:
    seen: list[str] = []

    def by_topic(response: TargetResponse, case: GoldenCase) -> float:
        seen.append(case.id)
        return float(case.context["topic"] == "sports")

    cases = [GoldenCase("a", "q", expected=["d1"], context={"topic": "sports"}),
             GoldenCase("b", "q", expected=["d2"]),
             GoldenCase("c", "q", expected=["d3"], context={"topics": "news"})]
    calls: list[str] = []

    def answer(case: GoldenCase) -> list[str]:
        calls.append(case.id)
        return ["d1"]

    with use_registry() as reg:
        reg.register_metric("sporty", higher_is_better=True, needs=("context:topic",))(
            by_topic)
        with pytest.raises(MissingCaseFieldsError) as err:
            evaluate(CallableTarget(answer), cases, ["sporty", "recall@1"], progress=False)
        assert str(err.value) == (
            "sporty needs the field 'topic' of each case (case.context['topic']), but 2 "
            "case(s) of the golden set lack it: 'b', 'c'; give these cases a 'topic' field, "
            "or leave them out or drop this metric")
        assert (err.value.need, err.value.metrics, err.value.case_ids) == (
            "context:topic", ["sporty"], ["b", "c"])
        assert not isinstance(err.value, UnjudgedCasesError)
        assert calls == [] and seen == []  # refused before any call or score
        # run(): the cases of qrels have no context either
        with pytest.raises(MissingCaseFieldsError, match="'q1'"):
            run("r", lambda q: ["d1"], [GoldenCase("q1")], {"q1": {"d1"}}, ["sporty"])
        assert seen == []
        done = evaluate(CallableTarget(answer), cases[:1], ["sporty"], progress=False)
        assert done.scores("sporty") == {"a": 1.0}


def test_rescore_refuses_a_case_without_the_field(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    cases = [GoldenCase("a", "q", answers=["x"]), GoldenCase("b", "q")]
    with use_registry() as reg:
        reg.register_metric("length", higher_is_better=True)(lambda r, c: float(len(r.text)))
        reg.register_metric("echo", higher_is_better=True, needs=("answers",))(
            lambda r, c: float(r.text in c.answers))
        evaluate(CallableTarget(lambda c: "x"), cases, ["length"], artifact=art,
                 progress=False)
        before = art.read_bytes()
        with pytest.raises(UnansweredCasesError, match=r"^echo compares the response with "
                                                       r"reference answers, but 1 case\(s\)"):
            rescore(art, ["echo"], goldens=cases)
        assert art.read_bytes() == before  # nothing written


def test_a_family_declares_the_needs_of_every_member() -> None:
    def factory(k: int) -> MetricSpec:
        return MetricSpec(f"topk_topic@{k}", lambda r, c: 1.0, True)

    with use_registry() as reg:
        reg.add(MetricFamily("topk_topic", factory, True, needs=("context:topic",)),
                _client())
        (spec,) = resolve_metrics(["topk_topic@3"])
        assert spec.needs == ("context:topic",)
        with pytest.raises(MissingCaseFieldsError, match="topk_topic@3 needs the field"):
            evaluate(CallableTarget(lambda c: ["d"]), [GoldenCase("a", "q")],
                     ["topk_topic@3"], progress=False)


def _client() -> Provider:
    return Provider(module="tests.test_case_needs")


def test_the_shorthands_and_needs_are_one_declaration() -> None:
    fn = lambda r, c: 1.0  # noqa: E731
    assert MetricSpec("a", fn, True, needs_judgments=True).needs == ("relevance",)
    both = MetricSpec("b", fn, True, needs=("answers", "context:k"), needs_judgments=True)
    assert both.needs == ("answers", "context:k", "relevance")
    assert both.needs_judgments and both.needs_answers
    # every retrieval measure and the text metrics declare theirs
    assert all(s.needs == ("relevance",) for s in resolve_metrics(["ap", "ndcg@10", "P@5"]))
    assert all(s.needs == ("answers",) for s in resolve_metrics(["exact_match", "f1",
                                                                 "rouge_l"]))
    assert resolve_metrics(["json_valid"])[0].needs == ()


@pytest.mark.parametrize(("needs", "problem"), [
    (("answer",), "needs: 'answer' is not a case field a metric can need (did you mean "
                  "'answers'?); needs are 'relevance', 'answers' and 'context:KEY'"),
    (("context:",), "needs: 'context:' names no context key; write 'context:KEY'"),
    ("answers", "needs must be a tuple of strings, got the string 'answers'"),
])
def test_a_need_that_is_no_case_field_is_refused_at_registration(
        needs: object, problem: str) -> None:
    with use_registry() as reg, pytest.raises(RegistryError) as err:
        reg.register_metric("m", higher_is_better=True, needs=needs)(  # type: ignore[arg-type]
            lambda r, c: 1.0)
    assert problem in str(err.value)


def test_evaluate_run_keeps_judged_queries_and_refuses_unjudged_ones() -> None:
    # a query judged with only non-relevant labels is judged (it scores 0, as trec_eval);
    # a query given no judgment at all is not
    got = evaluate_run({"q1": {"d1": 1.0}, "q2": {"d1": 1.0}},
                       {"q1": {"d1": 1}, "q2": {"d9": 0}}, ["ap"])
    assert got.scores("ap") == {"q1": 1.0, "q2": 0.0}
    with pytest.raises(UnjudgedCasesError, match="'q2'"):
        evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}, "q2": {}}, ["ap"])


class _NeedsPlugin:
    """A plugin whose metric needs a context key the sample cases lack."""

    @staticmethod
    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [MetricSpec("regional", lambda r, c: float(c.context["region"] == "eu"), True,
                           needs=("context:region",))]


def test_conformance_tries_a_metric_on_the_cases_that_have_what_it_needs() -> None:
    # no sample case has a region: nothing could be tried, and the suite says so
    assert check_conformance(_NeedsPlugin()) == [
        "metric:regional:needs-met: metric 'regional' needs context:region, which no "
        "sample case has, so nothing could be checked; pass pairs= with cases that have "
        "them"]
    pairs = [(TargetResponse(text="x"), GoldenCase("a", context={"region": "eu"})),
             (TargetResponse(text="x"), GoldenCase("b"))]  # refused before scoring: skipped
    assert check_conformance(_NeedsPlugin(), pairs=pairs) == []
