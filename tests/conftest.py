"""What every test shares: the session's own folder for the list of plugin commands
(:mod:`evalkit.plugins.command_list`; the tests' child processes inherit it, and nothing is
written to the user's cache folder), and reference implementations the statistics tests
share, written out from their sources and never calling evalkit: the equal-tailed
bootstrap-t on the documented generator; and the order in which pytest-xdist hands out
the modules (the wheel tests first)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator

import numpy as np
import pytest


@pytest.fixture(autouse=True, scope="session")
def _command_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if "EVALKIT_CACHE_DIR" in os.environ:  # chosen by whoever runs the tests
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("evalkit-cache")))
        yield


GAMMA, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB

BootstrapT = Callable[..., tuple[float, float, float]]


def splitmix_indices(seed: int, n: int, n_resamples: int) -> np.ndarray:
    """Bootstrap index (b, i) = floor(z n / 2**64), z the SplitMix64 output number
    b*n + i of the stream seeded with ``seed`` (Steele, Lea and Flood 2014; the generator
    docs/statistics.md specifies), shape (B, n)."""
    k = np.arange(n_resamples * n, dtype=np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        z = k * np.uint64(GAMMA) + np.uint64(seed)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
        z = z ^ (z >> np.uint64(31))
    hi, lo = z >> np.uint64(32), z & np.uint64(0xFFFFFFFF)
    idx = (hi * np.uint64(n) + ((lo * np.uint64(n)) >> np.uint64(32))) >> np.uint64(32)
    return idx.astype(np.int64).reshape(n_resamples, n)


def bootstrap_t(d: np.ndarray, seed: int = 42, n_resamples: int = 10_000,
                alpha: float = 0.05) -> tuple[float, float, float]:
    """Two-sided equal-tailed bootstrap-t of the mean of ``d``: ``(p, lo, hi)``, p =
    2 (min tail count + 1) / (B + 1), the interval ``[m - t*_(B-k+1) se, m - t*_(k) se]``
    with ``k = ceil(alpha (B + 1) / 2) - 1`` (Efron and Tibshirani 1993, ch. 12; Davison and
    Hinkley 1997, eq. 4.11). A resample without spread gives t* = +-inf (0 when its mean
    is the observed one)."""
    n = d.size
    m, se = float(d.mean()), float(d.std(ddof=1)) / math.sqrt(n)
    x = d[splitmix_indices(seed, n, n_resamples)]
    dev = x.mean(axis=1) - m
    se_star = x.std(axis=1, ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(se_star > 1e-7 * se, dev / se_star,
                          np.where(np.abs(dev) > 1e-10, np.copysign(np.inf, dev), 0.0))
    t_star = np.sort(t_star)
    t = m / se
    tol = 1e-10 * max(1.0, abs(t))
    upper = int(np.count_nonzero(t_star >= t - tol))
    lower = int(np.count_nonzero(t_star <= t + tol))
    p = min(1.0, 2 * (min(upper, lower) + 1) / (n_resamples + 1))
    k = math.ceil(alpha * (n_resamples + 1) / 2) - 1
    return p, float(m - t_star[n_resamples - k] * se), float(m - t_star[k - 1] * se)


@pytest.fixture
def reference_bootstrap_t() -> BootstrapT:
    """:func:`bootstrap_t`, for tests that check a bootstrap-t from evalkit."""
    return bootstrap_t


# ------------------------------------------------------------------ pytest-xdist
# -n auto --dist loadfile --no-loadscope-reorder (pyproject.toml's addopts; -n 0 runs in
# one process): each test module runs whole in one worker, so a module-scoped fixture
# (built wheels, a browser, one run of an example) is made once. (--dist loadgroup would
# spread the other tests one by one, but with pytest 9.2 it no longer groups anything:
# pytest-dev/pytest-xdist#1386.) Modules are handed out in collection order, except that
# tests marked ``schedule_first`` (the wheel tests, minutes long) come first, so that they
# do not start last and finish alone. Under -n 0 only the order changes.
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("schedule_first") is None)
