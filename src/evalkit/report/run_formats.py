"""What a run format of ``evalkit eval --format NAME`` is handed, and how it is found.

A :class:`~evalkit.core.specs.RunFormatSpec` (``evalkit_register_run_formats``) renders a
:class:`ScoredRun`; :func:`run_format` finds it in the registry by name (the command,
``evalkit eval``, is the retrieval plugin's; ``table`` and ``json`` are its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit.core.metric_names import MeasureRequest
    from evalkit.core.specs import RunFormatSpec
    from evalkit.data.results import RunResult


class MeasureSelectionError(ValueError):
    """A measure asked for that the run does not hold (the message lists what it has)."""



@dataclass(frozen=True)
class ScoredRun:
    """What ``evalkit eval --format NAME`` hands a run format's ``render``.

    Attributes:
        result: the scored run (its rows, their metrics and counts, its header).
        request: what the ``-m`` values asked for
            (:class:`~evalkit.core.metric_names.MeasureRequest`; its ``layout`` is the run
            format's own when its measure syntax read them).
        metrics: the measures to show, as the run stores them, in the order asked.
        counts: the per-query counts to show (num_ret, ...).
        per_query: ``--per-query`` / ``-q``: every query's values too.
        judgments: the qrels given with ``--qrels`` (``{qid: {doc: label}}``), else
            ``None`` (an artifact scored earlier keeps its rankings, not the labels).
        zero_missing: ``-c`` or ``--missing zero`` was given (trec_eval's ``-c``).
        source: the run file or artifact.
    """

    result: RunResult
    request: MeasureRequest
    metrics: Sequence[str]
    counts: Sequence[str]
    per_query: bool
    judgments: Mapping[str, Mapping[str, int]] | None
    zero_missing: bool
    source: Path


def run_format(name: str) -> RunFormatSpec:
    """The run format registered as ``name`` (``evalkit eval --format NAME``).

    Raises:
        MeasureSelectionError: no run format has that name (the message lists the
            formats there are: ``table``, ``json`` and those plugins registered), or two
            plugins provide it (naming both).
    """
    from evalkit.core.registry import RegistryError
    from evalkit.core.specs import OWN_RUN_FORMATS, RunFormatSpec
    from evalkit.plugins.default import default_registry

    registry = default_registry()
    try:
        spec = registry.get("run_format", name)
    except RegistryError as exc:
        if any(c.namespace == "run_format" and c.name == name for c in registry.conflicts()):
            raise MeasureSelectionError(f"--format {name}: {exc}") from None
        known = [*OWN_RUN_FORMATS, *(key for _, key, _ in registry.entries("run_format"))]
        raise MeasureSelectionError(f"--format/-f {name}: expected one of "
                                    f"{', '.join(known)}") from None
    assert isinstance(spec, RunFormatSpec)
    return spec
