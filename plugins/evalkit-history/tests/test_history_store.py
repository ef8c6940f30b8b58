"""The history database: runs stored whole and rebuilt equal, steps whose values come from
hand calculation and scipy, breaks, refusals, the migration from a file of the first
schema, and two processes adding at once."""

from __future__ import annotations

import importlib.util
import itertools
import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from evalkit_history.schema import SCHEMA_VERSION
from evalkit_history.store import History, HistoryError, db_path
from scipy import stats

import evalkit
from evalkit.data.results import RunResult
from evalkit.gate.baseline import BaselineError

DATA = Path(__file__).parent / "data"


def _load_data_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_history_schema1", DATA / "make_history_schema1.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The rankings and qrels the fixture of the first schema was made from.
FIX: Any = _load_data_script()
RR_A = np.array([1 / r for r in FIX.RANKS_A])
RR_B = np.array([1 / r for r in FIX.RANKS_B])
P1_A = np.array([1.0 if r == 1 else 0.0 for r in FIX.RANKS_A])
P1_B = np.array([1.0 if r == 1 else 0.0 for r in FIX.RANKS_B])


def scored(ranks: list[int], name: str, qrels: Any = None,
           metrics: tuple[str, ...] = ("rr", "precision@1")) -> RunResult:
    return evalkit.evaluate_run(FIX.ranked(ranks), qrels or FIX.QRELS, list(metrics), name=name)


def exact_sign_flip_p(d: np.ndarray) -> float:
    """Two-sided p of the sign-flip test by enumerating all 2^n sign vectors (Fisher)."""
    observed = abs(d.mean())
    hits = sum(abs((d * np.array(s)).mean()) >= observed - 1e-12
               for s in itertools.product((1, -1), repeat=len(d)))
    return float(hits / 2 ** len(d))


# ------------------------------------------------------------------ storing and reading
def test_a_stored_run_is_rebuilt_equal_to_its_artifact(tmp_path: Path) -> None:
    run = scored(FIX.RANKS_A, "sys-a")
    path = run.save(tmp_path / "a.jsonl")
    loaded = RunResult.load(path)
    with History(tmp_path / "h.sqlite") as history:
        stored = history.add(loaded, label="v1", commit="abc1234def")
        rebuilt = history.load_id(stored.id)
    assert rebuilt == loaded  # name, every row (ids, rankings, metrics, counts), header
    assert stored.id == 1 and stored.label == "v1" and stored.commit == "abc1234def"
    assert stored.n_cases == 12
    assert stored.means == pytest.approx({"rr": RR_A.mean(), "precision@1": P1_A.mean()})
    assert stored.step.previous_id is None and not stored.step.comparable


def test_the_step_between_comparable_runs_is_the_paired_test_adjusted_by_holm(
        tmp_path: Path) -> None:
    with History(tmp_path / "h.sqlite") as history:
        history.add(scored(FIX.RANKS_A, "sys-a"))
        second = history.add(scored(FIX.RANKS_B, "sys-b"))
    step = second.step
    assert step.comparable and step.previous_id == 1 and step.reasons == ()
    by = {m.metric: m for m in step.metrics}
    rr, p1 = by["rr"], by["precision@1"]
    assert rr.n == p1.n == 12
    assert rr.diff == pytest.approx((RR_B - RR_A).mean())
    assert p1.diff == pytest.approx((P1_B - P1_A).mean())
    # rr: the sign-flip test, exact at n = 12; precision@1 (binary): the paired t-test
    assert rr.method == "randomization"
    assert rr.p_value == pytest.approx(exact_sign_flip_p(RR_B - RR_A))
    assert p1.method == "t-test"
    assert p1.p_value == pytest.approx(stats.ttest_rel(P1_B, P1_A).pvalue)
    t_ci = stats.ttest_rel(P1_B, P1_A).confidence_interval(0.95)
    assert (p1.ci_low, p1.ci_high) == pytest.approx((t_ci.low, t_ci.high))
    # Holm over the two metrics, by hand
    low, high = sorted([rr.p_value, p1.p_value])
    holm = {low: min(1.0, 2 * low), high: max(min(1.0, 2 * low), high)}
    assert rr.p_adjusted == pytest.approx(holm[rr.p_value])
    assert p1.p_adjusted == pytest.approx(holm[p1.p_value])
    assert rr.significant is (holm[rr.p_value] < 0.05)
    assert rr.direction == "better"


