"""The immutable records that plugins return from their ``evalkit_register_*`` hooks.

Each record carries a stable ``name``; the registry adds provenance (which distribution
or module provided it). Records know nothing about the registry. Whether a record's
fields have the types they must have is :mod:`evalkit.core.record_checks`.

Records are frozen dataclasses: immutable, compared by value, built with positions or
keywords (``MetricSpec("mrr", fn, higher_is_better=True)``) and copied with changes by
``dataclasses.replace(spec, version="2")`` (or ``spec._replace(version="2")``, as when they
were named tuples). A hook returns a *list* of records, never a bare record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal, Self

#: ``(response, case) -> float``: the shape of every per-case metric, called with an
#: :class:`evalkit.data.targets.TargetResponse` and an :class:`evalkit.data.cases.GoldenCase`
#: (named in words only: the records sit below the floor that defines them).
CaseMetricFn = Callable[[Any, Any], float]
#: Prepares shared state once for a batch of (response, case) pairs: ``(responses,
#: cases) -> state``, two sequences of the types :data:`CaseMetricFn` takes.
PrepareFn = Callable[[Sequence[Any], Sequence[Any]], Any]
#: Computes one value per case from prepared state, in the order of the batch.
BatchFn = Callable[[Any], Sequence[float]]

MetricKind = Literal["metric", "count"]
#: How a summary line combines the per-query values of a metric: their ``mean``, their
#: ``sum`` (counts), or ``exp_mean``, the exponential of their mean (trec_eval's geometric
#: means, whose per-query values are logarithms).
SummaryKind = Literal["mean", "sum", "exp_mean"]
SUMMARY_KINDS: tuple[SummaryKind, ...] = ("mean", "sum", "exp_mean")
LoaderKind = Literal["goldens", "run", "qrels", "queries", "corpus"]
LOADER_KINDS: tuple[LoaderKind, ...] = ("goldens", "run", "qrels", "queries", "corpus")
#: What a metric may need of each case it scores (``MetricSpec.needs``): ``"relevance"``,
#: relevance judgments (expected ids, ``relevant`` or ``relevance`` labels);
#: ``"answers"``, reference answers (``answers``, else a text ``expected``:
#: ``GoldenCase.reference_answers()``); ``"context:KEY"``, the field ``KEY`` of the golden
#: row, kept in ``GoldenCase.context``.
CASE_NEEDS: tuple[str, ...] = ("relevance", "answers", "context:KEY")
#: The prefix of a need for a context key (``"context:topic"``).
CONTEXT_NEED = "context:"
#: What one case's value of a metric can be (``MetricSpec.value_type``): ``"binary"``, 0
#: or 1 (success@k, P@1, exact match, pass/fail); ``"discrete"``, one of a few fixed
#: levels (P@k, in steps of 1/k); ``"continuous"``, any value in a range (AP, nDCG, RR,
#: F1). The default paired test is chosen from it (docs/statistics.md, "Which method when").
ValueType = Literal["binary", "discrete", "continuous"]
VALUE_TYPES: tuple[ValueType, ...] = ("binary", "discrete", "continuous")


@dataclass(frozen=True)
class _Record:
    # Every record shares this one value equality, hash and repr (the records below are
    # declared ``eq=False, repr=False``): generated per class they would cost each
    # command's start-up about 2 ms, as every command registers every record type.
    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__qualname__}({shown})"

    def _replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (:func:`dataclasses.replace`)."""
        return replace(self, **changes)


