"""How the registry finds the metric a name means.

In order: an exact name or alias (matched case-insensitively when nothing matches
exactly), with the parameters the alias implies (``RBP`` is ``rbp(p=0.8)``); then
ir_measures' syntax, ``Base(params)@cutoff``, against a family (with a cut-off) or a
measure that takes parameters (without one); then trec_eval's one-cut-off spellings
``P_10``, ``P.10``, ``ndcg_cut_10``, ``iprec_at_recall_0.50``; ranx's relevance-level
suffix, ``precision@10-l2`` (``precision(rel=2)@10``). Anything else gets a did-you-mean
(:func:`unknown_message`).

The registry calls :func:`lookup` with itself; this module only reads it, through the
small :class:`Table` interface, and raises :class:`LookupFailure`, which the registry turns
into its ``RegistryError``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from evalkit.core.metric_names import MetricNameError, parse_name, trec_spelling
from evalkit.core.specs import AggregateSpec, MetricFamily, MetricSpec

if TYPE_CHECKING:
    from evalkit.core.specs import AnySpec


class LookupFailure(LookupError):
    """A name the registry cannot resolve (the message says why and what would)."""


class Table(Protocol):
    """What :func:`lookup` reads of a registry."""

    _family_cache: dict[str, MetricSpec]
    _tables: dict[str, dict[str, Any]]

    def _canonical(self, name: str) -> str | None: ...

    def _raise_if_blocked(self, key: str) -> None: ...

    def _metric_record(self, key: str) -> AnySpec: ...

    def _unknown_message(self, name: str) -> str: ...


def lookup(table: Table, name: str, *, explain: bool = True) -> MetricSpec | AggregateSpec:
    """The metric or aggregate ``name`` means (see the module docstring).

    ``explain=False`` leaves the did-you-mean out of an unknown name's failure (it
    compares the name with every known one: asked only whether ``name`` resolves, the
    registry has no use for it).

    Raises:
        LookupFailure: unknown name, unknown or bad parameter, bad cut-off.
        RegistryError: the name is blocked (raised by the registry itself).
    """
    cached = table._family_cache.get(name)
    if cached is not None:
        return cached
    key = table._canonical(name)
    if key is not None:
        table._raise_if_blocked(key)
        spec = table._metric_record(key)
        if isinstance(spec, AggregateSpec):
            return spec
        if isinstance(spec, MetricSpec):
            preset = (spec.presets or {}).get(name)
            return _remember(table, name, _variant(spec, dict(preset), name) if preset else spec)
    ranx = _RANX_LEVEL.match(name)
    if ranx is not None:
        return _remember(table, name, _ranx_level(table, ranx, name))
    positional = _OF_METRIC.match(name)
    if positional is not None:  # krippendorff_alpha(correctness): the metric= form
        name = f"{positional['base']}(metric={positional['metric'].strip()})"
    try:
        parsed = parse_name(name)
    except MetricNameError as exc:
        raise LookupFailure(str(exc)) from None
    if parsed is not None and (parsed.cutoff is not None or parsed.params):
        if parsed.cutoff is not None:
            family = _family(table, parsed.base)
            if family is not None:
                return _remember(table, name, _member(
                    table, family, parsed.base, parsed.cutoff, parsed.params, name))
        else:
            skey = table._canonical(parsed.base)
            if skey is not None:
                table._raise_if_blocked(skey)
                spec = table._metric_record(skey)
                if isinstance(spec, AggregateSpec) and spec.of_metric is not None:
                    return _of_metric(spec, parsed.params, name)
                if isinstance(spec, MetricSpec):
                    params = {**(spec.presets or {}).get(parsed.base, {}), **parsed.params}
                    return _remember(table, name, _variant(spec, params, name))
            if _family(table, parsed.base) is not None:
                raise LookupFailure(
                    f"{name!r} needs a cut-off: write {name}@k (e.g. {name}@10)")
    trec = trec_spelling(name)
    if trec is not None:
        family = _family(table, trec[0])
        if family is not None:
            return _remember(table, name, _member(table, family, trec[0], trec[1], {}, name))
    raise LookupFailure(table._unknown_message(name) if explain else f"unknown {name!r}")


#: ranx's relevance level after a measure: ``precision@10-l2``, ``map-l2``
_RANX_LEVEL = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)(?:@(?P<k>[^@()\-]+))?"
                         r"-l(?P<level>\d+)$")


def _ranx_level(table: Table, found: re.Match[str], name: str) -> MetricSpec:
    """ranx's ``name@k-lN`` (its relevance level ``N``, ranx's ``rel_lvl``: judgments below
    ``N`` count as not relevant) as the measure it is here: ``name(rel=N)@k`` for a measure
    that takes ``rel``; for a graded one (nDCG, DCG), whose labels below ``N`` ranx drops,
    the linear gain map that gives them 0 (``ndcg(gains={1: 0})@10`` for ``-l2``); the
    measure itself at level 1 (labels <= 0 gain nothing here too)."""
    base, k, level = found["base"], found["k"], int(found["level"])
    at = "" if k is None else f"@{k}"
    key = table._canonical(f"{base}@k") if k is not None else table._canonical(base)
    record = None if key is None else table._metric_record(key)
    params: tuple[str, ...] = (record.params if isinstance(record, MetricFamily) else
                               tuple(getattr(record, "params", ()) or ()))
    presets = (getattr(record, "presets", None) or {}).get(base, {})
    if record is None:
        meant = name
    elif "rel" in params:
        meant = f"{base}(rel={level}){at}"
    elif level <= 1:
        meant = f"{base}{at}"
    elif "gains" in params and not presets:
        zeros = ", ".join(f"{g}: 0" for g in range(1, level))
        meant = f"{base}(gains={{{zeros}}}){at}"
    else:
        raise LookupFailure(
            f"{name!r}: ranx's level suffix -l{level} counts labels below {level} as not "
            f"relevant, and {base}{at} has no such setting here (exponential gains take no "
            f"gain map): use the run's relevance level (-l {level}) with a binary measure, "
            "or a linear-gain measure such as ndcg(gains={1: 0})@10")
    if meant == name:
        raise LookupFailure(table._unknown_message(name))
    return lookup(table, meant)  # type: ignore[return-value]


#: ``base(metric)``: an aggregate of one metric named without ``metric=``
_OF_METRIC = re.compile(r"^(?P<base>[A-Za-z0-9_]+)\((?P<metric>[^()=,]+)\)$")


def _of_metric(spec: AggregateSpec, params: Mapping[str, Any], name: str) -> AggregateSpec:
    """``spec`` bound to the metric of ``params`` (``{"metric": "correctness"}``)."""
    assert spec.of_metric is not None
    metric = params.get("metric")
    if set(params) != {"metric"} or not isinstance(metric, str) or not metric:
        raise LookupFailure(f"{name!r}: {spec.name} takes one parameter, the metric: write "
                            f"{spec.name}(correctness)")
    counts = spec.rests_on

    def rests_on(rows: Sequence[Any], _: str | None = None) -> int:
        assert counts is not None
        return counts(rows, metric)

    return replace(spec, name=f"{spec.name}(metric={metric})", fn=spec.of_metric(metric),
                   of_metric=None, rests_on=None if counts is None else rests_on)


def _remember(table: Table, name: str, spec: MetricSpec) -> MetricSpec:
    if spec.name != name:  # nDCG@10 and ndcg_cut_10 are blocked when ndcg@10 is
        table._raise_if_blocked(spec.name)
    table._family_cache[name] = spec
    return spec


def _family(table: Table, base: str) -> MetricFamily | None:
    key = table._canonical(f"{base}@k")
    if key is None:
        return None
    table._raise_if_blocked(key)
    record = table._metric_record(key)
    return record if isinstance(record, MetricFamily) else None


def _check_params(accepted: tuple[str, ...], params: Mapping[str, Any], what: str,
                  name: str) -> None:
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        takes = (f"takes the parameters {', '.join(accepted)}" if accepted
                 else "takes no parameters")
        raise LookupFailure(
            f"{name!r}: {what} {takes}; {', '.join(repr(u) for u in unknown)} "
            f"{'is' if len(unknown) == 1 else 'are'} not among them"
        )


def member_problem(family: MetricFamily, k: float, spec: object, *,
                   params: bool = False) -> str | None:
    """Why ``spec``, what ``family.factory(k)`` returned, is no member of ``family``
    (``None`` when it is): it is not a :class:`MetricSpec`, is not named
    ``f"{family.name}@{k}"`` (with ``params``: ``family.name`` and its parameters, then
    ``@k``; a cut-off written as any number equal to ``k``), or declares another
    polarity than the family's (gates use the member's, listings the family's)."""
    expected = f"{family.name}@{k}"
    if not isinstance(spec, MetricSpec):
        return (f"the {family.name}@k family's factory({k}) returned "
                f"{type(spec).__name__}; expected a MetricSpec named {expected!r}")
    base, at, cut = spec.name.rpartition("@")
    try:  # a float cut-off is named as the family writes it (iprec@0 for 0.0)
        same_cut = bool(at) and float(cut) == k
    except ValueError:
        same_cut = False
    named = same_cut and (base == family.name or (
        params and base.startswith(f"{family.name}(") and base.endswith(")")))
    if not named:
        return (f"the {family.name}@k family's factory({k}) returned a metric named "
                f"{spec.name!r}; expected a MetricSpec named {expected!r} (a member is "
                "named by its family's name and its cut-off)")
    if spec.higher_is_better != family.higher_is_better:
        return (f"the {family.name}@k family declares higher_is_better="
                f"{family.higher_is_better!r}, but its member {spec.name!r} declares "
                f"{spec.higher_is_better!r} (gates would use the member's); declare one "
                "polarity for the family and its members")
    return None


