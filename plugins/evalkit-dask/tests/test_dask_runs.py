"""Runs on a real LocalCluster (2 worker processes, 127.0.0.1, one for the module) against
a real local HTTP service that counts the requests of each case: the rows equal a local
run's, a worker killed with an item in flight loses nothing (the retry count is the
service's duplicate requests), resume after SIGKILL of the driver calls no finished case
again, and a target that cannot be sent is refused before anything is written."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_dask import testing as dask_testing
from evalkit_dask import worker as dask_worker
from evalkit_dask.executor import DEATH_TIMEOUT_S
from evalkit_http.testing import RecordedRequest, Reply, ScriptedServer

from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor_api import ExecutorChoice, TargetRecipe, UnsendableError
from evalkit.execute.target_runner import evaluate
from evalkit.report.target_run import summary_lines
from evalkit.testing import check_conformance, registered_plugin
from evalkit.testing.child_runs import EVALKIT_COMMAND, wait_until, written_rows
from evalkit.testing.executors import executor_runs, without_timing

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first


class Service:
    """``POST {"id", "query"}`` -> ``{"ranked_ids": [id, "other"]}`` after ``delay_s``;
    the first request of each id in ``hold`` waits until :meth:`release`."""

    def __init__(self, delay_s: float = 0.0, hold: frozenset[str] = frozenset()) -> None:
        self.delay_s, self.hold = delay_s, set(hold)
        self.calls: Counter[str] = Counter()
        self.active = self.most = 0  # requests being answered now; the most at once
        self.seen = threading.Condition()
        self._released = threading.Event()
        self.server = ScriptedServer(handler=self._handle)

    def _handle(self, request: RecordedRequest, index: int) -> Reply:
        case = str(json.loads(request.body)["id"])
        with self.seen:
            self.calls[case] += 1
            first = self.calls[case] == 1
            self.seen.notify_all()
            self.active += 1
            self.most = max(self.most, self.active)
        try:
            if first and case in self.hold:
                self._released.wait(60)
            time.sleep(self.delay_s)
        finally:
            with self.seen:
                self.active -= 1
        return Reply(200, {"ranked_ids": [case, "other"]})

    def wait_for(self, case: str, timeout_s: float = 60) -> None:
        with self.seen:
            if not self.seen.wait_for(lambda: self.calls[case] > 0, timeout_s):
                raise AssertionError(f"the service never saw {case!r}")

    def release(self) -> None:
        self._released.set()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def duplicates(self) -> int:
        """Requests beyond the first of each case."""
        return sum(n - 1 for n in self.calls.values())

    def __enter__(self) -> Service:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.server.stop()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """``(client, address)`` of a LocalCluster of 2 worker processes; its scheduler
    reschedules nothing silently (allowed-failures 0), as the run's own cluster does."""
    import dask
    import distributed

    Client: Any = distributed.Client  # distributed's annotations are partial
    LocalCluster: Any = distributed.LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        local = LocalCluster(n_workers=2, threads_per_worker=4, processes=True,
                             host="127.0.0.1", dashboard_address=None,
                             silence_logs=logging.ERROR)
    client = Client(local)
    try:
        yield client, local.scheduler_address
    finally:
        client.close()
        local.close()


def goldens(n: int) -> GoldenSet:
    # odd cases: the service's first id is relevant; even ones: only "other" is
    return GoldenSet(GoldenCase(f"c{i:02d}", f"query {i}",
                                relevant=frozenset({f"c{i:02d}" if i % 2 else "other"}))
                     for i in range(n))


class _ClientMetrics:
    """A metric of the test's own code: no worker can import it, so the driver scores it."""

    from evalkit.core.hookspecs import hookimpl

    @staticmethod
    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [MetricSpec("first_is_case", lambda r, c: float(r.ranked_ids[:1] == [c.id]),
                           higher_is_better=True)]


def dask_choice(address: str, url: str, **options: Any) -> ExecutorChoice:
    recipe = TargetRecipe("evalkit_dask.testing:counting_target", {"url": url, "name": "svc"})
    return ExecutorChoice("dask", {"address": address, **options}, recipe)


