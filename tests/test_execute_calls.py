"""``evalkit.execute.calls``: the daemon-thread pool and ``call_all`` that ``evalkit
pairwise`` and ``evalkit rescore`` call their judge through. Ctrl-C and SIGTERM are
tested on real subprocesses (plugins/evalkit-judge/tests/test_judge_interrupts.py);
here the results, their order and a call's failure."""

from __future__ import annotations

import contextvars
import threading

import pytest

from evalkit.execute.calls import DaemonPool, call_all

LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("label", default="none")


def test_results_come_back_in_order_each_handed_over_once() -> None:
    taken: list[tuple[int, int]] = []
    out = call_all(lambda i: i * i, 20, max_concurrency=3, grace_s=1.0,
                   take=lambda i, r: taken.append((i, r)))
    assert out == [i * i for i in range(20)]
    assert sorted(taken) == [(i, i * i) for i in range(20)]


def test_calls_run_in_daemon_threads_at_most_max_concurrency_at_once() -> None:
    lock, running, most = threading.Lock(), [0], [0]
    seen: set[bool] = set()
    gate = threading.Barrier(2, timeout=30)

    def call(i: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            seen.add(threading.current_thread().daemon)
        if i < 2:
            gate.wait()  # the first two are in flight together
        with lock:
            running[0] -= 1
        return i

    assert call_all(call, 10, max_concurrency=2, grace_s=1.0) == list(range(10))
    assert most[0] == 2 and seen == {True}


def test_each_call_sees_the_callers_context() -> None:
    token = LABEL.set("caller")
    try:
        assert call_all(lambda i: LABEL.get(), 3, max_concurrency=2, grace_s=1.0) == [
            "caller"] * 3
    finally:
        LABEL.reset(token)


class Stop(BaseException):
    pass


def test_a_call_that_raises_stops_new_calls_and_is_raised_after_the_running_ones() -> None:
    started: list[int] = []
    release = threading.Event()

    def call(i: int) -> int:
        started.append(i)
        if i == 0:
            release.wait(30)  # in flight while call 1 fails
            return 0
        if i == 1:
            release.set()
            raise Stop("limit reached")
        return i

    with pytest.raises(Stop, match="limit reached"):
        call_all(call, 50, max_concurrency=2, grace_s=1.0)
    assert sorted(started)[:2] == [0, 1] and len(started) <= 4  # no new call after it


def test_the_pool_refuses_work_after_shutdown_and_cancels_what_did_not_start() -> None:
    pool = DaemonPool(1)
    hold = threading.Event()
    first = pool.submit(hold.wait, 30)
    second = pool.submit(lambda: 1)
    pool.shutdown(wait=False, cancel_futures=True)
    assert second.cancelled()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(lambda: 2)
    hold.set()
    assert first.result(timeout=30) is True
    with pytest.raises(ValueError, match="max_workers"):
        DaemonPool(0)