def test_runs_that_are_not_comparable_make_a_break_never_a_difference(tmp_path: Path) -> None:
    other_cases = {q: rel for q, rel in FIX.QRELS.items() if q != "q12"}
    with History(tmp_path / "h.sqlite") as history:
        history.add(scored(FIX.RANKS_B, "b"))
        qrels_changed = history.add(scored(FIX.RANKS_B, "c", FIX.QRELS_C))
        cases_changed = history.add(scored(FIX.RANKS_B[:11], "d", other_cases))
        metric_gone = history.add(scored(FIX.RANKS_B[:11], "e", other_cases, ("ap",)))
    assert not qrels_changed.step.comparable and not qrels_changed.step.metrics
    assert "qrels hash" in qrels_changed.step.reasons[0]
    assert "in the previous run" in qrels_changed.step.reasons[0]
    assert not cases_changed.step.comparable
    assert any("1 only in the previous run (q12)" in r for r in cases_changed.step.reasons)
    assert metric_gone.step.reasons == ("the two runs share no metric",)


def test_after_a_break_the_step_is_against_the_latest_run_evaluated_alike(
        tmp_path: Path) -> None:
    """#1 A, #2 B on the qrels, #3 B on other qrels (a break, nothing earlier is alike),
    #4 A on the qrels: a break from #3, and a step against #2 whose difference and p are
    the hand calculation's (mean of A - B per query, the exact sign-flip p)."""
    with History(tmp_path / "h.sqlite") as history:
        history.add(scored(FIX.RANKS_A, "a"))
        history.add(scored(FIX.RANKS_B, "b"))
        other = history.add(scored(FIX.RANKS_B, "b", FIX.QRELS_C))
        back = history.add(scored(FIX.RANKS_A, "a"))
        shown = history.runs()
    assert not other.step.comparable and other.step.is_break and other.step.previous_id == 2
    assert back.step.comparable and back.step.is_break and back.step.skips
    assert back.step.previous_id == 2 and back.step.after == 3
    assert "qrels hash" in back.step.reasons[0]
    (rr,) = [m for m in back.step.metrics if m.metric == "rr"]
    assert rr.diff == pytest.approx((RR_A - RR_B).mean())
    assert rr.p_value == pytest.approx(exact_sign_flip_p(RR_A - RR_B))
    assert shown[3].step == back.step  # as read back
    from evalkit_history.table import history_lines, step_line

    lines = history_lines(shown, ["rr"])
    assert (f"-- break before #4: {back.step.reasons[0]}; steps against #2, the latest run "
            "evaluated alike") in lines
    star = "*" if rr.significant else ""
    assert f"{RR_A.mean():.4f} ({(RR_A - RR_B).mean():+.4f}{star} vs #2)" in lines[-2]
    assert "steps against #2, the latest run evaluated alike: precision@1 " in step_line(back)
    assert "no earlier run was evaluated alike, so no step" in step_line(other)


def test_runs_scored_with_opposite_polarities_make_a_break(tmp_path: Path) -> None:
    # the later run's header says rr was scored lower-is-better (another definition):
    # its step would read the same rise as a fall
    later = scored(FIX.RANKS_A, "a")
    later.header["metrics"]["rr"]["higher_is_better"] = False
    with History(tmp_path / "h.sqlite") as history:
        history.add(scored(FIX.RANKS_B, "b"))
        step = history.add(later).step
    assert not step.comparable and not step.metrics
    assert step.reasons == (
        "the comparison refused them: run 'b' and run 'a' were not evaluated alike: metric "
        "rr defined differently (evalkit-retrieval definition v1, higher is better vs "
        "evalkit-retrieval definition v1, lower is better); the two disagree on which "
        "direction is better: score both runs with one definition (`evalkit rescore RUN -m "
        "rr`). Compare runs scored against the same qrels (target runs: made from the same "
        "golden set) with the same settings",)


def test_runs_reduced_differently_make_a_break(tmp_path: Path) -> None:
    # a flaky system right on its first sample only: its max of 3 is the steady one's
    # mean of 3, a step of 0 that would read as "no change"
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import GoldenSet
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.samples import current_sample

    cases = GoldenSet(GoldenCase(f"q{i}", "q", relevant=frozenset({"d1"}))
                      for i in range(12))

    def run(flaky: bool, reduce: str) -> RunResult:
        target = CallableTarget(lambda c: ["zz"] if flaky and (current_sample() or 0)
                                else ["d1"], name=f"{flaky}-{reduce}")
        return evalkit.evaluate(target, cases, ["recall@1"], epochs=3, reduce=reduce,
                                progress=False)

    with History(tmp_path / "h.sqlite") as history:
        history.add(run(False, "mean"))
        step = history.add(run(True, "max")).step
    assert not step.comparable and not step.metrics
    assert "reduced differently" in step.reasons[0]
    assert "epochs: 3, reduce: mean vs epochs: 3, reduce: max" in step.reasons[0]


