"""The array path of TREC runs and qrels (columns, bulk_state, rank_order) against
independent references: Python's own sort for the ranking order, and the general
dictionary-based ranking state for every measure of all_trec."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evalkit_retrieval import bulk_state as bulk_module
from evalkit_retrieval import doc_keys
from evalkit_retrieval.columns import ColumnIds, ColumnJudged
from evalkit_retrieval.ranking import RankedRun, rank_arrays
from evalkit_retrieval.state import build_state
from evalkit_retrieval.trec import TrecFormatError, load_qrels, load_run, parse_qrels, parse_run
from evalkit_retrieval.trec_names import expand

from evalkit import evaluate_run
from evalkit.data.judged_queries import JudgedQueries
from evalkit.data.targets import TargetResponse

ALL_TREC = expand(["all_trec"]).names


def reference_order(lines: list[tuple[str, str, float]]) -> dict[str, list[str]]:
    """trec_eval's order by Python's sort: queries in order of first appearance, score
    descending, equal scores by doc id descending."""
    out: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in lines:
        out.setdefault(q, []).append((d, s))
    ranked = {}
    for q, docs in out.items():
        by_doc = sorted(docs, key=lambda x: x[0], reverse=True)
        ranked[q] = [d for d, _ in sorted(by_doc, key=lambda x: -x[1])]
    return ranked


def random_lines(rng: random.Random, n: int) -> list[tuple[str, str, float]]:
    queries = [f"q{i}" for i in range(rng.randint(1, 6))]
    seen: set[tuple[str, str]] = set()
    lines: list[tuple[str, str, float]] = []
    while len(lines) < n:
        q = rng.choice(queries)
        d = "".join(rng.choice("abcd") for _ in range(rng.randint(1, 4)))
        if (q, d) not in seen:
            seen.add((q, d))
            lines.append((q, d, float(rng.choice([0.5, 1.0, 1.0, 2.0, -3.0, rng.random()]))))
    return lines


@pytest.mark.parametrize("seed", range(40))
def test_rank_order_is_score_then_doc_id_descending(seed: int) -> None:
    rng = random.Random(seed)
    lines = random_lines(rng, rng.randint(1, 60))
    if seed % 3 == 0:  # lines already in rank order, as most files are
        lines = [(q, d, s) for q, docs in reference_order(lines).items()
                 for d, s in sorted(((d, s) for q2, d, s in lines if q2 == q),
                                    key=lambda x: docs.index(x[0]))]
    qids, docs, scores = (list(x) for x in zip(*lines, strict=True))
    expected = reference_order(lines)
    assert rank_arrays(qids, docs, scores) == expected
    as_bytes = rank_arrays(np.array(qids, dtype="S"), np.array(docs, dtype="S"),
                           np.array(scores))
    assert as_bytes == expected
    assert rank_arrays(np.array(qids), np.array(docs), np.array(scores)) == expected


# ------------------------------------------------------------------ files
def write_collection(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    """A run and qrels that exercise the join: ties, queries split across the file,
    unjudged run topics, judged queries absent from the run, labels from -1 to 4."""
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    for q in range(1, 9):
        docs = [f"D{rng.randrange(400):04d}" for _ in range(rng.randint(0, 40))]
        docs = list(dict.fromkeys(docs))
        for i, d in enumerate(docs):
            score = round(rng.choice([10.0, 5.0, rng.uniform(0, 10)]), 2)
            run_lines.append(f"{q} Q0 {d} {i + 1} {score} sys")
        if q != 3:  # query 3 is a run topic without judgments
            judged = list(dict.fromkeys(
                rng.sample(docs, min(len(docs), rng.randint(0, 15)))
                + [f"D{rng.randrange(400):04d}" for _ in range(rng.randint(0, 10))]))
            qrels_lines += [f"{q} 0 {d} {rng.choice([-1, 0, 0, 1, 2, 3, 4])}" for d in judged]
    qrels_lines += ["9 0 D0001 1", "9 0 D0002 0"]  # judged, never retrieved
    rng.shuffle(run_lines)  # queries split across the file, rank column ignored
    half = len(qrels_lines) // 2
    qrels_lines = qrels_lines[half:] + qrels_lines[:half]
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("\n".join(run_lines) + "\n")
    qrels.write_text("\n".join(qrels_lines) + "\n")
    return run, qrels


def general_inputs(run: Path, qrels: Path) -> tuple[RankedRun, dict[str, dict[str, int]]]:
    """The same run and qrels as plain lists and dicts (the general path)."""
    ranked = load_run(run)
    plain = RankedRun(name=ranked.name, rankings={q: list(v) for q, v in ranked.rankings.items()})
    return plain, load_qrels(qrels)


def rows(result: Any) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    return [(r.query_id, r.metrics, r.counts) for r in result.per_query]


@pytest.fixture
def bulk_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each preparation went through the bulk join (True) or declined."""
    calls: list[bool] = []
    real = bulk_module.bulk_state

    def spy(responses: Any, cases: Any) -> Any:
        state = real(responses, cases)
        calls.append(state is not None)
        return state

    monkeypatch.setattr(bulk_module, "bulk_state", spy)
    return calls


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("level", "depth", "missing"), [
    (1, None, "zero"), (2, None, "skip"), (1, 7, "zero"), (3, 25, "skip")])