@dataclass(frozen=True, eq=False, repr=False)
class MetricSpec(_Record):
    """A per-case metric: ``fn(response, case) -> float``.

    Attributes:
        name: the canonical name stored on rows (``"ndcg@10"``).
        fn: the per-case function.
        higher_is_better: the polarity; ``None`` only for legacy ``METRICS[...] = fn``
            entries, which ``polarity()`` and gates refuse.
        kind: ``"metric"`` (gateable) or ``"count"`` (reported per query, e.g. num_rel;
            never gated or compared).
        description: one line for listings; name the formula's source.
        version: the definition version; bump it whenever values could change, so stored
            baselines are known to be incomparable.
        aliases: other accepted spellings (``"nDCG@10"``).
        prepare, batch: an optional vectorised path. ``prepare(responses, cases)`` builds
            shared state once per evaluation (metrics whose ``prepare`` is the same
            function share it); ``batch(state)`` returns one value per case. When given,
            they must agree with ``fn``.
        family: the family (``"precision"``) a ``name@k`` spec was made by.
        params: the named parameters ``variant`` accepts (``("rel",)``): ``"ap(rel=2)"``
            resolves to ``variant(rel=2)``.
        variant: ``variant(**params) -> MetricSpec``, the measure with those parameters
            (its ``name`` is the canonical spelling, :func:`evalkit.core.metric_names.canonical`);
            raises ``ValueError`` for a bad value.
        presets: parameters implied by an alias (``{"RBP": {"p": 0.8}}``: ir_measures'
            ``RBP`` is ``rbp(p=0.8)``).
        summary: how a summary line combines the per-query values (``None``: ``"mean"``
            for a metric, ``"sum"`` for a count); statistics always use the per-query
            values themselves.
        always: for a count, whether retrieval evaluations record it on every row even
            when it was not asked for (num_ret, num_rel, num_rel_ret).
        needs: the fields every case it scores must have (:data:`CASE_NEEDS`):
            ``"relevance"`` (the retrieval measures), ``"answers"`` (exact_match, f1,
            rouge_l), ``"context:KEY"`` (a field ``KEY`` of the golden row). A case that
            lacks one is refused before anything is scored (before any call of a
            target run), naming the metric and the cases
            (:func:`evalkit.execute.case_needs.require_case_fields`), instead of being
            scored 0 and averaged in.
        needs_judgments: short for ``"relevance"`` in ``needs`` (either sets both).
        needs_answers: short for ``"answers"`` in ``needs`` (either sets both).
        nonblocking: ``fn`` only computes, in work linear in its input (no I/O, no
            waiting, no lock held long, nothing quadratic): the async runner scores a
            row whose metrics are all nonblocking on its event loop instead of handing
            it to a thread, when the row's input is small
            (:func:`evalkit.execute.async_executor.small_input`); the built-in retrieval
            measures and evalkit-text's exact_match, f1, contains and json_valid set it.
            Leave it ``False`` for anything that may wait (an LLM judge) or whose cost
            can grow faster than its input (a regex search, an LCS).
        value_type: what one case's value can be (:data:`VALUE_TYPES`), or ``None``
            (undeclared). The default paired test ("auto") runs the paired t-test on a
            ``"binary"`` metric and the sign-flip test with its skew guard on any other,
            so the test depends on what the metric is, never on the values one
            comparison happened to observe.
        bounds: ``(lo, hi)``, the range every case's value lies in, declared with the
            metric (retrieval measures and evalkit-text's metrics: ``(0.0, 1.0)``), or
            ``None`` (undeclared; a ``"binary"`` metric is taken as ``(0, 1)``). An
            anytime-valid comparison (``evalkit run --until-decided``) needs it: paired
            differences then lie in ``[-(hi - lo), hi - lo]``
            (:mod:`evalkit.stats.sequential`); a range read from the data would void
            its guarantee.
    """

    name: str
    fn: CaseMetricFn
    higher_is_better: bool | None
    kind: MetricKind = "metric"
    description: str = ""
    version: str = "1"
    aliases: tuple[str, ...] = ()
    prepare: PrepareFn | None = None
    batch: BatchFn | None = None
    family: str | None = None
    params: tuple[str, ...] = ()
    variant: Callable[..., MetricSpec] | None = None
    presets: Mapping[str, Mapping[str, Any]] | None = None
    summary: SummaryKind | None = None
    always: bool = True
    needs_judgments: bool = False
    needs_answers: bool = False
    nonblocking: bool = False
    needs: tuple[str, ...] = ()
    value_type: ValueType | None = None
    bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        merged = merged_needs(self.needs, judgments=self.needs_judgments,
                              answers=self.needs_answers)
        if merged is not None:  # else record_problem names the bad value
            object.__setattr__(self, "needs", merged)
            object.__setattr__(self, "needs_judgments", "relevance" in merged)
            object.__setattr__(self, "needs_answers", "answers" in merged)


