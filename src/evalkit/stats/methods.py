"""The paired tests and intervals by name, which go together, and which test "auto" runs.

:data:`METHODS` and :data:`CI_METHODS` are the names the library and the command line
accept; :data:`DEFAULT_CI` is each test's own interval (with it the interval excludes 0
exactly when ``p < alpha``); :func:`check_options` refuses a combination no test runs.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


Method = Literal["auto", "bootstrap-t", "bootstrap", "randomization", "t-test"]


CIMethod = Literal["percentile", "bca", "bootstrap-t", "inversion", "t"]


#: The paired tests ``method=`` accepts (``auto`` picks one per metric).
METHODS: tuple[str, ...] = ("auto", "randomization", "t-test", "bootstrap-t", "bootstrap")


#: The interval methods ``ci=`` accepts.
CI_METHODS: tuple[str, ...] = ("percentile", "bca", "bootstrap-t", "inversion", "t")


ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")


#: The interval each method reports unless ``ci=`` says otherwise; with these the
#: interval excludes 0 exactly when ``p < alpha`` (``"bootstrap"`` excepted).
DEFAULT_CI: dict[str, str] = {
    "bootstrap-t": "bootstrap-t",
    "bootstrap": "percentile",
    "randomization": "inversion",
    "t-test": "t",
}


#: Interval methods that belong to one test: ``inversion`` is the set of means the
#: sign-flip randomization test does not reject, so it goes only with
#: ``method="randomization"`` (whose default it is; not with "auto", which may run the
#: t-test). Every other interval goes with every method.
CI_OF_METHOD: dict[str, str] = {"inversion": "randomization"}


def check_options(method: str, ci: str | None, alpha: float, alternative: str) -> str | None:
    """Validate the options; return ``ci`` (None: each method's own). Raises ValueError,
    for an unknown name and for an interval that belongs to another test
    (:data:`CI_OF_METHOD`)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if ci is not None and ci not in CI_METHODS:
        raise ValueError(f"unknown ci {ci!r}; choose one of {', '.join(CI_METHODS)}")
    owner = CI_OF_METHOD.get(ci or "")
    if owner is not None and method != owner:
        shared = ", ".join(repr(c) for c in CI_METHODS if c not in CI_OF_METHOD)
        raise ValueError(
            f"ci={ci!r} inverts the {owner} test, so it goes only with method={owner!r}, "
            f"not method={method!r}. Allowed combinations: method={owner!r} with ci=None "
            f"(its own interval, {ci!r}) or any ci; every other method with ci=None (the "
            f"test's own interval) or one of {shared}"
        )
    if not (isinstance(alpha, float | int) and 0.0 < float(alpha) < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"unknown alternative {alternative!r}; choose one of {', '.join(ALTERNATIVES)}"
        )
    return ci


def is_binary(d: FloatArray) -> bool:
    """Whether the non-zero differences all have one magnitude (a 0/1 metric, pass/fail),
    not all differences being equal."""
    nz = np.abs(d[d != 0.0])
    return bool(nz.size > 0 and np.all(nz == nz[0]) and not np.all(d == d[0]))


def resolve_method(method: str, d: FloatArray) -> str:
    """The test ``method`` runs on differences ``d``: "auto" is the sign-flip
    randomization test, or the paired t-test when ``d`` is binary (:func:`is_binary`)."""
    if method != "auto":
        return method
    return "t-test" if is_binary(d) else "randomization"
