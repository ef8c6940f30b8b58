"""Hook implementations of the retrieval plugin (entry point ``retrieval`` in the
``evalkit.plugins`` group)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.import_strings import on_call
from evalkit.core.specs import (
    CommandSpec,
    LoaderSpec,
    MeasureSyntaxSpec,
    MetricFamily,
    MetricSpec,
    RunEvaluatorSpec,
    RunFormatSpec,
)
from evalkit_retrieval.diversity import diversity_records
from evalkit_retrieval.measures import metric_records

if TYPE_CHECKING:
    from evalkit.core.metric_names import MeasureRequest
    from evalkit.data.ranked_ids import RankedRun
    from evalkit.report.run_formats import ScoredRun

RUN_SUFFIXES = (".run", ".txt", ".trec", ".res", ".run.gz", ".txt.gz", ".trec.gz", ".res.gz")
# ".tsv" too: MS MARCO's qrels are TREC's four columns in a .tsv file (a .tsv with BEIR's
# header line goes to the BEIR loader, which looks at the first line first)
QRELS_SUFFIXES = ("qrels", ".qrels", ".txt", ".trec", ".tsv", "qrels.gz", ".qrels.gz",
                  ".txt.gz", ".trec.gz", ".tsv.gz")


def load_run(path: str | Path, *, name: str | None = None) -> RankedRun:
    """Read a TREC run file; see :func:`evalkit_retrieval.trec.load_run` (imported on use,
    so that discovering the plugin does not import numpy)."""
    from evalkit_retrieval import trec

    return trec.load_run(path, name=name)


def load_qrels(path: str | Path) -> dict[str, Mapping[str, int]]:
    """Read TREC qrels, each query's judgments a lazy view of the parsed arrays; see
    :func:`evalkit_retrieval.trec.load_qrels` (``lazy=True``)."""
    from evalkit_retrieval import trec

    return trec.load_qrels(path, lazy=True)


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec | MetricFamily]:
    """Precision, recall, nDCG, RR, AP, success, R-precision and the trec_eval counts;
    the diversity measures alpha-nDCG@k and ERR-IA@k."""
    return [*metric_records(), *diversity_records()]


#: Built once: the topic file reader, imported when first called, and read by name only
#: (no suffix): `evalkit.compare(topics=PATH)` and `evalkit compare --topics` read it.
_TOPICS = LoaderSpec(
    "topics", "queries", on_call("evalkit_retrieval.topics:load_topics"), (),
    "TREC topics (<top> <num> <title>...), qid<TAB>text TSV or BEIR queries.jsonl: "
    "{query id: text} for reports")


def _beir_qrels_header(path: Path) -> bool:
    """Whether the first non-blank line is BEIR's ``query-id corpus-id score`` header (a
    ``.tsv`` qrels file without it is TREC's four columns, as MS MARCO's are)."""
    import gzip

    opener: Any = gzip.open if str(path).lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return bool(line.lstrip().lower().startswith("query-id"))
    return True  # empty: the BEIR loader says so


#: Built once, so that registering the plugin twice is recognised as the same loaders
#: (each imported when first called).
_BEIR = (
    LoaderSpec("beir", "corpus", on_call("evalkit_retrieval.beir:load_corpus"),
               (".jsonl", ".jsonl.gz")),
    LoaderSpec("beir", "queries", on_call("evalkit_retrieval.beir:load_queries"),
               (".jsonl", ".tsv", ".tsv.gz")),
    LoaderSpec("beir", "qrels", on_call("evalkit_retrieval.beir:load_qrels"),
               (".tsv", ".tsv.gz"), accepts=_beir_qrels_header),
)


#: ``irds:DATASET_ID``: qrels and queries read through ir_datasets (LoaderSpec.scheme)
_IRDS = (
    LoaderSpec("irds", "qrels", on_call("evalkit_retrieval.irds:load_qrels"),
               description="irds:DATASET_ID: the qrels of an ir_datasets dataset (extra "
                           "[irds]; data already on this machine, never downloaded)",
               scheme="irds"),
    LoaderSpec("irds", "queries", on_call("evalkit_retrieval.irds:load_topics"),
               description="irds:DATASET_ID: the queries of an ir_datasets dataset (extra "
                           "[irds]; data already on this machine, never downloaded)",
               scheme="irds"),
    LoaderSpec("irds", "goldens", on_call("evalkit_retrieval.irds:load_goldens"),
               description="irds:DATASET_ID: a case per judged query of an ir_datasets "
                           "dataset (its text and judgments), for the eval config",
               scheme="irds"),
)


@hookimpl
def evalkit_register_loaders() -> list[LoaderSpec]:
    """TREC run files (kind ``run``) and TREC qrels (kind ``qrels``), plain or gzip; topic
    files (kind ``queries``, by name only); BEIR's corpus, queries and qrels;
    ``irds:DATASET_ID`` qrels, queries and golden sets."""
    return [
        *_BEIR,
        _TOPICS,
        *_IRDS,
        LoaderSpec(
            name="trec", kind="run", fn=load_run, suffixes=RUN_SUFFIXES,
            description="TREC run file `qid Q0 docno rank score tag` (plain or .gz), "
                        "ranked as trec_eval ranks it",
        ),
        LoaderSpec(
            name="trec", kind="qrels", fn=load_qrels, suffixes=QRELS_SUFFIXES,
            description="TREC qrels `qid 0 docno label` (plain or .gz)",
        ),
    ]


def read_trec_measures(pieces: Sequence[str]) -> MeasureRequest | None:
    """trec_eval's ``-m`` syntax; see :func:`evalkit_retrieval.trec_names.measure_request`
    (imported on use)."""
    from evalkit_retrieval.trec_names import measure_request

    return measure_request(pieces)


def render_trec(scored: ScoredRun) -> str:
    """trec_eval's layout; see :func:`evalkit_retrieval.trec_output.render` (imported on
    use)."""
    from evalkit_retrieval.trec_output import render

    return render(scored)


@hookimpl
def evalkit_register_measure_syntaxes() -> list[MeasureSyntaxSpec]:
    """trec_eval's ``-m`` syntax: ``P.5,10``, ``ndcg_cut.10``, ``official``, ``all_trec``."""
    return [MeasureSyntaxSpec(
        "trec_eval", read_trec_measures,
        "trec_eval's -m syntax: parameter lists (P.5,10, ndcg.1=3,2=9), the nicknames "
        "official, all_trec and set, the runid, num_q and relstring lines")]


