"""Where an async run scores (the runner's cost per case): on the event loop
when every metric is ``nonblocking`` (the built-in retrieval measures), in threads off
the loop otherwise; and the rows of one turn of the loop reach the caller together."""

from __future__ import annotations

import asyncio
import threading

from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.async_executor import AsyncExecutor
from evalkit.execute.executor import _WORKER_DONE, Job
from evalkit.execute.scoring import resolve_metrics


def jobs(n: int) -> list[Job]:
    return [Job(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}"])) for i in range(n)]


def recording(name: str, nonblocking: bool, seen: set[str]) -> MetricSpec:
    def fn(response: TargetResponse, case: GoldenCase) -> float:
        seen.add(threading.current_thread().name)
        return 1.0

    return MetricSpec(name, fn, True, nonblocking=nonblocking)


async def ranker(case: GoldenCase) -> list[str]:
    await asyncio.sleep(0.001)
    return [case.id]


def run_all(specs: list[MetricSpec], n: int = 12, concurrency: int = 4
            ) -> list[list[str]]:
    executor = AsyncExecutor(CallableTarget(ranker), "t", jobs(n), specs, concurrency)
    executor.start()
    batches = [[row.case_id for row in batch] for batch in executor.batches()]
    executor.join(5.0)
    return batches


def test_the_builtin_retrieval_measures_are_nonblocking() -> None:
    specs = resolve_metrics(["recall@1", "ndcg@10", "rr", "ap", "num_ret"])
    assert all(spec.nonblocking for spec in specs)
    assert MetricSpec("x", lambda r, c: 0.0, True).nonblocking is False  # the default


def test_nonblocking_metrics_score_on_the_loop() -> None:
    seen: set[str] = set()
    batches = run_all([recording("a", True, seen), recording("b", True, seen)])
    assert seen == {"evalkit-event-loop"}
    assert sorted(i for b in batches for i in b) == [f"c{i:03d}" for i in range(12)]


def test_one_blocking_metric_sends_every_row_to_the_threads() -> None:
    seen: set[str] = set()
    run_all([recording("a", True, seen), recording("judge", False, seen)])
    assert seen and all(name.startswith("evalkit-score") for name in seen)


def test_the_rows_of_one_turn_of_the_loop_arrive_as_one_batch() -> None:
    release = asyncio.Event()
    arrived = [0]

    async def together(case: GoldenCase) -> list[str]:
        arrived[0] += 1
        if arrived[0] == 8:
            release.set()  # the eighth call frees all eight in the same turn
        await release.wait()
        return [case.id]

    spec = resolve_metrics(["recall@1"])
    executor = AsyncExecutor(CallableTarget(together), "t", jobs(8), spec, 8)
    executor.start()
    executor.join(5.0)  # the loop has ended: look at what it queued for the caller
    queued = []
    while not executor._done.empty():
        queued.append(executor._done.get_nowait())
    assert len(queued) == 2 and queued[1] is _WORKER_DONE  # one hand-over, then the end
    assert sorted(row.case_id for row in queued[0]) == [f"c{i:03d}" for i in range(8)]


def test_a_row_with_a_large_input_is_scored_in_a_thread_even_when_nonblocking() -> None:
    # nonblocking metrics are linear in their input, so only rows of bounded size are
    # scored on the loop: 8,192 characters of text and answers, 10,000 ranked and judged
    # ids; one past either bound goes to a scoring thread
    where: dict[str, str] = {}

    def fn(response: TargetResponse, case: GoldenCase) -> float:
        where[case.id] = threading.current_thread().name
        return 1.0

    sizes = {"small": (8192, 0), "long-text": (8193, 0), "ids": (0, 10_000),
             "many-ids": (0, 10_001)}
    answers = ("x" * 8000,)

    async def answer(case: GoldenCase) -> TargetResponse:
        chars, ids = sizes[case.id.removesuffix("-ans")]
        text = "y" * (chars - (8000 if case.answers else 0)) if chars else None
        return TargetResponse([str(i) for i in range(ids)], text=text)

    cases = [GoldenCase(q, "q") for q in sizes] + [
        GoldenCase("small-ans", "q", answers=answers),
        GoldenCase("long-text-ans", "q", answers=answers)]
    executor = AsyncExecutor(CallableTarget(answer), "t", [Job(c) for c in cases],
                             [MetricSpec("probe", fn, True, nonblocking=True)], 2)
    executor.start()
    for _ in executor.batches():
        pass
    executor.join(5.0)
    on_loop = {q for q, name in where.items() if name == "evalkit-event-loop"}
    assert on_loop == {"small", "ids", "small-ans"}
    assert all(where[q].startswith("evalkit-score") for q in set(where) - on_loop)
    assert len(where) == 6
