"""The registry's lower-case index (names matched case-insensitively when nothing
matches exactly) is kept up to date record by record: each registration, alias,
blocked name and removal is seen by the next lookup, without a rebuild."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import MetricSpec

A = Provider(module="pkg_a.plugin", distribution="dist-a", version="1.0")
B = Provider(module="pkg_b.plugin", distribution="dist-b", version="1.0")


def _zero(response: Any, case: Any) -> float:
    return 0.0


def test_lookups_by_letter_case_follow_each_change() -> None:
    reg = Registry()
    reg.add(MetricSpec("Alpha", _zero, higher_is_better=True, aliases=("AL",)), A,
            from_plugin=True)
    assert reg.resolve("alpha").name == "Alpha"  # builds the index
    reg.add(MetricSpec("Beta_2", _zero, higher_is_better=True, aliases=("B2",)), A,
            from_plugin=True)
    assert reg.resolve("beta_2").name == "Beta_2"  # added after the index was built
    assert reg.resolve("b2").name == "Beta_2" and reg.resolve("al").name == "Alpha"
    reg.add(MetricSpec("Beta_2", lambda r, c: 1.0, higher_is_better=True), B,
            from_plugin=True)  # a second plugin: the name is blocked
    with pytest.raises(RegistryError, match=r"dist-a 1\.0 .* and dist-b 1\.0"):
        reg.resolve("BETA_2")
    reg.remove("metric", "Alpha")
    with pytest.raises(RegistryError, match="unknown"):
        reg.resolve("alpha")
    with pytest.raises(RegistryError, match="unknown"):
        reg.resolve("al")  # its alias went with it
    reg.add(MetricSpec("alpha", _zero, higher_is_better=True), A, from_plugin=True)
    assert reg.resolve("ALPHA").name == "alpha"


def test_many_registrations_resolve_by_letter_case() -> None:
    reg = Registry()
    for i in range(500):
        reg.add(MetricSpec(f"m_{i}", _zero, higher_is_better=True, aliases=(f"Alias{i}",)),
                A, from_plugin=True)
        if i % 100 == 0:
            assert reg.resolve(f"M_{i}").name == f"m_{i}"
    assert [reg.resolve(f"alias{i}").name for i in (0, 250, 499)] == ["m_0", "m_250", "m_499"]
    assert reg.conflicts() == []
