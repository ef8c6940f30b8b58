"""The runner's pacing: the AIMD limit on calls in flight, worked by hand;
``requests_per_minute`` and ``tokens_per_minute`` shared by every worker (lower bounds
on a run's time that follow from the buckets' arithmetic, never speed claims); the eval
config keys."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.pacing import (
    MIN_REQUESTS_PER_MINUTE,
    MIN_TOKENS_PER_MINUTE,
    Pacing,
    reported_tokens,
)
from evalkit.execute.target_runner import evaluate

runner = CliRunner()


def test_the_limit_halves_once_per_round_trip_and_grows_by_one_over_itself() -> None:
    pacing = Pacing(8)
    stop = threading.Event()
    starts = [pacing.admit(stop) for _ in range(8)]
    assert all(s is not None for s in starts) and pacing.in_flight == 8
    first = starts[0]
    assert first is not None
    pacing.release(first, rate_limited=1)  # 8 in flight: min(8, 8) x 0.5 = 4
    assert pacing.limit == 4.0 and pacing.current == 4
    second = starts[1]
    assert second is not None
    pacing.release(second, rate_limited=2)  # started before the decrease: no second cut
    assert pacing.limit == 4.0 and pacing.decreases == 1
    for s in starts[2:]:
        assert s is not None
        pacing.release(s)  # success: + 1 / limit
    expected = 4.0
    for _ in range(6):
        expected += 1.0 / expected
    assert pacing.limit == pytest.approx(expected)  # 4 -> 5.36...
    assert pacing.current == 5 and pacing.in_flight == 0
    later = pacing.admit(stop)
    assert later is not None
    pacing.release(later, rate_limited=1)  # 1 in flight: min(5.36, 1) x 0.5 -> at least 1
    assert pacing.limit == 1.0 and pacing.summary() == {
        "max_concurrency": 8, "lowest": 1, "final": 1, "decreases": 2}


def test_the_limit_never_exceeds_max_concurrency_and_a_stop_ends_the_wait() -> None:
    pacing = Pacing(2)
    stop = threading.Event()
    a, b = pacing.admit(stop), pacing.admit(stop)
    assert a is not None and b is not None
    for _ in range(50):
        pacing.release(a)
        a = pacing.admit(stop)
        assert a is not None
    assert pacing.limit == 2.0
    threading.Timer(0.1, stop.set).start()
    assert pacing.admit(stop) is None  # both slots taken: only the stop ends the wait


def test_reported_tokens_reads_the_usage_shapes_of_the_apis() -> None:
    assert reported_tokens({"tokens": 12}) == 12
    assert reported_tokens({"usage": {"total_tokens": 30, "input_tokens": 1}}) == 30
    assert reported_tokens({"usage": {"input_tokens": 10, "output_tokens": 5}}) == 15
    assert reported_tokens({"usage": {"prompt_tokens": 7, "completion_tokens": 2}}) == 9
    assert reported_tokens({"cost_usd": 1.0}) == 0
    assert reported_tokens({"tokens_in": 10, "tokens_out": 5}) == 15
    assert reported_tokens({"tokens": True}) == 0 and reported_tokens({"tokens": -3}) == 0


def test_bad_limits_are_refused() -> None:
    for bad in (0, -1, float("inf"), "60", True):
        with pytest.raises(ValueError, match="requests_per_minute must be a positive number"):
            Pacing(4, requests_per_minute=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("key", "tiny", "floor"), [
    ("requests_per_minute", 1e-9, 1 / 60), ("tokens_per_minute", 1e-9, 60.0),
    ("requests_per_minute", 0.0166, 1 / 60), ("tokens_per_minute", 59.9, 60.0)])
def test_limits_below_their_floor_are_refused_before_any_call(
        key: str, tiny: float, floor: float) -> None:
    # 1e-9 calls a minute is one call every 60 / 1e-9 s = 1.9 millennia: the run would
    # never end. The floors: one call an hour (60 / (1/60) = 3600 s between starts) and
    # one token a second; the floors themselves are taken.
    calls: list[str] = []

    def rank(case: GoldenCase) -> list[str]:
        calls.append(case.id)
        return [case.id]

    with pytest.raises(ValueError, match=f"{key} {tiny!r} is below the floor"):
        evaluate(CallableTarget(rank), cases(2), ["recall@1"], progress=False,
                 **{key: tiny})  # type: ignore[arg-type]
    assert calls == []
    assert 60 / MIN_REQUESTS_PER_MINUTE == 3600.0 and MIN_TOKENS_PER_MINUTE / 60 == 1.0
    Pacing(1, **{key: floor})


def cases(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i:02d}", "q", expected=[f"c{i:02d}"]) for i in range(n))


def test_requests_per_minute_is_shared_by_every_worker() -> None:
    starts: list[float] = []

    def rank(case: GoldenCase) -> list[str]:
        starts.append(time.monotonic())
        return [case.id]

    # 600 a minute = 10 a second, a bucket of 10: 25 calls need at least 15 / 10 s more
    t0 = time.monotonic()
    run = evaluate(CallableTarget(rank), cases(25), ["recall@1"], max_concurrency=8,
                   requests_per_minute=600, progress=False)
    assert run.header["status"] == "complete"
    assert time.monotonic() - t0 >= 1.5 - 0.05
    starts.sort()
    # in any window of one second at most 10 + 10 starts (the full bucket and a refill)
    assert all(sum(1 for t in starts if s <= t < s + 1.0) <= 20 for s in starts)


def test_tokens_per_minute_is_applied_after_the_fact_from_reported_usage() -> None:
    def rank(case: GoldenCase) -> TargetResponse:
        return TargetResponse(ranked_ids=[case.id], meta={"usage": {
            "input_tokens": 80, "output_tokens": 20}})

    # 6000 a minute = 100 a second, a bucket of 100; each call reports 100 tokens. The
    # first empties the full bucket (level 0, not below: the second starts at once); from
    # then on each call leaves it at -100, and the next waits about 1 s for the refill:
    # 4 calls at concurrency 1 take at least 2 s less the refill's rounding (no more: the
    # run ends with its last call, no worker waits for a start it will not use)
    t0 = time.monotonic()
    run = evaluate(CallableTarget(rank), cases(4), ["recall@1"], max_concurrency=1,
                   tokens_per_minute=6000, progress=False)
    assert run.header["status"] == "complete"
    assert time.monotonic() - t0 >= 2.0 - 0.1


def test_the_eval_config_takes_the_limits_and_names_a_bad_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "goldens.jsonl").write_text('{"id": "a", "query": "q", "expected": ["a"]}\n')
    (tmp_path / "t.py").write_text("def rank(case):\n    return [case.id]\n\n\n"
                                   "def make():\n    return rank\n")
    base = "goldens: goldens.jsonl\ntarget: {factory: 't:make'}\nmetrics: [recall@1]\n" \
        "output: run.jsonl\n"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(base + "requests_per_minute: 6000\n"
                                           "tokens_per_minute: 1000000\n")
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    (tmp_path / "evalkit.yaml").write_text(base + "requests_per_minute: -5\n")
    res = runner.invoke(app, ["run", "--no-progress", "--overwrite"])
    assert res.exit_code == 2
    assert "evalkit.yaml:5: key 'requests_per_minute': must be a positive number, at least " \
        "1/60 (one call an hour), got -5" in res.output
    for key, floor in (("requests_per_minute", "1/60 (one call an hour)"),
                       ("tokens_per_minute", "60 (one token a second)")):
        (tmp_path / "evalkit.yaml").write_text(base + f"{key}: 1.0e-9\n")
        res = runner.invoke(app, ["run", "--no-progress", "--overwrite"])
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert f"evalkit.yaml:5: key '{key}': 1e-09 is below the floor: it must be at " \
            f"least {floor}, or left out for no limit" in res.output
    (tmp_path / "evalkit.yaml").write_text(base)
    res = runner.invoke(app, ["run", "--no-progress", "--overwrite", "--grace-s", "1e12"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "--grace-s" in res.output and "3,600" in res.output
