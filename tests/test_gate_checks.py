"""load_checks / CheckSpec: every load rule, select and coverage."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit.gate.checks import CheckError, CheckSpec, compare_threshold, load_checks


def write(tmp_path: Path, text: str, name: str = "checks.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@dataclass
class Row:
    query_id: str
    metrics: dict[str, float]
    error: str | None = None


VALID = """\
checks:
  - id: recall_floor
    metric: recall@10
    op: ">="
    threshold: 0.60
  - id: p95_ceiling
    metric: latency_p95
    op: "<="
    threshold: 800
    level: warn
  - id: no_ndcg_regression
    metric: ndcg@10
    vs_baseline: no_significant_regression
    alpha: 0.01
  - id: scoped
    metric: ndcg@3
    scope: [a, b, c]
    vs_baseline: no_significant_regression
"""


def test_valid_file_loads_every_field(tmp_path: Path) -> None:
    specs = load_checks(write(tmp_path, VALID))
    assert [s.id for s in specs] == ["recall_floor", "p95_ceiling", "no_ndcg_regression",
                                     "scoped"]
    floor, ceiling, noreg, scoped = specs
    assert (floor.kind, floor.op, floor.threshold, floor.level) == ("threshold", ">=", 0.6,
                                                                   "block")
    assert floor.alpha is None and floor.scope is None
    assert (ceiling.op, ceiling.threshold, ceiling.level) == ("<=", 800.0, "warn")
    assert (noreg.kind, noreg.vs_baseline, noreg.alpha) == ("baseline",
                                                            "no_significant_regression", 0.01)
    assert scoped.alpha == 0.05  # the default when a baseline check omits it
    assert scoped.scope == ("a", "b", "c")


def test_metric_names_are_not_resolved_at_load(tmp_path: Path) -> None:
    specs = load_checks(write(tmp_path, """\
checks:
  - id: later
    metric: a_metric_nobody_registered_yet
    op: ">="
    threshold: 1
"""))
    assert specs[0].metric == "a_metric_nobody_registered_yet"


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        # both a threshold and a baseline comparison
        ("""  - id: both
    metric: m
    op: ">="
    threshold: 0.5
    vs_baseline: no_significant_regression
""", ["checks.yaml", "'both'", "both"]),
        # neither
        ("""  - id: neither
    metric: m
""", ["checks.yaml", "'neither'", "neither"]),
        # typo'd key
        ("""  - id: typo
    metric: m
    op: ">="
    treshold: 0.5
""", ["checks.yaml", "'typo'", "'treshold'", "threshold"]),
        # alpha on a threshold check
        ("""  - id: alpha_on_threshold
    metric: m
    op: ">="
    threshold: 0.5
    alpha: 0.05
""", ["checks.yaml", "'alpha_on_threshold'", "'alpha'"]),
        # non-finite thresholds
        ("""  - id: nan_threshold
    metric: m
    op: ">="
    threshold: .nan
""", ["checks.yaml", "'nan_threshold'", "finite"]),
        ("""  - id: inf_threshold
    metric: m
    op: "<="
    threshold: .inf
""", ["checks.yaml", "'inf_threshold'", "finite"]),
        # threshold given as text
        ("""  - id: text_threshold
    metric: m
    op: ">="
    threshold: "0.5"
""", ["'text_threshold'", "'threshold'", "number"]),
        # unknown op, including a tolerance-style op
        ("""  - id: bad_op
    metric: m
    op: ">"
    threshold: 0.5
""", ["'bad_op'", "'op'", "'>='"]),
        ("""  - id: op_only
    metric: m
    op: ">="
""", ["'op_only'", "'threshold'"]),
        ("""  - id: threshold_only
    metric: m
    threshold: 0.5
""", ["'threshold_only'", "'op'"]),
        # a per-check tolerance is not a key
        ("""  - id: tol
    metric: m
    op: "=="
    threshold: 1
    tolerance: 0.01
""", ["'tol'", "'tolerance'"]),
        ("""  - id: lvl
    metric: m
    op: ">="
    threshold: 1
    level: error
""", ["'lvl'", "'level'", "block"]),
        ("""  - id: rule
    metric: m
    vs_baseline: no_regression