def _plugin_bug(table: Table, family: MetricFamily) -> str:
    """`` (family of <provider>; a bug of it ...)``: who to tell about a broken family."""
    entry = table._tables.get("metric", {}).get(f"{family.name}@k")
    if entry is None:
        return ""
    return (f". This is a bug of {entry.provider}, which provides the family, not of your "
            "files or options: report it to its authors")


def _member(table: Table, family: MetricFamily, base: str, cutoff: str,
            params: Mapping[str, Any], name: str) -> MetricSpec:
    merged = {**(family.presets or {}).get(base, {}), **params}
    _check_params(family.params, merged, f"the {family.name}@k family", name)
    k: int | float
    if family.cutoff == "int":
        if not cutoff.isdigit() or int(cutoff) < 1:
            raise LookupFailure(f"{name!r}: the cut-off after '@' must be a positive integer")
        k = int(cutoff)
    else:
        try:
            k = float(cutoff)
        except ValueError:
            k = math.nan
        if not math.isfinite(k):
            raise LookupFailure(f"{name!r}: the cut-off after '@' must be a number")
    try:
        spec = _needing(family.factory(k, **merged) if merged else family.factory(k),
                        family.needs)
    except (ValueError, TypeError) as exc:
        raise LookupFailure(f"{name!r}: {exc}") from None
    problem = member_problem(family, k, spec, params=bool(merged))
    if problem is not None:
        raise LookupFailure(f"{name!r}: {problem}{_plugin_bug(table, family)}")
    if family.value_type is not None and isinstance(spec, MetricSpec) and \
            spec.value_type is None:  # the family's declaration holds for its members
        spec = replace(spec, value_type=family.value_type)
    if family.bounds is not None and isinstance(spec, MetricSpec) and spec.bounds is None:
        spec = replace(spec, bounds=family.bounds)
    return spec


