"""Bad dask executor settings are one-line errors naming the setting, before any call."""

from __future__ import annotations

import socket

import pytest
from evalkit_dask.executor import DaskExecutor

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import UnsendableError, Work
from evalkit.execute.scoring import resolve_metrics
from evalkit.testing import registered_plugin


def test_an_address_distributed_cannot_parse_names_the_address_and_the_form() -> None:
    executor = DaskExecutor("notanaddress")
    with pytest.raises(ValueError) as info:
        executor._connect(4)
    assert str(info.value) == (
        "dask executor: the scheduler address 'notanaddress' is not one (missing port "
        "number in address 'notanaddress'); write tcp://host:8786")


@pytest.mark.parametrize("name", ["death_timeout_s", "connect_timeout_s"])
@pytest.mark.parametrize("value", ["abc", 0, -1, float("nan"), float("inf"), True, 1.0e308,
                                   3600.5])
def test_the_timeouts_must_be_positive_numbers_up_to_an_hour(name: str, value: object) -> None:
    # 1.0e+308 ended in an OverflowError traceback: the runner's one-hour bound on waits
    with pytest.raises(ValueError, match=rf"^dask executor: {name} must be a number of "
                       r"seconds above 0 and at most 3600 \(one hour\), got "):
        DaskExecutor(**{name: value})  # type: ignore[arg-type]


def test_a_scheduler_that_never_answers_is_given_up_after_connect_timeout_s() -> None:
    # a real listening socket on 127.0.0.1 that accepts and never says a word
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        executor = DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout_s=1.5)
        with pytest.raises(OSError) as info:
            executor._connect(4)
    assert str(info.value).startswith(
        f"dask executor: no scheduler answers at tcp://127.0.0.1:{port} within "
        "connect_timeout_s 1.5 s (")


def test_the_handshake_check_works_inside_a_running_event_loop() -> None:
    # evaluate() called from a notebook runs inside an event loop: the check must not
    # call asyncio.run on that thread
    import asyncio

    async def inside() -> None:
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            port = silent.getsockname()[1]
            with pytest.raises(OSError, match=r"within connect_timeout_s 0\.5 s"):
                DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout_s=0.5)._connect(4)

    asyncio.run(inside())


class _Judge:
    """Judge-shaped (it publishes ``details``), with a ``budget`` and a ``cache``."""

    def __init__(self, budget: object = None, cache: object = None) -> None:
        self.budget, self.cache = budget, cache

    def __call__(self, response: object, case: object) -> float:
        return 1.0

    def details(self, case_id: str) -> None:
        return None


def _rank(case: GoldenCase) -> list[str]:
    return [case.id]


class _JudgePlugin:
    """An installed plugin (evalkit-fake 1.0) whose metric ``graded`` is ``judge``."""

    def __init__(self, judge: _Judge) -> None:
        self.judge = judge

    @hookimpl
    def evalkit_register_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("graded", self.judge, higher_is_better=True)]


@pytest.mark.parametrize(("judge", "address", "refused"), [
    (_Judge(budget=object()), None, "has a spending budget, which every worker process"),
    (_Judge(cache=object()), "tcp://10.0.0.5:8786", "keeps its grades in a SQLite cache"),
    (_Judge(cache=object()), None, None),  # the run's own LocalCluster: one machine
    (_Judge(), "tcp://10.0.0.5:8786", None),
])
def test_judge_on_workers_is_refused_where_its_budget_or_cache_would_be_wrong(
        judge: _Judge, address: str | None, refused: str | None) -> None:
    with registered_plugin(_JudgePlugin(judge), distribution="evalkit-fake", version="1.0"):
        work = Work(CallableTarget(_rank, name="rank"), "rank", [Job(GoldenCase("a", "q"))],
                    resolve_metrics(["graded"]), 4)
        DaskExecutor(address).check(work)  # on the driver (the default): always fine
        executor = DaskExecutor(address, judge_on_workers=True)
        if refused is None:
            executor.check(work)
        else:
            with pytest.raises(UnsendableError, match=rf"^judge_on_workers: metric 'graded' "
                                                      rf"{refused}"):
                executor.check(work)
