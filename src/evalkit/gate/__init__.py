"""The gate: checks read from YAML, judged against a run and a baseline, and the verdict.

Holds the checks file (:mod:`.checks`; its pydantic models :mod:`.checks_models`, the
operators and the threshold comparison :mod:`.check_ops`), the judging of every check and
the exit code (:mod:`.evaluate`), what each check decided (:mod:`.check_verdicts`) and
what the gate decided, with its report, columns and DataFrame (:mod:`.verdicts`), and
the stored baselines a check compares against with their fingerprints (:mod:`.baseline`,
:mod:`.fingerprint`).

May import: io, stats, core, plugins, data, report, tables (the
:class:`~evalkit.report.Report` model a :class:`GateReport` becomes; the generic columns
and DataFrames its checks are drawn as). Never the comparison's command or the command
line; a reporter is reached through the registry by name, never imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "evaluate_gate": "evalkit.gate.evaluate",
    "gate_from_files": "evalkit.gate.evaluate",
    "holm": "evalkit.gate.evaluate",
    "DEFAULT_RESAMPLES": "evalkit.gate.evaluate",
    "DEFAULT_SEED": "evalkit.gate.evaluate",
    "GateReport": "evalkit.gate.verdicts",
    "CheckResult": "evalkit.gate.check_verdicts",
    "BaselineComparison": "evalkit.gate.check_verdicts",
}
__all__ = sorted(_LAZY)
# the checks and the baselines are read by commands that never judge (numpy stays out)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

if TYPE_CHECKING:
    from evalkit.gate.check_verdicts import BaselineComparison as BaselineComparison
    from evalkit.gate.check_verdicts import CheckResult as CheckResult
    from evalkit.gate.evaluate import DEFAULT_RESAMPLES as DEFAULT_RESAMPLES
    from evalkit.gate.evaluate import DEFAULT_SEED as DEFAULT_SEED
    from evalkit.gate.evaluate import evaluate_gate as evaluate_gate
    from evalkit.gate.evaluate import gate_from_files as gate_from_files
    from evalkit.gate.evaluate import holm as holm
    from evalkit.gate.verdicts import GateReport as GateReport