def test_a_dask_run_has_the_rows_of_a_local_run(cluster: Any, tmp_path: Path) -> None:
    client, address = cluster
    cases = goldens(40)
    metrics = ["recall@1", "first_is_case"]
    built_before = client.run(dask_testing.builds)
    with registered_plugin(_ClientMetrics(), installed=True), Service(delay_s=0.01) as svc:
        with dask_testing.counting_target(url=svc.url, name="svc") as target:
            local = evaluate(target, cases, metrics, max_concurrency=8, progress=False,
                             artifact=tmp_path / "local.jsonl")
            remote = evaluate(target, cases, metrics, max_concurrency=8, progress=False,
                              artifact=tmp_path / "dask.jsonl",
                              executor=dask_choice(address, svc.url, batch_size=3))
        assert svc.calls == {c.id: 2 for c in cases}  # once by each run, no more
    assert [without_timing(r) for r in remote.per_query] == \
        [without_timing(r) for r in local.per_query]
    # recall@1 by hand: odd cases rank their own id first and it is relevant
    assert remote.scores("recall@1") == {c.id: float(i % 2) for i, c in enumerate(cases)}
    assert set(remote.scores("first_is_case").values()) == {1.0}
    saved = RunResult.load(tmp_path / "dask.jsonl")
    assert [without_timing(r) for r in saved.per_query] == \
        [without_timing(r) for r in RunResult.load(tmp_path / "local.jsonl").per_query]
    executor = remote.header["executor"]
    assert executor["name"] == "dask" and executor["retried"] == 0
    assert executor["metrics_on_workers"] == ["recall@1"]  # the client's metric: driver
    assert local.header["executor"] == {"name": "local"}
    # the target is built at most once per worker (40 items ran), not once per item
    built = client.run(dask_testing.builds)
    assert {built[w] - built_before.get(w, 0) for w in built} <= {0, 1}
    assert sum(built[w] - built_before.get(w, 0) for w in built) >= 1
    assert set(client.run(dask_worker.cached_plans).values()) == {0}  # released at the end


def test_the_service_never_sees_more_calls_at_once_than_the_drivers_bound(
        cluster: Any) -> None:
    # 3 tasks of 2 items fill the window of 6; each finished task's items are refilled
    # from Dask's callback thread before the rows reach the driver's main thread
    _client, address = cluster
    cases = goldens(120)
    with Service(delay_s=0.02) as svc:
        with dask_testing.counting_target(url=svc.url, name="svc") as target:
            run = evaluate(target, cases, ["recall@1"], max_concurrency=6, progress=False,
                           executor=dask_choice(address, svc.url, batch_size=2))
        assert svc.calls == {c.id: 1 for c in cases}
        assert 2 < svc.most <= 6  # more than one task at once, never over the bound
    assert run.header["status"] == "complete" and len(run.per_query) == 120


def _rows_written(artifact: Path) -> int:
    """Rows the run has written to ``artifact`` so far (0 before it exists)."""
    try:
        return artifact.read_bytes().count(b'"type": "row"')
    except FileNotFoundError:
        return 0


