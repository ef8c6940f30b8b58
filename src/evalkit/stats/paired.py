"""``paired_test``: one entry point for every paired test of a mean difference."""

from __future__ import annotations

import numpy as np

from evalkit.stats._kernels import Backend
from evalkit.stats._rng import GENERATOR_NAME, check_seed
from evalkit.stats.bootstrap import check_resamples, constant_verdict
from evalkit.stats.effects import effect_sizes
from evalkit.stats.engine import ColumnOutcome, Family, analyse_family
from evalkit.stats.methods import check_options
from evalkit.stats.pairing import RunLike, align
from evalkit.stats.results import EffectSizes, PairedTestResult

#: The method ``paired_test``, ``compare_runs``, ``evalkit compare`` and the gate use
#: unless told otherwise, chosen from the calibration benchmark
#: (benchmarks/bench_calibration.py, docs/statistics.md): "auto" is the sign-flip
#: randomization test, and the paired t-test when the differences are binary (a 0/1
#: metric), where the exact sign-flip test rejects far less than alpha. It keeps 4-6%
#: type I error at n >= 25 on every Vaswani null measured, with the t-test's power.
DEFAULT_METHOD = "auto"

#: Fewer queries than this add a warning to the result.
SMALL_N = 20


def build_warnings(
    n: int, effect: EffectSizes, outcome: ColumnOutcome, method: str, requested: str
) -> tuple[str, ...]:
    notes: list[str] = []
    if requested == "auto" and method == "t-test":
        notes.append(
            "method 'auto': the differences are binary (0/1 metric), so the paired t-test "
            "was used; the exact sign-flip test is very conservative there"
        )
    if outcome.degenerate == "constant":
        notes.append(
            "every per-query difference is equal; the answer follows the documented "
            "degenerate-input rule (docs/statistics.md)"
        )
    if n < SMALL_N:
        queries = "query" if n == 1 else "queries"
        notes.append(f"only {n} {queries}: power is low and intervals are wide or unbounded")
    if effect.skewness_warning is not None and n >= 3:
        notes.append(effect.skewness_warning)
    if abs(effect.skewness) > 1.0 and n < 100 and method in ("t-test", "bootstrap"):
        notes.append(
            f"differences are skewed (G1 = {effect.skewness:.2f}); at this n the "
            f"{method}'s error rate can drift from alpha"
        )
    return tuple(notes)


def make_result(
    outcome: ColumnOutcome,
    family: Family,
    j: int,
    *,
    effect: EffectSizes,
    n: int,
    metric: str,
    name_a: str,
    name_b: str,
    requested: str,
    alpha: float,
    alternative: str,
    seed: int,
) -> PairedTestResult:
    method = family.methods[j]
    used = family.used_generator[j]
    significant = bool(outcome.p_value < alpha)
    note = None
    if outcome.degenerate == "constant" and method == "bootstrap":
        # the bootstrap's p (1/(B+1)) is mechanical here: the sign-flip rule decides, as for
        # every other method (and paired_bootstrap), on either alternative
        significant, note = constant_verdict(outcome.observed, n, family.n_resamples[j],
                                             alpha, alternative)
    return PairedTestResult(
        observed=outcome.observed,
        ci_low=outcome.ci_low,
        ci_high=outcome.ci_high,
        p_value=outcome.p_value,
        significant=significant,
        note=note,
        metric=metric,
        name_a=name_a,
        name_b=name_b,
        n_queries=n,
        n_resamples=family.n_resamples[j],
        seed=seed if used else None,
        generator=GENERATOR_NAME if used else None,
        method=method,
        ci_method=family.ci_methods[j],
        alpha=float(alpha),
        alternative=alternative,
        exact=outcome.exact,
        degenerate=outcome.degenerate,
        effect=effect,
        warnings=build_warnings(n, effect, outcome, method, requested),
        distribution=family.histograms[j] if family.histograms else None,
    )


def paired_test(
    a: RunLike,
    b: RunLike,
    metric: str,
    method: str = DEFAULT_METHOD,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    ci: str | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 42,
    *,
    backend: Backend = "auto",
) -> PairedTestResult:
    """Test whether ``a`` and ``b`` differ in mean ``metric``, paired by query id.

    Args:
        a, b: runs (:class:`evalkit.RunResult`) or ``{query id: score}`` mappings over
            the same ids. Differences are always ``a - b``.
        metric: metric name.
        method: "auto" (the default: "randomization", or "t-test" when the
            differences are binary, as from a 0/1 metric), "randomization" (the
            sign-flip test, exact for n <= 16), "t-test" (paired Student t),
            "bootstrap-t" (studentized bootstrap) or "bootstrap" (the percentile paired
            bootstrap, as :func:`paired_bootstrap`). The result's ``method`` names the
            test actually run.
        alpha: significance level; ``significant`` is ``p_value < alpha`` and the
            interval has confidence ``1 - alpha``.
        alternative: "two-sided", "greater" (mean of a exceeds b's) or "less".
        ci: interval method; None picks the method's own ("inversion" for
            randomization, "t", "bootstrap-t", "percentile"), whose interval excludes
            0 exactly when ``p < alpha`` (except "bootstrap"). Any method may
            ask for "percentile", "bca", "bootstrap-t" or "t"; "inversion" inverts the
            randomization test and goes only with ``method="randomization"`` (not
            "auto", which may run the t-test): :data:`evalkit.stats.CI_OF_METHOD`.
        n_resamples: ``B`` for resampling methods (ignored by an exact enumeration).
        seed: generator seed (None draws one; it is recorded in the result).
        backend: "auto", "numpy" or "numba" (results are identical).

    Returns:
        :class:`PairedTestResult`; one-sided alternatives give one-sided intervals
        (``+-inf`` at the open end). Degenerate inputs (all differences equal, n = 1)
        follow :mod:`evalkit.stats.degenerate`: never NaN, never p = 0.

    Raises:
        ValueError: bad options (an unknown name, or ``ci="inversion"`` with a method
            other than "randomization"; the message lists the allowed combinations),
            empty runs, different query ids, a missing metric.
    """
    ci_checked = check_options(method, ci, alpha, alternative)
    B = check_resamples(n_resamples)
    s = check_seed(seed)
    pair = align(a, b, metric)
    d = pair.diffs
    n = d.shape[0]
    family = analyse_family(
        d[:, None],
        method=method,
        ci=ci_checked,
        alpha=float(alpha),
        alternative=alternative,  # type: ignore[arg-type]
        n_resamples=B,
        seed=s,
        backend=backend,
    )
    return make_result(
        family.outcomes[0],
        family,
        0,
        effect=effect_sizes(np.asarray(d)),
        n=n,
        metric=metric,
        name_a=pair.name_a,
        name_b=pair.name_b,
        requested=method,
        alpha=float(alpha),
        alternative=alternative,
        seed=s,
    )
