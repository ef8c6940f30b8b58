"""evalkit-text passes the kernel's plugin conformance suite (evalkit.testing): its plain
metrics as registered, and its parameterised ones through variants of each (the bare
names have no default parameter: they are refused when named, tested in
test_text_assertions.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import evalkit_text.plugin
import pytest

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit.plugins.default import resolve
from evalkit.testing import check_conformance

PARAMETERISED = ("contains", "regex", "json_schema")


def test_the_plugin_conforms() -> None:
    assert check_conformance(evalkit_text.plugin, exclude=PARAMETERISED) == []


def test_variants_conform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.json").write_text(json.dumps({"type": "object"}))
    variants = [resolve(n) for n in ("contains(text=d1)", "regex(pattern=^[A-Z])",
                                     "contains(text=YES,ignore_case=True)",
                                     "json_schema(schema=s.json)")]
    assert all(isinstance(v, MetricSpec) for v in variants)

    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [v for v in variants if isinstance(v, MetricSpec)]

    # the variants are the text plugin's own records: checked as that module registering
    # them, so loading beside the installed plugins leaves evalkit-text itself out
    plugin = SimpleNamespace(evalkit_register_metrics=evalkit_register_metrics,
                             __name__=evalkit_text.plugin.__name__,
                             __file__=evalkit_text.plugin.__file__)
    assert check_conformance(plugin) == []
