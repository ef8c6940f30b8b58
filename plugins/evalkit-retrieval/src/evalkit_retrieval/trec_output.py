"""trec_eval's output layout, line for line, for an evaluated run.

:func:`render` is the plugin's ``trec`` run format (``evalkit eval --format trec``), and
:func:`trec_lines` prints what ``trec_eval [-q] [-c] -m ...`` prints for the same run:
``%-22s\\t%s\\t%6.4f`` lines (counts as integers), per query in query-id byte order when
asked (``-q``), then the ``all`` block: ``runid``, ``num_q``, then each measure in
trec_eval's order (:data:`~.trec_names.ORDER`, cut-offs ascending). Its summary-line rules,
reproduced here:

* counts (num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret) are summed, not averaged;
* under ``-c`` (evalkit's ``--missing zero``) ``num_rel`` on the ``all`` line is recounted
  from every qrels line with a label above 0, whatever the relevance level (``-l 2``
  prints more relevant documents there than the queries' own num_rel lines add up to);
* the geometric means (gm_map, gm_bpref) are printed only on the ``all`` line, as the
  exponential of the mean of the per-query logarithms;
* ``relstring`` (the first N relevance labels: ``-`` not in the qrels, ``.`` labelled below
  0, ``>`` above 9) is printed only per query, ``''`` for a query missing from the run;
* means add the per-query values in query order, then divide, as trec_eval does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from evalkit.data.coverage import notes_of
from evalkit.data.metric_info import COUNT_NAMES, canonical_metric
from evalkit.report.run_formats import MeasureSelectionError
from evalkit_retrieval.run_scores import count_names
from evalkit_retrieval.trec_names import HEADER_LINES, order_key, trec_label

if TYPE_CHECKING:
    from evalkit.report.run_formats import ScoredRun


def relstring(retrieved: Sequence[str], judgments: Mapping[str, int], n: int) -> str:
    """trec_eval's relstring of a ranking: one character per document of the top ``n``."""
    chars = []
    for doc in retrieved[:max(n, 0)]:
        label = judgments.get(doc)
        if label is None:
            chars.append("-")
        elif label < 0:
            chars.append(".")
        else:
            chars.append(">" if label > 9 else str(label))
    return "".join(chars)


def render(scored: ScoredRun) -> str:
    """trec_eval's layout of a scored run (``evalkit eval --format trec``): the measures
    to show, trec_eval's counts beside them when the ``-m`` values were evalkit's names or
    a nickname, with the line names, ``relstring`` length and ``runid`` / ``num_q`` lines
    that trec_eval's ``-m`` syntax asked for (the request's ``layout``, from
    :func:`~evalkit_retrieval.trec_names.measure_request`). trec_eval recounts ``num_rel``
    on the ``all`` line only under ``-c``: when it was asked for, or when judged queries
    missing from the run were scored 0 (trec_eval 10.0 refuses those without ``-c``).

    Raises:
        MeasureSelectionError: ``relstring`` asked for without the judgments, or on an
            artifact stored without its rankings.
    """
    result, request = scored.result, scored.request
    layout = request.layout if request.format == "trec" else {}
    relstring_len: int | None = layout.get("relstring")
    if relstring_len is not None and scored.judgments is None:
        raise MeasureSelectionError(
            "relstring prints each query's relevance labels, and this run comes without "
            "its judgments: pass --qrels QRELS (the run artifact keeps its rankings, not "
            "the labels)")
    if relstring_len is not None and not any(r.retrieved for r in result.per_query) \
            and any(getattr(r, "counts", {}).get("num_ret") for r in result.per_query):
        raise MeasureSelectionError(
            "relstring prints the labels of each ranking, and this artifact stores its rows "
            "without their rankings (a baseline promoted with --drop-rankings): score the "
            "TREC run file itself")
    metrics, counts = scored.metrics, scored.counts
    wanted = list(metrics) + [c for c in counts if c not in metrics]
    if layout.get("counts", True):  # evalkit's names: trec_eval's counts, as it prints them
        wanted = [c for c in COUNT_NAMES if c in count_names(result) and c not in wanted] \
            + wanted
    labels = {canonical_metric(k): v for k, v in layout.get("labels", {}).items()}
    complete = scored.zero_missing or bool(result.header.get("missing") == "zero"
                                           and notes_of(result)["missing_count"])
    return "\n".join(trec_lines(
        result, wanted, per_query=scored.per_query, labels=labels,
        relstring_len=relstring_len, judgments=scored.judgments, complete=complete,
        header=layout.get("header", HEADER_LINES)))


