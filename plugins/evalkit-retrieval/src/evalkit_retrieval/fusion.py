"""Run fusion: several rankings of the same queries combined into one, as ranx fuses them.

Each input run is first normalised query by query (``norm``), then the normalised scores of
a document are combined across the runs (``method``). Formulas, for a query whose ranking
in one run holds ``n`` documents with scores ``s`` (best first, position ``i`` from 0):

Normalisations (ranx's ``ranx.normalization``, same names and guards):

* ``min-max``: ``(s - min) / max(max - min, 1e-9)``;
* ``max``: ``s / max(max, 1e-9)``;
* ``sum``: ``(s - min) / max(sum - n * min, 1e-9)``;
* ``zmuv``: ``(s - mean) / max(std, 1e-9)``, ``std`` the population standard deviation
  (ddof 0);
* ``rank``: ``1 - i / n``;
* ``borda``: over the query's candidates (every document any run retrieved for it, ``c``
  of them), ``1 - i / c`` for a document the run retrieved and ``0.5 - (n - 1) / (2 c)``
  for one it did not: after it every run scores every candidate;
* ``none``: the scores as they are.

Methods (Fox and Shaw 1993, "Combination of multiple searches", TREC-2, for the ``comb``
family; Cormack, Clarke and Buettcher 2009, "Reciprocal rank fusion outperforms Condorcet
and individual rank learning methods", SIGIR, for RRF), over the runs that retrieved the
document (a run that did not adds 0 to a sum):

* ``combsum``: the sum of its scores; ``wsum``: the sum of ``weight_r * score_r``;
* ``combmnz``: the sum times the number of runs that retrieved it;
* ``combanz``: the sum divided by that number (the mean);
* ``combmax``, ``combmin``: the largest, the smallest of its scores;
* ``rrf``: the sum of ``1 / (k + rank_r)``, ``rank_r`` its 1-based rank in run ``r``
  (``k`` = 60 by default). RRF uses ranks only: ``norm`` does not apply.

Ranks are trec_eval's: score descending, equal scores by document id descending
(:func:`evalkit_retrieval.ranking.rank_order`); ``rank``, ``borda`` and ``rrf`` depend on
them. ranx orders equal scores by an unstable sort, so on input runs with tied scores those
three may give tied documents other values than ranx does; on runs without ties the scores
agree with ranx's to 1e-9 (``plugins/evalkit-retrieval/tests/test_fusion.py``). The fused
ranking is written in trec_eval's order as well (ties by document id descending).

Queries: ranx refuses runs whose query ids differ; so does :func:`fuse` by default
(``missing="refuse"``). With ``missing="empty"`` a run that lacks a query counts as having
retrieved nothing for it (what ranx does to a run missing a judged query when it evaluates
it), and the query is fused from the runs that have it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.io.setting_names import Setting, SettingError

__all__ = ["FUSION_METHODS", "FUSION_NORMS", "FusedRun", "FusionError", "fuse"]

#: The fusion methods, by their names here (ranx's: ``sum``, ``mnz``, ``max``, ``min``,
#: ``anz``, ``wsum``, ``rrf``).
FUSION_METHODS = ("rrf", "combsum", "combmnz", "combmax", "combmin", "combanz", "wsum")
#: The normalisations, ranx's names (``none``: ranx's ``norm=None``).
FUSION_NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda", "none")
#: RRF's constant k (Cormack et al. 2009; ranx's default).
RRF_K = 60.0

_EPS = 1e-9  # ranx's guard against a zero denominator

Ranking = tuple[list[str], list[float]]
RunInput = str | Path | Mapping[str, Mapping[str, float]]


class FusionError(SettingError):
    """Runs or options that cannot be fused (the message names the run and the fix)."""


@dataclass
class FusedRun:
    """The result of :func:`fuse`.

    Attributes:
        name: the run tag written in the sixth column.
        rankings: ``{query id: [(doc id, fused score), ...]}``, best first (score
            descending, equal scores by document id descending).
        method, norm: what made it.
    """

    name: str
    rankings: dict[str, list[tuple[str, float]]]
    method: str
    norm: str

    def scores(self) -> dict[str, dict[str, float]]:
        """``{query id: {doc id: fused score}}``."""
        return {q: dict(ranked) for q, ranked in self.rankings.items()}

    def to_trec(self) -> str:
        """The TREC run text: ``qid Q0 docno rank score tag``, ranks from 1, each score
        written as Python's shortest ``repr`` that reads back to the same double."""
        lines = [f"{q} Q0 {d} {i} {s!r} {self.name}"
                 for q, ranked in self.rankings.items()
                 for i, (d, s) in enumerate(ranked, start=1)]
        return "\n".join(lines) + "\n" if lines else ""

    def save(self, path: str | Path) -> Path:
        """Write :meth:`to_trec` to ``path`` (a ``.gz`` name is gzip-compressed),
        replaced atomically, missing folders created
        (:func:`evalkit.io.outputs.write_output`).

        Raises:
            evalkit.io.outputs.UnwritableError: ``path`` cannot be written (named, with
                why).
        """
        from evalkit.io.outputs import write_output

        p = Path(path)
        data = self.to_trec().encode("utf-8")
        if p.suffix == ".gz":
            import gzip

            data = gzip.compress(data, mtime=0)
        write_output(p, data)
        return p


