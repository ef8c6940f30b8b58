"""docs/plugins.md: every hookspec is documented and the hook reference is current."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from evalkit.core import hookspecs
from evalkit.plugins.hookdocs import (
    hookspec_doc_problems,
    hookspec_functions,
    render_hook_reference,
    sync_hook_reference,
)
from evalkit.plugins.hooks import HOOKS

DOC = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"


def test_every_hookspec_is_documented() -> None:
    assert hookspec_doc_problems() == []
    assert [fn.__name__ for fn in hookspec_functions()] == list(HOOKS)


def test_the_hook_reference_in_docs_is_current() -> None:
    assert sync_hook_reference(DOC), (
        "docs/plugins.md's hook reference is out of date with evalkit.core.hookspecs/specs; "
        "run: python -m evalkit.plugins docs/plugins.md"
    )
    text = DOC.read_text(encoding="utf-8")
    for hook in HOOKS:
        assert f"#### `{hook}() -> " in text


def _fake_specs() -> types.ModuleType:
    module = types.ModuleType("fake_hookspecs")

    @hookspecs.hookspec
    def evalkit_register_widgets() -> list[object]:  # type: ignore[empty-body]
        pass

    @hookspecs.hookspec
    def evalkit_register_gadgets() -> list[object]:  # type: ignore[empty-body]
        """Return gadgets, but never say what shape they have."""

    @hookspecs.hookspec
    def evalkit_register_gizmos() -> list[object]:  # type: ignore[empty-body]
        """Return gizmos.

        Returns:
            A list of gizmos.
        """

    module.evalkit_register_widgets = evalkit_register_widgets  # type: ignore[attr-defined]
    module.evalkit_register_gadgets = evalkit_register_gadgets  # type: ignore[attr-defined]
    module.evalkit_register_gizmos = evalkit_register_gizmos  # type: ignore[attr-defined]
    return module


def test_an_undocumented_hookspec_is_caught() -> None:
    assert hookspec_doc_problems(_fake_specs()) == [
        "evalkit_register_widgets: no docstring",
        "evalkit_register_gadgets: no 'Returns:' section",
    ]


def test_an_out_of_date_reference_is_caught_and_rewritten(tmp_path: Path) -> None:
    stale = tmp_path / "plugins.md"
    fresh = render_hook_reference()
    outdated = fresh.replace("Return the per-case metrics", "Return some metrics")
    assert outdated != fresh
    stale.write_text(f"# Plugins\n\n{outdated}\n\nafter\n", encoding="utf-8")
    assert sync_hook_reference(stale) is False
    assert sync_hook_reference(stale, write=True) is True
    assert stale.read_text(encoding="utf-8") == f"# Plugins\n\n{fresh}\n\nafter\n"
    (tmp_path / "bare.md").write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no hook reference markers"):
        sync_hook_reference(tmp_path / "bare.md")


def test_roles_and_sections_render_as_markdown() -> None:
    text = render_hook_reference()
    assert ":class:" not in text and "``" not in text
    assert "A list of `MetricSpec` (one name" in text
    assert "*Returns:*" in text
    assert "- `higher_is_better`: the polarity;" in text
