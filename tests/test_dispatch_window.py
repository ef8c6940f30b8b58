"""The dispatch window of a run that stops on a sequential rule
(:mod:`evalkit.execute.dispatch_window`, ``evalkit run --until-decided``): the cases the
target is called on do not depend on its speed. A fast target and a slow one (same seed)
are called on the same cases: those up to the rule's decision point, computed here from
the sequence of paired differences, plus at most ``max_concurrency - 1`` in flight.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from evalkit.execute.dispatch_window import DispatchWindow
from evalkit.stats.sequential import paired_confidence_sequence, random_order

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
N = 400

# a ranker that puts the relevant d1 first on a fixed share of the cases (40% for v1,
# 70% for v2), chosen by a hash of the case id; every call is logged
TARGET = '''
import hashlib, os, time
from evalkit import CallableTarget

def make_target(version, delay=0.0, log=None):
    def rank(case):
        if log is not None:
            with open(log, "a") as fh:
                fh.write(case.id + "\\n")
        time.sleep(delay)
        h = int(hashlib.sha256(case.id.encode()).hexdigest(), 16)
        good = (h % 100) < (40 if version == "v1" else 70)
        return ["d1", "d2"] if good else ["d2", "d1"]
    return CallableTarget(rank, name=version)
'''


def good(case_id: str, share: int) -> bool:
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 100 < share


def decision_point(seed: int) -> int:
    """The first t at which the 95% sequence over the differences of the first t cases
    of the seeded order excludes 0 (recall@1 of v2 minus v1's, each 0 or 1)."""
    ids = [f"c{i}" for i in range(N)]
    diffs = [float(good(ids[i], 70)) - float(good(ids[i], 40))
             for i in random_order(N, seed)]
    cs = paired_confidence_sequence(diffs, 1.0, alpha=0.05, population=N)
    return next(t + 1 for t in range(N) if cs.lower[t] > 0 or cs.upper[t] < 0)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "g.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": f"q{i}", "relevant": ["d1"]}) + "\n"
        for i in range(N)))
    (tmp_path / "t.py").write_text(TARGET)
    (tmp_path / "v1.yaml").write_text(
        "name: v1\ngoldens: g.jsonl\ntarget: {factory: 't:make_target', kwargs: "
        "{version: v1}}\nmetrics: [recall@1]\noutput: v1.jsonl\n")
    proc = subprocess.run([*EVALKIT, "run", "v1.yaml", "--no-progress"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return tmp_path


def candidate(project: Path, delay: float, jobs: int, seed: int
              ) -> tuple[list[str], dict[str, Any], str]:
    """Run v2 until decided; ``(cases called, header["sequential"], stdout)``."""
    log = project / f"calls-{delay}-{jobs}.log"
    (project / "v2.yaml").write_text(
        "name: v2\ngoldens: g.jsonl\ntarget: {factory: 't:make_target', kwargs: "
        f"{{version: v2, delay: {delay}, log: {str(log)!r}}}}}\nmetrics: [recall@1]\n"
        "output: v2.jsonl\n")
    out = project / f"s-{delay}-{jobs}.jsonl"
    proc = subprocess.run([*EVALKIT, "run", "v2.yaml", "--until-decided", "--baseline",
                           "v1.jsonl", "-o", str(out), "--overwrite", "--no-progress",
                           "-j", str(jobs), "--seed", str(seed)],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(out.read_text().splitlines()[0])["sequential"]
    return log.read_text().split(), record, proc.stdout


def test_one_at_a_time_a_fast_and_a_slow_target_are_called_on_the_decided_prefix(
        project: Path) -> None:
    t = decision_point(0)
    assert 10 < t < N // 2  # the rule decides well before the end (61 with seed 0)
    order = [f"c{i}" for i in random_order(N, 0)]
    fast, record, stdout = candidate(project, 0.0, 1, 0)
    slow, slow_record, _ = candidate(project, 0.02, 1, 0)
    assert fast == slow == order[:t]  # the first t cases of the order, each once
    for rec in (record, slow_record):
        assert rec["decided_at"] == rec["cases_at_decision"] == t
        assert rec["cases_called"] == rec["cases_used"] == t
        assert rec["stopped_early"] is True and rec["reason"] == "differs"
    assert f"it decided after {t} of {N} cases;" in stdout
    assert f"complete: {t} cases" in stdout


def test_with_four_in_flight_at_most_three_more_cases_are_called(project: Path) -> None:
    seed = 3
    t = decision_point(seed)
    order = [f"c{i}" for i in random_order(N, seed)]
    for delay in (0.0, 0.02):
        called, record, stdout = candidate(project, delay, 4, seed)
        assert len(called) == len(set(called))
        assert t <= len(called) <= t + 3
        # the decided prefix, then at most three more of the seeded order (which of those
        # reach the target first is the threads' affair, not the window's)
        assert set(order[:t]) <= set(called) <= set(order[:t + 3])
        assert record["decided_at"] == t and record["cases_called"] == len(called)
        more = len(called) - t
        assert f"it decided after {t} of {N} cases" in stdout
        assert (f"and {more} more case(s) in flight" in stdout) == (more > 0)


def test_the_window_holds_a_worker_until_it_advances_and_frees_it_on_stop() -> None:
    window = DispatchWindow(2)
    assert window.allows(1) and not window.allows(2)
    stop = threading.Event()
    started: list[bool] = []
    worker = threading.Thread(target=lambda: started.append(window.wait(3, stop)))
    worker.start()
    window.advance(1)  # items 0..2 may start: item 3 still waits
    assert not window.allows(3) and worker.is_alive()
    window.advance(2)
    worker.join(timeout=30)
    assert started == [True]
    worker = threading.Thread(target=lambda: started.append(window.wait(9, stop)))
    worker.start()
    stop.set()
    worker.join(timeout=30)
    assert started == [True, False]
    window.release()
    assert window.allows(10**9)
    with pytest.raises(ValueError, match="size must be an integer >= 1"):
        DispatchWindow(0)


def test_an_event_loop_task_waits_without_blocking_the_loop() -> None:
    window = DispatchWindow(1)

    async def main() -> list[object]:
        waiting = asyncio.create_task(window.wait_async(1, lambda: False))
        await asyncio.sleep(0)
        assert not waiting.done()  # the loop runs on while the task waits
        threading.Thread(target=window.advance, args=(1,)).start()
        stopped = await window.wait_async(5, lambda: True)
        return [await waiting, stopped]

    assert asyncio.run(main()) == [True, False]


def test_an_async_target_is_called_on_the_decided_prefix_only(tmp_path: Path) -> None:
    """The event loop of an async target honours the window as the threads do."""
    import evalkit
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import GoldenSet
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.sequential_run import UntilDecided

    cases = GoldenSet(GoldenCase(f"c{i}", f"q{i}", relevant=frozenset({"d1"}))
                      for i in range(N))

    def ranking(case: GoldenCase, share: int) -> list[str]:
        return ["d1", "d2"] if good(case.id, share) else ["d2", "d1"]

    base = evalkit.evaluate(CallableTarget(lambda c: ranking(c, 40), name="v1"), cases,
                            ["recall@1"], progress=False).save(tmp_path / "v1.jsonl")
    called: list[str] = []

    async def v2(case: GoldenCase) -> list[str]:
        called.append(case.id)
        return ranking(case, 70)

    run = evalkit.evaluate(CallableTarget(v2, name="v2"), cases, ["recall@1"],
                           max_concurrency=1, progress=False,
                           until_decided=UntilDecided(base, seed=0))
    t = decision_point(0)
    assert called == [f"c{i}" for i in random_order(N, 0)][:t]
    assert run.header["sequential"]["decided_at"] == t
