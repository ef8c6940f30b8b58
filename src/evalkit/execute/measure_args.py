"""What ``-m`` values ask for, read as the command line reads them.

:func:`read_measure_args` splits them (:func:`evalkit.core.metric_names.split_measure_args`)
and lets the measure syntaxes that plugins register (``evalkit_register_measure_syntaxes``:
trec_eval's ``P.5,10`` and ``official``, from ``evalkit-retrieval``) expand what is
written in theirs; every other name is left for the registry to resolve.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.core.metric_names import MeasureRequest, MetricNameError, split_measure_args


def read_measure_args(values: Sequence[str] | None) -> MeasureRequest:
    """``-m`` values as the command line reads them: split by :func:`split_measure_args`,
    then expanded by the registered measure syntax that claims them (its
    :class:`~evalkit.core.specs.MeasureSyntaxSpec` ``expand``); with none, the names as
    typed, for the registry.

    Raises:
        MetricNameError: a value names no measure, a syntax refuses a piece (its message),
            names a measure the registry does not know, or two syntaxes claim the values.
    """
    from evalkit.plugins.default import default_registry

    pieces = split_measure_args(values)
    if not pieces:
        return MeasureRequest([])
    claimed: list[tuple[str, str, MeasureRequest]] = []
    for _, name, entry in default_registry().entries("measure_syntax"):
        expand = getattr(entry.spec, "expand", None)
        if not callable(expand):
            continue
        try:
            req = expand(pieces)
        except ValueError as exc:
            raise MetricNameError(str(exc)) from None
        except LookupError as exc:  # a measure the registry does not know (or blocked)
            raise MetricNameError(str(exc.args[0]) if exc.args else str(exc)) from None
        if req is None:
            continue
        if not isinstance(req, MeasureRequest):
            raise TypeError(f"measure syntax {name!r} of {entry.provider} returned "
                            f"{type(req).__name__}, not a MeasureRequest or None")
        claimed.append((name, str(entry.provider), req))
    if len(claimed) > 1:
        both = " and ".join(f"{n!r} ({provider})" for n, provider, _ in claimed)
        raise MetricNameError(f"-m {', '.join(pieces)}: the measure syntaxes {both} both "
                              "read these values; name the measures in one syntax per "
                              "command, or disable one of the plugins")
    return claimed[0][2] if claimed else MeasureRequest(pieces, bool(pieces))


def case_notes(names: Sequence[str]) -> list[str]:
    """A note for each requested name matched only ignoring case where spellings that
    differ only in case are different measures (``Rbp`` is read as ``rbp``, trec_eval's
    p=0.9, while ``RBP`` is ir_measures' p=0.8): what ``evalkit eval`` and ``evalkit
    compare`` print, so that a row that merged with another, or a measure other than
    the one meant, is said."""
    from evalkit.plugins.default import default_registry

    registry = default_registry()
    out: list[str] = []
    for name in dict.fromkeys(names):
        twins = {t: registry.resolve(t).name for t in registry.case_twins(name)}
        if len(set(twins.values())) < 2:  # mAp: map and MAP are one measure
            continue
        meant = registry.resolve(name).name
        others = ", ".join(f"{t!r} is {m}" for t, m in twins.items())
        out.append(f"note: {name!r} is no spelling of its own; matched ignoring case it is "
                   f"{meant}, while {others}: write the exact spelling of the one you mean")
    return out


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

    names = _measures_only(read_measure_args(values))
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
            trec_eval parameter list); a value that names a line of a run format's layout
            (trec_eval's ``runid``, ``num_q``), which only ``evalkit eval --format``
            prints.
    """
    return _measures_only(read_measure_args(values))


def _measures_only(request: MeasureRequest) -> list[str]:
    """The measures of ``request``, for a command that prints no run format.

    Raises:
        MetricNameError: a value names a line of a run format's layout
            (``layout["lines"]``), alone or beside measures: it would not be shown.
    """
    lines = list(request.layout.get("lines") or ())
    if lines:
        raise MetricNameError(
            f"-m {', '.join(lines)}: {'a line' if len(lines) == 1 else 'lines'} of the "
            f"{request.format} format's layout, not "
            f"{'a measure' if len(lines) == 1 else 'measures'}; only `evalkit eval --format "
            f"{request.format}` prints {'it' if len(lines) == 1 else 'them'}: leave "
            f"{'it' if len(lines) == 1 else 'them'} out here")
    return request.names