def _value(row: Any, name: str) -> float:
    metrics = row.metrics
    return float(metrics[name] if name in metrics else row.counts[name])


def trec_lines(
    result: Any,
    names: Sequence[str],
    *,
    per_query: bool,
    labels: Mapping[str, str] | None = None,
    relstring_len: int | None = None,
    judgments: Mapping[str, Mapping[str, int]] | None = None,
    complete: bool = False,
    header: bool | Sequence[str] = True,
) -> list[str]:
    """The lines trec_eval prints for ``result`` (a :class:`~evalkit.data.results.RunResult`).

    Args:
        names: canonical measure names to print (those without a trec_eval name print
            under their own name, after trec_eval's).
        per_query: also print every query's block (trec_eval ``-q``).
        labels: line names that differ from :func:`~.trec_names.trec_label`'s
            (a parameter list as typed: ``utility_2,-1,0,0``).
        relstring_len: print ``relstring`` with that many characters (per query only).
        judgments: the qrels, for relstring and ``num_rel`` under ``complete``.
        complete: the run was scored as trec_eval ``-c`` (missing judged queries as 0).
        header: the ``runid`` and ``num_q`` lines to print (``True``: both, ``False``:
            neither, or the names of those to print).

    Raises:
        KeyError: a row lacks one of ``names``.
    """
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    reg = default_registry()
    shown = {n: (labels or {}).get(n) or trec_label(n) or n for n in names}
    entries: list[tuple[tuple[int, float], str, str]] = [
        (order_key(label), label, name) for name, label in shown.items()]
    if relstring_len is not None:
        label = (labels or {}).get("relstring") or (
            "relstring" if relstring_len == 10 else f"relstring_{relstring_len}")
        entries.append((order_key("relstring"), label, ""))
    entries.sort(key=lambda e: e[0])
    summary: dict[str, str | None] = {}
    for _, _, name in entries:
        try:
            spec = reg.resolve(name) if name else None
        except RegistryError:
            spec = None
        kind = getattr(spec, "kind", "metric")
        summary[name] = getattr(spec, "summary", None) or ("sum" if kind == "count" else "mean")
    rows = sorted(result.per_query, key=lambda r: str(r.query_id).encode())
    if complete:
        trec_names = {name: label for _, label, name in entries
                      if name and (label != name or trec_label(name) is not None)}
        rows = [_on_dummy_ranking(row, trec_names, judgments,
                                  int(result.header.get("relevance_level") or 1))
                if _num_ret(row) == 0 else row for row in rows]
    lines: list[str] = []
    if per_query:
        for row in rows:
            for _, label, name in entries:
                if not name:
                    judged = (judgments or {}).get(str(row.query_id), {})
                    ranked = row.retrieved
                    if complete and _num_ret(row) == 0 and label != "relstring":
                        ranked = [DUMMY_DOCNO]  # trec_eval clears only "relstring"
                    text = relstring(ranked, judged, relstring_len or 10)
                    lines.append(f"{label:<22}\t{row.query_id}\t'{text}'")
                elif summary[name] == "sum":
                    lines.append(f"{label:<22}\t{row.query_id}\t{int(_value(row, name))}")
                elif summary[name] != "exp_mean":
                    lines.append(f"{label:<22}\t{row.query_id}\t{_value(row, name):6.4f}")
    heads = ("runid", "num_q") if header is True else () if header is False else header
    if "runid" in heads:
        lines.append(f"{'runid':<22}\tall\t{result.name}")
    if "num_q" in heads:
        lines.append(f"{'num_q':<22}\tall\t{len(rows)}")
    for _, label, name in entries:
        if not name:
            continue
        values = _column(rows, name)
        if summary[name] == "sum":
            total = sum(int(v) for v in values)
            if name == "num_rel" and complete and judgments is not None:
                from evalkit_retrieval.columns import count_labels_above

                total = count_labels_above(judgments, 0)
            lines.append(f"{label:<22}\tall\t{total}")
            continue
        mean = _sequential_sum(values) / len(rows) if rows else 0.0
        if summary[name] == "exp_mean":
            mean = math.exp(mean)
        lines.append(f"{label:<22}\tall\t{mean:6.4f}")
    return lines