@dataclass(frozen=True, eq=False, repr=False)
class MetricFamily(_Record):
    """A parametric family of metrics, ``name@k``.

    ``factory(k)`` returns the :class:`MetricSpec` named ``f"{name}@{k}"``, with the
    family's ``higher_is_better`` (checked when the family is registered and when a
    member is looked up), ``k`` a
    positive integer (``cutoff="int"``, the default) or a number (``cutoff="float"``, as
    ``iprec@0.5``). A family that declares ``params`` also takes them as keywords:
    ``"precision(rel=2)@5"`` calls ``factory(5, rel=2)``, which names the spec canonically
    (:func:`evalkit.core.metric_names.canonical`) and raises ``ValueError`` for a bad value; a
    family without ``params`` (``evalkit.METRICS[name] = fn``) is only ever called as
    ``factory(k)``. ``aliases`` are alternative family prefixes (``"P"`` for
    ``"precision"``); ``presets`` the parameters an alias implies. ``core`` is the
    underlying ``(retrieved, relevant, k) -> float`` function when there is one.
    ``needs`` (as :attr:`MetricSpec.needs`) is added to every member's own.
    ``value_type`` (as :attr:`MetricSpec.value_type`) holds for every member that does
    not declare its own, and so do ``bounds`` (:attr:`MetricSpec.bounds`).
    """

    name: str
    factory: Callable[..., MetricSpec]
    higher_is_better: bool | None
    kind: MetricKind = "metric"
    description: str = ""
    version: str = "1"
    aliases: tuple[str, ...] = ()
    core: Callable[..., float] | None = None
    params: tuple[str, ...] = ()
    cutoff: Literal["int", "float"] = "int"
    presets: Mapping[str, Mapping[str, Any]] | None = None
    needs: tuple[str, ...] = ()
    value_type: ValueType | None = None
    bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        merged = merged_needs(self.needs)
        if merged is not None:
            object.__setattr__(self, "needs", merged)


def merged_needs(needs: Any, *, judgments: Any = False, answers: Any = False
                 ) -> tuple[str, ...] | None:
    """``needs`` with ``"relevance"`` added when ``judgments`` and ``"answers"`` when
    ``answers`` (the shorthands), each need once, in order; ``None`` when ``needs`` is
    not a tuple or list of strings (:func:`evalkit.core.record_checks.record_problem` says so)."""
    if not isinstance(needs, tuple | list) or not all(isinstance(n, str) for n in needs):
        return None
    extra = (["relevance"] if judgments is True else []) + (["answers"] if answers is True
                                                             else [])
    return tuple(dict.fromkeys([*needs, *extra]))


def need_problem(need: str) -> str | None:
    """Why ``need`` is not one of :data:`CASE_NEEDS`, or ``None`` when it is."""
    if need in ("relevance", "answers"):
        return None
    if need.startswith(CONTEXT_NEED):
        key = need[len(CONTEXT_NEED):]
        return None if key.strip() and key == key.strip() else (
            f"{need!r} names no context key; write 'context:KEY' with the field's name")
    from evalkit.io.error_messages import close_matches

    close = close_matches(need, ["relevance", "answers", "context:"])
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"{need!r} is not a case field a metric can need{hint}; needs are 'relevance', "
            "'answers' and 'context:KEY'")


