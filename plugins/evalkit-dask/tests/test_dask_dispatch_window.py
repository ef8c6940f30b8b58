"""The driver-side dispatcher honours the run's dispatch window (``Work.window``, set by a
run that stops on a sequential rule): item ``i`` is submitted only once the window allows
it, however much room the in-flight bound leaves."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit_dask.dispatch import Dispatch, Outcome
from evalkit_dask.remote_work import run_item

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget
from evalkit.execute.dispatch_window import DispatchWindow
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import Work


class InstantBackend:
    """Every item submitted has finished by the next poll; records what was submitted."""

    def __init__(self, work: Work) -> None:
        self.work = work
        self.submitted: list[str] = []
        self.ready: list[Job] = []

    def submit(self, jobs: Sequence[Job]) -> None:
        self.submitted += [job.case.id for job in jobs]
        self.ready += jobs

    def poll(self, timeout_s: float) -> list[Outcome]:
        ready, self.ready = self.ready, []
        return [Outcome(job, row=run_item(self.work.target, "rank", job,  # type: ignore[arg-type]
                                          [], False)) for job in ready]

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_items_go_out_only_as_far_as_the_window_allows() -> None:
    jobs = [Job(GoldenCase(f"c{i}", "q", relevant=frozenset({"d"}))) for i in range(10)]
    window = DispatchWindow(2)
    work = Work(CallableTarget(lambda case: ["d"], name="rank"), "rank", jobs, [], 8,
                window=window)
    backend = InstantBackend(work)
    dispatch = Dispatch(backend, work).start()
    assert backend.submitted == ["c0", "c1"]  # room for 8 in flight, the window says 2
    batches = dispatch.batches()
    assert [r.query_id for r in next(batches)] == ["c0", "c1"]
    assert backend.submitted == ["c0", "c1"]  # the driver has not advanced the window
    window.advance(1)  # the driver took c0's row: items 0..2 may go out
    assert [r.query_id for r in next(batches)] == ["c2"]
    window.release()
    rest = [r.query_id for batch in batches for r in batch]
    assert rest == [f"c{i}" for i in range(3, 10)]
    assert backend.submitted == [f"c{i}" for i in range(10)]
    dispatch.close()
