"""JSON reporter: the report model as one JSON document (non-finite numbers as null)."""

from __future__ import annotations

import json
import math
from typing import Any

from evalkit.report.model import as_report


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def render_json(obj: Any) -> str:
    """The report as indented JSON: ``type`` (``"report"``), ``schema_version``,
    ``kind``, ``title``, ``subject``, ``reference``,
    ``status``, ``summary``, ``exit_code``, ``counts``, ``rows`` (one object per check or
    metric), ``notes`` and, for gates, ``data`` (the full gate result). NaN and infinities
    are written as ``null``, so the output is strict JSON."""
    report = as_report(obj)
    return json.dumps(_finite(report.to_dict()), indent=2, allow_nan=False) + "\n"
