"""docs/statistics.md gives each test, correction and power function its own section with
the formula's source and the module that computes it: the lists are read from the code
(``evalkit.stats.METHODS``, ``CI_METHODS`` and ``evalkit.stats.multiple.CORRECTIONS``), so a
procedure added without its section fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.stats import CI_METHODS, METHODS
from evalkit.stats.multiple import CORRECTIONS

DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
ROOT = DOC.parents[1]


def sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    part = text.split("## Formulas and sources, procedure by procedure", 1)[1]
    part = part.split("\n## ", 1)[0]
    pieces = re.split(r"^### ", part, flags=re.M)[1:]
    return {p.split("\n", 1)[0]: p for p in pieces}


NAMED = ([m for m in METHODS if m != "auto"] + [c for c in CORRECTIONS if c != "none"]
         + ["t_power", "minimum_detectable_effect", "required_n", "simulate_power"])


@pytest.mark.parametrize("name", NAMED)
def test_each_procedure_has_a_section_with_its_source(name: str) -> None:
    found = [body for title, body in sections().items() if f"`{name}`" in title]
    assert len(found) == 1, f"no section (or several) names {name!r} in its title"
    body = found[0]
    assert "Source:" in body and re.search(r"\b(1[89]|20)\d\d\b", body)  # a dated source
    code = re.findall(r"Code:\s+`([^`]+)`", body)
    assert code and all((ROOT / "src" / c).is_file() for c in code), code


def test_every_interval_method_is_described() -> None:
    text = "".join(sections().values())
    for ci in CI_METHODS:
        assert f"`{ci}`" in text, ci
