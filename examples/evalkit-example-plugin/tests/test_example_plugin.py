"""Tests of the example plugin, written as a plugin author would write them."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit_example_plugin import plugin
from typer.testing import CliRunner

from evalkit import GoldenCase, TargetResponse
from evalkit.cli.app import app
from evalkit.core.registry import RegistryError
from evalkit.core.specs import MetricSpec, ReporterSpec
from evalkit.data.rows import CaseResult
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.execute.run_checks import apply_config_sections
from evalkit.plugins.default import default_registry
from evalkit.report.model import Report, ReportRow
from evalkit.testing import ConformanceCheck, conformance_checks, registered_plugin


@pytest.mark.parametrize("check", conformance_checks(plugin), ids=str)
def test_conformance(check: ConformanceCheck) -> None:
    check()


def test_registers_its_three_names_for_one_test_only() -> None:
    before = default_registry()
    with registered_plugin(plugin) as registry:
        assert default_registry() is registry
        assert registry.polarity("keyword_recall") is True
        assert registry.polarity("answered_share") is True
        reporter = registry.get("reporter", "tsv-summary")
        assert isinstance(reporter, ReporterSpec) and reporter.suffix == ".tsv"
    assert default_registry() is before


def test_keyword_recall_counts_keywords_found_as_words() -> None:
    case = GoldenCase(id="q1", context={"keywords": ["Hydrogen", "proton", "electron"]})
    # "hydrogen" and "proton" occur as words; "electrons" is not the word "electron".
    response = TargetResponse(text="Hydrogen: one proton, one of the electrons.")
    assert plugin.keyword_recall(response, case) == pytest.approx(2 / 3)


def test_keyword_recall_falls_back_to_the_expected_text() -> None:
    case = GoldenCase(id="q2", expected="Paris is the capital")
    assert plugin.keyword_recall(TargetResponse(text="paris, the capital"), case) == 0.75
    assert plugin.keyword_recall(TargetResponse(), case) == 0.0


def test_keyword_recall_refuses_malformed_keywords() -> None:
    case = GoldenCase(id="q3", context={"keywords": "hydrogen"})
    with pytest.raises(ValueError, match="q3"):
        plugin.keyword_recall(TargetResponse(text="hydrogen"), case)


def test_answered_share() -> None:
    rows = [
        CaseResult("a", TargetResponse(text="yes")),
        CaseResult("b", TargetResponse(text="   ")),
        CaseResult("c", TargetResponse(text=None)),
        CaseResult("d", TargetResponse(text="no")),
    ]
    assert plugin.answered_share(rows) == 0.5
    with pytest.raises(ValueError, match="no rows"):
        plugin.answered_share([])
    with pytest.raises(ValueError, match="'e' errored"):
        plugin.answered_share([CaseResult("e", None, error="timeout")])


def test_tsv_reporter_renders_one_line_per_row() -> None:
    report = Report(
        kind="gate", title="evalkit gate", subject="run.jsonl", status="failed",
        summary="1 of 2 checks failed",
        rows=(
            ReportRow("floor", "pass", "ndcg@10", value=0.5, rule=">= 0.4"),
            ReportRow("no_regress", "fail", "rr", value=0.25, reference_value=0.5,
                      difference=-0.25, p_value=0.01),
        ),
    )
    with registered_plugin(plugin) as registry:
        reporter = registry.get("reporter", "tsv-summary")
        assert isinstance(reporter, ReporterSpec)
        assert reporter.render(report) == (
            "name\tstatus\tmetric\tvalue\treference_value\tdifference\tp_value\n"
            "floor\tpass\tndcg@10\t0.5\t\t\t\n"
            "no_regress\tfail\trr\t0.25\t0.5\t-0.25\t0.01\n"
        )


def test_a_name_taken_elsewhere_is_refused_naming_both() -> None:
    with (
        registered_plugin(plugin) as registry,
        pytest.raises(RegistryError, match=r"keyword_recall.*evalkit_example_plugin"),
    ):
        registry.register_metric("keyword_recall", higher_is_better=True)(
            lambda response, case: 0.0
        )


def test_the_keywords_command_prints_each_cases_keywords(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text('{"id": "q1", "query": "?", "expected": "Paris is the capital"}\n'
                       '{"id": "q2", "query": "?"}\n', encoding="utf-8")
    with registered_plugin(plugin):
        everything = CliRunner().invoke(app, ["keywords", str(goldens)])
        missing = CliRunner().invoke(app, ["keywords", str(goldens), "--missing-only"])
    assert (everything.exit_code, everything.output) == (0, "q1\tparis is the capital\nq2\t\n")
    assert missing.output == "q2\t\n"


CONFIG = """\
goldens: goldens.jsonl
target: {factory: "target:make"}
keyword_metrics:
  mentions_a_capital: [Paris, Rome, Berlin]
metrics: [mentions_a_capital]
output: run.jsonl
"""


def test_the_keyword_metrics_section_registers_a_metric_per_entry(tmp_path: Path) -> None:
    config = tmp_path / "evalkit.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    with registered_plugin(plugin) as registry:
        cfg = load_eval_config(config)
        apply_config_sections(cfg)
        spec = registry.resolve("mentions_a_capital")
        assert isinstance(spec, MetricSpec)
        assert registry.polarity("mentions_a_capital") is True
        # two of the three capitals are words of the answer
        answer = TargetResponse(text="Rome, then Paris.")
        assert spec.fn(answer, GoldenCase(id="q")) == pytest.approx(2 / 3)
        apply_config_sections(cfg)  # again (a resumed run): the same metric, no conflict


def test_a_bad_keyword_metrics_section_names_its_line(tmp_path: Path) -> None:
    config = tmp_path / "evalkit.yaml"
    config.write_text(CONFIG.replace("[Paris, Rome, Berlin]", "Paris"), encoding="utf-8")
    with registered_plugin(plugin), pytest.raises(ConfigError) as caught:
        load_eval_config(config)
    assert str(caught.value) == (f"{config.resolve()}:4: key 'keyword_metrics."
                                 "mentions_a_capital': Input should be a valid list, got 'Paris'")
