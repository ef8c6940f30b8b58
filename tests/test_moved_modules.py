"""The module paths of the flat layout (before the kernel was grouped by stage) still work:
every name each old module had is there under its old path, a module that moved whole is
the new module itself, and the seed's paths (evalkit.metrics.core, evalkit.runner.METRICS)
keep their names.

OLD_NAMES lists the public names each module had at the last commit of the flat layout
(3f29462), read from its source with ast; it is the contract, not what the code has now.
MAIN_NAMES adds the top-level modules (and names) main gained while the kernel was being
regrouped (read from main at 02c3bc7, the commit merged): importable there at the top
level, they are old paths too.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from evalkit._moved import MOVED, MOVED_PACKAGES

OLD_NAMES: dict[str, tuple[str, ...]] = {
    "evalkit": (
    ),
    "evalkit.aggregates": (
        "AggregateError", "builtin_aggregates", "entropy", "latency_mean", "latency_p50",
        "latency_p95", "latency_p99", "max_item_share", "max_item_share_at_1",
        "max_item_share_at_10", "max_item_share_at_3", "nearest_rank",
    ),
    "evalkit.artifact": (
        "ArtifactError", "Integrity", "READABLE_VERSIONS", "SCHEMA_VERSION", "artifact_line",
        "finished_lines", "header_line", "metric_errors_of", "read_artifact", "sample_of",
        "trailer_line", "upgrade_schema1_rows",
    ),
    "evalkit.artifact_writer": (
        "ArtifactWriter", "read_partial", "save_finished",
    ),
    "evalkit.baseline": (
        "Baseline", "BaselineError", "DEFAULT_BASELINE_PATH", "FINGERPRINT_VERSION",
        "Fingerprint", "aggregate_definitions", "case_set_difference", "fingerprint",
        "fingerprint_differences", "load_baseline", "promote",
    ),
    "evalkit.beir": (
        "BeirDataset", "BeirError", "QRELS_HEADER", "goldens_from_qrels", "load_beir",
        "load_corpus", "load_qrels", "load_queries",
    ),
    "evalkit.bounded_yaml": (
        "BoundedSafeLoader", "load_yaml",
    ),
    "evalkit.cases": (
        "GoldenCase",
    ),
    "evalkit.checks": (
        "BASELINE_RULES", "BaselineRule", "CHECK_KEYS", "CheckError", "CheckSpec",
        "DEFAULT_ALPHA", "EQ_ABS_TOL", "EQ_REL_TOL", "LEVELS", "Level", "OPS", "Op",
        "TOP_LEVEL_KEYS", "compare_threshold", "load_checks", "parse_checks", "row_error",
        "row_id",
    ),
    "evalkit.comparison": (
    ),
    "evalkit.coverage": (
        "Coverage", "IncompleteRunError", "SHOWN_IDS", "completeness_lines", "coverage_of",
        "require_complete", "show_ids",
    ),
    "evalkit.error_messages": (
        "message_of",
    ),
    "evalkit.evalconfig": (
        "ConfigError", "EvalConfig", "TARGET_KEYS", "YAML_NAMES", "check_names", "find_config",
        "load_eval_config", "redact",
    ),
    "evalkit.evaluation": (
        "DEFAULT_MAX_CONCURRENCY", "GoldensInput", "ResumeError", "RunInterrupted",
        "as_golden_set", "describe_target", "evaluate", "rescore", "resolve_aggregates",
        "status_line",
    ),
    "evalkit.execution": (
        "Executor", "Interrupts", "Job", "MAX_DEFAULT_GRACE_S", "POLL_S", "RunInterrupted",
        "call", "default_grace_s", "details", "run_job", "scored",
    ),
    "evalkit.formatting": (
        "CI_LABELS", "CORRECTION_LABELS", "METHOD_LABELS", "figure", "interval", "json_ready",
        "p_cell", "p_phrase", "signed",
    ),
    "evalkit.gate": (
        "BaselineComparison", "CheckResult", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "GateReport",
        "evaluate_gate", "gate_from_files", "holm",
    ),
    "evalkit.gate_report": (
        "BaselineComparison", "CheckResult", "GateReport", "MetricKind", "Verdict", "fmt_value",
        "p_text",
    ),
    "evalkit.goldens": (
        "GoldenError", "GoldenSet", "KNOWN_FIELDS", "case_digest", "case_from_record",
        "load_csv", "load_goldens", "load_jsonl", "load_yaml",
    ),
    "evalkit.headers": (
        "check_headers", "header_problem",
    ),
    "evalkit.hookspecs": (
        "PROJECT", "evalkit_register_aggregates", "evalkit_register_loaders",
        "evalkit_register_metrics", "evalkit_register_reporters", "evalkit_register_targets",
        "hookimpl", "hookspec",
    ),
    "evalkit.input_files": (
        "InputError", "Kind", "QRELS_LINE", "RUN_LINE", "SNIFF_BYTES", "Sniffed",
        "no_rows_message", "not_a_run_message", "not_artifact_message", "not_qrels_message",
        "require_artifact_rows", "require_file", "sniff",
    ),
    "evalkit.limits": (
        "LimitError", "MAX_ALIAS_NODES", "MAX_ARTIFACT_DEPTH", "MAX_DEPTH", "MAX_ID_CHARS",
        "MAX_NAME_CHARS", "MAX_YAML_NODES", "check_depth", "check_id", "check_length",
        "check_name", "loads_json",
    ),
    "evalkit.measure_args": (
        "MeasureRequest", "read_measure_args",
    ),
    "evalkit.metric_info": (
        "COUNT_NAMES", "canonical_metric", "higher_is_better", "is_count",
    ),
    "evalkit.metric_lookup": (
        "LookupFailure", "Table", "lookup", "record_base", "unknown_message",
    ),
    "evalkit.metric_names": (
        "MetricNameError", "ParsedName", "canonical", "format_value", "parse_name",
        "split_measure_args", "trec_spelling",
    ),
    "evalkit.metrics": (
    ),
    "evalkit.metrics.core": (
        "precision_at_k", "recall_at_k", "ndcg_at_k", "average_precision", "reciprocal_rank",
    ),
    "evalkit.metrics.retrieval": (
        "CoreFn", "adapt_core", "core_family", "register_retrieval_metric",
    ),
    "evalkit.numeric": (
        "exact_mean", "pow2_above", "pow2_scale",
    ),
    "evalkit.outputs": (
        "DestinationError", "UnwritableError", "check_writable", "destination", "reason_for",
        "refuse_overwriting_inputs", "require_writable", "sync_folder", "unwritable",
        "write_output", "writing",
    ),
    "evalkit.plugins": (
        "Candidate", "ENTRY_POINT_GROUP", "HOOKS", "IN_REPO_DISTRIBUTIONS",
        "KERNEL_DISTRIBUTION", "NameInfo", "PluginError", "PluginInfo", "PluginLoadWarning",
        "PluginReport", "PluginSelectionError", "REFERENCE_END", "REFERENCE_START",
        "collect_records", "describe_entry", "discover", "failure_message",
        "hookspec_doc_problems", "hookspec_functions", "import_optional", "load_builtins",
        "load_plugins", "new_plugin_manager", "plugin_report", "register_plugin_object",
        "render_hook_reference", "selection_problems", "set_config", "sync_hook_reference",
    ),
    "evalkit.precomputed": (
        "LoadedQrels", "QrelsInput", "RunInput", "evaluate_run", "load_qrels_input",
        "load_run_input",
    ),
    "evalkit.progress": (
        "PROGRESS_INTERVAL_S", "ProgressBar",
    ),
    "evalkit.provenance": (
        "base_header", "metric_provenance", "plugin_versions",
    ),
    "evalkit.pyproject_config": (
        "ConfigError", "ENV_PLUGINS", "OTHER_KEYS", "PYPROJECT", "PluginRequirement",
        "PluginSelection", "RUN_KEYS", "TABLE", "ToolConfig", "canonical_name",
        "find_pyproject", "parse_requirement", "plugin_selection", "read_tool_config",
        "split_env_list",
    ),
    "evalkit.ranking": (
        "DuplicateDocumentError", "RankedRun", "rank_arrays", "rank_mapping", "rank_run",
    ),
    "evalkit.redaction": (
        "MIN_SECRET_CHARS", "PLAIN_HEADERS", "REDACTED", "RedactingFilter", "SECRET_KEY",
        "URL_LOGGERS", "error_text", "install_log_redaction", "mask", "public_url",
        "redact_structure", "redact_urls", "register_header_secrets", "register_secret",
        "register_secrets", "register_structure_secrets", "register_url_secrets",
        "scrub_exception", "scrub_record", "secrets_registered",
    ),
    "evalkit.registry": (
        "Conflict", "Entry", "F", "Provider", "Registry", "RegistryError", "default_registry",
        "polarity", "register_aggregate", "register_loader", "register_metric", "registered",
        "resolve", "set_default_registry", "use_registry",
    ),
    "evalkit.reporters": (
        "PLUGIN_REPORTERS", "QueryDelta", "Report", "ReportCase", "ReportRow", "ReportRun",
        "ReportTargetError", "as_report", "builtin_reporters", "check_report_targets",
        "file_targets", "get_reporter", "parse_report_target", "report_from_comparison",
        "report_from_gate", "write_report", "write_reports",
    ),
    "evalkit.reporters._table": (
        "ci", "columns", "movers", "num", "pval",
    ),
    "evalkit.reporters.compare_table": (
        "print_compare_table", "significance_rule",
    ),
    "evalkit.reporters.comparison_rows": (
        "NO_DIFFERENCE", "comparison_row", "report_from_comparison",
    ),
    "evalkit.reporters.console": (
        "STYLES", "render_console",
    ),
    "evalkit.reporters.json_report": (
        "render_json",
    ),
    "evalkit.reporters.junit": (
        "render_junit",
    ),
    "evalkit.reporters.markdown": (
        "ICONS", "STATUS_ICONS", "render_markdown",
    ),
    "evalkit.reporters.model": (
        "QueryDelta", "Report", "ReportCase", "ReportKind", "ReportRow", "ReportRun",
        "as_report", "report_from_gate",
    ),
    "evalkit.reporters.plugin_listing": (
        "render_plugin_listing",
    ),
    "evalkit.reporters.power_table": (
        "print_power_plans",
    ),
    "evalkit.results": (
        "ArtifactError", "Integrity", "MetricFailedError", "QueryResult", "RunResult",
        "SCHEMA_VERSION", "artifact_line", "is_artifact", "iter_rows", "settings_differences",
    ),
    "evalkit.rows": (
        "CaseResult", "CutRaw", "DEFAULT_MAX_RAW_BYTES", "RawCutError", "bounded_response",
        "case_result_from_json", "response_from_json", "response_to_json",
    ),
    "evalkit.run_files": (
        "DEFAULT_METRICS", "QrelsArg", "check_artifact", "is_artifact", "load_or_evaluate",
        "notes_of", "qrels_sha256", "require_rows",
    ),
    "evalkit.run_header": (
        "HEADER_IDS", "ResumeError", "check_resumable", "describe_target", "finish_header",
        "goldens_record", "new_header", "now", "status_line",
    ),
    "evalkit.runlock": (
        "ArtifactBusyError", "lock_path", "run_lock",
    ),
    "evalkit.runner": (
        "METRICS", "Qrels", "judgments_for", "run",
    ),
    "evalkit.scoring": (
        "MetricError", "RunAborted", "UnjudgedCasesError", "name_list", "registered_counts",
        "require_judgments", "require_metrics", "resolve_aggregates", "resolve_metrics",
        "score_case", "score_cases", "score_rankings",
    ),
    "evalkit.specs": (
        "AggregateSpec", "AnySpec", "BatchFn", "CaseMetricFn", "LOADER_KINDS", "LoaderKind",
        "LoaderSpec", "MetricFamily", "MetricKind", "MetricSpec", "PrepareFn", "ReporterSpec",
        "SPEC_TYPES", "SUMMARY_KINDS", "SummaryKind", "TargetSpec", "record_problem",
    ),
    "evalkit.stats": (
        "BootstrapResult", "paired_bootstrap",
    ),
    "evalkit.stats.engine": (
        "ALTERNATIVES", "Analysis", "CIMethod", "CI_METHODS", "CI_OF_METHOD", "ColumnOutcome",
        "DEFAULT_CI", "Family", "FloatArray", "METHODS", "Method", "SNAPPED_CI", "analyse",
        "analyse_family", "check_options", "is_binary", "resolve_method",
    ),
    "evalkit.summaries": (
        "summary_kind", "summary_value",
    ),
    "evalkit.targets": (
        "CallableTarget", "Target", "TargetError", "TargetResponse",
    ),
    "evalkit.testing": (
        "ConformanceCheck", "Pair", "PluginLoadError", "assert_conforms", "check_conformance",
        "conformance_checks", "registered_plugin", "sample_pairs", "sample_rows",
    ),
    "evalkit.topics": (
        "FIELDS", "MAX_BYTES", "TopicsError", "load_topics", "parse_trec_topics",
    ),
}


MAIN_NAMES: dict[str, tuple[str, ...]] = {
    "evalkit.check_ops": (
        "BASELINE_RULES", "BaselineRule", "DEFAULT_ALPHA", "EQ_ABS_TOL", "EQ_REL_TOL",
        "LEVELS", "Level", "OPS", "Op", "compare_threshold",
    ),
    "evalkit.checks_models": (
        "CHECK_KEYS", "CheckModel", "ChecksFile", "QUOTE_OP", "TOP_LEVEL_KEYS", "op_problem",
        "validate_check", "validate_file",
    ),
    "evalkit.evalconfig_models": (
        "EvalSettings", "TargetSettings", "ToolSettings", "known_keys", "validate_settings",
    ),
    "evalkit.goldens_models": (
        "CaseId", "GoldenCases", "GoldenRow", "KNOWN_FIELDS", "id_problem", "validate_row",
    ),
    "evalkit.goldens_yaml": (
        "load_yaml",
    ),
    "evalkit.model_errors": (
        "Loc", "MISSING", "Problem", "RULE", "did_you_mean", "first_error", "is_rule",
        "located", "rule", "rule_message", "value_at", "where",
    ),
    "evalkit.frame_inputs": (
        "FrameFormatError", "QRELS_COLUMNS", "RUN_COLUMNS", "is_dataframe", "qrels_from_frame",
        "run_from_frame",
    ),
    "evalkit.frames": (
        "MissingExtraError", "PANDAS_EXTRA", "comparison_frame", "gate_frame",
        "require_pandas", "run_frame", "write_parquet",
    ),
    "evalkit.tables": (
        "COMPARISON_FIELDS", "Columns", "GATE_FIELDS", "column_names", "comparison_columns",
        "comparison_long_columns", "csv_text", "gate_columns", "run_columns", "write_csv",
    ),
    "evalkit.run_views": (
        "RunViews",
    ),
    "evalkit.judged_queries": (
        "JudgedQueries", "case_ids",
    ),
    "evalkit.ranked_ids": (
        "RankedIds",
    ),
    "evalkit.cli.table_outputs": (
        "check_table_outputs", "write_table_outputs",
    ),
    # names that modules of the flat layout gained on main
    "evalkit.ranking": (
        "RankOrder", "RankedIds", "group_queries", "rank_order",
    ),
    "evalkit.precomputed": (
        "LoadedQrels",
    ),
    "evalkit.scoring": (
        "score_columns",
    ),
    "evalkit.reporters": (
        "render_report",
    ),
    "evalkit.reporters.latex": (
        "BETTER", "WORSE", "escape", "paper_name", "render_latex",
    ),
    "evalkit.reporters.html_table": (
        "report_html", "run_html",
    ),
}


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_an_old_path_keeps_its_names(old: str) -> None:
    module = importlib.import_module(old)
    missing = [name for name in OLD_NAMES[old] if not hasattr(module, name)]
    assert missing == [], f"{old} lost {missing}"


@pytest.mark.parametrize("old", sorted(MAIN_NAMES))
def test_a_path_main_gained_keeps_its_names(old: str) -> None:
    module = importlib.import_module(old)
    missing = [name for name in MAIN_NAMES[old] if not hasattr(module, name)]
    assert missing == [], f"{old} lost {missing}"


@pytest.mark.parametrize("old", sorted(o for o, homes in MOVED.items() if len(homes) == 1))
def test_a_module_moved_whole_is_the_new_module(old: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(MOVED[old][0])


def test_a_moved_package_brings_its_submodules() -> None:
    for old, new in MOVED_PACKAGES.items():
        assert importlib.import_module(old) is importlib.import_module(new)
        junit_old = importlib.import_module(f"{old}.junit")
        assert junit_old is importlib.import_module(f"{new}.junit")


def test_from_imports_of_old_paths_in_a_fresh_interpreter() -> None:
    code = (
        "from evalkit.results import RunResult\n"
        "from evalkit.registry import Registry, default_registry, use_registry\n"
        "from evalkit.evaluation import evaluate, rescore, status_line\n"
        "from evalkit.reporters.markdown import render_markdown\n"
        "from evalkit.runner import METRICS\n"
        "from evalkit.plugins import load_plugins, PluginLoadWarning\n"
        "import evalkit.gate_report, evalkit.data.results\n"
        "assert RunResult is evalkit.data.results.RunResult\n"
        "assert 'ndcg@k' in METRICS or 'ndcg' in METRICS\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
