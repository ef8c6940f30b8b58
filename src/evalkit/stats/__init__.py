"""Paired statistics over per-query differences."""

from __future__ import annotations

from evalkit.stats.bootstrap import BootstrapResult, paired_bootstrap

__all__ = ["BootstrapResult", "paired_bootstrap"]
