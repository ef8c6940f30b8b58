"""``irds:DATASET_ID`` qrels and topics (evalkit_retrieval.irds): a dataset made from the
Vaswani example's files with ir_datasets' own API (``ir_datasets.create_dataset``,
registered under an id) reads through ``irds:`` exactly as the files read directly, in
``load_qrels``, ``evalkit eval``, ``compare`` and ``power``; data that is not on the
machine is refused in one line naming the file to place, and no download starts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_retrieval import irds
from evalkit_retrieval.topics import load_topics
from evalkit_retrieval.trec import load_qrels
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.execute.run_evaluator import load_qrels_input

VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
QRELS, TOPICS = VASWANI / "qrels", VASWANI / "query-text.trec"
RUN = VASWANI / "runs" / "run.vaswani.bm25.txt"
FUSION = Path(__file__).parent / "data" / "fusion"
ID = "evalkit-test/vaswani-local"


@pytest.fixture(scope="module")
def ir_datasets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """ir_datasets with its home in a temporary folder (set before its first import) and
    the Vaswani example's qrels and topics registered as ``ID``; any download fails the
    test."""
    home = tmp_path_factory.mktemp("irds_home")
    saved = os.environ.get("IR_DATASETS_HOME")
    os.environ["IR_DATASETS_HOME"] = str(home)
    module = pytest.importorskip("ir_datasets")
    folder = tmp_path_factory.mktemp("irds_files")
    queries_tsv = folder / "queries.tsv"
    queries_tsv.write_text("".join(f"{q}\t{t}\n" for q, t in load_topics(TOPICS).items()),
                           encoding="utf-8")
    if ID not in module.registry:
        module.registry.register(ID, module.create_dataset(queries_tsv=str(queries_tsv),
                                                           qrels_trec=str(QRELS)))
    download = module.util.download
    originals = (download.RequestsDownload.stream, download.RequestsDownload.__iter__)

    def no_network(*_: object) -> None:
        raise AssertionError("ir_datasets was let start a download")

    download.RequestsDownload.stream = no_network
    download.RequestsDownload.__iter__ = no_network
    try:
        yield module
    finally:
        download.RequestsDownload.stream, download.RequestsDownload.__iter__ = originals
        if saved is None:
            os.environ.pop("IR_DATASETS_HOME", None)
        else:
            os.environ["IR_DATASETS_HOME"] = saved


def test_qrels_and_topics_through_irds_equal_the_files_own(ir_datasets: Any) -> None:
    assert irds.load_qrels(f"irds:{ID}") == load_qrels(QRELS)
    assert load_qrels(f"irds:{ID}") == load_qrels(QRELS)
    assert load_topics(f"irds:{ID}") == load_topics(TOPICS)
    loaded = load_qrels_input(f"irds:{ID}")  # the registered loader, by its scheme
    assert {q: dict(j) for q, j in loaded.judgments.items()} == load_qrels(QRELS)
    assert loaded.path == f"irds:{ID}"
    assert loaded.sha256 == load_qrels_input(load_qrels(QRELS)).sha256  # the judgments'


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _without_paths(text: str) -> str:
    """The output with the qrels and topics' names taken out."""
    return text.replace(f"irds:{ID}", "QRELS").replace(str(QRELS), "QRELS")


@pytest.mark.parametrize("command", [
    ["eval", str(RUN), "-m", "ndcg_cut.10,map", "--per-query"],
    ["compare", str(FUSION / "bm25.run"), str(FUSION / "tfidf.run"), "-m", "ndcg_cut.10"],
    ["power", str(FUSION / "bm25.run"), str(FUSION / "tfidf.run"), "-m", "ndcg_cut.10"],
], ids=["eval", "compare", "power"])
def test_the_commands_read_irds_qrels_as_the_file(ir_datasets: Any, command: list[str]
                                                  ) -> None:
    code, by_id, err = _cli(*command, "--qrels", f"irds:{ID}")
    assert code == 0, err
    code, by_file, err = _cli(*command, "--qrels", str(QRELS))
    assert code == 0, err
    assert _without_paths(by_id) == _without_paths(by_file)