def _variant(spec: MetricSpec, params: dict[str, Any], name: str) -> MetricSpec:
    if spec.variant is None:
        raise LookupFailure(f"{name!r}: {spec.name} takes no parameters")
    _check_params(spec.params, params, spec.name, name)
    try:
        made = _needing(spec.variant(**params), spec.needs)
    except (ValueError, TypeError) as exc:
        raise LookupFailure(f"{name!r}: {exc}") from None
    if spec.value_type is not None and isinstance(made, MetricSpec) and \
            made.value_type is None:  # a variant is what its measure is
        made = replace(made, value_type=spec.value_type)
    if spec.bounds is not None and isinstance(made, MetricSpec) and made.bounds is None:
        made = replace(made, bounds=spec.bounds)
    return made


def _needing(spec: MetricSpec, needs: tuple[str, ...]) -> MetricSpec:
    """``spec`` needing ``needs`` too: what a family or a parameterised measure declares
    holds for every member it makes."""
    if not isinstance(spec, MetricSpec):
        return spec
    extra = [n for n in needs if n not in spec.needs]
    if not extra:
        return spec
    return replace(spec, needs=(*spec.needs, *extra))


def case_twins(spellings: set[str], name: str) -> list[str]:
    """The exact ``spellings`` (metric names and aliases) that ``name`` matches only when
    case is ignored, when there are two or more of them (``Rbp``: ``rbp``, trec_eval's
    p=0.9, and ``RBP``, ir_measures' p=0.8), sorted; else ``[]`` (``name`` is exact, or
    its case-insensitive match is the only spelling of its kind)."""
    if name in spellings:
        return []
    twins = sorted(s for s in spellings if s.lower() == name.lower())
    return twins if len(twins) > 1 else []