def test_bulk_join_equals_the_general_state_on_every_measure(
        tmp_path: Path, bulk_calls: list[bool], seed: int, level: int, depth: int | None,
        missing: Any) -> None:
    run, qrels = write_collection(tmp_path, seed)
    bulk = evaluate_run(run, qrels, ALL_TREC, relevance_level=level, depth=depth,
                        missing=missing)
    assert bulk_calls == [True]
    plain_run, plain_qrels = general_inputs(run, qrels)
    general = evaluate_run(plain_run, plain_qrels, ALL_TREC, relevance_level=level,
                           depth=depth, missing=missing)
    assert bulk_calls == [True, False]
    assert rows(bulk) == rows(general)
    assert [list(r.retrieved) for r in bulk.per_query] == [
        list(r.retrieved) for r in general.per_query]


def test_the_state_arrays_are_the_same(tmp_path: Path) -> None:
    run, qrels = write_collection(tmp_path, 11)
    rankings = load_run(run).rankings
    judgments = load_qrels(qrels, lazy=True)
    ids = sorted(judgments)
    responses = [TargetResponse(ranked_ids=rankings.get(q, [])[:12]) for q in ids]
    cases = JudgedQueries(ids, judgments, 2)
    bulk = bulk_module.bulk_state(responses, cases)
    assert bulk is not None
    general = build_state([TargetResponse(ranked_ids=list(r.ranked_ids)) for r in responses],
                          list(cases))
    for name in ("num_ret", "num_rel", "j_case", "j_rank", "j_label", "j_rel", "q_case",
                 "q_label", "q_rel"):
        assert np.array_equal(getattr(bulk, name), getattr(general, name)), name


@pytest.mark.parametrize(("weaken", "bulk"), [
    (lambda h: h % np.uint64(5), True),  # a few ids of a query share their keys
    (lambda h: h * np.uint64(0), False),  # every id of a query shares one key
])
def test_ids_sharing_keys_are_told_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk_calls: list[bool],
        weaken: Any, bulk: bool) -> None:
    run, qrels = write_collection(tmp_path, 3)
    expected = evaluate_run(*general_inputs(run, qrels), ALL_TREC)
    bulk_calls.clear()
    real = doc_keys._hash_into  # every id hash is made here

    def weak(out: Any, ids: Any, scratch: Any) -> None:
        real(out, ids, scratch)
        out[:] = weaken(out)

    monkeypatch.setattr(doc_keys, "_hash_into", weak)
    assert rows(evaluate_run(run, qrels, ALL_TREC)) == rows(expected)
    # ids sharing keys are tried in turn; too many of them and the general path takes over
    assert bulk_calls == [bulk]
    # and a real duplicate is still told apart from a collision
    dup = tmp_path / "dup.txt"
    dup.write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 a 1 1 t\nq1 Q0 a 3 0 t\n")
    with pytest.raises(TrecFormatError, match=r"dup.txt:4: .*'a'.*first on line 1"):
        load_run(dup)
    dup.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 a 1\nq1 0 a 1\n")
    with pytest.raises(TrecFormatError, match=r"dup.txt:4: .*'a'.*first on line 1"):
        load_qrels(dup)
    assert load_run(run).rankings == general_inputs(run, qrels)[0].rankings