""", ["'rule'", "no_significant_regression"]),
        ("""  - id: alpha_range
    metric: m
    vs_baseline: no_significant_regression
    alpha: 1.5
""", ["'alpha_range'", "alpha"]),
        ("""  - id: alpha_zero
    metric: m
    vs_baseline: no_significant_regression
    alpha: 0
""", ["'alpha_zero'", "alpha"]),
        ("""  - metric: m
    op: ">="
    threshold: 1
""", ["check #1", "'id'"]),
        ("""  - id: no_metric
    op: ">="
    threshold: 1
""", ["'no_metric'", "'metric'"]),
        ("""  - id: empty_scope
    metric: m
    op: ">="
    threshold: 1
    scope: []
""", ["'empty_scope'", "'scope'", "empty"]),
        ("""  - id: repeated_scope
    metric: m
    op: ">="
    threshold: 1
    scope: [a, b, a]
""", ["'repeated_scope'", "a", "more than once"]),
        ("""  - id: blank_scope
    metric: m
    op: ">="
    threshold: 1
    scope: [a, "  "]
""", ["'blank_scope'", "'scope' lists a blank case id ('  ')", "leave the entry out"]),
        ("""  - id: numeric_scope
    metric: m
    op: ">="
    threshold: 1
    scope: [010, b]
""", ["'numeric_scope'", 'quote "010"']),
        ("""  - id: scope_not_list
    metric: m
    op: ">="
    threshold: 1
    scope: a
""", ["'scope_not_list'", "list"]),
        ("""  - just a string
""", ["check #1", "mapping"]),
    ],
)
def test_load_errors_name_file_check_and_key(
    tmp_path: Path, body: str, needles: list[str]
) -> None:
    path = write(tmp_path, "checks:\n" + body)
    with pytest.raises(CheckError) as info:
        load_checks(path)
    msg = str(info.value)
    assert msg.startswith(str(path)), msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, """\
checks:
  - id: floor
    metric: m
    op: ">="
    threshold: 1
  - id: floor
    metric: n
    op: "<="
    threshold: 2
""")
    with pytest.raises(CheckError, match=r"checks\.yaml: check 'floor': duplicate id 'floor'"):
        load_checks(path)


@pytest.mark.parametrize("text", ["", "# only a comment\n", "checks:\n", "checks: []\n"])
def test_a_file_with_no_checks_is_refused(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CheckError, match=r"checks\.yaml: .*(empty|no checks)"):
        load_checks(path)


def test_top_level_shape_and_keys(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match=r"unknown top-level key 'check'.*'checks'"):
        load_checks(write(tmp_path, "check:\n  - id: a\n"))
    with pytest.raises(CheckError, match="mapping"):
        load_checks(write(tmp_path, "- id: a\n"))
    with pytest.raises(CheckError, match=r"checks\.yaml:\d+: not valid YAML"):
        load_checks(write(tmp_path, "checks:\n  - id: [unclosed\n"))
    with pytest.raises(CheckError, match="no such checks file"):
        load_checks(tmp_path / "absent.yaml")


def test_unknown_scope_ids_are_refused_against_known_case_ids(tmp_path: Path) -> None:
    path = write(tmp_path, """\
checks:
  - id: controls_hold
    metric: ndcg@3
    scope: [cp-surry-any, cp-newton-pub, cp-bondi-any, cp-nowhere]
    op: ">="
    threshold: 1.0
