"""The history as text: the table of ``evalkit history show`` and the line that says what
was added.

A metric's cell is its mean and, when the run is comparable with the one before, the
paired difference from it, ``*`` marking a significant step. A run that is not
comparable with the one before is preceded by a ``break`` line naming why; its cell
then shows the difference from the latest earlier run evaluated alike (``vs #2``), if
any.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit_history.steps import MetricStep
from evalkit_history.store import StoredRun


class UnknownMetricError(ValueError):
    """A ``-m`` metric that no listed run holds (the message lists those they hold)."""


def available_metrics(runs: Sequence[StoredRun]) -> list[str]:
    """Every metric, then every aggregate, of ``runs``, in the order first seen."""
    names: dict[str, None] = {}
    for run in runs:
        names.update(dict.fromkeys(run.means))
    for run in runs:
        names.update(dict.fromkeys(run.aggregates))
    return list(names)


def chosen_metrics(runs: Sequence[StoredRun], wanted: Sequence[str]) -> list[str]:
    """``wanted`` (split at commas), or every metric and aggregate of ``runs``.

    Raises:
        UnknownMetricError: a name no run holds.
    """
    have = available_metrics(runs)
    names = [n.strip() for w in wanted for n in w.split(",") if n.strip()]
    from evalkit.core.metric_lookup import suggestion

    for name in names:
        if name not in have:
            raise UnknownMetricError(
                f"-m {name}: no run of the history holds it{suggestion(name, have)} (they "
                f"hold: {', '.join(have) or 'nothing'})")
    return names or have


def _cell(run: StoredRun, metric: str, steps: dict[str, MetricStep]) -> str:
    value = run.means.get(metric, run.aggregates.get(metric))
    if value is None:
        return "-"
    step = steps.get(metric)
    if step is None:
        return f"{value:.4f}"
    against = f" vs #{run.step.previous_id}" if run.step.skips else ""
    return f"{value:.4f} ({step.diff:+.4f}{'*' if step.significant else ''}{against})"


def _break(run: StoredRun) -> str:
    """The break before ``run``, and the run its step is against when not the one before."""
    text = f"break from #{run.step.after}: " + "; ".join(run.step.reasons)
    if run.step.skips:
        text += f"; steps against #{run.step.previous_id}, the latest run evaluated alike"
    return text


def _who(run: StoredRun) -> tuple[str, str]:
    return run.label or "", (run.commit or "")[:10]


def history_lines(runs: Sequence[StoredRun], metrics: Sequence[str]) -> list[str]:
    """The table of ``evalkit history show``: a header, one line per run (oldest first),
    a ``break`` line before each run not comparable with the one before, and a legend."""
    if not runs:
        return ["the history holds no run; add one with `evalkit history add RUN`"]
    head = ["#", "added", "label", "commit", "run", "cases", *metrics]
    body: list[list[str] | str] = []
    for i, run in enumerate(runs):
        if i > 0 and run.step.is_break:
            body.append(f"-- break before #{run.id}: " + "; ".join(run.step.reasons)
                        + (f"; steps against #{run.step.previous_id}, the latest run "
                           "evaluated alike" if run.step.skips else ""))
        steps = {m.metric: m for m in run.step.metrics}
        label, commit = _who(run)
        body.append([str(run.id), run.added[:10], label, commit, run.name,
                     str(run.n_cases), *(_cell(run, m, steps) for m in metrics)])
    rows = [head, *(b for b in body if isinstance(b, list))]
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(head)]
    out += [b if isinstance(b, str) else line(b) for b in body]
    out.append("(+d): the paired difference from the run before (vs #k: after a break, "
               "from the latest run evaluated alike); *: significant (Holm-adjusted p < "
               "0.05 over the step's metrics); aggregates show no step")
    return out


def step_line(run: StoredRun) -> str:
    """One line: the run added, its number, and its step from the run before (after a
    break, from the latest run evaluated alike)."""
    label, commit = _who(run)
    extra = ", ".join(x for x in (f"label {label}" if label else "",
                                  f"commit {commit}" if commit else "") if x)
    head = f"added run {run.name!r} as #{run.id}" + (f" ({extra})" if extra else "")
    step = run.step
    if step.previous_id is None:
        return head + "; the first run of the history"
    if not step.comparable:
        return (head + f"; a {_break(run)}; no earlier run was evaluated alike, so no "
                "step")
    changes = ", ".join(
        f"{m.metric} {m.diff:+.4f}" + (f" ({m.direction}, significant)" if m.significant
                                       else "")
        for m in step.metrics)
    if step.skips:
        return head + f"; a {_break(run)}: {changes}"
    return head + f"; against #{step.previous_id}: {changes}"


__all__ = ["UnknownMetricError", "available_metrics", "chosen_metrics", "history_lines",
           "step_line"]
