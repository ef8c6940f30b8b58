"""The skewness note of a paired test names the skewness the test depends on: with
clusters, that of the clusters' sums (the values every test takes as its units, and the
ones the skew guard of "auto" reads), never the per-query one; and it never suggests the
method already in use."""

from __future__ import annotations

import numpy as np

from evalkit.stats import compare_runs
from evalkit.stats.methods import sample_skewness


def _data(skewed_sums: bool) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """60 queries in 20 clusters of 3. Five clusters hold one query lost badly and two
    gained as much, so the per-query differences are skewed; their sums are not, unless
    ``skewed_sums`` (then the losses are not made up)."""
    rng = np.random.default_rng(8)
    base: dict[str, float] = {}
    cand: dict[str, float] = {}
    clusters: dict[str, str] = {}
    for g in range(20):
        noise = rng.normal(0.02, 0.02, size=3)
        if g < 5:
            back = 0.0 if skewed_sums else 0.45
            diffs = [-0.9 + noise[0], back + noise[1], back + noise[2]]
        else:
            diffs = list(noise)
        for k, d in enumerate(diffs):
            q = f"q{g:02d}{k}"
            base[q] = 0.5
            cand[q] = 0.5 + float(d)
            clusters[q] = f"c{g}"
    return base, cand, clusters


def _skew_notes(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if "skewed" in w]


def test_skew_note_with_clusters_reads_the_clusters_sums() -> None:
    base, cand, clusters = _data(skewed_sums=False)
    per_query = sample_skewness(np.array([cand[q] - base[q] for q in sorted(base)]))
    assert per_query < -1.0  # the per-query differences are skewed
    auto = compare_runs(base, [cand], "m", clusters=clusters).results[0]
    assert auto.method == "randomization"  # the clusters' sums are not skewed
    assert _skew_notes(auto.warnings) == []
    explicit = compare_runs(base, [cand], "m", method="randomization",
                            clusters=clusters).results[0]
    assert _skew_notes(explicit.warnings) == []


def test_skew_note_with_skewed_cluster_sums_names_them() -> None:
    base, cand, clusters = _data(skewed_sums=True)
    sums: dict[str, float] = {}
    for q, g in clusters.items():
        sums[g] = sums.get(g, 0.0) + cand[q] - base[q]
    g1 = sample_skewness(np.array(list(sums.values())))
    assert g1 < -1.0
    explicit = compare_runs(base, [cand], "m", method="randomization",
                            clusters=clusters).results[0]
    (note,) = _skew_notes(explicit.warnings)
    assert note.startswith(f"clusters' sums are skewed (G1 = {g1:.2f})")
    assert "(method 'auto' would add the bootstrap-t)" in note
    auto = compare_runs(base, [cand], "m", clusters=clusters).results[0]
    assert auto.method == "randomization+bootstrap-t"
    assert all("would add" not in w for w in auto.warnings)


def test_skew_note_without_clusters_suggests_auto_only_when_not_in_use() -> None:
    base, cand, _ = _data(skewed_sums=False)
    explicit = compare_runs(base, [cand], "m", method="randomization").results[0]
    (note,) = _skew_notes(explicit.warnings)
    assert note.startswith("differences are skewed (G1 = ")
    assert "(method 'auto' would add the bootstrap-t)" in note
    for method in ("t-test", "bootstrap"):
        other = compare_runs(base, [cand], "m", method=method).results[0]
        assert all("would add" not in w for w in other.warnings)
