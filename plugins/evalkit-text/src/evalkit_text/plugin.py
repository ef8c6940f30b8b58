"""Hook implementations of evalkit-text (entry point ``text`` in the ``evalkit.plugins``
group). Registering imports only the standard library and the kernel's records; the
``jsonschema`` library is imported when a ``json_schema(...)`` metric is named."""

from __future__ import annotations

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit_text.records import metric_records


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec | MetricFamily]:
    """exact_match, f1, rouge_l, contains, regex, json_valid and json_schema."""
    return list(metric_records())
