"""The SQLite grade cache: set-aside of bad files, 0.2 JSON import, durability, concurrency."""

from __future__ import annotations

import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import CacheError, GradeCache, JudgeCacheWarning, LLMJudge
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse


def case(cid: str, query: str = "q") -> GoldenCase:
    return GoldenCase(id=cid, query=query)


def answer(text: str = "an answer") -> TargetResponse:
    return TargetResponse(text=text)


def asides(directory: Path, label: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if f".{label}-" in p.name
                  and not p.name.endswith(("-wal", "-shm")))


def fill(path: Path, n: int) -> FakeAnthropic:
    fake = FakeAnthropic(lambda req: tool_reply(4))
    judge = LLMJudge("r", model="m", client=fake, cache_path=path)
    for i in range(n):
        judge(answer(f"text {i}"), case(str(i)))
    assert judge.cache is not None
    judge.cache.close()
    return fake


# ---------------------------------------------------------------- opening a cache
def test_missing_file_starts_a_new_cache_and_says_so(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "sub" / "judge.sqlite"
    with caplog.at_level("INFO", logger="evalkit_judge"):
        cache = GradeCache(path)
    assert path.exists() and len(cache) == 0
    assert len(cache.notices) == 1 and "no file; a new cache was started" in cache.notices[0]
    assert "a new cache was started" in caplog.text


@pytest.mark.parametrize(("content", "why"), [
    (b"", "empty"),
    (b"\x00\x01garbage that is no database at all" * 10, "neither SQLite nor JSON"),
    (b"{\"truncated\": {\"score\": 4, \"rea", "not valid JSON"),
    (b"[1, 2, 3]", "not an object of grades"),
    (b"{\"k\": \"v\"}", "holds no 0.2 grades"),
])
def test_bad_file_is_renamed_aside_never_deleted(tmp_path: Path, content: bytes,
                                                 why: str) -> None:
    path = tmp_path / "judge.sqlite"
    path.write_bytes(content)
    with pytest.warns(JudgeCacheWarning, match=why):
        cache = GradeCache(path)
    (aside,) = asides(tmp_path, "corrupt")
    assert aside.read_bytes() == content
    assert why in cache.notices[0] and str(aside) in cache.notices[0]
    assert len(cache) == 0
    cache.put("k", case_id="1", model="m", score=3, reason="ok",
              usage=__import__("evalkit_judge").Usage(), served_model=None, source="api",
              reply=None)
    assert cache.get("k") is not None


def test_truncated_database_is_set_aside_and_a_fresh_one_works(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite"
    fill(path, 200)
    data = path.read_bytes()
    assert data.startswith(b"SQLite format 3\x00") and len(data) > 8192
    path.write_bytes(data[: len(data) // 2])
    with pytest.warns(JudgeCacheWarning, match="renamed to"):
        fake = FakeAnthropic(lambda req: tool_reply(2))
        judge = LLMJudge("r", model="m", client=fake, cache_path=path)
    (aside,) = asides(tmp_path, "corrupt")
    assert aside.read_bytes() == data[: len(data) // 2]
    assert judge(answer("text 0"), case("0")) == 2.0  # requested again, stored anew
    assert fake.call_count == 1


def test_damaged_pages_fail_the_integrity_check(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite"
    fill(path, 300)
    data = bytearray(path.read_bytes())
    for i in range(4096 * 2, len(data) - 100, 4096):  # scribble over every page header
        data[i:i + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    with pytest.warns(JudgeCacheWarning):
        cache = GradeCache(path)
    assert len(asides(tmp_path, "corrupt")) == 1
    assert len(cache) == 0


def test_foreign_sqlite_database_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.warns(JudgeCacheWarning, match="not a judge cache"):
        GradeCache(path)
    (aside,) = asides(tmp_path, "corrupt")
    assert sqlite3.connect(aside).execute("SELECT COUNT(*) FROM people").fetchone() == (0,)


def test_unwritable_directory_is_a_cache_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CacheError, match="judge cache"):
        GradeCache(blocker / "judge.sqlite")


def test_grades_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite"
    fill(path, 5)
    fake = FakeAnthropic(lambda req: tool_reply(1))
    judge = LLMJudge("r", model="m", client=fake, cache_path=path)
    assert [judge(answer(f"text {i}"), case(str(i))) for i in range(5)] == [4.0] * 5
    assert fake.call_count == 0
    assert judge.cache is not None and judge.cache.notices == []


# ---------------------------------------------------------------- the 0.2 JSON cache
def seed_sha(*parts: str) -> str:
    """The 0.2 hashing: SHA-256 over the parts, each followed by a NUL byte."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\x00")
    return h.hexdigest()


def seed_key(case_id: str, output: Any, rubric: str, scale: int, model: str,
             system: str = "") -> str:
    rubric_hash = seed_sha(rubric, str(scale), model, system)
    out = seed_sha(json.dumps(output, sort_keys=True, ensure_ascii=False))
    return seed_sha(case_id, out, rubric_hash)


def test_seed_json_cache_is_imported_and_its_grades_served(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.json"
    grades = {
        seed_key("q1", "Paris", "Be right.", 5, "judge-a"): {"score": 5, "reason": "correct"},
        seed_key("q2", ["d1", "d2"], "Be right.", 5, "judge-a"): {"score": 2, "reason": "weak"},
        seed_key("q3", "Lyon", "Be right.", 5, "judge-a", "sys"): {"score": 1, "reason": "no"},
        seed_key("q4", "Nice", "Be right.", 5, "judge-a"): {"score": 4, "reason": "close"},
        "not-a-key": {"score": 3},
    }
    text = json.dumps(grades, indent=2, sort_keys=True)
    path.write_text(text)
    fake = FakeAnthropic(lambda req: tool_reply(3))
    with pytest.warns(JudgeCacheWarning, match=r"4 grade\(s\) imported \(1 malformed"):
        judge = LLMJudge("Be right.", model="judge-a", client=fake, cache_path=path)
    (aside,) = sorted(tmp_path.glob("judge-cache.json.seed-*.json"))
    assert aside.read_text() == text
    assert path.read_bytes().startswith(b"SQLite format 3\x00")

    first = judge.grade(TargetResponse(text="Paris", latency_ms=3.0), case("q1"))
    assert (first.score, first.reason, first.cached, first.source) == (5, "correct", True,
                                                                       "seed-json")
    assert judge(TargetResponse(ranked_ids=["d1", "d2"]), case("q2")) == 2.0
    assert fake.call_count == 0
    # the 0.2 key covers case id, output, rubric, scale, model and system: others miss
    assert judge(TargetResponse(text="Nice"), case("not-q4")) == 3.0
    assert judge(TargetResponse(text="Lyon"), case("q3")) == 3.0  # 0.2 graded with a system
    assert LLMJudge("Be right.", model="judge-b", client=fake,
                    cache_path=path)(TargetResponse(text="Paris"), case("q1")) == 3.0
    assert LLMJudge("Be right.", model="judge-a", scale=4, client=fake,
                    cache_path=path)(TargetResponse(text="Paris"), case("q1")) == 3.0
    assert fake.call_count == 4
    # an imported grade, once served, is stored under the request's key too
    again = LLMJudge("Be right.", model="judge-a", client=fake, cache_path=path,
                     seed_grades=False)
    assert again(TargetResponse(text="Paris"), case("q1")) == 5.0
    assert again(TargetResponse(ranked_ids=["d1", "d2"]), case("q2")) == 2.0
    assert fake.call_count == 4
    assert judge.cache is not None
    assert judge.cache.counts() == {"grades": 6, "rejected": 0, "seed_grades": 4}


def test_import_seed_json_into_an_existing_cache(tmp_path: Path) -> None:
    seed = tmp_path / "old.json"
    seed.write_text(json.dumps({seed_key("a", "x", "r", 5, "m"): {"score": 4, "reason": "ok"}}))
    cache = GradeCache(tmp_path / "judge.sqlite")
    assert cache.import_seed_json(seed) == 1
    assert cache.import_seed_json(seed) == 0
    assert seed.exists()
    assert cache.counts()["seed_grades"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(CacheError, match="not valid JSON"):
        cache.import_seed_json(bad)
    bad.write_text("[" * 200_000 + "]" * 200_000)  # was a RecursionError traceback
    with pytest.raises(CacheError, match="is refused: nested more than 100 levels deep"):
        cache.import_seed_json(bad)


# ---------------------------------------------------------------- store before use
def test_every_delivered_reply_is_stored_before_the_process_dies(tmp_path: Path) -> None:
    """The 4th request kills the process (SIGKILL) before it returns: the 3 grades
    delivered before it are in the cache, and a resumed run requests only the rest."""
    path = tmp_path / "judge.sqlite"
    script = textwrap.dedent(f"""
        import os, signal
        from evalkit.data.cases import GoldenCase
        from evalkit.data.targets import TargetResponse
        from evalkit_judge import LLMJudge
        from evalkit_judge.testing import FakeAnthropic, tool_reply
        def answer(req):
            if len(fake.calls) == 4:
                os.kill(os.getpid(), signal.SIGKILL)
            return tool_reply(5)
        fake = FakeAnthropic(answer)
        judge = LLMJudge("r", model="m", client=fake, cache_path={str(path)!r})
        for i in range(10):
            judge(TargetResponse(text=f"t{{i}}"), GoldenCase(id=str(i), query="q"))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    fake = FakeAnthropic(lambda req: tool_reply(1))
    judge = LLMJudge("r", model="m", client=fake, cache_path=path)
    scores = [judge(TargetResponse(text=f"t{i}"), case(str(i))) for i in range(10)]
    assert scores == [5.0] * 3 + [1.0] * 7
    assert fake.call_count == 7


# ---------------------------------------------------------------- concurrency
def test_threads_share_one_judge_without_losing_or_duplicating_grades(tmp_path: Path) -> None:
    fake = FakeAnthropic(lambda req: tool_reply(len(req["messages"][0]["content"]) % 5 + 1))
    judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "judge.sqlite")
    errors: list[BaseException] = []
    results: dict[tuple[int, int], float] = {}

    def work(t: int) -> None:
        try:
            for i in range(60):  # 60 distinct answers, each graded by all 8 threads
                results[(t, i)] = judge(answer(f"answer {i}"), case(f"{t}-{i}"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert errors == []
    assert len(results) == 480
    assert fake.call_count == 60  # one request per distinct answer (single flight)
    assert judge.cache is not None and len(judge.cache) == 60
    for i in range(60):
        assert len({results[(t, i)] for t in range(8)}) == 1


_WORKER = """
import sys
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit_judge import LLMJudge
from evalkit_judge.testing import FakeAnthropic, tool_reply
path, worker = sys.argv[1], int(sys.argv[2])
fake = FakeAnthropic(lambda req: tool_reply(3))
judge = LLMJudge("r", model="m", client=fake, cache_path=path)
for i in range(150):
    # 100 answers of its own, 50 shared by every worker
    text = f"w{worker}-{i}" if i < 100 else f"shared-{i}"
    assert judge(TargetResponse(text=text), GoldenCase(id=str(i), query="q")) == 3.0
print(fake.call_count)
"""


def test_processes_write_one_cache_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite"
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(w)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for w in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
    calls = sum(int(out) for out, _ in outs)
    assert 400 + 50 <= calls <= 400 + 4 * 50  # shared answers may race across processes
    cache = GradeCache(path)
    assert cache.counts() == {"grades": 450, "rejected": 0, "seed_grades": 0}
    assert cache.notices == []


_OPENER = """
import sys, warnings
from evalkit_judge import GradeCache
warnings.simplefilter("ignore")
cache = GradeCache(sys.argv[1])
print(len(cache.notices))
"""


def test_processes_opening_a_corrupt_file_set_it_aside_once(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in outs]
    assert sorted(int(o) for o, _ in outs) == [0, 0, 0, 1]
    assert len(asides(tmp_path, "corrupt")) == 1


def test_opening_waits_for_another_processes_lock_file_at_most_busy_timeout(
        tmp_path: Path) -> None:
    path = tmp_path / "grades.sqlite"
    lock = tmp_path / "grades.sqlite.lock"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, sys
        fh = open({str(lock)!r}, "a+b")
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        print("held", flush=True)
        sys.stdin.read()  # until the test closes our stdin
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        # opened in a child under a timeout: a wait without a bound would hang the test
        opener = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            from evalkit_judge import CacheError, GradeCache
            try:
                GradeCache({str(path)!r}, busy_timeout=0.2)
            except CacheError as exc:
                print(exc)
            """)], capture_output=True, text=True, timeout=60)
        assert opener.stdout == (
            f"judge cache {path}: another process has held {lock} for more than "
            "busy_timeout (0.2 s) while it opens the cache; stop it, or use another "
            "cache_path\n"), opener.stderr
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert len(GradeCache(path, busy_timeout=0.2)) == 0  # free again: it opens
