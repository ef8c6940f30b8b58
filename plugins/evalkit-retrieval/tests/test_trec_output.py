"""Every trec_eval 10.0 measure, per query and ``all``: evalkit's ``--format trec`` output
equals, line for line, what the real binary printed on trec_eval's test files and on the
bundled Vaswani run (the expected files were made with trec_eval 10.0 built from
../shared/tools; the commands are in ``data/README.md`` and the Vaswani data's README; the
tests never need the binary)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evalkit_retrieval.measures import MEASURES
from evalkit_retrieval.trec import load_qrels
from evalkit_retrieval.trec_names import expand, trec_label
from evalkit_retrieval.trec_output import trec_lines
from typer.testing import CliRunner

from evalkit import evaluate_run
from evalkit.cli.app import app
from evalkit.core.metric_names import split_measure_args

DATA = Path(__file__).parent / "data"
VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
MEAS_PARAMS = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
               "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
               "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20"]
PARAMS2 = ["ndcg.1=3,2=9", "G.0=1,3=0.5", "ndcg_rel.2=5", "Rndcg.1=2,4=0.5", "rbp.p=0.5",
           "rbp_resid.p=0.95", "set_F.0.5", "utility.1,-2,0.5,0", "11pt_avg.0.2,0.5,0.8",
           "relative_P.3,7", "unj.1,3", "map_cut.1,2", "P.1", "num_nonrel_judged_ret"]
# expected file: (-m values, qrels, run, evaluate_run options, -q)
CASES: dict[str, tuple[list[str], Path, Path, dict[str, Any], bool]] = {
    "out.test": (["official"], DATA / "qrels.test", DATA / "results.test",
                 {"missing": "skip"}, False),
    "out.comment.test": (["official"], DATA / "qrels.comment.test",
                         DATA / "results.comment.test", {"missing": "skip"}, False),
    "out.test.aq": (["all_trec"], DATA / "qrels.test", DATA / "results.test",
                    {"missing": "skip"}, True),
    "out.test.aqc": (["all_trec"], DATA / "qrels.test", DATA / "results.trunc",
                     {"missing": "zero"}, True),
    "out.test.aqcM": (["all_trec"], DATA / "qrels.test", DATA / "results.trunc",
                      {"missing": "zero", "depth": 100}, True),
    "out.test.aql": (["all_trec", "relstring.20"], DATA / "qrels.rel_level",
                     DATA / "results.test", {"missing": "skip", "relevance_level": 2}, True),
    "out.test.aqcl2": (["all_trec"], DATA / "qrels.rel_level", DATA / "results.trunc",
                       {"missing": "zero", "relevance_level": 2}, True),
    "out.test.meas_params": (MEAS_PARAMS, DATA / "qrels.test", DATA / "results.test",
                             {"missing": "skip"}, True),
    "out.test.params2": (PARAMS2, DATA / "qrels.rel_level", DATA / "results.test",
                         {"missing": "skip", "relevance_level": 2}, True),
    "vaswani.all_trec.q": (["all_trec"], VASWANI / "qrels",
                           VASWANI / "runs" / "run.vaswani.bm25.txt", {"missing": "skip"}, True),
    "vaswani.all_trec.q.c.M100": (["all_trec"], VASWANI / "qrels",
                                  VASWANI / "runs" / "run.vaswani.bm25.txt",
                                  {"missing": "zero", "depth": 100}, True),
}


def expected_path(name: str) -> Path:
    if name.startswith("vaswani."):
        flags = name.removeprefix("vaswani.")
        return VASWANI / "expected" / f"trec_eval-10.0.{flags}.bm25.txt"
    return DATA / name


def ours(name: str) -> list[str]:
    values, qrels, run, options, per_query = CASES[name]
    request = expand(split_measure_args(values))
    result = evaluate_run(run, qrels, request.names, **options)
    return trec_lines(result, request.names, per_query=per_query, labels=request.labels,
                      relstring_len=request.relstring, judgments=load_qrels(qrels),
                      complete=options["missing"] == "zero", header=request.header)


@pytest.mark.parametrize("name", sorted(CASES))
def test_trec_format_equals_trec_eval_line_for_line(name: str) -> None:
    expected = expected_path(name).read_text().splitlines()
    lines = ours(name)
    assert len(lines) == len(expected)
    for i, (mine, theirs) in enumerate(zip(lines, expected, strict=True), start=1):
        assert mine == theirs, f"line {i}"


def test_every_all_trec_measure_is_compared_per_query_and_all() -> None:
    printed: set[str] = set()
    for name in CASES:
        for line in expected_path(name).read_text().splitlines():
            printed.add(line.split("\t")[0].strip())
    names = expand(["all_trec"]).names
    labels = {trec_label(n) for n in names}
    assert len(names) == 97 and None not in labels
    assert labels <= printed
    bases = {m.base for m in MEASURES} - {"judged", "err", "f1", "dcg", "hits"}  # not trec_eval's
    covered = {n.split("@")[0].split("(")[0] for n in names}
    assert bases == covered
    counted = sum(len(expected_path(n).read_text().splitlines()) for n in CASES)
    assert counted > 20000


@pytest.mark.parametrize("name", ["out.test.aqcM", "out.test.aql", "out.test.meas_params"])
def test_the_cli_prints_the_same(name: str) -> None:
    values, qrels, run, options, per_query = CASES[name]
    args = [str(run), "--qrels", str(qrels), "--format", "trec"]
    for v in values:
        args += ["-m", v]
    if per_query:
        args.append("-q")
    if options["missing"] == "zero":
        args.append("-c")
    else:
        args += ["--missing", options["missing"]]
    if "depth" in options:
        args += ["-M", str(options["depth"])]
    if "relevance_level" in options:
        args += ["-l", str(options["relevance_level"])]
    result = CliRunner().invoke(app, ["eval", *args])
    assert result.exit_code == 0, result.output
    stdout = result.stdout
    assert stdout == expected_path(name).read_text()
