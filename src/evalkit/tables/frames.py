"""Tables as pandas DataFrames, and DataFrames as Parquet files.

pandas (and pyarrow, for Parquet) are the optional extra ``paired-evalkit[pandas]``; they
are imported when a function here is called, never by ``import evalkit``. Without them
:func:`require_pandas` and :func:`require_parquet` raise :class:`MissingExtraError`, which
names the extra.

The DataFrames of a run, a comparison and a gate (their ``to_pandas()``) are made here
from the columns their owners build: :func:`evalkit.data.run_views.run_frame`,
:func:`evalkit.comparison.tables.comparison_frame`,
:func:`evalkit.gate.verdicts.gate_frame`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os

    import pandas as pd

    from evalkit.tables.columns import Columns

#: The optional extra that installs pandas and pyarrow.
PANDAS_EXTRA = "paired-evalkit[pandas]"

#: The columns of text that keep None for "no error" (not a text column's NaN).
_OBJECT_COLUMNS = ("error", "message")


class MissingExtraError(ImportError):
    """An optional library is not installed; the message names the extra to install."""


def require_pandas(what: str = "to_pandas()") -> Any:
    """The ``pandas`` module; ``what`` names what needs it in the message.

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


def require_parquet(what: str = "--parquet") -> None:
    """Check that Parquet files can be written: pandas and pyarrow are installed.

    Raises:
        MissingExtraError: pandas or pyarrow is not installed; the message names the one
            missing and says to ``pip install 'paired-evalkit[pandas]'``.
    """
    require_pandas(what)
    try:
        import pyarrow  # noqa: F401  (pandas would name fastparquet as well)
    except ImportError as exc:
        raise MissingExtraError(
            f"{what} needs pyarrow, which is not installed ({exc}); install the extra: "
            f"pip install '{PANDAS_EXTRA}'") from None


def frame(columns: Columns, floats: tuple[str, ...] = (), what: str = "to_pandas()"
          ) -> pd.DataFrame:
    """``columns`` as a ``pandas.DataFrame``, one column each, in order: the columns named
    in ``floats`` as ``float64`` (None becomes NaN), ``error`` and ``message`` as objects
    that keep None, the others as pandas infers them.

    Raises:
        MissingExtraError: pandas is not installed (the message names ``what``).
    """
    pandas = require_pandas(what)
    df: pd.DataFrame = pandas.DataFrame({
        k: pandas.Series(v, dtype=object) if k in _OBJECT_COLUMNS else v
        for k, v in columns.items()})
    for name in floats:
        if name in df.columns:
            df[name] = df[name].astype("float64")
    return df


def write_parquet_frame(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``df`` (without its index) to a Parquet file with pyarrow, as every output is
    written (:func:`evalkit.io.outputs.write_output`: missing folders created, a regular
    file replaced atomically, a symbolic link followed, a device or FIFO written directly).

    Raises:
        MissingExtraError: pyarrow is not installed.
        evalkit.io.outputs.UnwritableError: the file cannot be written.
    """
    import io

    from evalkit.io.outputs import write_output

    require_parquet()
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return write_output(Path(path), buf.getvalue())


__all__ = ["PANDAS_EXTRA", "MissingExtraError", "frame", "require_pandas", "require_parquet",
           "write_parquet_frame"]
