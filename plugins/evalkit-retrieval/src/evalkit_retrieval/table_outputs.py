"""``evalkit eval --csv PATH`` and ``--parquet PATH``: the per-query table as a file.

The table is :func:`evalkit.data.run_views.run_columns` of the scored run, restricted to the
metrics and counts the command shows: ``qid``, one column per metric, one per count, then
``error`` and ``latency_ms`` (empty for a TREC run), the columns of
``RunResult.to_pandas()``. CSV is written by the standard library; Parquet needs the
``paired-evalkit[pandas]`` extra (pandas and pyarrow), checked before any work.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.io.outputs import DestinationError, require_writable

if TYPE_CHECKING:
    from evalkit.data.run_record import RunRecord


def check_table_outputs(csv: Path | None, parquet: Path | None,
                        inputs: Sequence[Path | None]) -> None:
    """Refuse, before any work, an unwritable ``--csv`` or ``--parquet`` path, one that is
    an input, the same file for both, or ``--parquet`` without pandas and pyarrow.

    Raises:
        DestinationError (a ValueError): the message names the option and the fix.
    """
    if csv is not None:
        require_writable(csv, "--csv", "per-query.csv", inputs=inputs)
    if parquet is not None:
        require_writable(parquet, "--parquet", "per-query.parquet", inputs=inputs)
        from evalkit.tables.frames import MissingExtraError, require_parquet

        try:
            require_parquet("--parquet")
        except MissingExtraError as exc:
            raise DestinationError(f"{exc} (or write CSV with --csv, which needs neither)"
                                   ) from None
    if csv is not None and parquet is not None and csv.resolve() == parquet.resolve():
        raise DestinationError(f"--csv and --parquet both name {csv}; give each its own path")


def write_table_outputs(result: RunRecord, metrics: Sequence[str], counts: Sequence[str],
                        csv: Path | None, parquet: Path | None) -> list[Path]:
    """Write the per-query table of ``result`` to ``csv`` and ``parquet`` (those given).

    Returns:
        The paths written.
    """
    from evalkit.data.run_views import run_columns, write_parquet
    from evalkit.report.tables import write_csv

    written: list[Path] = []
    if csv is not None:
        written.append(write_csv(run_columns(result, metrics, counts), csv))
    if parquet is not None:
        written.append(write_parquet(result, parquet, metrics=metrics, counts=counts))
    return written


__all__ = ["check_table_outputs", "write_table_outputs"]