def test_a_worker_killed_with_an_item_in_flight_loses_nothing(cluster: Any,
                                                               tmp_path: Path) -> None:
    client, address = cluster
    cases = goldens(12)
    held = "c05"
    with Service(hold=frozenset({held})) as svc:
        result: dict[str, Any] = {}

        def background() -> None:
            with dask_testing.counting_target(url=svc.url, name="svc") as target:
                result["run"] = evaluate(
                    target, cases, ["recall@1"], max_concurrency=4, progress=False,
                    artifact=tmp_path / "run.jsonl",
                    executor=dask_choice(address, svc.url, batch_size=1))

        thread = threading.Thread(target=background)
        thread.start()
        svc.wait_for(held)
        # every other case answered and its row written (so its result was gathered from
        # the worker, which the kill cannot lose any more): the held item is the one task
        # still processing
        deadline = time.monotonic() + 60
        while sum(svc.calls.values()) < len(cases) or \
                sum(len(v) for v in client.processing().values()) != 1 or \
                _rows_written(tmp_path / "run.jsonl") < len(cases) - 1:
            assert time.monotonic() < deadline, (svc.calls, client.processing())
            time.sleep(0.05)
        (worker,) = [w for w, keys in client.processing().items() if keys]
        os.kill(client.run(os.getpid, workers=[worker])[worker], signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive()
    run: RunResult = result["run"]
    assert run.header["status"] == "complete", [r.error for r in run.per_query if r.error]
    assert run.ids() == sorted(c.id for c in cases)  # nothing lost
    saved = RunResult.load(tmp_path / "run.jsonl")
    assert [r.case_id for r in saved.per_query] == [c.id for c in cases]  # none twice
    assert svc.calls[held] == 2 and svc.duplicates == 1
    assert run.header["executor"]["retried"] == svc.duplicates
    assert "executor: dask (2 workers); 1 item(s) retried after a worker died (each may " \
        "have repeated a paid call)" in summary_lines(run)


def test_a_target_that_cannot_be_sent_is_refused_before_anything_is_written(
        cluster: Any, tmp_path: Path) -> None:
    _, address = cluster
    lock = threading.Lock()  # a lock does not pickle: neither does a target holding one

    def ranker(case: GoldenCase) -> list[str]:
        with lock:
            return [case.id]

    with pytest.raises(UnsendableError, match="target 'locked' cannot be sent"):
        evaluate(CallableTarget(ranker, name="locked"), goldens(3), ["recall@1"],
                 artifact=tmp_path / "run.jsonl",
                 executor=ExecutorChoice("dask", {"address": address}))
    assert not (tmp_path / "run.jsonl").exists()


EVALKIT = list(EVALKIT_COMMAND)


def write_config(folder: Path, url: str, n: int) -> Path:
    lines = [json.dumps({"id": f"c{i:02d}", "query": f"query {i}", "expected": [f"c{i:02d}"]})
             for i in range(n)]
    (folder / "goldens.jsonl").write_text("\n".join(lines) + "\n")
    config = folder / "evalkit.yaml"
    config.write_text(
        "goldens: goldens.jsonl\n"
        f"target: {{factory: http, kwargs: {{url: '{url}', name: svc}}}}\n"
        "metrics: [recall@1]\noutput: run.jsonl\nmax_concurrency: 4\n"
        "executor: {name: dask, options: {n_workers: 2, batch_size: 1}}\n")
    return config


def test_resume_after_sigkill_of_the_driver_calls_no_finished_case_again(
        cluster: Any, tmp_path: Path) -> None:
    import psutil

    _, address = cluster
    n = 24
    with Service(delay_s=0.1) as svc:
        config = write_config(tmp_path, svc.url, n)
        artifact = tmp_path / "run.jsonl"
        # the first run starts its own LocalCluster (2 worker processes)
        proc = subprocess.Popen([*EVALKIT, "run", str(config), "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until(lambda: len(written_rows(artifact)) >= 6, proc, "no progress", 120)
        workers = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        # the run's worker processes exit once their driver is gone (docs/scaling.md)
        _, alive = psutil.wait_procs(workers, timeout=DEATH_TIMEOUT_S + 20)
        assert alive == [], alive
        done_before = {str(r["id"]) for r in written_rows(artifact) if r["error"] is None}
        assert 6 <= len(done_before) < n
        calls_before = Counter(svc.calls)
        # resume on the module's cluster
        resumed = subprocess.run(
            [*EVALKIT, "run", str(config), "--resume", "--scheduler", address,
             "--no-progress", "--json"], capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
    assert all(svc.calls[c] == calls_before[c] for c in done_before)  # not called again
    run = RunResult.load(artifact)
    assert [r.case_id for r in run.per_query] == [f"c{i:02d}" for i in range(n)]
    assert run.header["status"] == "complete" and run.header["resumed"] == 1
    assert set(run.scores("recall@1").values()) == {1.0}
    assert json.loads(resumed.stdout)["executor"]["retried"] == 0
    assert run.header["executor"]["name"] == "dask"


def test_the_plugin_conforms_and_its_executor_runs_the_conformance_run(cluster: Any) -> None:
    import evalkit_dask.plugin

    _, address = cluster
    assert check_conformance(evalkit_dask.plugin, exclude=("dask",)) == []
    (spec,) = evalkit_dask.plugin.evalkit_register_executors()
    executor_runs(spec, address=address)  # the kernel's check, on the module's cluster


def interrupted_after_four_calls(svc: Service, config: Path, *args: str, group: bool) -> None:
    """Run ``evalkit run config *args`` in a session of its own, send SIGINT once the
    service has seen 4 calls (to the whole process group, as a terminal's Ctrl-C does,
    when ``group``; else to the driver alone), and check that it exited 130 saying how
    to resume, without a traceback."""
    proc = subprocess.Popen([*EVALKIT, "run", str(config), "--no-progress", *args],
                            start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_until(lambda: sum(svc.calls.values()) >= 4, proc, "no call", 120)
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "continue with --resume" in err and "Traceback" not in err


def test_ctrl_c_in_the_terminal_writes_the_calls_in_flight(tmp_path: Path) -> None:
    # a terminal's Ctrl-C reaches the whole process group: the run's own workers ignore it
    with Service(delay_s=1.0) as svc:
        config = write_config(tmp_path, svc.url, 12)
        interrupted_after_four_calls(svc, config, group=True)
    rows = written_rows(tmp_path / "run.jsonl")
    # every call that started was answered within the grace period and written, once
    assert sorted(str(r["id"]) for r in rows) == sorted(svc.calls)
    assert all(n == 1 for n in svc.calls.values()) and all(r["error"] is None for r in rows)


def test_ctrl_c_of_a_driver_on_a_running_cluster_writes_the_calls_and_leaves_it_clean(
        cluster: Any, tmp_path: Path) -> None:
    # the cluster is not the run's: a Ctrl-C stops the driver, the calls in flight are
    # written, the tasks not started are cancelled, and the cluster keeps serving
    client, address = cluster
    with Service(delay_s=1.0) as svc:
        config = write_config(tmp_path, svc.url, 12)
        interrupted_after_four_calls(svc, config, "--scheduler", address, group=False)
        started = dict(svc.calls)
    rows = written_rows(tmp_path / "run.jsonl")
    assert sorted(str(r["id"]) for r in rows) == sorted(started)  # the 4 in flight
    assert len(rows) == 4 and all(n == 1 for n in started.values())
    # nothing of the run is left on the scheduler once its driver has gone
    deadline = time.monotonic() + 30
    while client.run_on_scheduler(_evalkit_tasks) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.run_on_scheduler(_evalkit_tasks) == 0
    assert client.submit(sum, [1, 2], pure=False).result(timeout=30) == 3


def _evalkit_tasks(dask_scheduler: Any) -> int:
    return sum(1 for key in dask_scheduler.tasks if str(key).startswith("evalkit-batch-"))


def test_a_target_too_large_to_send_with_every_task_is_scattered_and_runs(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import distributed
    from evalkit_dask.executor import SCATTER_BYTES

    _client, address = cluster
    scattered: list[int] = []
    real_scatter: Any = distributed.Client.scatter

    def counting_scatter(self: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
        scattered.append(1)
        return real_scatter(self, data, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "scatter", counting_scatter)
    blob = os.urandom(2 * SCATTER_BYTES)

    def rank(case: GoldenCase) -> list[str]:  # a closure: cloudpickle sends it by value
        return [case.id, f"{len(blob)}"]

    cases = goldens(12)
    run = evaluate(CallableTarget(rank, name="big"), cases, ["recall@1"], max_concurrency=4,
                   progress=False,
                   executor=ExecutorChoice("dask", {"address": address, "batch_size": 2}))
    assert run.header["status"] == "complete" and run.header["executor"]["retried"] == 0
    assert len(scattered) == 1  # once for the run, not with each of its 6 tasks
    # recall@1 by hand: odd cases' own id is relevant and ranked first
    assert run.scores("recall@1") == {c.id: float(i % 2) for i, c in enumerate(cases)}


def test_a_factory_the_workers_cannot_import_is_refused_before_any_call(
        cluster: Any, tmp_path: Path) -> None:
    _, address = cluster
    with Service() as svc:
        choice = ExecutorChoice("dask", {"address": address},
                                TargetRecipe("evalkit_no_such_module:make", {}))
        with dask_testing.counting_target(url=svc.url, name="svc") as target, \
                pytest.raises(UnsendableError,
                              match=r"target 'svc' cannot be built on the Dask workers: "
                                    r"ConfigError: .*cannot import 'evalkit_no_such_module"):
            evaluate(target, goldens(3), ["recall@1"], executor=choice)
        assert svc.calls == {}