""")
    known = ["cp-surry-any", "cp-newtown-pub", "cp-bondi-any"]
    with pytest.raises(CheckError) as info:
        load_checks(path, known_case_ids=known)
    msg = str(info.value)
    assert "'controls_hold'" in msg and "2 case id(s)" in msg
    assert "cp-newton-pub, cp-nowhere" in msg
    # without known ids the same file loads (the check is caught at run time instead)
    assert load_checks(path)[0].scope is not None


def test_select_returns_scoped_rows_in_scope_order() -> None:
    spec = CheckSpec("s", "m", op=">=", threshold=0.0, scope=("c", "a"))
    rows = [Row("a", {"m": 1.0}), Row("b", {"m": 2.0}), Row("c", {"m": 3.0})]
    assert [r.query_id for r in spec.select(rows)] == ["c", "a"]
    assert spec.coverage(rows) == "2/2 cases"
    unscoped = CheckSpec("u", "m", op=">=", threshold=0.0)
    assert unscoped.select(rows) == rows
    assert unscoped.coverage(rows) == "3/3 cases"


def test_select_raises_when_a_scoped_case_has_no_row() -> None:
    spec = CheckSpec("controls_hold", "ndcg@3", op=">=", threshold=1.0,
                     scope=("cp-surry-any", "cp-newtown-pub", "cp-bondi-any"))
    rows = [Row("cp-surry-any", {"ndcg@3": 1.0}), Row("cp-newtown-pub", {"ndcg@3": 1.0})]
    with pytest.raises(CheckError) as info:
        spec.select(rows)
    msg = str(info.value)
    assert "'controls_hold'" in msg and "3 case(s)" in msg and "cp-bondi-any" in msg
    assert spec.coverage(rows) == "2/3 cases"
    full = [*rows, Row("cp-bondi-any", {"ndcg@3": 1.0})]
    assert spec.coverage(full) == "3/3 cases"


def test_select_raises_on_an_errored_covered_case() -> None:
    rows = [Row("a", {"m": 1.0}), Row("b", {}, error="target timed out")]
    spec = CheckSpec("u", "m", op=">=", threshold=0.0)
    with pytest.raises(CheckError, match=r"1 errored: b \(target timed out\)"):
        spec.select(rows)
    assert spec.coverage(rows) == "1/2 cases"
    # a scope that leaves the errored case out is unaffected
    scoped = CheckSpec("s", "m", op=">=", threshold=0.0, scope=("a",))
    assert [r.query_id for r in scoped.select(rows)] == ["a"]


def test_checkspec_validates_when_built_directly() -> None:
    with pytest.raises(CheckError, match="both"):
        CheckSpec("x", "m", op=">=", threshold=1.0, vs_baseline="no_significant_regression")
    with pytest.raises(CheckError, match="neither"):
        CheckSpec("x", "m")
    assert CheckSpec("x", "m", vs_baseline="no_significant_regression").alpha == 0.05


# --------------------------------------------------------------- the comparison
def test_ge_and_le_are_exact_and_inclusive() -> None:
    assert compare_threshold(0.5, ">=", 0.5)
    assert not compare_threshold(math.nextafter(0.5, 0.0), ">=", 0.5)
    assert compare_threshold(800.0, "<=", 800.0)
    assert not compare_threshold(math.nextafter(800.0, 1e9), "<=", 800.0)


def test_eq_uses_the_fixed_tolerance() -> None:
    # abs_tol 1e-12 makes a zero count match float dust
    assert compare_threshold(1e-17, "==", 0.0)
    assert compare_threshold(1e-12, "==", 0.0)
    assert not compare_threshold(2e-12, "==", 0.0)
    # rel_tol 1e-9 around a non-zero threshold
    assert compare_threshold(1.0 + 5e-10, "==", 1.0)
    assert not compare_threshold(1.0 + 2e-9, "==", 1.0)
    # 0.1 + 0.2 is not exactly 0.3 in binary floating point, but within the tolerance
    assert 0.1 + 0.2 != 0.3 and compare_threshold(0.1 + 0.2, "==", 0.3)


@pytest.mark.parametrize("op", [">=", "<=", "=="])
def test_nan_satisfies_no_op(op: str) -> None:
    assert not compare_threshold(float("nan"), op, 0.5)  # type: ignore[arg-type]


def test_the_handed_case_schema_gets_a_pointer(tmp_path: Path) -> None:
    # C30's original file uses gates/min; the seed's schema is checks/op/threshold
    with pytest.raises(CheckError, match=r"'gates' \(the list is called 'checks'\)"):
        load_checks(write(tmp_path, "gates:\n  - metric: ndcg@10\n    min: 0.50\n"))
    with pytest.raises(CheckError, match=r"unknown key 'min' \(write a lower bound as op"):
        load_checks(write(tmp_path, "checks:\n  - id: a\n    metric: ndcg@10\n    min: 0.5\n"))