@dataclass(frozen=True, eq=False, repr=False)
class AggregateSpec(_Record):
    """A whole-run aggregate: ``fn(rows) -> float`` over ``Sequence[CaseResult]``.

    Shares one namespace with per-case metrics. ``fn`` must raise (not return 0) when it
    cannot be computed, for example on an empty run.

    An aggregate *of a metric* sets ``of_metric``: ``of_metric(metric)`` returns the
    ``fn`` of ``name(metric)`` (``krippendorff_alpha(correctness)``, canonically
    ``krippendorff_alpha(metric=correctness)``), and the bare ``name`` is refused.

    An aggregate whose value rests on fewer cases than the rows it is given (an
    agreement statistic: the cases a human labelled) sets ``rests_on``:
    ``rests_on(rows, metric) -> int`` counts those cases (``metric`` is the argument of
    an aggregate of a metric, else ``None``), and ``rests_on_word`` names them, so that
    a gate's check says ``10 labelled of 20 cases``, not ``20/20 cases``.
    """

    name: str
    fn: Callable[[Sequence[Any]], float]
    higher_is_better: bool
    description: str = ""
    version: str = "1"
    aliases: tuple[str, ...] = ()
    of_metric: Callable[[str], Callable[[Sequence[Any]], float]] | None = None
    rests_on: Callable[[Sequence[Any], str | None], int] | None = None
    rests_on_word: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class LoaderSpec(_Record):
    """A loader of one ``kind`` (goldens, run, qrels, queries, corpus).

    ``fn(path, **options)`` reads a file and returns the kind's object. ``suffixes`` pick
    the loader by file suffix (``(".jsonl",)``); each kind is its own namespace.
    ``accepts(path) -> bool``, when given, is a quick look at the file (its first line)
    for loaders whose suffix other formats share: a loader it rejects is passed over for
    the next one matching the suffix (a ``.tsv`` qrels file without the BEIR header goes
    to the TREC loader). It should not raise; an error counts as accepting, so that the
    loader itself reports it. Two loaders of one kind that claim one suffix, neither
    with ``accepts``, are a conflict over it: the kernel's built-in keeps the suffix,
    and between plugins neither reads such a file unless named.
    ``scheme`` (``"irds"``): the loader reads sources named ``SCHEME:ID``, not files; where
    a file of the kind is taken, such a name goes to it as text, suffixes aside (a run
    records the SHA-256 of what ``fn`` returned, for qrels as canonical JSON).
    """

    name: str
    kind: LoaderKind
    fn: Callable[..., Any]
    suffixes: tuple[str, ...] = ()
    description: str = ""
    accepts: Callable[[Any], bool] | None = None
    scheme: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class TargetSpec(_Record):
    """A named target factory: ``factory(**kwargs) -> Target``."""

    name: str
    factory: Callable[..., Any]
    description: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class ReporterSpec(_Record):
    """A reporter: ``render(report) -> str`` for a gate report or a comparison.

    A ``render`` that raises (``sys.exit()`` too), or returns anything but a ``str``, ends
    the command with one ``error:`` line naming the reporter, its plugin and what happened
    (exit 2), before any report of the command is written (the conformance suite's
    ``reporter:NAME:renders`` check renders sample reports to catch it first).

    ``suffix`` is the usual file suffix of its output (``".xml"`` for JUnit).

    A reporter with ``record`` stores what a command made instead of rendering text:
    ``--report NAME:TARGET`` then calls ``record(obj, target) -> str`` with the object
    itself (the ``GateReport`` of ``evalkit gate``, whose ``run`` is the gated run; the
    ``RunResult`` of ``evalkit run``; the report model of ``evalkit compare``) and the
    text after the colon (a database path, an experiment name); it returns one line
    saying what it recorded, which the command prints on standard error, and raises
    ``ValueError`` (one line) for an object it does not record; any other exception (an
    ``OSError`` aside) is reported as a bug of the plugin, as for ``render``. ``render``
    is not called and ``TARGET`` is not checked as a file. ``evalkit run --report`` takes only such
    reporters.
    """

    name: str
    render: Callable[[Any], str]
    suffix: str = ".txt"
    description: str = ""
    options: Mapping[str, Any] | None = None
    record: Callable[[Any, str], str] | None = None


@dataclass(frozen=True, eq=False, repr=False)
class ExecutorSpec(_Record):
    """A named executor: ``factory(**options)`` returns an object whose
    ``open(work: evalkit.execute.executor_api.Work)`` runs a target's calls somewhere
    (threads of this process for ``local``, a Dask cluster for ``dask``) and hands back
    the rows (the protocol: :mod:`evalkit.execute.executor_api`)."""

    name: str
    factory: Callable[..., Any]
    description: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class MeasureSyntaxSpec(_Record):
    """A way of writing measures on the command line (``-m`` of ``evalkit eval``,
    ``compare``, ``power``, ``rescore``): trec_eval's ``P.5,10`` and ``official``, say.

    ``expand(pieces)`` takes the ``-m`` values split at their commas
    (:func:`evalkit.core.metric_names.split_measure_args`) and returns ``None`` when none
    of them is written in this syntax, else a
    :class:`~evalkit.core.metric_names.MeasureRequest`: the measures they name (pieces
    of other syntaxes kept as typed, for the registry to resolve) and what its run
    format reads. It raises ``ValueError`` (one line naming the piece) for a piece of its
    syntax it refuses. Two syntaxes that both claim one list of values are refused,
    naming both.
    """

    name: str
    expand: Callable[[Sequence[str]], Any]
    description: str = ""


