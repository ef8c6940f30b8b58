"""Parity with trec_eval 10.0: every measure we share, per query and averaged.

The expected values are trec_eval's own output files (copied from its test suite into
``data/``, with NIST's notice beside them, and from the Vaswani example data); the commands
that produced each one are in ``data/README.md``. Each file is parsed here, so no value is
copied by hand. trec_eval prints four decimals (``%6.4f``): a value matches when it prints
the same way (or, for a value within 1e-9 of a rounding boundary, when it is within half a
unit of the fourth decimal); counts must be equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalkit import RunResult, evaluate_run
from evalkit.plugins.default import resolve

DATA = Path(__file__).parent / "data"
VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
HALF_UNIT = 0.5e-4 + 1e-12  # trec_eval prints %6.4f

COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
_FIXED = {
    "map": "ap",
    "Rprec": "r_precision",
    "recip_rank": "rr",
    "ndcg": "ndcg",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
}
_CUTS = {"P": "P", "recall": "recall", "ndcg_cut": "ndcg", "map_cut": "ap", "success": "success"}
_CUT_RE = re.compile(r"^(P|recall|ndcg_cut|map_cut|success)_(\d+)$")


def evalkit_name(measure: str) -> str | None:
    """The evalkit spec string for a trec_eval measure we share, else None."""
    if measure in _FIXED:
        return _FIXED[measure]
    m = _CUT_RE.match(measure)
    if m:
        return f"{_CUTS[m[1]]}@{m[2]}"
    return None


@dataclass
class Expected:
    per_query: dict[str, dict[str, str]]  # qid -> trec measure -> printed value
    summary: dict[str, str]  # measure -> printed value (qid "all")

    def shared_measures(self) -> list[str]:
        names = set(self.summary)
        for values in self.per_query.values():
            names.update(values)
        return sorted(m for m in names if evalkit_name(m) is not None)


def read_expected(path: Path) -> Expected:
    per_query: dict[str, dict[str, str]] = {}
    summary: dict[str, str] = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split(None, 2)
        target = summary if qid == "all" else per_query.setdefault(qid, {})
        target[measure] = value.strip()
    return Expected(per_query, summary)


@dataclass
class Report:
    compared: int = 0
    max_diff: float = 0.0


def check(result: RunResult, expected: Expected, *, per_query: bool = True) -> Report:
    """Assert every shared value of ``expected`` against ``result``; return the tally."""
    report = Report()
    rows = {row.query_id: row for row in result.per_query}
    failures: list[str] = []

    def compare(where: str, measure: str, ours: float, printed: str) -> None:
        report.compared += 1
        if measure in COUNTS:
            if int(ours) != int(printed):
                failures.append(f"{where} {measure}: ours {ours}, trec_eval {printed}")
            return
        diff = abs(ours - float(printed))
        report.max_diff = max(report.max_diff, diff)
        on_boundary = abs(diff - 0.5e-4) < 1e-9
        if f"{ours:.4f}" != printed and not (on_boundary and diff <= HALF_UNIT):
            failures.append(f"{where} {measure}: ours {ours:.6f}, trec_eval {printed}")

    if per_query:
        assert set(rows) == set(expected.per_query), "evaluated queries differ"
        for qid, values in expected.per_query.items():
            for measure, printed in values.items():
                name = evalkit_name(measure)
                if name is None:
                    continue
                canonical = resolve(name).name
                row = rows[qid]
                ours = row.counts[canonical] if measure in COUNTS else row.metrics[canonical]
                compare(qid, measure, float(ours), printed)
    for measure, printed in expected.summary.items():
        name = evalkit_name(measure)
        if measure == "num_q":
            assert len(rows) == int(printed)
        elif measure == "runid":
            assert result.name == printed
        elif name is not None:
            canonical = resolve(name).name
            if measure in COUNTS:
                ours = float(sum(row.counts[canonical] for row in result.per_query))
            else:
                ours = result.mean(canonical)
            compare("all", measure, ours, printed)
    assert not failures, "\n".join(failures[:20])
    return report


CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    # expected file: (qrels, run, evaluate_run keyword arguments)
    "out.test.aq": ("qrels.test", "results.test", {}),
    "out.test.aqc": ("qrels.test", "results.trunc", {"missing": "zero"}),
    "out.test.aqcM": ("qrels.test", "results.trunc", {"missing": "zero", "depth": 100}),
    "out.test.aql": ("qrels.rel_level", "results.test", {"relevance_level": 2}),
    "out.test.meas_params": ("qrels.test", "results.test", {}),
}


@pytest.mark.parametrize("expected_file", sorted(CASES))
def test_trec_eval_test_suite_per_query(expected_file: str) -> None:
    qrels, run, options = CASES[expected_file]
    expected = read_expected(DATA / expected_file)
    metrics = [evalkit_name(m) for m in expected.shared_measures()]
    result = evaluate_run(DATA / run, DATA / qrels, [m for m in metrics if m], **options)
    report = check(result, expected)
    assert report.compared >= 40


def test_without_c_the_missing_topic_is_left_out() -> None:
    # trec_eval without -c averages over the topics of the run only: here 301 and 303.
    result = evaluate_run(DATA / "results.trunc", DATA / "qrels.test", ["ap", "P@10"],
                          missing="skip")
    assert result.ids() == ["301", "303"]
    assert result.header["notes"]["missing_skipped"] == 1
    aqc = read_expected(DATA / "out.test.aqc")
    for qid in ("301", "303"):
        row = result.per_query[result.ids().index(qid)]
        assert abs(row.metrics["ap"] - float(aqc.per_query[qid]["map"])) <= HALF_UNIT


def test_comment_lines_and_hash_inside_doc_ids() -> None:
    # MS MARCO v2.1 segment ids contain '#'; 301 run topics, 31 judged (trec_eval without -c)
    expected = read_expected(DATA / "out.comment.test")
    metrics = [evalkit_name(m) for m in expected.shared_measures()]
    result = evaluate_run(DATA / "results.comment.test", DATA / "qrels.comment.test",
                          [m for m in metrics if m], missing="skip")
    check(result, expected, per_query=False)
    assert result.header["notes"]["unjudged_ignored"] == 301 - 31


@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.test.with-comments"])
def test_official_summary(qrels: str) -> None:
    expected = read_expected(DATA / "out.test")
    metrics = [evalkit_name(m) for m in expected.shared_measures()]
    result = evaluate_run(DATA / "results.test", DATA / qrels, [m for m in metrics if m])
    check(result, expected, per_query=False)


@pytest.mark.skipif(not VASWANI.is_dir(), reason="examples/vaswani/data is not present")
def test_vaswani_bm25_against_trec_eval_10() -> None:
    expected = read_expected(VASWANI / "expected" / "trec_eval-10.0.all_trec.q.bm25.txt")
    metrics = [evalkit_name(m) for m in expected.shared_measures()]
    result = evaluate_run(VASWANI / "runs" / "run.vaswani.bm25.txt", VASWANI / "qrels",
                          [m for m in metrics if m])
    report = check(result, expected)
    assert len(result.per_query) == 93
    assert report.compared > 93 * 40
    # the means the shared README quotes
    assert f"{result.mean('ap'):.4f}" == "0.2132"
    assert f"{result.mean('precision@10'):.4f}" == "0.2817"
    assert f"{result.mean('recall@100'):.4f}" == "0.4794"
    assert f"{result.mean('ndcg@10'):.4f}" == "0.3576"
    assert f"{result.mean('rr'):.4f}" == "0.6498"
