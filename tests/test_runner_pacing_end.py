"""A paced run ends when its last call does (no idle worker waits for a request token
no call will use), in the threaded and the async executor (the remote one:
plugins/evalkit-dask/tests/test_dask_dispatch_pacing.py); and ``tokens_per_minute`` reads
the token keys evalkit's cost docs prescribe, and says so when no response reports any.

The bucket arithmetic of :mod:`evalkit.execute.pacing` (60 a minute: one start a second,
a bucket of one) starts 3 cases at 0, 1 and 2 s; an idle worker that waited for a token
no call will use would take one more at 3 s. So the tests count the starts the pacing
grants (exactly one per call) rather than time the run's end, and no result depends on
the machine's load; the gaps between starts keep their lower bounds. At the floor (one
call an hour) an idle worker would wait an hour; the test waits 30 s as a guard against
that hang.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.pacing import MIN_REQUESTS_PER_MINUTE, Pacing, reported_tokens
from evalkit.execute.target_runner import evaluate
from evalkit.report.target_run import summary_lines

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first


class Grants:
    """Counts what :class:`Pacing` answers every worker that asks to start a call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.granted = 0
        self.refused = 0
        original = Pacing._try_start

        def counted(pacing: Pacing, latest: float) -> tuple[bool, float]:
            started, wait = original(pacing, latest)
            if started:
                self.granted += 1
            elif wait > 0:
                self.refused += 1  # told to wait
            return started, wait

        monkeypatch.setattr(Pacing, "_try_start", counted)


def cases(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i}", "q", expected=[f"c{i}"]) for i in range(n))


def _targets(starts: list[float]) -> dict[str, Callable[[], Any]]:
    def rank(case: GoldenCase) -> list[str]:
        starts.append(time.monotonic())
        return [case.id]

    async def arank(case: GoldenCase) -> list[str]:
        starts.append(time.monotonic())
        return [case.id]

    return {"threads": lambda: CallableTarget(rank, name="r"),
            "async": lambda: CallableTarget(arank, name="r")}


def _run(kind: str, starts: list[float], n: int, **kw: Any) -> RunResult:
    target = _targets(starts)[kind]()
    return evaluate(target, cases(n), ["recall@1"], progress=False, **kw)


@pytest.mark.parametrize("kind", ["threads", "async"])
@pytest.mark.parametrize(("rpm", "concurrency", "last_start_s"),
                         [(60, 4, 2.0), (60, 2, 2.0), (30, 2, 4.0)])
def test_a_paced_run_ends_when_its_last_call_does(kind: str, rpm: float, concurrency: int,
                                                  last_start_s: float,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    grants = Grants(monkeypatch)
    starts: list[float] = []
    run = _run(kind, starts, 3, requests_per_minute=rpm, max_concurrency=concurrency)
    assert run.header["status"] == "complete" and len(starts) == 3
    gaps = [b - a for a, b in zip(sorted(starts), sorted(starts)[1:], strict=False)]
    assert all(g >= 60 / rpm - 0.05 for g in gaps)  # the limit still holds
    assert max(starts) - min(starts) >= last_start_s - 0.1
    # one start per call: no idle worker took (or waited out) a token for no call
    assert grants.granted == 3


@pytest.mark.parametrize("kind", ["threads", "async"])
def test_at_the_floor_an_idle_worker_does_not_wait_an_hour(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # one call an hour, one case, eight workers: the case starts at once (a full bucket
    # of one); a worker that waited for the next token would hold the run for 3600 s
    grants = Grants(monkeypatch)
    starts: list[float] = []
    done: list[RunResult] = []
    thread = threading.Thread(target=lambda: done.append(_run(
        kind, starts, 1, requests_per_minute=MIN_REQUESTS_PER_MINUTE, max_concurrency=8)),
        daemon=True)
    thread.start()
    thread.join(30.0)  # a guard against the hour-long wait
    assert done, "the run was still waiting 30 s after its only call"
    assert done[0].header["status"] == "complete" and grants.granted == 1


def test_reported_tokens_reads_tokens_in_and_tokens_out() -> None:
    # the keys of the cost aggregates and of docs/text.md's HttpTarget(meta_keys=...)
    assert reported_tokens({"tokens_in": 28, "tokens_out": 7, "cost_usd": 0.1}) == 35
    assert reported_tokens({"tokens_in": 12}) == 12 and reported_tokens({"tokens_out": 3}) == 3
    assert reported_tokens({"tokens": 5, "tokens_in": 28, "tokens_out": 7}) == 5  # tokens first
    assert reported_tokens({"tokens_in": "12", "tokens_out": True}) == 0


def test_tokens_per_minute_acts_on_tokens_in_and_tokens_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def rank(case: GoldenCase) -> TargetResponse:
        return TargetResponse(ranked_ids=[case.id], meta={"tokens_in": 80, "tokens_out": 20})

    # 6000 a minute = 100 a second, a bucket of 100; each call takes 100 tokens: the
    # first empties the bucket (0, not below: the second starts at once), each later call
    # waits about 1 s for the refill of the 100 the one before took: at least 2 s
    t0 = time.monotonic()
    run = evaluate(CallableTarget(rank), cases(4), ["recall@1"], max_concurrency=1,
                   tokens_per_minute=6000, progress=False)
    assert time.monotonic() - t0 >= 2.0 - 0.1
    # responses that report no token keys: no call is told to wait for tokens
    grants = Grants(monkeypatch)
    evaluate(CallableTarget(lambda case: [case.id], name="e"), cases(4), ["recall@1"],
             max_concurrency=1, tokens_per_minute=6000, progress=False)
    assert (grants.granted, grants.refused) == (4, 0)
    assert "tokens_per_minute" not in (run.header.get("notes") or {})


def test_a_token_limit_no_response_can_feed_is_named_in_the_summary() -> None:
    run = evaluate(CallableTarget(lambda case: [case.id], name="echo"), cases(3),
                   ["recall@1"], tokens_per_minute=6000, progress=False)
    note = run.header["notes"]["tokens_per_minute"]
    assert note == ("tokens_per_minute 6000 did not act: none of the 3 answered call(s) "
                    "reported its tokens (meta 'tokens', 'tokens_in' + 'tokens_out', or "
                    "'usage'); report them, or drop the limit")
    assert f"note: {note}" in summary_lines(run)
    # no limit, no note
    plain = evaluate(CallableTarget(lambda case: [case.id], name="echo"), cases(1),
                     ["recall@1"], progress=False)
    assert "tokens_per_minute" not in (plain.header.get("notes") or {})


def test_the_note_counts_answers_through_a_remote_executor_too() -> None:
    pacing = Pacing(2, tokens_per_minute=600)
    pacing.release(time.monotonic(), 0, 0)
    assert pacing.token_limit_note() is not None
    pacing.observe(time.monotonic(), 0, 9)
    assert pacing.token_limit_note() is None