#: The formats of ``evalkit eval --format`` that are the command's own, not records.
OWN_RUN_FORMATS: tuple[str, ...] = ("table", "json")


@dataclass(frozen=True, eq=False, repr=False)
class RunFormatSpec(_Record):
    """An output of ``evalkit eval --format NAME`` besides ``table`` and ``json``.

    ``render(scored) -> str`` prints a scored run
    (:class:`~evalkit.report.run_formats.ScoredRun`: the run, the measures to show, the
    ``-m`` request, ``--per-query``, the qrels) on standard output; it raises
    ``ValueError`` (one line) for what it cannot print. ``default_measures`` are the
    ``-m`` values it implies for a run file when none is given (trec_eval's
    ``("official",)``). The names of :data:`OWN_RUN_FORMATS` are refused.
    """

    name: str
    render: Callable[[Any], str]
    description: str = ""
    default_measures: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class RunEvaluatorSpec(_Record):
    """What scores ranked runs against relevance judgments (qrels): the engine behind
    :func:`evalkit.evaluate_run` and the run files and qrels of ``evalkit compare``,
    ``power``, :func:`evalkit.compare` and :func:`evalkit.run` (``evalkit-retrieval``'s
    ``trec``: TREC run and qrels files, ``{qid: {doc: score}}`` and DataFrames).

    ``evaluate(run, qrels, metrics, relevance_level=1, missing="zero", *, depth=None,
    name=None)`` (and ``judged_only=True``, passed only when asked: trec_eval ``-J``)
    returns a :class:`~evalkit.data.results.RunResult` with one row per
    judged query, as :func:`evalkit.evaluate_run` documents it, and raises ``ValueError``
    (one line naming the file, query or row) for what it cannot read. ``load_qrels(qrels[,
    metrics])`` (``metrics``: those the qrels are read for) returns ``LoadedQrels`` for a
    qrels path, mapping or DataFrame (a mapping of judgments alone is read by the kernel:
    :func:`evalkit.data.judgments.graded_judgments`). ``default_metrics`` are the metrics
    ``evalkit compare`` and ``evalkit eval`` score a run file with when none is named.
    One evaluator is used; two are a conflict that names both.
    """

    name: str
    evaluate: Callable[..., Any]
    load_qrels: Callable[..., Any]
    description: str = ""
    default_metrics: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class CommandSpec(_Record):
    """A subcommand of ``evalkit`` that a plugin adds: ``evalkit NAME ...``.

    Attributes:
        name: the command's name: lower-case letters, digits and hyphens, starting with
            a letter (``"judge-cache"``). A name of the kernel's commands or of another
            plugin's is a conflict (:class:`~evalkit.core.registry.Conflict`).
        help: its summary, one line: what ``evalkit --help`` lists, without importing
            ``load``.
        load: where the command is, imported only when it runs:
            ``"package.module:attr"``, ``attr`` being a function whose parameters are typer
            options and arguments (one command), a :class:`typer.Typer` (a group:
            ``evalkit NAME SUB ...``) or a click command or group (run as click runs it,
            with its own help and errors); or ``"package.module"``, whose ``app`` (a
            group) or else ``command`` (a function) is taken, as for the kernel's own
            command modules.
    """

    name: str
    help: str
    load: str


