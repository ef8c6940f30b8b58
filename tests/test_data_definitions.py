"""How a recorded metric definition is named in gate notes, fingerprints and MLflow
params: a numbered version reads ``v1``, a judge's hash version as it is."""

from __future__ import annotations

import pytest

from evalkit.data.definitions import definition_label, definition_text, version_label


@pytest.mark.parametrize(("version", "shown"), [
    (1, "v1"), ("2", "v2"), ("2.0", "v2.0"), ("judge-b694c0ffee", "judge-b694c0ffee"),
    (None, "None"),
])
def test_version_label(version: object, shown: str) -> None:
    assert version_label(version) == shown


def test_a_judge_definition_is_not_prefixed_with_v() -> None:
    entry = {"provider": "evalkit-judge", "version": "judge-b694c0ffee", "higher_is_better": True}
    assert definition_label(entry) == "evalkit-judge definition judge-b694c0ffee"
    assert definition_text({"provider": "p", "version": 3}).startswith("p definition v3")
