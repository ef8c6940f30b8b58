"""The sixth hook, ``evalkit_register_executors``: the registry's rules for executors, the
built-in ``local``, the eval config's ``executor:`` key, and a third-party executor on the
kernel's :class:`~evalkit.execute.dispatch.Dispatch` (the in-flight bound, retries of lost
items, duplicates dropped, metrics scored on the driver) driven by ``evaluate``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.core.hookspecs import hookimpl
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import ExecutorSpec, MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.dispatch import Dispatch, Outcome
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import ExecutorChoice, Work, item_key
from evalkit.execute.local_executor import LocalExecutor
from evalkit.execute.remote_work import run_item, split_metrics
from evalkit.execute.scoring import resolve_metrics
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.listing import plugin_report
from evalkit.testing import check_conformance, registered_plugin
from evalkit.testing.executors import without_timing

PLUGIN = Provider(module="ray_plugin", distribution="evalkit-ray", version="1.0")
OTHER = Provider(module="other_plugin", distribution="evalkit-other", version="2.0")


def factory_a(**options: Any) -> Any:
    return None


def factory_b(**options: Any) -> Any:
    return None


def test_local_is_the_kernels_executor_and_dask_the_plugins_in_the_listing() -> None:
    names = {(n.name, n.kind): n for n in plugin_report().names}
    assert names[("local", "executor")].distribution == "paired-evalkit-core"
    assert names[("dask", "executor")].distribution == "evalkit-dask"


def test_two_plugins_providing_one_executor_name_block_it_naming_both() -> None:
    registry = Registry()
    registry.add(ExecutorSpec("ray", factory_a), PLUGIN, from_plugin=True)
    registry.add(ExecutorSpec("ray", factory_b), OTHER, from_plugin=True)
    with pytest.raises(RegistryError, match=r"evalkit-ray 1\.0.*evalkit-other 2\.0"):
        registry.get("executor", "ray")
    # the same record again is a no-op, another name stays usable
    registry.add(ExecutorSpec("spark", factory_a), PLUGIN, from_plugin=True)
    registry.add(ExecutorSpec("spark", factory_a), PLUGIN, from_plugin=True)
    assert registry.get("executor", "spark").name == "spark"
    # a client registration of a taken name is refused at once
    with pytest.raises(RegistryError, match="already provided by evalkit-ray"):
        registry.add(ExecutorSpec("spark", factory_b), Provider(module="mine"))


def test_a_plugin_cannot_take_the_name_local_from_the_kernel() -> None:
    class Shadow:
        @staticmethod
        @hookimpl
        def evalkit_register_executors() -> list[ExecutorSpec]:
            return [ExecutorSpec("local", LocalExecutor)]

    failures = check_conformance(Shadow())
    assert failures == []  # on its own the plugin is fine; beside the kernel it is not
    with pytest.raises(AssertionError, match="already provided by paired-evalkit-core"), \
            registered_plugin(Shadow()):
        pass


def test_an_executor_record_is_checked_like_the_others() -> None:
    class Broken:
        @staticmethod
        @hookimpl
        def evalkit_register_executors() -> list[ExecutorSpec]:
            return [ExecutorSpec("x", "not callable")]  # type: ignore[arg-type]

    (failure,) = check_conformance(Broken())
    assert "factory must be callable" in failure


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


def write_config(folder: Path, executor: str) -> Path:
    (folder / "g.jsonl").write_text('{"id": "a", "query": "q", "expected": ["a"]}\n')
    path = folder / "evalkit.yaml"
    path.write_text("goldens: g.jsonl\n"
                    "target: {factory: http, kwargs: {url: 'http://127.0.0.1:9/'}}\n"
                    f"metrics: [recall@1]\noutput: run.jsonl\n{executor}")
    return path


def test_the_eval_config_names_the_executor_and_its_options(tmp_path: Path) -> None:
    cfg = load_eval_config(write_config(
        tmp_path, "executor: {name: dask, address: 'tcp://10.0.0.5:8786', "
        "options: {batch_size: 4}}\n"))
    assert (cfg.executor, cfg.executor_options) == (
        "dask", {"batch_size": 4, "address": "tcp://10.0.0.5:8786"})
    assert cfg.target_recipe().factory == "http"
    assert load_eval_config(write_config(tmp_path, "")).executor == "local"
    with pytest.raises(ConfigError, match=r"evalkit.yaml:5: key 'executor': unknown key; "
                                          "executor takes 'name', 'address' and 'options'"):
        load_eval_config(write_config(tmp_path, "executor: {name: dask, adress: x}\n"))


def test_the_cli_refuses_a_scheduler_for_the_local_executor_and_an_unknown_executor(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, "")
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(config), "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2 and "--scheduler needs a distributed executor" in result.output
    result = runner.invoke(app, ["run", str(config), "--executor", "spark"])
    assert result.exit_code == 2
    assert "unknown executor 'spark'; known: dask, local" in result.output
    assert not (tmp_path / "run.jsonl").exists()  # refused before anything was written


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