@dataclass(frozen=True, eq=False, repr=False)
class ConfigSectionSpec(_Record):
    """A section of the eval config that a plugin declares and validates: the key ``name``
    of ``evalkit.yaml`` (the table ``[tool.evalkit.NAME]`` of ``pyproject.toml``).

    Attributes:
        name: the key: letters, digits, ``_`` and ``-``, starting with a letter; not one
            of the eval config's own keys (``metrics``, ``target``...).
        model: the section's pydantic model (a ``BaseModel`` subclass), or
            ``"package.module:Model"`` naming it, imported only when a config is read or
            its schema printed, so that registering the section imports no pydantic.
            Its errors are reported with the file and line, and ``evalkit schema config``
            includes its JSON Schema.
        apply: ``apply(section, config) -> None``, called by ``evalkit run`` with the
            validated section (an instance of ``model``) and the
            :class:`~evalkit.execute.evalconfig.EvalConfig`, before the run's metric
            names are checked, so that the plugin can register what the section declares;
            ``evalkit gate`` calls it too when it reads the config (``--config``, or an
            option left out), before the checks are judged, so that a baseline check can
            name a metric the section registers (without the config, only ``restore``
            can register it for the gate);
            a ``ValueError`` or ``LookupError`` it raises is reported as an error of the
            section, and so is any other exception (``sys.exit()`` too), as a bug of the
            plugin (the message names the section, the plugin and the exception; exit 2,
            no traceback).
            ``evalkit plugins list`` calls it too, with the default registry
            answering with the listing's registry, so that what it registers is
            listed; it must not start work. ``None``: the section is validated only.
        description: one line, for listings and the JSON Schema.
        restore: ``restore(header) -> None``, called with a run artifact's header when
            the run is read (``evalkit rescore``, ``gate``, ``compare``: any
            :meth:`~evalkit.data.results.RunResult.load`) and the header holds metric
            details, so that the plugin can register again what the section declared
            for that run from what its metrics recorded there (their ``details``),
            without the config. It must skip what it cannot rebuild and what the
            registry already has. ``None``: nothing is restored.
        preflight: ``preflight(section, config) -> None``, called after ``apply`` by the
            commands that will use what the section declares (``evalkit run`` unless
            ``--dry-run``, before the target is built or called; ``evalkit pairwise
            --config``), never by ``gate`` or ``plugins list``: it checks that what the
            section declares can work now (an environment variable it names is set). A
            ``ValueError`` or ``LookupError`` is reported as ``apply``'s are; a
            :class:`~evalkit.io.model_errors.Problem` whose ``loc`` is relative to the
            section is reported at that key's line. ``None``: nothing is checked.
    """

    name: str
    model: Any
    apply: Callable[[Any, Any], None] | None = None
    description: str = ""
    restore: Callable[[Any], None] | None = None
    preflight: Callable[[Any, Any], None] | None = None


AnySpec = (MetricSpec | MetricFamily | AggregateSpec | LoaderSpec | TargetSpec | ReporterSpec
           | ExecutorSpec | MeasureSyntaxSpec | RunFormatSpec | RunEvaluatorSpec | CommandSpec
           | ConfigSectionSpec)
#: Every record type, for ``isinstance`` checks.
SPEC_TYPES: tuple[type, ...] = (MetricSpec, MetricFamily, AggregateSpec, LoaderSpec, TargetSpec,
                                ReporterSpec, ExecutorSpec, MeasureSyntaxSpec, RunFormatSpec,
                                RunEvaluatorSpec, CommandSpec, ConfigSectionSpec)
def _accepts(spec: LoaderSpec, path: str) -> bool:
    """``spec.accepts(path)``; an error counts as accepting (the loader reports it)."""
    assert spec.accepts is not None
    try:
        return bool(spec.accepts(Path(path)))
    except Exception:
        return True


def loader_for_path(loaders: Mapping[str, LoaderSpec], path: str) -> LoaderSpec | None:
    """The loader of ``loaders`` (``{name: record}``, one kind) that reads ``path``: the
    longest matching suffix first; on a tie, one whose ``accepts`` looks at the content
    before one that takes any file; the only loader of the kind when none matches; else
    None. A ``path`` written ``SCHEME:ID`` goes to the loader of that ``scheme``."""
    if (named := next((s for s in loaders.values() if s.scheme and str(path).startswith(
            f"{s.scheme}:")), None)) is not None:
        return named
    lowered = str(path).lower()
    matches: list[tuple[int, bool, str, LoaderSpec]] = []
    for key, spec in loaders.items():
        longest = max((len(s) for s in spec.suffixes if lowered.endswith(s.lower())), default=0)
        if longest:
            matches.append((-longest, spec.accepts is None, key, spec))
    for *_, spec in sorted(matches, key=lambda m: m[:3]):
        if spec.accepts is None or _accepts(spec, path):
            return spec
    return next(iter(loaders.values())) if len(loaders) == 1 else None