def test_compare_reads_irds_topics(ir_datasets: Any, tmp_path: Path) -> None:
    runs = [str(FUSION / "bm25.run"), str(FUSION / "tfidf.run")]
    outs: list[str] = []
    for topics in (f"irds:{ID}", str(TOPICS)):
        out = tmp_path / f"{len(outs)}.json"
        code, _, err = _cli("compare", *runs, "--qrels", str(QRELS), "-m", "ndcg_cut.10",
                            "--topics", topics, "--report", f"json:{out}")
        assert code == 0, err
        outs.append(out.read_text(encoding="utf-8"))
    assert outs[0] == outs[1]
    assert "METHODS OF APPROXIMATING THE FREQUENCY PHASE" in outs[0]  # query 16's text


def test_an_artifact_scored_on_irds_qrels_is_checked_against_them(ir_datasets: Any,
                                                                  tmp_path: Path) -> None:
    saved = tmp_path / "bm25.jsonl"
    assert _cli("eval", str(RUN), "--qrels", f"irds:{ID}", "--save", str(saved))[0] == 0
    assert _cli("eval", str(saved), "--qrels", f"irds:{ID}")[0] == 0
    code, _, err = _cli("eval", str(saved), "--qrels", str(QRELS))
    assert code != 0 and "other qrels" in err  # the file's bytes, not the judgments, hashed


def test_data_not_on_the_machine_is_one_line_naming_the_file_to_place(
        ir_datasets: Any, tmp_path: Path) -> None:
    download = ir_datasets.util.download
    cached = tmp_path / "remote" / "qrels.txt"
    remote = download.Download([download.RequestsDownload("https://example.invalid/q.txt")],
                               cache_path=str(cached))
    dataset = ir_datasets.datasets.base.Dataset(
        ir_datasets.formats.TrecQrels(remote, {}))
    if "evalkit-test/remote" not in ir_datasets.registry:
        ir_datasets.registry.register("evalkit-test/remote", dataset)
    with pytest.raises(irds.IrdsError) as caught:
        irds.load_qrels("irds:evalkit-test/remote")
    message = str(caught.value)
    assert "\n" not in message
    assert f"save https://example.invalid/q.txt as {cached}" in message
    assert not cached.exists() and not list(cached.parent.glob("*"))  # nothing written
    code, _, err = _cli("eval", str(RUN), "--qrels", "irds:evalkit-test/remote")
    assert code != 0 and err.strip() == f"error: {message}"
    # once placed there, it is read
    cached.parent.mkdir(parents=True)
    cached.write_text("1 0 a 1\n", encoding="utf-8")
    assert irds.load_qrels("irds:evalkit-test/remote") == {"1": {"a": 1}}


def test_a_catalogue_dataset_without_its_archive_says_where_to_put_it(tmp_path: Path
                                                                      ) -> None:
    """The command itself, with ir_datasets' own ``vaswani`` (which wants the original
    archive): one line on standard error, no traceback, nothing downloaded."""
    pytest.importorskip("ir_datasets")
    home = tmp_path / "home"
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", "from evalkit.cli import main; main()", "eval", str(RUN),
         "--qrels", "irds:vaswani"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"save http://ir.dcs.gla.ac.uk/resources/test_collections/npl/npl.tar.gz as " \
           f"{home / 'vaswani' / 'npl.tar.gz'}" in done.stderr
    assert not (home / "vaswani" / "npl.tar.gz").exists()


@pytest.mark.parametrize(("source", "says"), [
    ("irds:", "expected irds:DATASET_ID"),
    ("irds:no-such-dataset/x", "knows no dataset 'no-such-dataset/x'"),
])
def test_bad_ids_are_named(ir_datasets: Any, source: str, says: str) -> None:
    with pytest.raises(irds.IrdsError, match=says):
        irds.load_qrels(source)
    with pytest.raises(irds.IrdsError, match=says):
        load_topics(source)


