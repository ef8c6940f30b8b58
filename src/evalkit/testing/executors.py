"""The conformance check of an executor: a small run, every row once, equal to local.

:func:`executor_runs` makes the executor from its record (``factory()``, no options),
opens it on eight cases of an importable target (:func:`echo`, so a remote executor can
send it) with the metric ``recall@1``, drives it as the runner does, and requires each
case's row exactly once, equal to the local pool's row (latency aside).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalkit.core.specs import ExecutorSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.rows import CaseResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor import Executor, Job
from evalkit.execute.executor_api import Work, close_executor
from evalkit.execute.scoring import resolve_metrics


def echo(case: GoldenCase) -> list[str]:
    """The sample target: the case's own id, then ``"other"``."""
    return [case.id, "other"]


def without_timing(row: CaseResult) -> CaseResult:
    """``row`` with its latencies (the row's and the response's) set to 0: what two runs
    of the same items must agree on."""
    response = None if row.response is None else replace(row.response, latency_ms=0.0)
    return replace(row, latency_ms=0.0, response=response)


def _rows(running: Any) -> list[Any]:
    rows: list[Any] = []
    running.start()
    try:
        for batch in running.batches():
            rows.extend(batch)
    finally:
        close_executor(running)
    return rows


def executor_runs(spec: ExecutorSpec, **options: Any) -> None:
    """Raise ``AssertionError`` unless ``spec``'s executor hands back every row of a small
    run once, each equal to the local pool's (case, response, metrics, error)."""
    cases = [GoldenCase(f"c{i}", f"query {i}", relevant=frozenset({f"c{i}" if i % 2 else "x"}))
             for i in range(8)]
    jobs = [Job(c) for c in cases]
    specs = resolve_metrics(["recall@1"])
    target = CallableTarget(echo, name="echo")
    expected = {r.case_id: r for r in _rows(Executor(target, "echo", jobs, specs, 4))}
    running = spec.factory(**options).open(Work(target, "echo", jobs, specs, 4))
    got = _rows(running)
    ids = [r.case_id for r in got]
    if sorted(ids) != sorted(expected):
        raise AssertionError(f"executor {spec.name!r} handed back rows for {sorted(ids)}; "
                             f"expected each of {sorted(expected)} once")
    for row in got:
        want = expected[row.case_id]
        if without_timing(row) != without_timing(want):
            raise AssertionError(f"executor {spec.name!r}: the row of {row.case_id!r} differs "
                                 f"from the local pool's: {row!r} != {want!r}")
