"""The spending protocol (evalkit.execute.spending): ``evalkit run --max-calls``,
``--max-cost`` and ``--dry-run`` reach a third-party paid metric, which is not the LLM
judge, through the run's Spending and an account of its own; the run stops with exit 3
and keeps its rows, a dry run prints the account's report, and a run without a paid
metric says the limits did not act."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from evalkit.execute.spending import (
    Spending,
    SpendingLimitReached,
    SpendingLimits,
    current_spending,
    use_spending,
)
from evalkit.testing.child_runs import EVALKIT_COMMAND, write_project

# A paid metric of a third party: each uncounted case is one "request" of $0.25 to a
# metered service; it honours the run's limits through an account named "meter".
METERED = '''
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit.data.targets import CallableTarget
from evalkit.execute.spending import SpendingLimitReached, current_spending

PRICE = 0.25


class Meter:
    def __init__(self, limits):
        self.limits, self.calls, self.planned, self.spent = limits, 0, 0, 0.0

    def request(self, case_id):
        if self.limits.dry_run:
            self.planned += 1
            raise RuntimeError(f"case {case_id!r}: dry run, not requested")
        if self.limits.max_calls is not None and self.calls >= self.limits.max_calls:
            raise SpendingLimitReached(f"--max-calls {self.limits.max_calls} reached: "
                                       f"{self.calls} metered request(s) sent")
        if self.limits.max_cost is not None and self.spent + PRICE > self.limits.max_cost:
            raise SpendingLimitReached(f"--max-cost ${self.limits.max_cost:.2f} reached: "
                                       f"${self.spent:.2f} spent")
        self.calls += 1
        self.spent += PRICE

    def report(self):
        return {"dry_run": self.limits.dry_run, "requests": self.calls,
                "would_request": self.planned, "spent_usd": self.spent}

    def describe(self):
        if self.limits.dry_run:
            return f"meter dry run: {self.planned} would be requested"
        return f"meter: {self.calls} request(s), ${self.spent:.2f} spent"


def metered(response, case):
    spending = current_spending()
    if spending is not None:
        spending.account("meter", Meter).request(case.id)
    return 1.0


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("metered", metered, higher_is_better=True)]
'''

TARGET = '''
from evalkit.data.targets import CallableTarget


def make():
    return CallableTarget(lambda case: [case.id], name="echo")
'''


def project(tmp_path: Path, metrics: tuple[str, ...] = ("metered",)) -> Path:
    (tmp_path / "metered_plugin.py").write_text(METERED)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["metered_plugin"]\n')
    return write_project(tmp_path, TARGET, cases=5, max_concurrency=1, metrics=metrics)


def evalkit_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT_COMMAND, "run", "--no-progress", *args], cwd=folder,
                          capture_output=True, text=True, timeout=120)


def test_max_calls_stops_a_third_party_paid_metric_and_keeps_its_rows(tmp_path: Path) -> None:
    artifact = project(tmp_path)
    out = evalkit_run(tmp_path, "--max-calls", "3")
    assert out.returncode == 3, out.stderr
    assert out.stderr.splitlines() == [
        "meter: 3 request(s), $0.75 spent",
        "stopped: --max-calls 3 reached: 3 metered request(s) sent",
        f"the rows completed so far are kept in {artifact} (a case answered but not "
        "graded too); continue with --resume, which calls no answered case again"]
    rows = [json.loads(x) for x in artifact.read_text().splitlines()
            if json.loads(x)["type"] == "row"]
    # the fourth case's target had answered: its row is kept, not scored, for --resume
    assert [r["metrics"] for r in rows] == [{"metered": 1.0}] * 3 + [{}]
    assert "not graded on case" in rows[3]["metric_errors"]["metered"]
    resumed = evalkit_run(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resume: 4 row(s) kept from the earlier run, 1 case(s) called now" \
        in resumed.stdout


def test_max_cost_reaches_the_metric_and_a_completed_run_describes_the_account(
        tmp_path: Path) -> None:
    project(tmp_path)
    out = evalkit_run(tmp_path, "--max-cost", "0.5")  # two requests of $0.25 fit
    assert out.returncode == 3, out.stderr
    assert "stopped: --max-cost $0.50 reached: $0.50 spent" in out.stderr
    out = evalkit_run(tmp_path, "--max-cost", "10", "--overwrite")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == ["meter: 5 request(s), $1.25 spent"]


def test_a_dry_run_prints_the_accounts_report_and_writes_nothing(tmp_path: Path) -> None:
    artifact = project(tmp_path)
    out = evalkit_run(tmp_path, "--dry-run")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "meter dry run: 5 would be requested\n"
    out = evalkit_run(tmp_path, "--dry-run", "--json")
    assert json.loads(out.stdout) == {"dry_run": True, "requests": 0, "would_request": 5,
                                      "spent_usd": 0.0}
    assert not artifact.exists()


def test_limits_without_a_paid_metric_say_they_did_not_act(tmp_path: Path) -> None:
    project(tmp_path, metrics=("recall@1",))
    out = evalkit_run(tmp_path, "--max-calls", "1")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        "no paid metric of this run was called: the spending limits did not act"]
    out = evalkit_run(tmp_path, "--dry-run", "--json", "--overwrite")
    assert json.loads(out.stdout) == {"dry_run": True, "max_calls": None,
                                      "max_cost_usd": None, "accounts": {}}


class Counter:
    made = 0

    def __init__(self, limits: SpendingLimits) -> None:
        Counter.made += 1
        self.limits = limits

    def report(self) -> dict[str, Any]:
        return {"made": Counter.made}

    def describe(self) -> str:
        return "counter"


def test_one_account_per_name_whatever_the_threads() -> None:
    spending = Spending(SpendingLimits(max_calls=2))
    got: list[Counter] = []
    with use_spending(spending):
        threads = [threading.Thread(target=lambda: got.append(
            current_spending().account("c", Counter))) for _ in range(8)]  # type: ignore[union-attr]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
    assert current_spending() is None
    assert Counter.made == 1 and len(got) == 8 and all(a is got[0] for a in got)
    assert got[0].limits.max_calls == 2
    assert spending.report() == {"made": 1}  # one account: its own report
    spending.account("d", Counter)
    assert spending.report()["accounts"] == {"c": {"made": 2}, "d": {"made": 2}}
    assert spending.describe() == "counter\ncounter"


@pytest.mark.parametrize(("limits", "says"), [
    ({"max_calls": -1}, "max_calls must be an integer >= 0, got -1"),
    ({"max_calls": True}, "max_calls must be an integer >= 0, got True"),
    ({"max_cost": float("nan")}, "max_cost must be a finite number >= 0, got nan"),
    ({"max_cost": -0.5}, "max_cost must be a finite number >= 0, got -0.5"),
])
def test_bad_limits_are_refused(limits: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        SpendingLimits(**limits)


def test_a_limit_reached_is_not_an_exception_a_case_handler_catches() -> None:
    assert not issubclass(SpendingLimitReached, Exception)
    assert SpendingLimitReached("--max-calls 1 reached").reason == "--max-calls 1 reached"
