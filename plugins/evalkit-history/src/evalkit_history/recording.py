"""What the ``history`` reporter records: the run of a gate or of ``evalkit run``.

The label and commit of the recorded run come from the environment, as CI systems set
it: ``EVALKIT_HISTORY_LABEL`` and ``EVALKIT_HISTORY_COMMIT`` (else ``GITHUB_SHA``, else
``CI_COMMIT_SHA``, GitHub's and GitLab's).
"""

from __future__ import annotations

import os
from typing import Any

#: Environment variables read for the commit of a recorded run, first set wins.
COMMIT_VARIABLES = ("EVALKIT_HISTORY_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA")


def run_of(obj: Any) -> Any:
    """The run in ``obj``: a ``RunResult`` itself, or a ``GateReport``'s gated run.

    Raises:
        ValueError: ``obj`` holds no run (a comparison), or is a gate that could not
            judge because the run or the baseline is incomplete.
    """
    from evalkit.data.results import RunResult
    from evalkit.gate.verdicts import GateReport

    if isinstance(obj, RunResult):
        return obj
    if isinstance(obj, GateReport):
        if obj.incomplete:
            raise ValueError("history: the gate could not judge (the run or the baseline "
                             "is incomplete), so its run is not recorded")
        if obj.run is None:
            raise ValueError("history: the gate report does not hold its run")
        return obj.run
    raise ValueError(f"history: records the run of evalkit gate or evalkit run, not a "
                     f"{type(obj).__name__}")


def record_run(obj: Any, target: str) -> str:
    """Add the run of ``obj`` (:func:`run_of`) to the history database ``target`` (a
    path or ``sqlite:///`` URL), labelled and committed as the environment says.

    Returns:
        One line: the run's number in the history and its step from the one before.

    Raises:
        ValueError: no run in ``obj``, an incomplete run
            (:func:`evalkit.gate.baseline.require_storable`), a database that cannot be
            opened (:class:`~evalkit_history.store.HistoryError`).
    """
    from evalkit_history.store import History
    from evalkit_history.table import step_line

    run = run_of(obj)
    commit = next((os.environ[v] for v in COMMIT_VARIABLES if os.environ.get(v)), None)
    with History(target) as history:
        stored = history.add(run, label=os.environ.get("EVALKIT_HISTORY_LABEL") or None,
                             commit=commit)
    return f"history: {target}: " + step_line(stored)
