"""README's paragraph on plugins names every kind of hook of
``src/evalkit/core/hookspecs.py``, and README states no count of hooks or plugins that
could go stale when one is added (it says "one per kind" and "every plugin of
``plugins/``")."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
#: what README calls a hook's kind where its name says it otherwise
SPOKEN = {"commands": "subcommands", "config_sections": "sections of the eval config"}


def hook_kinds() -> list[str]:
    text = (REPO / "src" / "evalkit" / "core" / "hookspecs.py").read_text(encoding="utf-8")
    return re.findall(r"^def evalkit_register_(\w+)\(", text, flags=re.M)


def test_every_hook_kind_is_named_in_the_plugins_paragraph() -> None:
    paragraph = " ".join(README.split("**Plugins**", 1)[1].split("\n\n", 1)[0].split()).lower()
    kinds = hook_kinds()
    assert len(kinds) >= 11
    missing = [k for k in kinds if SPOKEN.get(k, k.replace("_", " ")) not in paragraph]
    assert not missing, missing


def test_no_count_of_hooks_or_plugins_that_could_go_stale() -> None:
    numbers = (r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
               r"thirteen|fourteen|fifteen")
    stale = re.findall(rf"\b(?:{numbers})\s+(?:hooks|plugins)\b", " ".join(README.split()),
                       flags=re.I)
    assert not stale, stale
