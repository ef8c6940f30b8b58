"""``evalkit eval --csv PATH`` and ``--parquet PATH``: the per-query table as a file.

The table is :func:`evalkit.data.run_views.run_columns` of the scored run, restricted to the
metrics and counts the command shows: ``qid``, one column per metric, one per count, then
``error`` and ``latency_ms`` (empty for a TREC run), the columns of
``RunResult.to_pandas()``, except that a measure whose per-query values are natural
logarithms (gm_map, gm_bpref) is headed ``gm_map (ln)``. CSV is written by the standard
library; Parquet needs the ``paired-evalkit[pandas]`` extra (pandas and pyarrow), checked
before any work.
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
                        csv: Path | None, parquet: Path | None, csv_raw: bool = False
                        ) -> list[Path]:
    """Write the per-query table of ``result`` to ``csv`` and ``parquet`` (those given);
    ``csv_raw``: the CSV's text cells as they are, without the formula guard
    (:func:`evalkit.report.escaping.csv_cell`).

    Returns:
        The paths written.
    """
    from evalkit.data.run_views import run_columns, run_frame
    from evalkit.report.tables import write_csv
    from evalkit_retrieval.run_scores import ln_label

    names = {m: ln_label(m) for m in metrics if ln_label(m) != m}
    written: list[Path] = []
    if csv is not None:
        columns = run_columns(result, metrics, counts)
        written.append(write_csv({names.get(k, k): v for k, v in columns.items()}, csv,
                                 raw=csv_raw))
    if parquet is not None:
        from evalkit.tables.frames import write_parquet_frame

        frame = run_frame(result, metrics, counts).rename(columns=names)
        written.append(write_parquet_frame(frame, parquet))
    return written


__all__ = ["check_table_outputs", "write_table_outputs"]