@hookimpl
def evalkit_register_run_formats() -> list[RunFormatSpec]:
    """``evalkit eval --format trec``: trec_eval's output, line for line."""
    return [RunFormatSpec(
        "trec", render_trec, "trec_eval's output layout, line for line (trec_eval -q -c)",
        default_measures=("official",))]


#: Metrics used when none is named: the usual trec_eval summary of a ranked run.
DEFAULT_METRICS: tuple[str, ...] = ("ap", "ndcg@10", "precision@10", "recall@100", "rr")

#: Built once: the run evaluator, its functions imported when first called.
_EVALUATOR = RunEvaluatorSpec(
    "trec", on_call("evalkit_retrieval.run_evaluation:evaluate_run"),
    on_call("evalkit_retrieval.run_evaluation:load_qrels_input"),
    "TREC runs, {qid: {doc: score}} and run DataFrames scored against qrels, as trec_eval "
    "scores them", default_metrics=DEFAULT_METRICS)


@hookimpl
def evalkit_register_run_evaluators() -> list[RunEvaluatorSpec]:
    """What :func:`evalkit.evaluate_run`, ``evalkit eval`` and ``compare`` score runs with."""
    return [_EVALUATOR]


@hookimpl
def evalkit_register_commands() -> list[CommandSpec]:
    """``evalkit eval``: runs scored against qrels; ``evalkit fuse``: TREC runs fused into
    one (RRF, CombSUM, CombMNZ, ..., wsum)."""
    return [
        CommandSpec("eval", "Score TREC runs or run artifacts against qrels.",
                    "evalkit_retrieval.eval_cmd:command"),
        CommandSpec("fuse", "Fuse TREC runs into one (RRF, CombSUM, CombMNZ, ...).",
                    "evalkit_retrieval.fuse_cmd:fuse"),
    ]
