"""The options of a comparison that no test can run with, refused before any work.

The messages name the command line's options (``--alpha``, ``--resamples``, ``--ci``),
which :func:`evalkit.compare` takes as ``alpha``, ``n_resamples`` and ``ci``: the command
line prints the library's message as it is. The choices of the options are here too
(:class:`Method`, :class:`Correction`, :class:`CIMethod`, :class:`Alternative`), as the
command line offers them. Only the standard library is imported.
"""

from __future__ import annotations

from enum import StrEnum

from evalkit.comparison.records import ComparisonError
from evalkit.stats.numeric import finite_real, value_text


class Method(StrEnum):
    """The paired test (mirrors ``evalkit.stats.METHODS``; a test keeps them equal)."""

    auto = "auto"
    randomization = "randomization"
    t_test = "t-test"
    bootstrap_t = "bootstrap-t"
    bootstrap = "bootstrap"
    randomization_bootstrap_t = "randomization+bootstrap-t"


class Correction(StrEnum):
    """Multiple-comparison adjustment (mirrors ``evalkit.stats.multiple.CORRECTIONS``)."""

    holm = "holm"
    bh = "bh"
    westfall_young = "westfall-young"
    none = "none"


class CIMethod(StrEnum):
    """Interval method (mirrors ``evalkit.stats.CI_METHODS``)."""

    percentile = "percentile"
    bca = "bca"
    bootstrap_t = "bootstrap-t"
    inversion = "inversion"
    t = "t"
    inversion_bootstrap_t = "inversion+bootstrap-t"


class By(StrEnum):
    """What ``evalkit compare --by`` slices the cases by (mirrors
    ``evalkit.comparison.slices.BY_CHOICES``)."""

    tag = "tag"


class Tau2(StrEnum):
    """The between-collection variance estimator of ``evalkit compare --collections``
    (mirrors ``evalkit.stats.meta.TAU2_METHODS``; a test keeps them equal)."""

    pm = "pm"
    dl = "dl"


class Alternative(StrEnum):
    """Which difference the test looks for."""

    two_sided = "two-sided"
    greater = "greater"
    less = "less"


#: The default test; equal to ``evalkit.stats.DEFAULT_METHOD`` (a test checks it), chosen
#: by the stats calibration benchmark (docs/statistics.md). Kept literal so that
#: ``evalkit compare --help`` does not import numpy.
DEFAULT_METHOD = Method.auto

#: Fewest resamples accepted: with fewer, a resampling p cannot go below 1/(B+1) ~ 0.01 and
#: the tails of a 95% interval rest on a handful of resamples (the gate asks the same).
MIN_RESAMPLES = 100

#: Interval methods that only one test defines (the others go with any test); equal to
#: ``evalkit.stats.CI_OF_METHOD`` (a test checks it), written out so that this module does
#: not import numpy.
CI_OF_TEST: dict[str, str] = {"inversion": "randomization",
                               "inversion+bootstrap-t": "randomization+bootstrap-t"}


def check_alpha(alpha: float) -> None:
    """Refuse a significance level outside (0, 1).

    Raises:
        ComparisonError: ``--alpha 2: expected a number between 0 and 1 (exclusive)``.
    """
    a = finite_real(alpha)
    if a is None or not 0.0 < a < 1.0:
        shown = (f"{alpha:g}" if isinstance(alpha, float) or a is not None
                 else value_text(alpha))
        raise ComparisonError(f"--alpha {shown}: expected a number between 0 and 1 "
                              "(exclusive)")


def check_test_options(method: str, ci: str | None, resamples: int) -> None:
    """Refuse a resample count too small to test with, and an interval that belongs to
    another test.

    Raises:
        ComparisonError: naming the option and what to use instead.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int):
        raise ComparisonError(f"n_resamples must be an integer, got {resamples!r}")
    if resamples < MIN_RESAMPLES:
        raise ComparisonError(
            f"--resamples {resamples} is too few: with B resamples no p-value can go below "
            f"1/(B+1) and the interval's tails rest on a handful of draws (B = 1 gives "
            f"[-inf, +inf]). Use at least {MIN_RESAMPLES}; the default is 10,000"
        )
    owner = CI_OF_TEST.get(ci or "")
    if owner is not None and method != owner:
        raise ComparisonError(
            f"--ci {ci} inverts the {owner} test and goes only with --test {owner} (where "
            f"it is the default). With --test {method}, leave --ci out to get the test's own "
            "interval, or pick percentile, bca, bootstrap-t or t"
        )


def resamples_used(method: str, ci: str | None, correction: str) -> bool:
    """Whether a comparison draws resamples (so that ``n_resamples`` and ``seed`` apply):
    every test but the paired t-test does, and so does a bootstrap interval
    (``percentile``, ``bca``, ``bootstrap-t``) and the Westfall-Young correction; the
    t-test with its own interval (``t``) and Holm, BH or no correction draws none."""
    return method != "t-test" or ci not in (None, "t") or correction == "westfall-young"


def check_top(top: int) -> None:
    """Refuse a ``top`` that is not a count of queries.

    Raises:
        ComparisonError: ``top`` is negative or not an integer.
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ComparisonError(f"--top {top!r}: expected an integer >= 0 (the queries to "
                              "list that moved most each way)")


def check_request(n_runs: int, *, alpha: float, method: str, ci: str | None,
                  n_resamples: int, top: int = 0) -> None:
    """Everything :func:`evalkit.compare` refuses before it reads a file: fewer than two
    runs, then :func:`check_alpha`, :func:`check_test_options` and :func:`check_top` (the
    command line calls it first, so that these come before any check of its outputs).

    Raises:
        ComparisonError: the first problem found.
    """
    if n_runs < 2:
        raise ComparisonError("compare needs a baseline and at least one candidate run")
    check_alpha(alpha)
    check_test_options(method, ci, n_resamples)
    check_top(top)


__all__ = ["CI_OF_TEST", "MIN_RESAMPLES", "check_alpha", "check_request",
           "check_test_options", "check_top", "resamples_used"]