def test_without_ir_datasets_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(irds.IrdsError, match=r"pip install 'evalkit-retrieval\[irds\]'"):
        irds.load_qrels("irds:vaswani")


TARGET = '''\
from pathlib import Path

from evalkit.data.targets import TargetResponse


class RunTarget:
    """The ranking of a TREC run file, as a target."""

    name = "bm25"

    def __init__(self, path):
        ranked = {}
        for line in Path(path).read_text().splitlines():
            q, _, d, _, s, _ = line.split()
            ranked.setdefault(q, []).append((float(s), d))
        self.ranked = {q: [d for _, d in sorted(v, reverse=True)] for q, v in ranked.items()}

    def invoke(self, case):
        return TargetResponse(ranked_ids=self.ranked.get(case.id, []))
'''


def test_the_eval_config_takes_irds_goldens(ir_datasets: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``goldens: irds:ID``: a case per judged query, with its text; the run header
    records the id as given (not a path under the config's folder)."""
    (tmp_path / "runtarget.py").write_text(TARGET, encoding="utf-8")
    (tmp_path / "evalkit.yaml").write_text(
        f"goldens: irds:{ID}\ntarget:\n  factory: runtarget:RunTarget\n"
        f"  kwargs: {{path: {RUN}}}\nmetrics: [ndcg@10, ap]\noutput: out.jsonl\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli("run")
    assert code == 0, err
    from evalkit.data.results import RunResult

    target = RunResult.load(tmp_path / "out.jsonl")
    assert target.header["goldens"]["path"] == f"irds:{ID}"
    assert len(target.per_query) == len(load_qrels(QRELS))
    scored = load_qrels_input(QRELS)
    from evalkit.execute.run_evaluator import evaluate_run

    by_file = evaluate_run(RUN, scored, ["ndcg@10", "ap"])
    ours = {r.query_id: r.metrics for r in target.per_query}
    assert all(ours[r.query_id] == pytest.approx(r.metrics) for r in by_file.per_query)
    assert irds.load_goldens(f"irds:{ID}").get("16").query == load_topics(TOPICS)["16"]


def test_a_collections_file_takes_irds_qrels(ir_datasets: Any, tmp_path: Path) -> None:
    runs = f"baseline: {FUSION / 'bm25.run'}\n    candidate: {FUSION / 'tfidf.run'}"
    # collection b: the same systems' runs without their first query's lines (one
    # collection listed twice is refused as the same evidence)
    cut = {}
    for name in ("bm25.run", "tfidf.run"):
        lines = (FUSION / name).read_text(encoding="utf-8").splitlines(keepends=True)
        first = lines[0].split()[0]
        cut[name] = tmp_path / name
        cut[name].write_text("".join(x for x in lines if x.split()[0] != first),
                             encoding="utf-8")
    other = f"baseline: {cut['bm25.run']}\n    candidate: {cut['tfidf.run']}"
    outs: list[str] = []
    for qrels in (f"irds:{ID}", str(QRELS)):
        suite = tmp_path / f"suite{len(outs)}.yaml"
        suite.write_text(f"collections:\n  - name: a\n    {runs}\n    qrels: {qrels}\n"
                         f"  - name: b\n    {other}\n    qrels: {qrels}\n", encoding="utf-8")
        code, out, err = _cli("compare", "--collections", str(suite), "-m", "ndcg_cut.10")
        assert code == 0, err
        outs.append(_without_paths(out).replace(str(suite), "SUITE"))
    assert outs[0] == outs[1]


def test_ir_datasets_is_imported_only_for_an_irds_id() -> None:
    code = ("import sys; from evalkit.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('ir_datasets' in sys.modules)")
    done = subprocess.run(
        [sys.executable, "-c", code, "eval", str(RUN), "--qrels", str(QRELS), "-m", "ap"],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
