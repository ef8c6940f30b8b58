"""Subtopic qrels that do not come from a file keep their subtopics
(``evalkit.data.judgments``, ``evalkit_retrieval.irds``, ``evalkit_retrieval.frames``):
``evaluate_run`` given the qrels as a Python mapping (each query a ``SubtopicJudgments``,
or ``{subtopic: {doc: label}}``), a DataFrame with an ``iteration`` column or an
``irds:`` id (the ``iteration`` column) scores alpha-nDCG@k and
ERR-IA@k as ndeval does on the file: the per-query values ir_measures 0.4.3 computed
through pyndeval, stored in data/diversity with the script that made them (the same
reference as test_diversity.py). The mapping in memory is parsed here by hand from the
qrels text, not by evalkit."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_retrieval import irds
from evalkit_retrieval.subtopics import SubtopicJudgments
from evalkit_retrieval.trec import load_qrels

from evalkit.data.judgments import loaded_from_mapping
from evalkit.execute.run_evaluator import evaluate_run, load_qrels_input

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "diversity"
REPO = HERE.parents[2]
REFERENCE = json.loads((DATA / "ir_measures_diversity.json").read_text(encoding="utf-8"))
ID = "evalkit-test/vaswani-subtopics"


def by_hand(path: Path) -> dict[str, dict[str, dict[str, int]]]:
    """``{qid: {subtopic: {doc: label}}}`` of a ``qid subtopic docno label`` file."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            qid, sub, doc, label = line.split()
            out.setdefault(qid, {}).setdefault(sub, {})[doc] = int(label)
    return out


def assert_reference(run: str, qrels: Any) -> None:
    """Every query and measure ir_measures (pyndeval) scored for ``run``, to 1e-9."""
    wanted = REFERENCE["values"][run]
    names = list(wanted)
    result = evaluate_run(REPO / REFERENCE["runs"][run], qrels, names)
    rows = {row.query_id: row.metrics for row in result.per_query}
    canonical = list(result.per_query[0].metrics)
    compared = 0
    for name, ours in zip(names, canonical, strict=True):
        for qid, value in wanted[name].items():
            assert rows[qid][ours] == pytest.approx(value, abs=1e-9), (run, name, qid)
            compared += 1
    assert compared >= len(names) * 6
    assert result.header["notes"]["subtopic_qrels"] is True


@pytest.mark.parametrize("run", sorted(REFERENCE["values"]))
def test_a_mapping_of_subtopic_judgments_scores_as_ndeval(run: str) -> None:
    path = DATA / REFERENCE["qrels"][run]
    assert_reference(run, load_qrels(path, subtopics=True))  # {qid: SubtopicJudgments}
    assert_reference(run, by_hand(path))  # {qid: {subtopic: {doc: label}}}


@pytest.mark.parametrize("run", sorted(REFERENCE["values"]))
def test_a_frame_with_an_iteration_column_scores_as_ndeval(run: str) -> None:
    pd = pytest.importorskip("pandas")
    nested = by_hand(DATA / REFERENCE["qrels"][run])
    frame = pd.DataFrame(
        [(q, s, d, label) for q, subs in nested.items() for s, judged in subs.items()
         for d, label in judged.items()], columns=["qid", "iteration", "docno", "label"])
    assert_reference(run, frame)


def test_other_measures_see_a_documents_largest_label_from_a_mapping() -> None:
    qrels = {"q": {"1": {"a": 1, "b": 0}, "2": {"b": 2}}}
    loaded = loaded_from_mapping(qrels)
    judged = loaded.judgments["q"]
    assert isinstance(judged, SubtopicJudgments)
    assert dict(judged) == {"a": 1, "b": 2}
    assert judged.subtopics == {"1": {"a": 1, "b": 0}, "2": {"b": 2}}
    result = evaluate_run({"q": {"b": 2.0, "a": 1.0}}, qrels, ["ndcg@2"])
    plain = evaluate_run({"q": {"b": 2.0, "a": 1.0}}, {"q": {"a": 1, "b": 2}}, ["ndcg@2"])
    assert result.per_query[0].metrics == plain.per_query[0].metrics


def test_the_hash_of_a_mapping_tells_its_subtopics_apart() -> None:
    plain = {"q": {"a": 1, "b": 2}}
    # ordinary qrels hash as before: canonical JSON of {qid: {doc: label}}
    canon = json.dumps(plain, sort_keys=True).encode()
    assert loaded_from_mapping(plain).sha256 == hashlib.sha256(canon).hexdigest()
    one = loaded_from_mapping({"q": {"1": {"a": 1}, "2": {"b": 2}}}).sha256
    other = loaded_from_mapping({"q": {"1": {"a": 1, "b": 2}}}).sha256
    assert len({one, other, loaded_from_mapping(plain).sha256}) == 3


@pytest.fixture(scope="module")
def ir_datasets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """ir_datasets with its home in a temporary folder and the Vaswani subtopic qrels
    registered as ``ID`` (their second column is ir_datasets' ``iteration``)."""
    home = tmp_path_factory.mktemp("irds_home")
    saved = os.environ.get("IR_DATASETS_HOME")
    os.environ["IR_DATASETS_HOME"] = str(home)
    module = pytest.importorskip("ir_datasets")
    if ID not in module.registry:
        module.registry.register(ID, module.create_dataset(
            qrels_trec=str(DATA / "vaswani.subtopics.qrels")))
    try:
        yield module
    finally:
        if saved is None:
            os.environ.pop("IR_DATASETS_HOME", None)
        else:
            os.environ["IR_DATASETS_HOME"] = saved


@pytest.mark.parametrize("run", [r for r in sorted(REFERENCE["values"])
                                 if REFERENCE["qrels"][r] == "vaswani.subtopics.qrels"])
def test_irds_qrels_are_read_with_their_subtopics(ir_datasets: Any, run: str) -> None:
    assert_reference(run, f"irds:{ID}")


def test_irds_subtopics_equal_the_files_and_only_when_asked(ir_datasets: Any) -> None:
    path = DATA / "vaswani.subtopics.qrels"
    read = irds.load_qrels(f"irds:{ID}", subtopics=True)
    assert {q: j.subtopics for q, j in read.items()} == by_hand(path)  # type: ignore[attr-defined]
    assert load_qrels(f"irds:{ID}", subtopics=True) == load_qrels(path, subtopics=True)
    loaded = load_qrels_input(f"irds:{ID}", ["alpha_ndcg@10"])
    assert loaded.sha256 == loaded_from_mapping(by_hand(path)).sha256
    # without a diversity measure the subtopic column is ignored, as trec_eval ignores
    # it, and a document judged for two subtopics of a query is refused, as in the file
    for source in (f"irds:{ID}", path):
        with pytest.raises(ValueError, match="5472"):
            load_qrels_input(source, ["ndcg@10"])