def fuse(
    runs: Sequence[RunInput],
    *,
    method: str,
    norm: str | None = None,
    weights: Sequence[float] | None = None,
    rrf_k: float = RRF_K,
    depth: int | None = None,
    missing: Literal["refuse", "empty"] = "refuse",
    name: str | None = None,
) -> FusedRun:
    """Fuse two or more runs into one (formulas: the module docstring).

    Args:
        runs: TREC run files (plain or gzip) or ``{query id: {doc id: score}}`` mappings.
        method: one of :data:`FUSION_METHODS`.
        norm: one of :data:`FUSION_NORMS`; ``None`` is ``min-max`` (ranx's default) for
            the score methods and ``none`` for ``rrf``, which refuses any other.
        weights: one finite weight >= 0 per run, not all 0, for ``wsum`` only (required
            there).
        rrf_k: RRF's ``k`` (> 0); another method refuses a value other than the
            default :data:`RRF_K`.
        depth: keep the best ``depth`` documents of each fused query (all by default).
        missing: ``"refuse"`` (ranx's rule) runs whose query ids differ, or fuse each
            query from the runs that have it (``"empty"``).
        name: the fused run's tag (default: the method's name).

    Returns:
        A :class:`FusedRun`; queries in order of first appearance (the first run's, then
        those only later runs have).

    Raises:
        FusionError: fewer than two runs, an unknown method or norm, weights missing,
            misplaced or of the wrong count, ``rrf_k`` set for another method, a query
            missing from a run (with ``missing="refuse"``), an infinite score under a
            method and norm that read scores (every one but rrf and the rank and borda
            norms).
        TrecFormatError: a run file that cannot be read (file and line named).
    """
    chosen = _check_options(len(runs), method, norm, weights, rrf_k, depth, missing)
    loaded = [_read(run, i) for i, run in enumerate(runs)]
    if method != "rrf" and chosen not in ("rank", "borda"):
        _refuse_infinite(loaded, method, chosen)
    qids = _query_ids(loaded, missing)
    combine = _COMBINE[method]
    rankings: dict[str, list[tuple[str, float]]] = {}
    for qid in qids:
        per_run = [queries.get(qid, ([], [])) for _, queries in loaded]
        if method == "rrf":
            normed = [_rrf_scores(docs, rrf_k) for docs, _ in per_run]
        elif chosen == "borda":
            normed = _borda(per_run)
        else:
            normed = [dict(zip(docs, _NORMS[chosen](scores), strict=True))
                      for docs, scores in per_run]
        fused = combine(normed, weights)
        ranked = sorted(fused.items(), key=lambda kv: kv[0], reverse=True)
        ranked.sort(key=lambda kv: -kv[1])  # stable: equal scores keep the ids descending
        rankings[qid] = ranked if depth is None else ranked[:depth]
    return FusedRun(name or method, rankings, method, chosen)


