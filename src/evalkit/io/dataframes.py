"""Whether an object is a ``pandas.DataFrame``, without importing pandas."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import TypeIs


def is_dataframe(obj: object) -> TypeIs[pd.DataFrame]:
    """Whether ``obj`` is a ``pandas.DataFrame`` (without importing pandas: a frame exists
    only once pandas is imported)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)