def test_an_incomplete_run_is_refused_as_a_baseline_is(tmp_path: Path) -> None:
    path = scored(FIX.RANKS_A, "cut").save(tmp_path / "cut.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # no trailer: the file may have been cut short
    with History(tmp_path / "h.sqlite") as history, pytest.raises(BaselineError) as exc:
        history.add(RunResult.load(path))
    assert "A run of a history must hold every metric on every case" in str(exc.value)
    assert "then add it" in str(exc.value)
    with History(tmp_path / "h.sqlite") as history:
        assert history.runs() == []


def test_runs_are_found_by_number_label_commit_and_name(tmp_path: Path) -> None:
    with History(tmp_path / "h.sqlite") as history:
        history.add(scored(FIX.RANKS_A, "sys"), label="v1", commit="aaaaaaa1111")
        history.add(scored(FIX.RANKS_B, "sys"), label="v2", commit="bbbbbbb2222")
        assert [history.find(r) for r in (
            "1", "#2", "-1", "-2", "latest", "latest~1", "v1", "bbbbbbb", "v2")] == [
            1, 2, 2, 1, 2, 1, 1, 2, 2]
        with pytest.raises(HistoryError, match=r"2 runs match 'sys' \(#1, #2\)"):
            history.find("sys")
        with pytest.raises(HistoryError, match="no run 3"):
            history.find("3")
        with pytest.raises(HistoryError, match="no run has the label"):
            history.find("bbb")  # a commit prefix needs 7 characters
        assert [r.id for r in history.runs(last=1)] == [2]


def test_a_commit_prefix_of_digits_is_found_when_no_run_has_that_number(
        tmp_path: Path) -> None:
    """About 4% of 7-character git prefixes are all digits: ``1111111`` is a run number
    only when a run has it, else the commit prefix; when both match, the number wins and
    a notice names the other run."""
    from evalkit.io.user_warnings import UserNotice

    with History(tmp_path / "h.sqlite") as history:
        history.add(scored(FIX.RANKS_A, "a"), commit="aaaaaaa1111")
        history.add(scored(FIX.RANKS_B, "b"), commit="1111111bbbb")
        assert history.find("1111111") == 2
        assert history.find("1111111bbbb") == 2
        with pytest.raises(HistoryError, match="no run 2222222"):
            history.find("2222222")
        with pytest.raises(HistoryError, match="no run #1111111"):
            history.find("#1111111")  # '#N' is always a number
        history.add(scored(FIX.RANKS_A, "c"), commit="2000000cccc")
        with pytest.warns(UserNotice, match=r"2 names run #2, and also .* #4; run #2 is used"):
            history.add(scored(FIX.RANKS_B, "d"), label="2")  # a label, not the number
            assert history.find("2") == 2


def test_the_database_is_a_path_or_a_sqlite_url(tmp_path: Path) -> None:
    assert db_path("sqlite:///rel/h.sqlite") == Path("rel/h.sqlite")
    assert db_path("sqlite:////abs/h.sqlite") == Path("/abs/h.sqlite")
    assert db_path("h.sqlite") == Path("h.sqlite")
    for bad in ("postgresql://host/db", "sqlite:///:memory:", "sqlite://"):
        with pytest.raises(HistoryError, match="expected a path or a sqlite:/// URL"):
            db_path(bad)
    with History(f"sqlite:///{tmp_path}/sub/h.sqlite") as history:
        assert history.path == tmp_path / "sub" / "h.sqlite"
    con = sqlite3.connect(tmp_path / "sub" / "h.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_newer_schema_and_a_foreign_database_are_refused(tmp_path: Path) -> None:
    History(tmp_path / "h.sqlite").close()
    con = sqlite3.connect(tmp_path / "h.sqlite")
    con.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (SCHEMA_VERSION + 1,))
    con.commit()
    con.close()
    with pytest.raises(HistoryError, match=f"version {SCHEMA_VERSION + 1}, newer than"):
        History(tmp_path / "h.sqlite")
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE mine (x)")
    other.commit()
    other.close()
    with pytest.raises(HistoryError, match=r"holds tables \(mine\) .* not an evalkit history"):
        History(tmp_path / "other.sqlite")


# ------------------------------------------------------------------ the first schema
def test_a_database_of_the_first_schema_is_migrated_with_its_steps(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    shutil.copyfile(DATA / "history_schema1.sqlite", db)
    with History(db) as history:
        runs = history.runs()
        rebuilt = history.load_id(2)
    versions = sqlite3.connect(db).execute(
        "SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert versions == [(1,), (2,)]
    assert [(r.id, r.name, r.label) for r in runs] == [
        (1, "sys-a", "v1"), (2, "sys-b", "v2"), (3, "sys-c", "v3")]
    assert runs[1].commit == FIX.COMMIT_B
    assert runs[0].means["rr"] == pytest.approx(RR_A.mean())
    (rr,) = runs[1].step.metrics
    assert rr.diff == pytest.approx((RR_B - RR_A).mean())
    assert rr.p_value == pytest.approx(exact_sign_flip_p(RR_B - RR_A))
    assert not runs[2].step.comparable and "qrels hash" in runs[2].step.reasons[0]
    assert sorted(rebuilt.scores("rr").values()) == pytest.approx(sorted(RR_B))
    with History(db) as again:  # opening a migrated file changes nothing
        assert again.runs() == runs


# ------------------------------------------------------------------ concurrent writers
WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from evalkit.data.results import RunResult
    from evalkit_history.store import History
    db, go, who, *artifacts = sys.argv[1:]
    runs = [RunResult.load(a) for a in artifacts]
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.01)
    for i, run in enumerate(runs):
        with History(db) as history:
            history.add(run, label=f"{who}-{i}")
    print("done", flush=True)
""")


def test_two_processes_adding_at_once_each_add_whole_runs_in_turn(tmp_path: Path) -> None:
    artifacts = [str(scored(ranks, f"r{i}").save(tmp_path / f"r{i}.jsonl"))
                 for i, ranks in enumerate([FIX.RANKS_A, FIX.RANKS_B] * 2)]
    db, go = tmp_path / "h.sqlite", tmp_path / "go"
    History(db).close()  # both writers find the schema made
    procs = [subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(go), who, *artifacts],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("x", "y")]
    for p in procs:  # both have loaded their runs before either starts adding
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out == "done\n", err
    with History(db) as history:
        runs = history.runs()
        counts = [len(history.load_id(r.id).per_query) for r in runs]
    assert [r.id for r in runs] == list(range(1, 9))
    assert sorted(r.label or "" for r in runs) == sorted(
        f"{w}-{i}" for w in "xy" for i in range(4))
    assert counts == [12] * 8
    # every step is against the run added just before it, whoever added that one
    assert [r.step.previous_id for r in runs] == [None, *range(1, 8)]
    assert all(r.step.comparable for r in runs[1:])
    means = {r.id: r.means["rr"] for r in runs}
    for r in runs[1:]:
        (rr,) = [m for m in r.step.metrics if m.metric == "rr"]
        assert rr.diff == pytest.approx(means[r.id] - means[r.id - 1])


def test_the_added_time_is_recorded_in_utc(tmp_path: Path) -> None:
    before = time.strftime("%Y-%m-%d", time.gmtime())
    with History(tmp_path / "h.sqlite") as history:
        stored = history.add(scored(FIX.RANKS_A, "a"))
    assert stored.added[:10] >= before and stored.added.endswith("+00:00")
    assert json.loads(json.dumps(stored.to_json()))["means"]["rr"] == pytest.approx(
        RR_A.mean())


def _database_of_pages(monkeypatch: pytest.MonkeyPatch, pages: int) -> None:
    """Databases opened from now on hold at most ``pages`` pages: past them, SQLite says
    "database or disk is full" (``SQLITE_FULL``), as on a full disk."""
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        con: sqlite3.Connection = real(*args, **kwargs)
        con.execute(f"PRAGMA max_page_count = {pages}")
        return con

    monkeypatch.setattr("evalkit_history.store.sqlite3.connect", connect)


def test_a_full_disk_when_the_database_is_made_names_it_and_leaves_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _database_of_pages(monkeypatch, 3)
    db = tmp_path / "h.sqlite"
    with pytest.raises(HistoryError) as raised:
        History(db)
    message = str(raised.value)
    assert message.startswith(f"{db}: cannot be written: no space left on the device")
    assert "database or disk is full" in message and "--db" in message
    assert "no transaction is active" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_full_disk_while_a_run_is_added_keeps_none_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "h.sqlite"
    History(db).close()
    with sqlite3.connect(db) as con:
        pages = con.execute("PRAGMA page_count").fetchone()[0]
    _database_of_pages(monkeypatch, pages)  # the empty history fills the disk
    with History(db) as history, pytest.raises(HistoryError) as raised:
        history.add(scored(FIX.RANKS_A, "sys-a"), label="x" * 50_000)  # new pages needed
    message = str(raised.value)
    assert message.startswith(f"{db}: cannot be written: no space left on the device")
    assert "nothing was added" in message and "no transaction is active" not in message
    monkeypatch.undo()
    with History(db) as history:
        assert history.runs() == []
        assert history.add(scored(FIX.RANKS_A, "sys-a")).id == 1
