"""A measure's definition, its parameters, and the evalkit records it becomes.

A :class:`Measure` is a compute function over a :class:`~.state.RankingState` plus the
parameters it takes (:class:`Param`: a default and a check that normalises a value or
raises ``ValueError``). :meth:`Measure.record` turns it into a
:class:`~evalkit.core.specs.MetricSpec` (``variant`` builds it with parameters) or, when it has
a cut-off, a :class:`~evalkit.core.specs.MetricFamily`. Every spec shares one ``prepare``
(:func:`prepare`), so one evaluation builds the ranking state once for all measures;
its canonical name is :func:`evalkit.core.metric_names.canonical` of the base, the parameters
that differ from their defaults, and the cut-off.

Both are named tuples, not dataclasses: every evalkit command defines them when it loads
the plugin, and a frozen dataclass compiles its generated methods when defined (about four
times the instructions of a named tuple; docs/performance.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from evalkit.core.metric_names import canonical
from evalkit.core.specs import MetricFamily, MetricKind, MetricSpec, SummaryKind, ValueType
from evalkit.stats.numeric import finite_real

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse
    from evalkit_retrieval.state import Floats, RankingState

#: Definition version of every measure here; bump it when a value could change.
VERSION = "1"

CaseFn = Callable[["TargetResponse", "GoldenCase"], float]
Compute = Callable[["RankingState", Any, Mapping[str, Any]], "Floats"]


def prepare(responses: Sequence[TargetResponse], cases: Sequence[GoldenCase]) -> RankingState:
    """Build the shared state of a batch (one for every measure of this plugin): joined
    in bulk for a TREC run and qrels read by this plugin
    (:func:`evalkit_retrieval.bulk_state.bulk_state`), else from the Python objects
    (:func:`evalkit_retrieval.state.build_state`); numpy is imported on first use.

    Raises:
        MetricError: a ranking lists a document twice (names the case, the document and
            both ranks).
    """
    from evalkit_retrieval.bulk_state import bulk_state
    from evalkit_retrieval.state import build_state

    return bulk_state(responses, cases) or build_state(responses, cases)


class Param(NamedTuple):
    """A named parameter: its default and a check returning the normalised value."""

    name: str
    default: Any
    check: Callable[[Any], Any]


class Measure(NamedTuple):
    """One measure (or family of measures with a cut-off) of the plugin.

    ``description`` is a template: ``{k}`` becomes the cut-off. ``fns`` gives the
    reference per-case function of the default measure (``k -> fn`` for a family) when
    there is one; otherwise the per-case function computes a batch of one.
    ``value_type`` is what one query's value can be (:attr:`MetricSpec.value_type`), or
    ``k -> value type`` when it depends on the cut-off (P@1 is 0 or 1, P@10 a multiple
    of 0.1). ``bounds`` is the range of one query's value (:attr:`MetricSpec.bounds`):
    ``(0, 1)`` for the measures normalised to it, ``None`` for those that are not
    (utility, a count).
    """

    base: str
    compute: Compute
    description: str
    params: tuple[Param, ...] = ()
    higher_is_better: bool = True
    kind: MetricKind = "metric"
    aliases: tuple[str, ...] = ()
    presets: Mapping[str, Mapping[str, Any]] | None = None
    summary: SummaryKind | None = None
    always: bool = True
    cutoff: Literal["int", "float"] | None = None
    core: Callable[..., float] | None = None
    fns: Callable[[Any], CaseFn] | None = None
    redirect: Callable[[Mapping[str, Any]], MetricSpec | None] | None = None
    value_type: ValueType | Callable[[Any], ValueType] | None = "continuous"
    bounds: tuple[float, float] | None = (0.0, 1.0)

    @property
    def declared_bounds(self) -> tuple[float, float] | None:
        """The range of one query's value; a count declares none."""
        return None if self.kind == "count" else self.bounds

    def value_type_at(self, k: Any) -> ValueType | None:
        """The value type of the measure at cut-off ``k`` (None: without one)."""
        if self.kind == "count":  # reported, never compared
            return None
        return self.value_type(k) if callable(self.value_type) else self.value_type

    def normalise(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter, checked, with defaults for those not given."""
        out: dict[str, Any] = {}
        for p in self.params:
            value = given.get(p.name, p.default)
            out[p.name] = p.check(value) if value is not None else None
        return out

    def spec(self, k: Any, given: Mapping[str, Any]) -> MetricSpec:
        """The measure at cut-off ``k`` (``None`` without one) with parameters ``given``."""
        values = self.normalise(given)
        if self.redirect is not None:
            other = self.redirect(values)
            if other is not None:
                return other
        shown = {p.name: values[p.name] for p in self.params
                 if values[p.name] != p.default}
        name = canonical(self.base, shown, k)
        compute = self.compute

        judged_only = bool(values.get("judged_only"))

        def batch(state: Any) -> Sequence[float]:
            if judged_only:
                state = state.judged_only()
            out: list[float] = compute(state, k, values).tolist()
            return out

        fn = self.fns(k) if (self.fns is not None and not shown) else _one_case(batch)
        text = self.description.format(k=k if k is not None else "k")
        return MetricSpec(
            name=name, fn=fn, higher_is_better=self.higher_is_better, kind=self.kind,
            description=text, version=VERSION, prepare=prepare, batch=batch,
            family=self.base if k is not None else None, summary=self.summary,
            value_type=self.value_type_at(k), bounds=self.declared_bounds,
            always=self.always, needs=("relevance",) if self.kind == "metric" else (),
            nonblocking=True,
        )

    def record(self) -> MetricSpec | MetricFamily:
        """The record the plugin registers for this measure."""
        names = tuple(p.name for p in self.params)
        if self.cutoff is None:
            default = self.spec(None, {})
            return default._replace(
                aliases=self.aliases, params=names, presets=self.presets,
                variant=(lambda **given: self.spec(None, given)) if names else None,
            )

        def factory(k: Any, **given: Any) -> MetricSpec:
            return self.spec(k, given)

        return MetricFamily(
            name=self.base, factory=factory, higher_is_better=self.higher_is_better,
            kind=self.kind, description=self.description.format(k="k"), version=VERSION,
            aliases=self.aliases, core=self.core, params=names,
            cutoff=self.cutoff, presets=self.presets,
            value_type=None if callable(self.value_type) else self.value_type_at(None),
            bounds=self.declared_bounds,
        )


def _one_case(batch: Callable[[Any], Sequence[float]]) -> CaseFn:
    def fn(response: TargetResponse, case: GoldenCase) -> float:
        return float(batch(prepare([response], [case]))[0])

    return fn


# ------------------------------------------------------------------ parameter checks
def check_level(value: Any) -> int:
    """A relevance level: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"rel must be an integer >= 1 (a label that counts as relevant), "
                         f"got {value!r}")
    return value