def _check_options(n_runs: int, method: str, norm: str | None,
                   weights: Sequence[float] | None, rrf_k: float, depth: int | None,
                   missing: str) -> str:
    """The normalisation to apply, once the options are checked."""
    if n_runs < 2:
        raise FusionError(f"fusion needs two runs or more, got {n_runs}: pass more runs")
    if method not in FUSION_METHODS:
        raise FusionError(f"unknown fusion method {method!r}: choose one of "
                          f"{', '.join(FUSION_METHODS)}")
    if norm is not None and norm not in FUSION_NORMS:
        raise FusionError(f"unknown normalisation {norm!r}: choose one of "
                          f"{', '.join(FUSION_NORMS)}")
    if method == "rrf" and norm not in (None, "none"):
        raise FusionError(f"rrf fuses ranks, not scores: the normalisation {norm!r} does "
                          "not apply; leave it out")
    if method == "wsum":
        if weights is None:
            raise FusionError(f"wsum needs one weight per run ({n_runs}): pass weights")
        if len(weights) != n_runs:
            raise FusionError(f"wsum: {len(weights)} weights for {n_runs} runs; pass one "
                              "weight per run, in the runs' order")
        if not all(math.isfinite(w) and w >= 0 for w in weights) or not any(weights):
            raise FusionError(
                f"wsum: weights must be finite numbers >= 0, not all 0, got {list(weights)}: "
                "a negative weight would turn a run's ranking upside down (leave that run "
                "out instead), and a zero weight ignores its run")
    elif weights is not None:
        raise FusionError(f"weights apply to wsum only, not to {method}: leave them out "
                          "or choose wsum")
    if not (math.isfinite(rrf_k) and rrf_k > 0):
        raise FusionError(f"rrf's k must be a positive number, got {rrf_k}")
    if method != "rrf" and rrf_k != RRF_K:
        raise FusionError(f"rrf's k applies to rrf only: with {method} it does not apply; "
                          "leave it out or choose rrf")
    if depth is not None and depth < 1:
        raise FusionError(f"depth must be 1 or more, got {depth}")
    if missing not in ("refuse", "empty"):
        raise FusionError(f"missing must be 'refuse' or 'empty', got {missing!r}")
    if method == "rrf":
        return "none"
    return norm or "min-max"


def _refuse_infinite(loaded: Sequence[tuple[str, dict[str, Ranking]]], method: str,
                     norm: str) -> None:
    """Refuse an infinite score (a run's ``-inf`` log-probability), which ranks but has
    no normalised value: min-max, sum and z-score give NaN, and a sum of ``inf`` and
    ``-inf`` is NaN too."""
    for what, queries in loaded:
        for qid, (docs, scores) in queries.items():
            bad = next((i for i, v in enumerate(scores) if not math.isfinite(v)), None)
            if bad is not None:
                raise FusionError(
                    f"{what}: query {qid!r}, document {docs[bad]!r} has the score "
                    f"{scores[bad]!r}, which ranks (evalkit eval takes it, as trec_eval "
                    f"does) but has no value under {method} with --norm {norm}: give it a "
                    "finite score above (or below) the others of its query, or fuse ranks "
                    "only (--method rrf, or --norm rank or borda)")


def _read(run: RunInput, index: int) -> tuple[str, dict[str, Ranking]]:
    """``(what names the run in messages, its rankings)``."""
    if isinstance(run, str | Path):
        from evalkit_retrieval.trec import load_run_scores

        scored = load_run_scores(run)
        return str(run), scored.queries
    from evalkit_retrieval.ranking import rank_run, score_of

    ranked = rank_run(run, name=f"run {index + 1}")  # ids as text, each once
    given = {(str(q), str(d)): score_of(str(q), str(d), v)
             for q, docs in run.items() for d, v in docs.items()}
    return f"run {index + 1}", {
        q: (list(docs), [given[q, d] for d in docs])
        for q, docs in ranked.rankings.items()}


def _query_ids(loaded: Sequence[tuple[str, dict[str, Ranking]]], missing: str) -> list[str]:
    seen: dict[str, None] = {}
    for _, queries in loaded:
        seen.update(dict.fromkeys(queries))
    if missing == "refuse":
        for where, queries in loaded:
            lacking = [q for q in seen if q not in queries]
            if lacking:
                shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
                raise FusionError(
                    f"{where} has no ranking for {len(lacking)} quer"
                    f"{'y' if len(lacking) == 1 else 'ies'} the other runs have ({shown}); "
                    "ranx refuses runs whose query ids differ. Fuse runs of the same "
                    "queries, or pass ", Setting("missing", "empty"), " to fuse each query "
                    "from the runs that have it")
    return list(seen)


