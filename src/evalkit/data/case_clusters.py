"""Case clusters: which cases are not independent, from a golden set or a clusters file.

A golden case names its cluster in ``cluster`` (:attr:`evalkit.data.cases.GoldenCase.cluster`);
TREC runs have no golden set, so their clusters come from a clusters file, one
``query id<TAB>cluster`` per line (:func:`load_clusters`). Both give ``{case id:
cluster}``, which ``evalkit compare --cluster``, the gate and ``evalkit power`` hand to
the paired tests (:mod:`evalkit.stats.clusters`). :func:`clusters_from_runs` reads the
clusters of the golden sets run artifacts record (when the file is still there and
unchanged).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar

from evalkit.io.limits import shown

#: ``{case id: cluster}``.
CaseClusters = dict[str, str]

#: What ``clusters=`` may be: a mapping, or the path of a clusters file or golden set.
ClustersArg = Mapping[str, Hashable] | str | PathLike[str]


class ClustersError(ValueError):
    """A clusters file that cannot be read, or clusters that cannot be found; the message
    names the file and line and says what to fix."""


def load_clusters(path: str | PathLike[str]) -> CaseClusters:
    """``{query id: cluster}`` from a clusters file.

    The file is UTF-8 text, one ``query id<TAB>cluster`` per line; blank lines and lines
    starting with ``#`` are skipped. Ids and cluster names follow the rules of golden ids
    (:func:`evalkit.io.limits.check_id`: printable, no white space around them). A query
    is in one cluster: a second line for it is refused, whatever it says.

    Raises:
        ClustersError: a missing file, a directory, not UTF-8, a line without exactly one
            tab, an empty or malformed id or cluster, a query given twice, or no line at
            all (file and line named).
    """
    from evalkit.data.id_value_files import id_value_lines

    out: CaseClusters = {}
    first: dict[str, int] = {}
    for where, lineno, qid, cluster in id_value_lines(path, "clusters", "cluster",
                                                      ClustersError):
        if qid in first:
            raise ClustersError(f"{where}: query {shown(qid)} is given a cluster again (first on "
                                f"line {first[qid]}); a query belongs to one cluster")
        first[qid] = lineno
        out[qid] = cluster
    if not out:
        raise ClustersError(f"{path}: no cluster; the file should hold 'query id<TAB>cluster' "
                            "lines")
    return out


def goldens_clusters(cases: Iterable[Any], where: str = "the golden set") -> CaseClusters:
    """``{case id: cluster}`` of a golden set's cases.

    Raises:
        ClustersError: some cases name a cluster and others do not (the clusters are
            then unknown for those; the message names up to ten), or none does.
    """
    given = {str(c.id): c.cluster for c in cases}
    lacking = [i for i, c in given.items() if c is None]
    if len(lacking) == len(given):
        raise ClustersError(f"no case of {where} names a cluster; give the cases "
                            "'cluster', or pass a clusters file (query id<TAB>cluster)")
    if lacking:
        listed = ", ".join(shown(x) for x in lacking[:10]) + (
            f" and {len(lacking) - 10} more" if len(lacking) > 10 else "")
        raise ClustersError(f"{len(lacking)} case(s) of {where} name no cluster ({listed}); "
                            "give every case a 'cluster' (a case alone is its own cluster)")
    return {i: str(c) for i, c in given.items()}


def load_case_clusters(path: str | PathLike[str]) -> CaseClusters:
    """The clusters in ``path``: a golden set (``.jsonl``, ``.yaml``/``.yml``, ``.csv``,
    read by :func:`evalkit.data.goldens.load_goldens`, every case naming its cluster) or
    else a clusters file (:func:`load_clusters`).

    Raises:
        ClustersError: as :func:`load_clusters` and :func:`goldens_clusters`, or a golden
            set that cannot be read (its message).
    """
    p = Path(path)
    if p.suffix.lower() not in (".jsonl", ".yaml", ".yml", ".csv"):
        return load_clusters(p)
    from evalkit.data.goldens import load_goldens
    from evalkit.io.user_files import regular_file_problem

    problem = regular_file_problem(p, "clusters")  # a pipe is the clusters data, not golden
    if problem is not None:
        raise ClustersError(f"clusters {problem}")
    try:
        gset = load_goldens(p)
    except (OSError, ValueError, LookupError) as exc:
        raise ClustersError(f"clusters {p}: {exc}") from None
    return goldens_clusters(gset, str(p))


def as_case_clusters(clusters: ClustersArg) -> Mapping[str, Hashable]:
    """``clusters`` as ``{case id: cluster}``: a mapping (ids taken as text; the clusters
    are checked by :func:`evalkit.stats.clusters.cluster_index`) or the path of a
    clusters file or golden set (:func:`load_case_clusters`)."""
    if isinstance(clusters, str | PathLike):
        return load_case_clusters(clusters)
    return {str(k): v for k, v in clusters.items()}


class _GoldensUnknown(ClustersError):
    """A recorded golden set is gone, unreadable or changed, and the run records no
    clusters of its own."""


def clusters_from_runs(headers: Sequence[Mapping[str, Any]],
                       fix: str = "pass the clusters with --clusters FILE "
                                  "(query id<TAB>cluster lines)") -> CaseClusters:
    """The clusters the runs' cases had when the runs were made: a header's
    ``goldens.case_clusters`` (``{case id: cluster}``, recorded when the golden set's cases
    name clusters), else the clusters of the golden set it records (``goldens``: path,
    loader, sha256), each set read once.

    Raises:
        ClustersError: no header records a golden set (TREC runs: pass a clusters file);
            a header without ``case_clusters`` records a set that is gone, cannot be read
            or changed since the run was made (``fix`` says how to proceed); a set names
            no cluster for some case, or one case is in two clusters.
    """
    from evalkit.data.goldens import recorded_golden_sets

    out: CaseClusters = {}

    def merge(case: str, cluster: str, where: str) -> None:
        if out.setdefault(case, cluster) != cluster:
            raise ClustersError(f"case {shown(case)} is in cluster {shown(out[case])} "
                                f"in one golden set and {shown(cluster)} in {where}; {fix}")

    found = False
    unrecorded: list[Mapping[str, Any]] = []
    for header in headers:
        record = header.get("goldens")
        given = record.get("case_clusters") if isinstance(record, Mapping) else None
        if given is None:
            unrecorded.append(header)
            continue
        assert isinstance(record, Mapping)
        where = f"the run's record of {record.get('path') or 'its golden set'}"
        if not isinstance(given, Mapping) or not all(
                isinstance(c, str) for c in given.values()):
            raise ClustersError(f"the run header's goldens.case_clusters is not a mapping "
                                f"of case id to cluster; {fix}")
        missing = [c for c in record.get("case_digests") or {} if c not in given]
        if missing:
            raise ClustersError(f"case {shown(missing[0])} names no cluster in {where} "
                                f"({len(missing)} such cases); {fix}")
        found = True
        for case, cluster in given.items():
            merge(str(case), cluster, where)
    sets = recorded_golden_sets(unrecorded, "clusters", fix, _GoldensUnknown)
    if not (sets or found):
        raise ClustersError(f"these runs were not made from a golden set, so their clusters "
                            f"are unknown; {fix}")
    for path, gset in sets:
        for case, cluster in goldens_clusters(gset, f"the golden set {path}").items():
            merge(case, str(cluster), str(path))
    return out


_Clusters = TypeVar("_Clusters", bound=Mapping[str, Hashable])


def agreed_clusters(given: _Clusters, headers: Sequence[Mapping[str, Any]],
                    option: str = "--clusters") -> _Clusters:
    """``given`` (clusters from a file or a mapping), checked against the ``cluster`` of
    the golden set's cases the runs' ``headers`` record (:func:`clusters_from_runs`):
    when they name clusters, ``given`` must group every case of the set as the golden set
    does (the cluster names may differ, the grouping may not). The runs' recorded
    clusters are used when their headers hold them, so the golden file need not be
    there. Runs made from no golden set, or from one whose cases name no cluster:
    ``given`` is used as it is.

    Raises:
        ClustersError: ``given`` disagrees with the golden set (counted, first cases
            named); a header records no clusters and its golden set is gone, unreadable
            or changed, so ``given`` cannot be checked (the message says how).
    """
    from evalkit.data.case_tags import disagreement, unchecked_fix

    try:
        recorded = clusters_from_runs(headers, unchecked_fix("clusters", option))
    except _GoldensUnknown as exc:  # nothing recorded, the golden set gone or changed
        raise ClustersError(f"{option}: {exc}") from None
    except ClustersError:  # no golden set, or its cases name no cluster: the file is used
        return given
    def groups(labels: Mapping[str, Hashable]) -> dict[str, frozenset[str]]:
        members: dict[Hashable, set[str]] = {}
        for case in recorded:
            if case in labels:
                members.setdefault(labels[case], set()).add(case)
        return {case: frozenset(members[labels[case]]) for case in recorded
                if case in labels}

    theirs, mine = groups(recorded), groups(given)
    # a case disagrees when the file groups it with other cases than the golden set does
    differ = [(case, "none" if case not in given else f"cluster {shown(str(given[case]))}",
               f"cluster {shown(cluster)}")
              for case, cluster in recorded.items() if mine.get(case) != theirs[case]]
    if differ:
        raise ClustersError(disagreement("clusters", option, differ, len(recorded)))
    return given


__all__ = ["CaseClusters", "ClustersArg", "ClustersError", "agreed_clusters",
           "as_case_clusters",
           "clusters_from_runs", "goldens_clusters", "load_case_clusters", "load_clusters"]
