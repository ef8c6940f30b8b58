"""DataFrames: ``to_pandas()`` of runs, comparisons and gates, and the per-query table as
Parquet.

pandas (and pyarrow, for Parquet) are the optional extra ``paired-evalkit[pandas]``; they
are imported when a function here is called, never by ``import evalkit``. Without them
:func:`require_pandas` raises :class:`MissingExtraError`, which names the extra.

The frames' columns are those of :mod:`evalkit.report.tables` (which ``evalkit eval --csv``
writes without pandas):

* :func:`run_frame` (``RunResult.to_pandas()``): one row per query, ``qid`` (text), one
  float column per metric (NaN where the metric or the call failed), the counts, ``error``
  and ``latency_ms`` (float, NaN for a precomputed run), as PyTerrier's per-query results;
* :func:`comparison_frame` (``Comparison.to_pandas()``): one row per (candidate, metric)
  with every scalar field of the table; ``long=True`` gives ``qid, system, metric,
  value``, PyTerrier's ``pt.Experiment(..., perquery=True)`` shape;
* :func:`gate_frame` (``GateReport.to_pandas()``): one row per check.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.report.tables import (
    Columns,
    comparison_columns,
    comparison_long_columns,
    gate_columns,
    run_columns,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.comparison.model import Comparison
    from evalkit.data.results import RunResult
    from evalkit.gate.verdicts import GateReport

#: The optional extra that installs pandas and pyarrow.
PANDAS_EXTRA = "paired-evalkit[pandas]"


class MissingExtraError(ImportError):
    """An optional library is not installed; the message names the extra to install."""


def require_pandas(what: str = "to_pandas()") -> Any:
    """The ``pandas`` module.

    Raises:
        MissingExtraError: pandas is not installed; the message says to ``pip install
            'paired-evalkit[pandas]'``.
    """
    try:
        import pandas
    except ImportError as exc:
        raise MissingExtraError(
            f"{what} needs pandas, which is not installed ({exc}); install the extra: "
            f"pip install '{PANDAS_EXTRA}'") from None
    return pandas


def _frame(columns: Columns, floats: tuple[str, ...] = (), what: str = "to_pandas()"
           ) -> pd.DataFrame:
    pandas = require_pandas(what)
    # ``error`` and ``message`` keep None for "no error" (not a text column's NaN)
    df: pd.DataFrame = pandas.DataFrame({
        k: pandas.Series(v, dtype=object) if k in ("error", "message") else v
        for k, v in columns.items()})
    for name in floats:
        if name in df.columns:
            df[name] = df[name].astype("float64")
    return df


def run_frame(run: RunResult, metrics: Sequence[str] | None = None,
              counts: Sequence[str] | None = None) -> pd.DataFrame:
    """``run`` as a ``pandas.DataFrame``, one row per query (see the module docstring);
    ``metrics`` and ``counts`` choose those columns (default: all).

    Raises:
        MissingExtraError: pandas is not installed.
    """
    columns = run_columns(run, metrics, counts)
    metrics = tuple(n for n in columns if n not in ("qid", "sample", "error", "latency_ms")
                    and any(isinstance(v, float) for v in columns[n]))
    df = _frame(columns, (*metrics, "latency_ms"))
    if "sample" in df.columns and df["sample"].isna().any():
        df["sample"] = df["sample"].astype("Int64")
    return df


def comparison_frame(c: Comparison, long: bool = False) -> pd.DataFrame:
    """``c`` as a ``pandas.DataFrame``: one row per (candidate, metric), or with ``long``
    one row per (system, metric, query) with columns ``qid, system, metric, value``.

    Raises:
        MissingExtraError: pandas is not installed.
    """
    if long:
        return _frame(comparison_long_columns(c), ("value",))
    return _frame(comparison_columns(c), ("ci_low", "ci_high", "p_adjusted",
                                          "standardized_effect"))


def gate_frame(g: GateReport) -> pd.DataFrame:
    """``g`` as a ``pandas.DataFrame``, one row per check.

    Raises:
        MissingExtraError: pandas is not installed.
    """
    return _frame(gate_columns(g), ("observed", "threshold", "baseline_value", "difference",
                                    "ci_low", "ci_high", "p_value", "p_adjusted", "alpha"))


def write_parquet(run: RunResult, path: str | os.PathLike[str], *,
                  metrics: Sequence[str] | None = None,
                  counts: Sequence[str] | None = None) -> Path:
    """Write the per-query table of ``run`` (:func:`run_frame`, with ``metrics`` and
    ``counts`` chosen) to a Parquet file, as every output is written
    (:func:`evalkit.io.outputs.write_output`: missing folders created, a regular file
    replaced atomically, a symbolic link followed, a device or FIFO written directly).

    Raises:
        MissingExtraError: pandas or pyarrow is not installed.
        evalkit.io.outputs.UnwritableError: the file cannot be written.
    """
    import io

    from evalkit.io.outputs import write_output

    df = run_frame(run, metrics, counts)
    try:
        import pyarrow  # noqa: F401  (pandas would name fastparquet as well)
    except ImportError as exc:
        raise MissingExtraError(
            f"--parquet needs pyarrow, which is not installed ({exc}); install the extra: "
            f"pip install '{PANDAS_EXTRA}'") from None
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return write_output(Path(path), buf.getvalue())


__all__ = ["PANDAS_EXTRA", "MissingExtraError", "comparison_frame", "gate_frame",
           "require_pandas", "run_frame", "write_parquet"]