# ----------------------------------------------------------------------- normalisations
def _min_max(s: list[float]) -> list[float]:
    if not s:
        return []
    lo, hi = min(s), max(s)
    den = max(hi - lo, _EPS)
    return [(x - lo) / den for x in s]


def _max(s: list[float]) -> list[float]:
    den = max(max(s, default=0.0), _EPS)
    return [x / den for x in s]


def _sum(s: list[float]) -> list[float]:
    if not s:
        return []
    lo = min(s)
    den = max(math.fsum(s) - lo * len(s), _EPS)
    return [(x - lo) / den for x in s]


def _zmuv(s: list[float]) -> list[float]:
    if not s:
        return []
    mean = math.fsum(s) / len(s)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in s) / len(s))
    den = max(std, _EPS)
    return [(x - mean) / den for x in s]


def _rank(s: list[float]) -> list[float]:
    n = len(s)
    return [1.0 - i / n for i in range(n)]


def _none(s: list[float]) -> list[float]:
    return list(s)


_NORMS: dict[str, Callable[[list[float]], list[float]]] = {
    "min-max": _min_max, "max": _max, "sum": _sum, "zmuv": _zmuv, "rank": _rank,
    "none": _none,
}


def _borda(per_run: Sequence[Ranking]) -> list[dict[str, float]]:
    """Every run's Borda scores over the query's candidates (the union of the runs)."""
    candidates: dict[str, None] = {}
    for docs, _ in per_run:
        candidates.update(dict.fromkeys(docs))
    c = len(candidates)
    out: list[dict[str, float]] = []
    for docs, _ in per_run:
        absent = 0.5 - (len(docs) - 1) / (2 * c)
        scores = dict.fromkeys(candidates, absent)
        scores.update({d: 1.0 - i / c for i, d in enumerate(docs)})
        out.append(scores)
    return out


def _rrf_scores(docs: list[str], k: float) -> dict[str, float]:
    return {d: 1.0 / (k + i) for i, d in enumerate(docs, start=1)}


# ----------------------------------------------------------------------- combinations
Combine = Callable[[Sequence[Mapping[str, float]], Sequence[float] | None], dict[str, float]]


def _gathered(normed: Sequence[Mapping[str, float]]) -> dict[str, list[float]]:
    """Each document's scores in the runs that retrieved it, in the runs' order."""
    out: dict[str, list[float]] = {}
    for scores in normed:
        for d, s in scores.items():
            out.setdefault(d, []).append(s)
    return out


def _comb_sum(normed: Sequence[Mapping[str, float]], _w: Sequence[float] | None
              ) -> dict[str, float]:
    return {d: sum(v) for d, v in _gathered(normed).items()}


def _comb_mnz(normed: Sequence[Mapping[str, float]], _w: Sequence[float] | None
              ) -> dict[str, float]:
    return {d: sum(v) * len(v) for d, v in _gathered(normed).items()}


def _comb_anz(normed: Sequence[Mapping[str, float]], _w: Sequence[float] | None
              ) -> dict[str, float]:
    return {d: sum(v) / len(v) for d, v in _gathered(normed).items()}


def _comb_max(normed: Sequence[Mapping[str, float]], _w: Sequence[float] | None
              ) -> dict[str, float]:
    return {d: max(v) for d, v in _gathered(normed).items()}


def _comb_min(normed: Sequence[Mapping[str, float]], _w: Sequence[float] | None
              ) -> dict[str, float]:
    return {d: min(v) for d, v in _gathered(normed).items()}


def _wsum(normed: Sequence[Mapping[str, float]], weights: Sequence[float] | None
          ) -> dict[str, float]:
    assert weights is not None  # checked by _check_options
    docs = _gathered(normed)
    return {d: sum(w * scores.get(d, 0.0) for w, scores in zip(weights, normed, strict=True))
            for d in docs}


_COMBINE: dict[str, Combine] = {
    "rrf": _comb_sum, "combsum": _comb_sum, "combmnz": _comb_mnz, "combanz": _comb_anz,
    "combmax": _comb_max, "combmin": _comb_min, "wsum": _wsum,
}
