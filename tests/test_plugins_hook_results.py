"""What a hook may return: any iterable of its records (a list, a tuple, a generator)
loads; a bare record, a string or a dict is refused, and so is a generator that raises
while it is read (the plugin's failure, never a traceback)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest

from evalkit import hookimpl
from evalkit.core.registry import Provider, Registry
from evalkit.core.specs import MetricSpec
from evalkit.plugins.loading import load_builtins, register_plugin_object


def _zero(response: Any, case: Any) -> float:
    return 0.0


RECORDS = [MetricSpec("hook_a", _zero, higher_is_better=True),
           MetricSpec("hook_b", _zero, higher_is_better=False)]


def _generator() -> Any:
    yield from RECORDS


def _broken_generator() -> Any:
    yield RECORDS[0]
    raise RuntimeError("lost the second record")


def _load(result: Callable[[], Any]) -> tuple[Any, Registry]:
    module = types.ModuleType("hook_results_plugin")

    @hookimpl
    def evalkit_register_metrics() -> Any:
        return result()

    module.evalkit_register_metrics = evalkit_register_metrics  # type: ignore[attr-defined]
    reg = Registry()
    load_builtins(reg)
    info = register_plugin_object(reg, module, Provider(module="hook_results_plugin"))
    return info, reg


@pytest.mark.parametrize("result", [lambda: list(RECORDS), lambda: tuple(RECORDS),
                                    _generator], ids=["list", "tuple", "generator"])
def test_any_iterable_of_records_loads(result: Callable[[], Any]) -> None:
    info, reg = _load(result)
    assert info.status == "loaded", info.error
    assert info.names == ["hook_a", "hook_b"]
    assert reg.polarity("hook_b") is False


@pytest.mark.parametrize(("result", "error"), [
    (lambda: RECORDS[0], "evalkit_register_metrics returned MetricSpec; expected a list of "),
    (lambda: "hook_a", "evalkit_register_metrics returned str; expected a list of "),
    (lambda: {"hook_a": RECORDS[0]}, "evalkit_register_metrics returned dict; expected a "),
    (_broken_generator, "evalkit_register_metrics: RuntimeError: lost the second record"),
], ids=["record", "str", "dict", "raising-generator"])
def test_anything_else_fails_the_plugin_whole(result: Callable[[], Any], error: str) -> None:
    info, reg = _load(result)
    assert info.status == "failed"
    assert info.error.startswith(error), info.error
    assert "hook_a" not in reg.registered()
