"""The DataFrame and notebook views of a run, mixed into :class:`evalkit.RunResult`.

Both import what they need when called (pandas for :meth:`RunViews.to_pandas`), so the run
model stays free of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.data.results import RunResult


class RunViews:
    """``to_pandas()`` and ``_repr_html_()`` of :class:`~evalkit.RunResult`."""

    def to_pandas(self, samples: bool = False) -> pd.DataFrame:
        """The rows as a ``pandas.DataFrame``: one row per query, ``qid`` (text), one float
        column per metric (NaN where it failed), one per count (``num_ret``, ...), then
        ``error`` and ``latency_ms`` (:func:`evalkit.report.frames.run_frame`). With
        ``samples=True`` and a run of K >= 2 samples per case, one row per (case,
        sample) instead, with a ``sample`` column (the per-case rows are their mean, or
        the run's reduction).

        Raises:
            evalkit.report.frames.MissingExtraError: (an ``ImportError``) pandas is not
                installed: ``pip install 'paired-evalkit[pandas]'``.
        """
        from dataclasses import replace

        from evalkit.report.frames import run_frame

        run = cast("RunResult", self)
        if samples and run.samples:
            run = replace(run, per_query=list(run.samples))
        return run_frame(run)

    def _repr_html_(self) -> str:
        """Jupyter's view of the run: each metric's mean, each count's total, how many rows
        errored (:func:`evalkit.report.html_table.run_html`)."""
        from evalkit.report.html_table import run_html

        return run_html(self)


__all__ = ["RunViews"]