def check_number(name: str, low: float | None = None, high: float | None = None,
                 *, open_low: bool = False, open_high: bool = False) -> Callable[[Any], float]:
    """A finite number, optionally within ``[low, high]`` (ends open when asked)."""
    def check(value: Any) -> float:
        found = finite_real(value)  # None: not a number, or beyond the float range
        number = math.nan if found is None else found
        if not math.isfinite(number) or (low is not None and (
                number < low or (open_low and number == low))) or (high is not None and (
                number > high or (open_high and number == high))):
            where = "" if low is None else (
                f" >= {low:g}" if high is None else
                f" in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}")
            raise ValueError(f"{name} must be a number{where}, got {value!r}")
        return number

    return check


def check_int(name: str, low: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        return value

    return check


def check_bool(name: str) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        return value

    return check


def check_choice(name: str, choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return str(value)

    return check


def check_gains(value: Any) -> dict[int, float]:
    """A gain map ``{label: gain}`` (trec_eval's ``-m ndcg.1=3,2=9``), in label order."""
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"gains must be a mapping {{label: gain}} such as {{1: 3, 2: 9}}, "
                         f"got {value!r}")
    out: list[tuple[int, float]] = []
    for level, gain in value.items():
        lvl = check_int("a gain's label", 0)(level)
        out.append((lvl, check_number(f"the gain of label {lvl}")(gain)))
    return dict(sorted(out))


def check_recalls(value: Any) -> tuple[float, ...]:
    """Recall levels for 11pt_avg, in the order given."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ValueError(f"recalls must be a list of recall levels, got {value!r}")
    return tuple(check_number("a recall level")(v) for v in value)


REL = Param("rel", None, check_level)
#: ir_measures' ``judged_only=True``: the measure over the ranking without its unjudged
#: documents (:meth:`~.state.RankingState.judged_only`; trec_eval's ``-J``)
JUDGED_ONLY = Param("judged_only", False, check_bool("judged_only"))
