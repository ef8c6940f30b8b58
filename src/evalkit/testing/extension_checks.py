"""The conformance checks of what a plugin adds to the command line and the eval config.

``command:<name>:loads``: the record's ``load`` imports, and names a function, a
``typer.Typer`` or a click command (each is callable). ``config-section:<name>:model``:
the record's ``model`` imports (when an import string), is a pydantic model, and makes
its JSON Schema (what ``evalkit schema config`` prints). ``reporter:<name>:renders``: the
record's ``render`` returns text for sample reports of a gate and of a comparison (what
``--report NAME:PATH`` writes); a recording reporter's ``record`` is callable (calling it
would record somewhere).
"""

from __future__ import annotations

from evalkit.core.import_strings import command_problem
from evalkit.core.specs import CommandSpec, ConfigSectionSpec, ReporterSpec
from evalkit.plugins.failures import PLUGIN_FAILURES
from evalkit.plugins.section_models import model_problem
from evalkit.report.model import Report, ReportCase, ReportRow, ReportRun


def command_loads(spec: CommandSpec) -> None:
    """Raise ``AssertionError`` unless ``spec.load`` imports and names what a command
    runs (:func:`evalkit.core.import_strings.command_problem`, as ``evalkit plugins list
    --check`` checks it)."""
    problem = command_problem(spec.load)
    if problem is not None:
        raise AssertionError(f"command {spec.name!r}: {problem}")


def section_model_works(spec: ConfigSectionSpec) -> None:
    """Raise ``AssertionError`` unless the section's model imports, is a pydantic model
    and makes its JSON Schema."""
    model, why = model_problem(spec)
    if why is not None:
        raise AssertionError(f"config section {spec.name!r}: {why}")
    try:
        model.model_json_schema()
    except Exception as exc:
        raise AssertionError(f"config section {spec.name!r}: its model makes no JSON "
                             f"Schema ({type(exc).__name__}: {exc})") from exc


__all__ = ["command_loads", "section_model_works"]


def sample_reports() -> list[Report]:
    """Reports of the shapes a reporter is handed: a failed gate (a passing, a failing, an
    errored and a warn-level check, a case with an error) and a comparison of two runs."""
    gate = Report(
        kind="gate", title="evalkit gate", subject="run.jsonl", reference="baseline.jsonl",
        status="failed", summary="gate failed: 1 passed, 1 failed, 0 warned, 1 errors",
        exit_code=2, notes=("note: a sample note",),
        rows=(
            ReportRow("floor", "pass", "ndcg@10", value=0.5, rule=">= 0.4",
                      coverage="3/3 cases"),
            ReportRow("no_regress", "fail", "recall@10", value=0.25, reference_value=0.5,
                      difference=-0.25, ci_low=-0.4, ci_high=-0.1, p_value=0.01,
                      p_adjusted=0.02, coverage="3/3 cases", failed=True,
                      candidate="run", baseline="baseline"),
            ReportRow("latency", "error", "latency_p95", coverage="0/3 cases",
                      detail="not judged: a sample reason", errored=True),
            ReportRow("soft", "fail", "mrr@10", level="warn", value=0.1, rule=">= 0.2"),
        ),
        runs=(ReportRun("run", "run.jsonl", "candidate"),
              ReportRun("baseline", "baseline.jsonl", "baseline")),
        cases=(ReportCase("q1", values={"ndcg@10": 0.5}),
               ReportCase("q2", error="TimeoutError: a sample error")),
    )
    compare = Report(
        kind="compare", title="evalkit compare", subject="b.jsonl", reference="a.jsonl",
        status="complete", summary="1 metric compared",
        rows=(ReportRow("ndcg@10", "significant", "ndcg@10", value=0.6, reference_value=0.5,
                        difference=0.1, ci_low=0.02, ci_high=0.18, p_value=0.03,
                        candidate="b", baseline="a", n_queries=3, significant=True,
                        wins=2, ties=1, losses=0, higher_is_better=True),),
        runs=(ReportRun("a", "a.jsonl", "baseline"), ReportRun("b", "b.jsonl", "candidate")),
        queries={"q1": "a sample query"},
    )
    return [gate, compare]


def reporter_renders(spec: ReporterSpec) -> None:
    """Raise ``AssertionError`` unless ``spec.render`` returns text (a ``str``) for each
    of :func:`sample_reports`, without raising; for a recording reporter
    (``ReporterSpec.record``), unless ``record`` is callable."""
    if spec.record is not None:
        if not callable(spec.record):
            raise AssertionError(f"reporter {spec.name!r}: its record {spec.record!r} is "
                                 "not callable")
        return
    if not callable(spec.render):
        raise AssertionError(f"reporter {spec.name!r}: {spec.render!r} is not callable")
    for report in sample_reports():
        try:
            text = spec.render(report)
        except PLUGIN_FAILURES as exc:
            raise AssertionError(f"reporter {spec.name!r}: render raised "
                                 f"{type(exc).__name__}: {exc} on a sample {report.kind} "
                                 "report") from exc
        if not isinstance(text, str):
            what = "None" if text is None else f"a {type(text).__name__}"
            raise AssertionError(f"reporter {spec.name!r}: render returned {what} for a "
                                 f"sample {report.kind} report; it must return text (a str)")