#: the document of trec_eval's one-document ranking for a query missing under ``-c``
#: (trec_eval.c ``bogus_result``, score 1.0)
DUMMY_DOCNO = "ceci_nest_pas_un_docno"
#: the values trec_eval resets to 0 after scoring that ranking: these exact line names,
#: and every line whose name starts with ``unj`` (``relstring`` is printed as ``''``)
RESET_LINES = frozenset({"num_ret", "utility", "rbp_resid"})


def _num_ret(row: Any) -> int:
    """Documents ranked for ``row``'s query (its ``num_ret`` count, else its ranking's
    length: an artifact stored without rankings keeps the count)."""
    return int(row.counts.get("num_ret", len(row.retrieved)))


def _on_dummy_ranking(row: Any, trec_names: Mapping[str, str],
                      judgments: Mapping[str, Mapping[str, int]] | None, level: int) -> Any:
    """``row`` (a query with no ranked document, missing from the run) as trec_eval
    ``-c`` scores it: each line named in ``trec_names`` (canonical name -> trec_eval's
    line name) on a ranking of the one document :data:`DUMMY_DOCNO`, then the lines in
    :data:`RESET_LINES` and those starting with ``unj`` set to 0 (trec_eval.c, the
    ``bogus_ranking`` of ``-c``). So ``utility_1,-1,-1,0`` adds p2 - p4 to the empty
    ranking's value and ``rbp_resid_p=0.5`` is 1, while ``utility`` and ``rbp_resid``
    stay 0. The query's judgments come from ``judgments``, else (an artifact read without
    ``--qrels``) from its ``num_rel`` count; without either the row is returned as it is.
    """
    from evalkit.data.judged_queries import JudgedQueries
    from evalkit.data.targets import TargetResponse
    from evalkit.execute.scoring import resolve_metrics, score_rankings

    qid = str(row.query_id)
    if judgments is not None and judgments.get(qid):
        judged: Mapping[str, int] = judgments[qid]
    elif "num_rel" in row.counts:  # only R matters: the one document is not judged
        judged = {"\0": 0, **{f"\0{i}": level for i in range(int(row.counts["num_rel"]))}}
    else:
        return row
    reset = {n for n, label in trec_names.items()
             if label in RESET_LINES or label.startswith("unj")}
    rescored = [n for n in trec_names if n not in reset]
    values: dict[str, float] = dict.fromkeys(reset, 0.0)
    if rescored:
        scored = score_rankings([TargetResponse(ranked_ids=[DUMMY_DOCNO])],
                                JudgedQueries([qid], {qid: judged}, level),
                                resolve_metrics(rescored))[0]
        values.update({n: float(scored.metrics[n] if n in scored.metrics
                                else scored.counts[n]) for n in rescored})
    metrics = {k: values.get(k, v) for k, v in row.metrics.items()}
    counts = {k: values.get(k, v) for k, v in row.counts.items()}
    return replace(row, metrics=metrics, counts=counts)


def _column(rows: Sequence[Any], name: str) -> list[float]:
    """Every row's value of ``name`` (a metric, else a count), as floats."""
    try:
        return list(map(float, map(itemgetter(name), [r.metrics for r in rows])))
    except KeyError:
        return [_value(row, name) for row in rows]


def _sequential_sum(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total
