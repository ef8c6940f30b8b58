"""What ``-m`` values ask for, read as the command line reads them.

:func:`read_measure_args` splits them (:func:`evalkit.core.metric_names.split_measure_args`)
and lets the retrieval plugin, when it is installed, expand trec_eval's nicknames and
parameter lists; every other name is left for the registry to resolve.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from evalkit.core.metric_names import MetricNameError, split_measure_args


class MeasureRequest(NamedTuple):
    """What ``-m`` values ask for: measure names, plus what trec_eval's layout needs.

    ``labels`` maps a canonical name to the line name trec_eval prints for it (a
    parameter list as typed), ``relstring`` the length of trec_eval's ``relstring``
    line, ``header`` which of the ``runid`` / ``num_q`` lines are printed, ``counts``
    whether trec_eval's counts are printed beside evalkit's names, and ``asked`` whether
    any ``-m`` was given (``names`` is empty for ``-m runid`` alone).
    """

    names: list[str]
    labels: dict[str, str]
    relstring: int | None
    header: tuple[str, ...]
    counts: bool = True
    asked: bool = False

    @property
    def header_only(self) -> bool:
        """Only trec_eval's ``runid``, ``num_q`` or ``relstring`` lines were asked for."""
        return self.asked and not self.names

    def to_score(self, default: Sequence[str], *, trec: bool) -> list[str]:
        """The measures to score: those asked for, else ``default``; for
        :attr:`header_only` the ``num_ret`` count only (the lines need the rankings).

        Raises:
            MetricNameError: :attr:`header_only` outside trec_eval's layout.
        """
        if not self.header_only:
            return self.names or list(default)
        if not trec:
            raise MetricNameError("-m runid, num_q and relstring are lines of trec_eval's "
                                  "layout: add --format trec, or name a measure (-m ap)")
        return ["num_ret"]


def read_measure_args(values: Sequence[str] | None) -> MeasureRequest:
    """``-m`` values as the command line reads them: split by :func:`split_measure_args`,
    then trec_eval's nicknames and parameter lists (``all_trec``, ``P.5,10``,
    ``ndcg.1=3,2=9``) expanded by the retrieval plugin when it is installed
    (``evalkit_retrieval.trec_names.expand``); other names are kept for the registry.

    Raises:
        MetricNameError: a value names no measure, or a trec_eval parameter list is bad.
    """
    pieces = split_measure_args(values)
    try:
        from evalkit_retrieval.trec_names import expand
    except ImportError:
        return MeasureRequest(pieces, {}, None, ("runid", "num_q"), True, bool(pieces))
    try:
        req = expand(pieces)
    except ValueError as exc:
        raise MetricNameError(str(exc)) from None
    except LookupError as exc:  # a measure the registry does not know (or blocked)
        raise MetricNameError(str(exc.args[0]) if exc.args else str(exc)) from None
    return MeasureRequest(req.names, req.labels, req.relstring, req.header, req.counts,
                          req.asked)


def comparable_names(values: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """``(names, left_out)``: :func:`measure_names` of ``values`` for a command that
    compares or plans (``evalkit compare``, ``evalkit power``), with the counts that a
    set of measures brought in (trec_eval's ``all_trec``, ``official``, ``set`` list
    num_ret, num_rel, ...) left out and returned in ``left_out``; a count named on its
    own stays, for the comparison to refuse by name.

    Raises:
        MetricNameError: as :func:`read_measure_args`.
    """
    from evalkit.data.metric_info import canonical_metric, is_count

    names = read_measure_args(values).names
    from_sets: set[str] = set()
    alone: set[str] = set()
    for piece in split_measure_args(values):
        expanded = read_measure_args([piece]).names
        (from_sets if len(expanded) > 1 else alone).update(expanded)
    left_out = [n for n in names
                if n in from_sets and n not in alone and is_count(canonical_metric(n))]
    return [n for n in names if n not in left_out], left_out


def measure_names(values: Sequence[str] | None) -> list[str]:
    """``-m a -m b,c`` -> ``["a", "b", "c"]`` (order kept, repeats dropped), trec_eval's
    nicknames and parameter lists expanded: the names of :func:`read_measure_args`.

    Raises:
        MetricNameError: as :func:`read_measure_args` (``-m ""``, ``-m ,``, a bad
            trec_eval parameter list).
    """
    return read_measure_args(values).names