def unknown_message(spellings: set[str], name: str) -> str:
    """``unknown metric 'x'; did you mean ...?`` from the known ``spellings`` (names,
    aliases and ``prefix@k`` families): :func:`suggestion`, ``.`` when none is close."""
    return f"unknown metric {name!r}" + (suggestion(name, spellings) or ".")


#: the names a message listing the known metrics shows before ``... and N more``
SHOWN_NAMES = 12


def known_list(names: Sequence[str]) -> str:
    """``a, b, c and N more (`evalkit plugins list` shows all)``: the first
    :data:`SHOWN_NAMES` of ``names`` (in their order), for a message that cannot show a
    whole registry on one line (``SHOWN_NAMES`` of ``names`` and their count, never an
    ellipsis, whose dots would run into the sentence's); ``none`` for no name."""
    if not names:
        return "none"
    shown = ", ".join(names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return shown if more <= 0 else (
        f"{shown} and {more} more (`evalkit plugins list` shows all)")


def suggestion(name: str, spellings: Iterable[str]) -> str:
    """``"; did you mean 'a' or 'b'?"`` naming the at most three of ``spellings`` (metric
    names, aliases, ``prefix@k`` families) ``name`` looks like a misspelling of, else
    ``""``: the one did-you-mean of every place a metric name is given (the registry,
    the gate's checks, the metrics a compared artifact holds). A family is offered at
    the cut-off asked (``ndgc@10`` -> ``ndcg@10``); trec_eval's ``base_k`` is read as
    ``base@k``; case is ignored when nothing matches as written; ``name`` itself is
    never offered."""
    from evalkit.io.error_messages import close_matches

    spellings = set(spellings)
    probe = name
    cut = re.match(r"^(.+?)[_.](\d+)$", name)  # trec_eval's ndcg_cut_10 (-m ndcg_cut.10)
    if cut is not None and "@" not in name:
        probe = f"{cut[1]}@{cut[2]}"
    m = re.match(r"^(?P<prefix>[^@]+)@(?P<k>[^@]+)$", probe)
    if m is not None:  # suggest "ndcg@10" for "ndgc@10", not the family "ndcg@k"
        spellings = {s[:-2] + "@" + m["k"] if s.endswith("@k") else s for s in spellings}
    spellings = {s for s in spellings if s != name}  # never the name refused
    close = close_matches(probe, sorted(spellings), n=3)
    if not close:
        low = {s.lower(): s for s in spellings}
        close = [low[probe.lower()]] if probe.lower() in low else [
            low[c] for c in close_matches(probe.lower(), sorted(low), n=3)]
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def record_base(name: str) -> str | None:
    """The base of a parameterised canonical name (``"ap(rel=2)"`` -> ``"ap"``), else
    ``None``."""
    try:
        parsed = parse_name(name)
    except MetricNameError:
        return None
    return parsed.base if parsed is not None else None