def test_a_changed_judgment_is_evaluated_as_changed(
        tmp_path: Path, bulk_calls: list[bool]) -> None:
    run, qrels = write_collection(tmp_path, 5)
    lazy = load_qrels(qrels, lazy=True)
    plain = load_qrels(qrels)
    top = load_run(run).rankings["1"][0]
    view = lazy["1"]
    assert isinstance(view, ColumnJudged) and view.as_loaded
    view[top] = plain["1"][top] = 4
    assert not view.as_loaded
    changed = evaluate_run(run, lazy, ALL_TREC)
    assert bulk_calls == [False]
    assert rows(changed) == rows(evaluate_run(run, plain, ALL_TREC))
    assert rows(changed) != rows(evaluate_run(run, qrels, ALL_TREC))


def test_a_column_ranking_reads_like_a_list(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 c 3 1 t\n")
    view = load_run(path).rankings["q"]
    assert isinstance(view, ColumnIds)
    assert view == ["a", "b", "c"] and view == ["a", "b", "c"] and view == ("a", "b", "c")
    assert view != ["a", "b"] and view != "abc"
    assert view[0] == "a" and view[-1] == "c" and view[1:] == ["b", "c"]
    assert isinstance(view[:2], ColumnIds) and len(view[:2]) == 2 and view[::2] == ["a", "c"]
    assert view[5:] == [] and list(reversed(view)) == ["c", "b", "a"] and "b" in view
    with pytest.raises(IndexError):
        view[3]
    with pytest.raises(TypeError):
        hash(view)
    assert repr(view) == "ColumnIds(['a', 'b', 'c'])"


DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("name", ["results.test", "results.trunc", "results.comment.test"])
def test_a_file_read_from_disk_equals_its_bytes_parsed(name: str) -> None:
    path = DATA / name
    from_disk, from_bytes = load_run(path), parse_run(path.read_bytes(), source=path)
    assert from_disk.rankings == from_bytes.rankings
    assert (from_disk.name, from_disk.meta) == (from_bytes.name, from_bytes.meta)
    assert load_qrels(DATA / "qrels.test") == parse_qrels((DATA / "qrels.test").read_bytes())


def test_the_run_tag_comes_from_the_last_line_however_far_the_file_ends(tmp_path: Path
                                                                         ) -> None:
    path = tmp_path / "run.txt"
    lines = "".join(f"q1 Q0 d{i} {i} {1000 - i} first\n" for i in range(5000))
    path.write_text(lines + "q2 Q0 x 1 1 last\n" + " \n" * 100_000)  # 200 KB of blank lines
    run = load_run(path)
    assert run.meta["parser"] == "bulk" and run.name == "last"
    assert run.rankings["q2"] == ["x"] and len(run.rankings["q1"]) == 5000


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_keys_made_a_chunk_at_a_time_across_query_boundaries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk_calls: list[bool],
        chunk: int) -> None:
    run, qrels = write_collection(tmp_path, 8)
    expected = evaluate_run(*general_inputs(run, qrels), ALL_TREC, depth=9)
    bulk_calls.clear()
    monkeypatch.setattr(doc_keys, "_CHUNK_ROWS", chunk)
    assert rows(evaluate_run(run, qrels, ALL_TREC, depth=9)) == rows(expected)
    assert bulk_calls == [True]
    dup = tmp_path / "dup.txt"
    dup.write_text("".join(f"q{i % 3} Q0 d{i} 1 {i} t\n" for i in range(40)) + "q2 Q0 d5 1 0 t\n")
    with pytest.raises(TrecFormatError, match=r"dup.txt:41: .*'d5'.*first on line 6"):
        load_run(dup)
