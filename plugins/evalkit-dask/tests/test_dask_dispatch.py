"""A third-party executor on the plugin's :class:`~evalkit_dask.dispatch.Dispatch` (the
in-flight bound, retries of lost items, duplicates dropped, metrics scored on the driver)
driven by ``evaluate``, and which metrics :func:`~evalkit_dask.remote_work.split_metrics`
sends to the workers. The backend is scripted in this process: no Dask is started."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from evalkit_dask.dispatch import Dispatch, Outcome
from evalkit_dask.remote_work import run_item, split_metrics

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ExecutorSpec, MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import ExecutorChoice, Work, item_key
from evalkit.execute.scoring import resolve_metrics
from evalkit.execute.spending import SpendingLimitReached
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import default_registry
from evalkit.testing import registered_plugin
from evalkit.testing.executors import without_timing


def cases(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i}", f"q{i}", relevant=frozenset({f"c{i}"})) for i in range(n))


def ranker(case: GoldenCase) -> list[str]:
    return [case.id] if int(case.id[1:]) % 3 else ["x"]


class ScriptedBackend:
    """Runs each batch in ``poll``, on this thread; ``lose`` items are lost that many
    times first, ``twice`` items come back twice. Records the most items in flight."""

    def __init__(self, work: Work, lose: dict[str, int], twice: set[str]) -> None:
        self.work, self.lose, self.twice = work, dict(lose), twice
        self.pending: list[Job] = []
        self.in_flight = self.most = self.batches = 0
        self.calls: list[str] = []

    def submit(self, jobs: Sequence[Job]) -> None:
        self.pending += jobs
        self.batches += 1
        self.in_flight += len(jobs)
        self.most = max(self.most, self.in_flight)

    def poll(self, timeout_s: float) -> list[Outcome]:
        out: list[Outcome] = []
        for job in self.pending[:3]:
            self.calls.append(job.case.id)
            self.in_flight -= 1
            if self.lose.get(job.case.id, 0) > 0:
                self.lose[job.case.id] -= 1
                out.append(Outcome(job, lost="worker died"))
                continue
            # the worker cannot import the run's metrics: it scores none of them
            target = self.work.target
            assert not callable(getattr(target, "ainvoke", None))  # refused before the run
            row = run_item(target, self.work.target_name, job, [], False)  # type: ignore[arg-type]
            out += [Outcome(job, row=row)] * (2 if job.case.id in self.twice else 1)
        del self.pending[:3]
        return out

    def cancel(self) -> None:
        self.pending.clear()

    def close(self) -> None:
        pass


class Scripted:
    """A third-party executor plugin over :class:`ScriptedBackend`."""

    last: ScriptedBackend | None = None

    def __init__(self, lose: dict[str, int] | None = None, twice: Sequence[str] = ()) -> None:
        self.lose, self.twice = lose or {}, set(twice)

    def open(self, work: Work) -> Dispatch:
        backend = ScriptedBackend(work, self.lose, self.twice)
        Scripted.last = backend
        return Dispatch(backend, work, batch_size=2, max_retries=2, report={"kind": "test"})


class ScriptedPlugin:
    @staticmethod
    @hookimpl
    def evalkit_register_executors() -> list[ExecutorSpec]:
        return [ExecutorSpec("scripted", Scripted, "in-process, for tests")]


def test_a_third_party_executor_runs_through_evaluate_with_the_driver_keeping_the_rules(
        tmp_path: Path) -> None:
    gset = cases(10)
    target = CallableTarget(ranker, name="rank")
    local = evaluate(target, gset, ["recall@1"], max_concurrency=4, progress=False)
    with registered_plugin(ScriptedPlugin(), installed=True):
        run = evaluate(target, gset, ["recall@1"], max_concurrency=4, progress=False,
                       artifact=tmp_path / "run.jsonl",
                       executor=ExecutorChoice("scripted", {"lose": {"c2": 1, "c7": 5},
                                                            "twice": ["c4"]}))
    backend = Scripted.last
    assert backend is not None and backend.most <= 4  # the driver's in-flight bound
    # c2 lost once then done; c7 lost 3 times (max_retries 2): an error row, not retried
    assert backend.calls.count("c2") == 2 and backend.calls.count("c7") == 3
    assert run.header["executor"] == {"name": "scripted", "kind": "test", "retried": 3,
                                      "lost_rows": 1, "duplicates_dropped": 1}
    assert run.header["status"] == "incomplete" and run.header["error_ids"] == ["c7"]
    saved = RunResult.load(tmp_path / "run.jsonl")
    assert [r.case_id for r in saved.per_query] == [c.id for c in gset]  # c4 once
    # every other row is the local pool's, scored on the driver: recall@1 by hand
    rows = {r.case_id: r for r in run.per_query}
    for row in local.per_query:
        if row.case_id != "c7":
            assert without_timing(rows[row.case_id]) == without_timing(row)
    assert rows["c3"].metrics == {"recall@1": 0.0} and rows["c4"].metrics == {"recall@1": 1.0}


def test_a_stop_on_the_driver_sends_nothing_new_and_keeps_the_rows_in_flight() -> None:
    work = Work(CallableTarget(ranker, name="rank"), "rank", [Job(c) for c in cases(9)],
                [], 4)
    backend = ScriptedBackend(work, {}, set())
    dispatch = Dispatch(backend, work, batch_size=2).start()
    got: list[str] = []
    for batch in dispatch.batches():
        got += [r.case_id for r in batch]
        dispatch.stop()  # Ctrl-C after the first rows: nothing new is sent
    # by hand: c0-c3 went first, c0-c2 came back, c4-c6 refilled the window of 4
    assert got == ["c0", "c1", "c2", "c3", "c4", "c5", "c6"] and dispatch.in_flight == 0
    assert backend.calls == got  # c7 and c8 were never sent
    assert item_key(Job(GoldenCase("c1", "q"))) == ("c1", 0)


class _Grader:
    """Shaped like the LLM judge: a metric that publishes ``details``."""

    def __call__(self, response: Any, case: GoldenCase) -> float:
        return 1.0

    def details(self, case_id: str) -> dict[str, Any] | None:
        return None


def _plain(response: Any, case: GoldenCase) -> float:
    return 0.5


class _Metrics:
    @staticmethod
    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [MetricSpec("graded", _Grader(), higher_is_better=True),
                MetricSpec("plain", _plain, higher_is_better=True)]


def test_a_judge_is_scored_on_the_driver_unless_told_and_a_plugins_metric_on_workers() -> None:
    with registered_plugin(_Metrics(), distribution="evalkit-fake", version="1.0"):
        specs = resolve_metrics(["graded", "plain"])
        remote, driver = split_metrics(specs)
        assert list(remote) == ["plain"] and [s.name for s in driver] == ["graded"]
        assert remote["plain"].startswith("evalkit-fake 1.0")
        remote, driver = split_metrics(specs, judge_on_workers=True)
        assert list(remote) == ["graded", "plain"] and driver == []
    # a metric of the client's own code (no distribution) stays on the driver
    with registered_plugin(_Metrics()):
        assert split_metrics(resolve_metrics(["plain"]))[0] == {}



def test_a_spending_stop_on_the_driver_writes_the_answered_cases_for_resume(
        tmp_path: Path) -> None:
    lock = threading.Lock()
    paid: list[str] = []
    limit = [3]  # a paid metric allowed 3 requests, then (on resume) as many as needed

    def metered(response: Any, case: GoldenCase) -> float:
        with lock:
            if len(paid) >= limit[0]:
                raise SpendingLimitReached(f"--max-calls {limit[0]} reached")
            paid.append(case.id)
        return 1.0

    gset = cases(9)
    calls: list[str] = []

    def answer(case: GoldenCase) -> list[str]:
        calls.append(case.id)
        return [case.id]

    path = tmp_path / "run.jsonl"
    scripted = ExecutorChoice("scripted", {})
    with registered_plugin(ScriptedPlugin(), installed=True):
        default_registry().register_metric("metered", higher_is_better=True)(metered)
        with pytest.raises(SpendingLimitReached):
            evaluate(CallableTarget(answer, name="rank"), gset, ["metered"],
                     max_concurrency=4, progress=False, artifact=path, executor=scripted)
        rows = [json.loads(x) for x in path.read_text().splitlines()[1:]]
        # every case the target answered has its row: 3 graded, the others not graded
        assert sorted(r["id"] for r in rows) == sorted(calls) and len(rows) > 3
        assert sum(r["metrics"] == {"metered": 1.0} for r in rows) == 3
        assert all("not graded" in r["metric_errors"]["metered"]
                   for r in rows if not r["metrics"])
        limit[0] = 100
        run = evaluate(CallableTarget(answer, name="rank"), gset, ["metered"],
                       max_concurrency=4, progress=False, artifact=path, resume=True,
                       executor=scripted)
    assert run.header["status"] == "complete"
    assert sorted(calls) == sorted(c.id for c in gset)  # no case called twice
    assert len(paid) == len(gset)  # and none graded twice
