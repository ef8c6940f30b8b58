"""Start-up: `evalkit --help` and `evalkit plugins list` import only what they need.

Each command runs in a fresh interpreter (as the console script does) and reports which
modules it imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
sys.argv = {argv!r}
code = 0
try:
    from evalkit.cli import main
    main()
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}), file=sys.stderr)
"""


def imported_by(*args: str, cache: Path | None = None) -> tuple[int, set[str], str]:
    """Run ``evalkit *args``; ``cache`` is the folder of the kept list of plugin commands
    (default: none kept, so `--help` discovers the plugins)."""
    env = {**os.environ, "EVALKIT_CACHE_DIR": str(cache) if cache is not None else ""}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=["evalkit", *args])],
        capture_output=True, text=True, timeout=120, env=env,
    )
    report = json.loads(result.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"]), result.stdout


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_help_imports_no_library_dependency_and_no_plugin(tmp_path: Path) -> None:
    # the first run discovers the plugins (to list their commands) and keeps the list
    code, modules, out = imported_by("--help", cache=tmp_path)
    assert code == 0 and "plugins" in out
    assert "evalkit_retrieval.plugin" in modules and "pluggy" in modules
    assert top_level(modules) & {"numpy", "scipy", "pydantic", "yaml"} == set()
    assert {m for m in modules if m.endswith("_cmd")} == set()
    # every later one reads the list kept
    code, modules, out = imported_by("--help", cache=tmp_path)
    assert code == 0 and "plugins" in out
    heavy = {"numpy", "scipy", "pydantic", "yaml", "anthropic", "httpx", "pluggy", "jinja2",
             "markupsafe", "vl_convert", "playwright", "pandas", "pyarrow"}
    assert top_level(modules) & heavy == set()
    assert {m for m in top_level(modules) if m.startswith("evalkit_")} == set()
    assert "evalkit.core.registry" not in modules
    assert {m for m in modules if m.startswith("evalkit.plugins.")} == {
        "evalkit.plugins.command_list"}
    # the command list comes from the command table: no command module is imported
    assert {m for m in modules if m.endswith("_cmd")} == set()
    # typer's rich help layout would import markdown-it and pygments
    assert top_level(modules) & {"markdown_it", "pygments"} == set()


def test_plugins_list_imports_no_http_or_llm_client() -> None:
    code, modules, out = imported_by("plugins", "list")
    assert code == 0, out
    assert "retrieval" in out
    assert top_level(modules) & {"anthropic", "httpx", "scipy", "pydantic", "pandas"} == set()
    assert {m for m in modules if m.endswith("_cmd")} == {"evalkit.cli.plugins_cmd"}
    # registering the built-in aggregates reads no run rows or artifacts
    assert {"evalkit.data.rows", "evalkit.data.artifact"} & modules == set()


def test_plugins_list_shows_the_dask_executor_without_importing_dask() -> None:
    code, modules, out = imported_by("plugins", "list", "--json")
    assert code == 0, out
    listing = json.loads(out)
    assert {(n["name"], n["distribution"]) for n in listing["names"]
            if n["kind"] == "executor"} == {("local", "paired-evalkit-core"),
                                            ("dask", "evalkit-dask")}
    assert top_level(modules) & {"dask", "distributed", "cloudpickle", "tornado"} == set()
    assert {m for m in modules if m.startswith("evalkit_dask")} == {
        "evalkit_dask", "evalkit_dask.plugin"}


def test_the_html_reporter_registers_without_its_template_or_plotting_library() -> None:
    code, modules, out = imported_by("plugins", "list", "--json")
    assert code == 0, out
    listing = json.loads(out)
    html = [p for p in listing["plugins"] if p["distribution"] == "evalkit-report-html"]
    assert [p["status"] for p in html] == ["loaded"]
    assert any(n["name"] == "html" and n["kind"] == "reporter" for n in listing["names"])
    assert "evalkit_report_html.plugin" in modules
    # registering imported neither jinja2 nor vl-convert (nor the browser driver)
    assert top_level(modules) & {"jinja2", "markupsafe", "vl_convert", "playwright"} == set()
    assert {m for m in modules if m.startswith("evalkit_report_html.")} == {
        "evalkit_report_html.plugin"}


def test_the_text_metrics_register_without_jsonschema_or_rouge_score() -> None:
    code, modules, out = imported_by("plugins", "list", "--json")
    assert code == 0, out
    listing = json.loads(out)
    text = [p for p in listing["plugins"] if p["distribution"] == "evalkit-text"]
    assert [p["status"] for p in text] == ["loaded"]
    names = {n["name"] for n in listing["names"] if n["kind"] == "metric"}
    assert {"exact_match", "f1", "rouge_l", "contains", "regex", "json_valid",
            "json_schema"} <= names
    # the records only: the scoring modules are imported when a metric is first used
    assert {m for m in modules if m.startswith("evalkit_text.")} == {
        "evalkit_text.plugin", "evalkit_text.records"}
    # registering imported neither the JSON Schema validator nor the ROUGE reference
    assert top_level(modules) & {"jsonschema", "referencing", "rouge_score", "nltk",
                                 "numpy"} == set()


def test_version_help_and_listing_import_no_validator_and_no_numpy() -> None:
    # the declarative files are validated by pydantic, imported only by the commands that
    # read them; plugin selection ([tool.evalkit] plugins) is read without it
    for args in (("--version",), ("--help",), ("plugins", "list"), ("schema", "--help")):
        code, modules, out = imported_by(*args)
        assert code == 0, (args, out)
        assert top_level(modules) & {"pydantic", "pydantic_core", "numpy"} == set(), args
    from evalkit._version import __version__

    code, modules, out = imported_by("--version")
    assert f"evalkit {__version__}" in out and "evalkit.core.registry" not in modules


def test_eval_of_a_trec_run_imports_what_scoring_needs() -> None:
    data = Path(__file__).resolve().parents[1] / "examples" / "vaswani" / "data"
    run = str(data / "runs" / "run.vaswani.bm25.txt")
    for output in ("trec", "json"):
        code, modules, out = imported_by("eval", run, "--qrels", str(data / "qrels"),
                                         "-m", "ap,ndcg@10", "--format", output)
        assert code == 0, out
        # numpy, and the retrieval plugin's modules; of the other plugins only what
        # registers their names; nothing for statistics, gates, HTTP, LLM judges or tables,
        # no compiler, no thread pool
        assert "numpy" in top_level(modules) and "evalkit_retrieval.bulk_state" in modules
        assert top_level(modules) & {"scipy", "numba", "llvmlite", "pydantic", "yaml",
                                     "anthropic", "httpx"} == set()
        others = {m for m in modules if m.startswith(
            ("evalkit_judge", "evalkit_http", "evalkit_report_html"))}
        assert others <= {"evalkit_judge", "evalkit_judge.plugin",
                          "evalkit_judge.cost_aggregates",
                          "evalkit_judge.agreement_aggregates", "evalkit_http",
                          "evalkit_http.plugin", "evalkit_report_html",
                          "evalkit_report_html.plugin"}
        assert {"rich.console", "rich.table", "concurrent.futures"} & modules == set()
        assert {m for m in modules if m.endswith("_cmd")} == {"evalkit_retrieval.eval_cmd"}
        # of evalkit.stats only the exact sums the rows' means use and the rule a value
        # keeps to its declared bounds (no test, no engine)
        assert {m for m in modules if m.startswith("evalkit.stats")} <= {
            "evalkit.stats", "evalkit.stats.numeric", "evalkit.stats.declared_values"}
    # the default table, the per-query values, a folder of runs: no compiler either
    for args in ((run,), (run, "-q"), (str(data / "runs"),)):
        code, modules, out = imported_by("eval", *args, "--qrels", str(data / "qrels"),
                                         "-m", "ap,ndcg@10")
        assert code == 0, out
        assert top_level(modules) & {"scipy", "numba", "llvmlite", "pydantic"} == set()
