"""A family's columns analysed a chunk at a time (:func:`evalkit.stats._blocks.chunk_width`)
and the sign flips its groups share give every value, flag and count of one call over
all columns, and what each group drew alone."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evalkit.stats import _blocks
from evalkit.stats.grouped import analyse_family


def _matrix() -> np.ndarray:
    rng = np.random.default_rng(4)
    n = 300
    D = rng.normal(0.02, 0.2, (n, 23))
    moved = rng.random((n, 6)) < 0.12  # right-skewed columns: the bootstrap-t joins
    D[:, 10:16] = moved * rng.exponential(0.1, (n, 6))
    D[:, 3] = 0.25  # constant columns, one of them alone in its chunk below
    D[:, 20:23] = 0.0
    return D


@pytest.mark.parametrize("backend", ["numpy", "auto"])
@pytest.mark.parametrize("columns", [1, 3, 8])
def test_chunks_never_change_a_value(columns: int, backend: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    D = _matrix()
    kw = dict(method="auto", ci=None, alpha=0.05, alternative="two-sided",
              n_resamples=400, seed=9, backend=backend, bins=16)
    whole = analyse_family(D, **kw)  # type: ignore[arg-type]
    assert set(whole.methods) == {"randomization", "randomization+bootstrap-t"}
    monkeypatch.setattr(_blocks, "CHUNK_BYTES", 8 * 400 * columns)
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 300)  # one column a block
    assert _blocks.chunk_width(300, 400) == columns
    chunked = analyse_family(D, **kw)  # type: ignore[arg-type]
    assert dataclasses.astuple(chunked.outcomes[0]) == dataclasses.astuple(whole.outcomes[0])
    assert chunked.outcomes == whole.outcomes
    assert (chunked.methods, chunked.ci_methods, chunked.n_resamples,
            chunked.used_generator) == (whole.methods, whole.ci_methods, whole.n_resamples,
                                        whole.used_generator)
    assert chunked.p_obs is None and whole.p_obs is None  # asked for by min-P alone
    assert chunked.histograms == whole.histograms


def test_shared_sign_flips_equal_each_groups_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.stats import grouped

    D = _matrix()
    kw = dict(method="auto", ci=None, alpha=0.05, alternative="two-sided",
              n_resamples=400, seed=9, backend="auto")
    shared = analyse_family(D, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(grouped, "_shared_flips", lambda *a: {})
    alone = analyse_family(D, **kw)  # type: ignore[arg-type]
    assert shared.outcomes == alone.outcomes and shared.n_resamples == alone.n_resamples
