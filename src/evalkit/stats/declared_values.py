"""What a metric declares of its values, and the one rule that checks a value against it.

A metric may declare ``bounds=(lo, hi)`` (every case's value lies in ``[lo, hi]``) and
``value_type`` (``"binary"``: every value is 0 or 1), as ``MetricSpec`` records them.
The statistics rely on both (the paired test a binary metric gets, the range
``evalkit run --until-decided`` bounds its sequence with), so a value that breaks them is
that case's metric error, as a raising metric is: scoring (:mod:`evalkit.execute.scoring`)
and the conformance suite (:mod:`evalkit.testing.conformance`) both apply
:func:`value_problem`.
"""

from __future__ import annotations

from typing import Any

#: Slack for a value a hair outside its declared range (floating-point rounding: an nDCG
#: of 1.0000000000000002), as a fraction of the range's width.
RANGE_SLACK = 1e-9


def declared_range(spec: Any) -> tuple[float, float] | None:
    """``(lo, hi)`` that every case's value of ``spec`` lies in: its ``bounds``, else
    ``(0, 1)`` for a metric declared ``"binary"``; None when it declares neither (or
    ``spec`` is not a metric)."""
    bounds = getattr(spec, "bounds", None)
    if bounds is not None:
        return (float(bounds[0]), float(bounds[1]))
    return (0.0, 1.0) if getattr(spec, "value_type", None) == "binary" else None


def value_problem(spec: Any, value: float) -> str | None:
    """Why the finite ``value`` cannot be a case's value of ``spec``, as words to follow
    "returned 5.0 for case 'q1': ", or None when it can.

    The bounds are inclusive (``[0, 1]`` holds 0 and 1), with :data:`RANGE_SLACK` of
    their width for rounding; a ``"binary"`` metric's value must be exactly 0 or 1.
    """
    span = declared_range(spec)
    slack = 0.0 if span is None else RANGE_SLACK * (span[1] - span[0])
    if span is not None and not span[0] - slack <= value <= span[1] + slack:
        what = "bounds" if getattr(spec, "bounds", None) is not None else \
            "value_type 'binary' (0 or 1)"
        return f"outside [{span[0]:g}, {span[1]:g}], the range its declared {what} allows"
    if getattr(spec, "value_type", None) == "binary" and value not in (0.0, 1.0):
        return "neither 0 nor 1, though it declares value_type 'binary'"
    return None


__all__ = ["RANGE_SLACK", "declared_range", "value_problem"]
