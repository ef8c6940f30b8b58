"""The ``latex`` reporter: the comparison as the booktabs table of an IR paper.

Three hand-made systems on ten queries and two metrics of opposite polarity (AP, higher
is better; unj@10, the share of unjudged documents, lower is better). Every expected cell
is worked out here: the means by hand, the verdicts from scipy's paired t-test with Holm's
rule applied by hand, the bold cell as the best mean of its column. The tables are then
compiled with pdflatex where it is installed (Debian's texlive-latex-base and
texlive-latex-recommended), and read back with pdftotext when poppler-utils is there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from evalkit_report_tables.latex import escape, paper_name
from scipy import stats
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from evalkit.data.results import QueryResult, RunResult
from evalkit.report import get_reporter

QIDS = [f"q{i:02d}" for i in range(1, 11)]
AP_A = [0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.2, 0.3, 0.4, 0.5]  # mean 0.3
AP_B = [a + d for a, d in zip(AP_A, [0.1, 0.12, 0.08, 0.11, 0.09, 0.1, 0.12, 0.08, 0.11, 0.09],
                              strict=True)]  # mean 0.4
AP_C = [a + d for a, d in zip(AP_A, [0.05, -0.05, 0.02, -0.02, 0.01, -0.01, 0.03, -0.03, 0, 0],
                              strict=True)]  # mean 0.3
UNJ_A = [0.5, 0.6, 0.4, 0.5, 0.6, 0.4, 0.5, 0.6, 0.4, 0.5]  # mean 0.5
UNJ_B = [a + d for a, d in zip(UNJ_A, [0.2, 0.22, 0.18, 0.2, 0.21, 0.19, 0.2, 0.2, 0.2, 0.2],
                               strict=True)]  # mean 0.7
UNJ_C = [a - d for a, d in zip(UNJ_A, [0.1, 0.12, 0.08, 0.1, 0.1, 0.1, 0.12, 0.08, 0.1, 0.1],
                               strict=True)]  # mean 0.4
NAMES = ("A_base", "B&co", "C#1 50%")  # every one needs escaping
ESCAPED = (r"A\_base", r"B\&co", r"C\#1 50\%")

runner = CliRunner()


def run(name: str, ap: list[float], unj: list[float]) -> RunResult:
    rows = [QueryResult(q, [], {"ap": a, "unj@10": u}) for q, a, u in zip(QIDS, ap, unj,
                                                                          strict=True)]
    return RunResult(name, rows, {"qrels": {"sha256": "same"}})


def systems() -> tuple[RunResult, RunResult, RunResult]:
    return (run(NAMES[0], AP_A, UNJ_A), run(NAMES[1], AP_B, UNJ_B),
            run(NAMES[2], AP_C, UNJ_C))


def holm(p: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjustment, by hand."""
    out, running = {}, 0.0
    for i, key in enumerate(sorted(p, key=p.__getitem__)):
        running = max(running, min(1.0, (len(p) - i) * p[key]))
        out[key] = running
    return out


def t_p(x: list[float], y: list[float]) -> float:
    return float(stats.ttest_rel(x, y).pvalue)


def body(tex: str) -> list[str]:
    """The lines between \\midrule and \\bottomrule, stripped."""
    lines = [ln.strip() for ln in tex.splitlines()]
    return lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]


def test_names_are_escaped_and_metrics_take_their_paper_names() -> None:
    assert escape(r"a_b&c#d%e$f{g}h~i^j\k<l>m|n") == (
        r"a\_b\&c\#d\%e\$f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
        r"\textless{}l\textgreater{}m\textbar{}n")
    assert escape("two\nlines\tand é") == "two lines and é"
    assert [paper_name(m) for m in ("ap", "ndcg@10", "precision@10", "recall@100", "rr",
                                    "ndcg", "bpref", "my_metric")] == [
        "AP", "nDCG@10", "P@10", "R@100", "RR", "nDCG", "bpref", r"my\_metric"]


def test_against_the_baseline_daggers_nablas_and_bold_by_polarity() -> None:
    a, b, c = systems()
    comp = evalkit.compare(a, b, c, metrics=["ap", "unj@10"], method="t-test")
    # the verdicts, independently: scipy's paired t-test, Holm over the four tests
    p = holm({"B ap": t_p(AP_B, AP_A), "C ap": t_p(AP_C, AP_A),
              "B unj": t_p(UNJ_B, UNJ_A), "C unj": t_p(UNJ_C, UNJ_A)})
    sig = {k: v < 0.05 for k, v in p.items()}
    assert sig == {"B ap": True, "C ap": False, "B unj": True, "C unj": True}
    tex = comp.to_latex()
    assert tex == get_reporter("latex").render(comp)
    # means by hand; bold: the highest AP (B), the lowest unj@10 (C); B's AP is better
    # than the baseline's and its unj@10 worse (higher), C's unj@10 better
    assert body(tex) == [
        rf"{ESCAPED[0]} & 0.3000 & 0.5000 \\",
        rf"{ESCAPED[1]} & \textbf{{0.4000}}$^{{\dagger}}$ & 0.7000$^{{\nabla}}$ \\",
        rf"{ESCAPED[2]} & 0.3000 & \textbf{{0.4000}}$^{{\dagger}}$ \\",
    ]
    lines = tex.splitlines()
    assert r"\toprule" in [ln.strip() for ln in lines]
    assert r"System & AP & unj@10 \\" in tex
    assert r"\begin{tabular}{lrr}" in tex
    caption = next(ln for ln in lines if r"\caption{" in ln)
    for part in ("over 10 queries", "paired t-test, two-sided", "analytic p, no resampling",
                 "p adjusted by Holm over 4 tests", r"$\alpha = 0.05$",
                 rf"the baseline's ({ESCAPED[0]})", r"$^{\dagger}$ marks", r"$^{\nabla}$",
                 "best value per column is in bold"):
        assert part in caption, part


def test_every_pair_gets_letters_and_a_legend() -> None:
    a, b, c = systems()
    comp = evalkit.compare(a, b, c, metrics=["ap", "unj@10"], method="t-test",
                           all_pairs=True)
    p = holm({"B>A ap": t_p(AP_B, AP_A), "C-A ap": t_p(AP_C, AP_A),
              "B>C ap": t_p(AP_B, AP_C), "A<B unj": t_p(UNJ_B, UNJ_A),
              "C<A unj": t_p(UNJ_C, UNJ_A), "C<B unj": t_p(UNJ_C, UNJ_B)})
    assert {k: v < 0.05 for k, v in p.items()} == {
        "B>A ap": True, "C-A ap": False, "B>C ap": True, "A<B unj": True, "C<A unj": True,
        "C<B unj": True}
    # a = A_base, b = B&co, c = C#1 50%; a mean carries the letters of the systems it is
    # significantly better than: B beats a and c on AP; on unj@10 (lower is better) A
    # beats b, and C beats a and b
    assert body(comp.to_latex()) == [
        rf"a & {ESCAPED[0]} & 0.3000 & 0.5000$^{{b}}$ \\",
        rf"b & {ESCAPED[1]} & \textbf{{0.4000}}$^{{ac}}$ & 0.7000 \\",
        rf"c & {ESCAPED[2]} & 0.3000 & \textbf{{0.4000}}$^{{ab}}$ \\",
    ]
    tex = comp.to_latex()
    assert r"\# & System & AP & unj@10 \\" in tex and r"\begin{tabular}{clrr}" in tex
    assert f"(a: {ESCAPED[0]}, b: {ESCAPED[1]}, c: {ESCAPED[2]})" in tex
    assert "p adjusted by Holm over 6 tests" in tex


def test_resampled_tests_name_the_resamples_seed_and_correction() -> None:
    a, b, _ = systems()
    comp = evalkit.compare(a, b, metrics=["ap"], n_resamples=2000, seed=7,
                           correction="none", alternative="greater")
    tex = comp.to_latex()
    assert "sign-flip randomization test, one-sided (greater)" in tex
    assert "2,000 resamples, seed 7" in tex and "p not adjusted for multiplicity" in tex


def test_auto_names_each_metrics_test() -> None:
    """``auto`` runs the t-test on a 0/1 metric and the randomization test elsewhere
    (docs/statistics.md): the caption says which metric had which."""
    hits_a = [float(i % 2) for i in range(10)]
    hits_b = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    a = RunResult("a", [QueryResult(q, [], {"ap": x, "success@1": h})
                        for q, x, h in zip(QIDS, AP_A, hits_a, strict=True)], {})
    b = RunResult("b", [QueryResult(q, [], {"ap": x, "success@1": h})
                        for q, x, h in zip(QIDS, AP_B, hits_b, strict=True)], {})
    tex = evalkit.compare(a, b, metrics=["ap", "success@1"]).to_latex()
    assert ("two-sided tests (AP: sign-flip randomization test; Success@1: paired "
            "t-test); 10,000 resamples, seed 42") in tex


def test_all_pairs_says_the_test_varies_by_pair_and_lists_no_metric_twice() -> None:
    """With ``auto`` the sign-flip test is joined by the bootstrap-t on a pair whose
    differences are skewed (|G1| >= 1, scipy's adjusted Fisher-Pearson skewness): the
    caption says so per pair, instead of listing AP under both tests."""
    skewed = [0.01, 0.0, 0.02, 0.01, 0.0, 0.01, 0.02, 0.0, 0.01, 0.6]
    even = [0.05, -0.04, 0.03, -0.02, 0.06, -0.05, 0.04, -0.03, 0.02, -0.01]
    runs = [RunResult(name, [QueryResult(q, [], {"ap": a + d})
                             for q, a, d in zip(QIDS, AP_A, diffs, strict=True)], {})
            for name, diffs in (("a", [0.0] * 10), ("b", skewed), ("c", even))]
    comp = evalkit.compare(*runs, metrics=["ap"], all_pairs=True, n_resamples=1000)
    methods = set()
    for c in comp:  # which pairs are skewed, by scipy
        g1 = stats.skew(c.differences, bias=False)
        assert (abs(g1) >= 1) == (c.method == "randomization+bootstrap-t"), (c, g1)
        methods.add(c.method)
    assert methods == {"randomization", "randomization+bootstrap-t"}
    tex = comp.to_latex()
    assert ("Paired by query: sign-flip randomization test, joined per pair by the "
            "bootstrap-t (both must reject) where that pair's differences are skewed "
            "($|G_1| \\geq 1$), two-sided; 1,000 resamples") in tex
    assert "bootstrap-t for AP" not in tex and "test for AP" not in tex


def test_to_latex_writes_the_file_and_compare_report_latex_writes_the_same(
        tmp_path: Path) -> None:
    a, b, _ = systems()
    for r in (a, b):
        r.save(tmp_path / f"{r.name[0]}.jsonl")
    comp = evalkit.compare(tmp_path / "A.jsonl", tmp_path / "B.jsonl", metrics=["ap"])
    text = comp.to_latex(tmp_path / "sub" / "t.tex")
    assert (tmp_path / "sub" / "t.tex").read_text(encoding="utf-8") == text
    res = runner.invoke(app, ["compare", str(tmp_path / "A.jsonl"), str(tmp_path / "B.jsonl"),
                              "-m", "ap", "--report", f"latex:{tmp_path / 'cli.tex'}"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cli.tex").read_text(encoding="utf-8") == text


def pdflatex_or_skip() -> str:
    exe = shutil.which("pdflatex")
    if exe is None:
        pytest.skip("pdflatex is not installed (Debian: apt-get install texlive-latex-base "
                    "texlive-latex-recommended); the LaTeX table is not compiled")
    kpse = shutil.which("kpsewhich")
    if kpse is not None and not subprocess.run([kpse, "booktabs.sty"], capture_output=True,
                                               text=True, timeout=10).stdout.strip():
        pytest.skip("pdflatex has no booktabs package (Debian: texlive-latex-recommended)")
    return exe


def compile_tables(tables: list[str], folder: Path) -> Path:
    """Compile the tables in one article; the PDF's path. Fails with pdflatex's log."""
    exe = pdflatex_or_skip()
    for i, tex in enumerate(tables):
        (folder / f"t{i}.tex").write_text(tex, encoding="utf-8")
    inputs = "\n".join(rf"\input{{t{i}.tex}}" for i in range(len(tables)))
    (folder / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        f"{inputs}\n\\end{{document}}\n", encoding="utf-8")
    proc = subprocess.run(
        [exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
        cwd=folder, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-3000:]
    pdf = folder / "doc.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    return pdf


def test_the_tables_compile_with_pdflatex_and_booktabs(tmp_path: Path) -> None:
    a, b, c = systems()
    against = evalkit.compare(a, b, c, metrics=["ap", "unj@10"], method="t-test")
    pairs = evalkit.compare(a, b, c, metrics=["ap", "unj@10"], method="t-test",
                            all_pairs=True)
    checks = [evalkit.CheckSpec("ap_floor", "ap", op=">=", threshold=0.35),
              evalkit.CheckSpec("no_regress", "ap", vs_baseline="no_significant_regression",
                                alpha=0.05)]
    gate = evalkit.evaluate_gate(checks, b, baseline=a)
    gate_tex = gate.to_report()
    from evalkit_report_tables.latex import render_latex

    pdf = compile_tables([against.to_latex(), pairs.to_latex(), render_latex(gate_tex)],
                         tmp_path)
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        return  # poppler-utils is not installed: the PDF exists, its text is not read
    text = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True,
                          text=True, timeout=30).stdout
    # (pdflatex's default OT1 encoding draws \_ as a rule, which pdftotext reads as a space)
    assert "A_base" in text or "A base" in text
    assert NAMES[1] in text and NAMES[2] in text
    assert "0.4000†" in text and "0.7000∇" in text and "0.4000ab" in text
    assert "α = 0.05" in text and ("ap_floor" in text or "ap floor" in text)


def test_collections_become_one_forest_table_that_compiles(tmp_path: Path) -> None:
    import statistics

    a, b, _ = systems()
    halves = {"trec_covid": QIDS[:5], "50% split": QIDS[5:]}

    def part(r: RunResult, ids: list[str]) -> RunResult:
        return RunResult(r.name, [q for q in r.per_query if q.query_id in ids], r.header)

    m = evalkit.meta_compare({n: (part(a, ids), part(b, ids)) for n, ids in halves.items()},
                             metrics=["ap", "unj@10"])
    tex = m.to_latex()
    z = stats.norm.ppf(0.975)

    def cells(x: list[float], y: list[float]) -> str:
        d = [v - u for u, v in zip(x, y, strict=True)]
        mean, se = statistics.fmean(d), statistics.stdev(d) / len(d) ** 0.5
        return f"$+${mean:.4f} & [$+${mean - z * se:.4f}, $+${mean + z * se:.4f}]"

    lines = body(tex)
    assert lines[0] == (rf"trec\_covid & 5 & {cells(AP_A[:5], AP_B[:5])} & "
                        rf"{cells(UNJ_A[:5], UNJ_B[:5])} \\")
    assert lines[1].startswith(r"50\% split & 5 & " + cells(AP_A[5:], AP_B[5:]))
    # AP: both halves differ by 0.1 with the same spread, so the pool is 0.1 with SE
    # se / sqrt(2), significantly better; unj@10 rose, which is worse (lower is better)
    se = statistics.stdev([d - u for u, d in zip(AP_A[:5], AP_B[:5], strict=True)]) / 5**0.5
    half = z * se / 2**0.5
    assert lines[3].startswith(rf"Pooled & 10 & $+$0.1000$^{{\dagger}}$ & [$+${0.1 - half:.4f}, "
                               rf"$+${0.1 + half:.4f}] & ")
    assert r"$^{\nabla}$" in lines[3] and lines[2] == r"\midrule"
    assert r"A\_base" in tex and r"B\&co" in tex and "Paule-Mandel" in tex
    compile_tables([tex], tmp_path)


def test_the_slices_of_a_comparison_by_tag_are_a_second_table() -> None:
    """``by="tag"``: a table per slice, metric and candidate after the main one; the means
    are numpy's over the tag's cases, the adjusted p Holm's over the slice family, names
    escaped as in the main table."""
    a, b, _ = systems()
    tags = {q: (["odd"] if i % 2 else ["even"]) + (["A_b\\c"] if i < 5 else [])
            for i, q in enumerate(QIDS)}
    comp = evalkit.compare(a, b, metrics=["ap"], by="tag", tags=tags, n_resamples=1000)
    tex = comp.to_latex()
    main, slices = tex.split(r"\end{table}", 1)
    assert r"\label{tab:evalkit-compare}" in main and r"\label{tab:evalkit-slices}" in slices
    assert "Tag & Metric & $n$ & Baseline & Candidate & Difference & 95\\% CI & p (Holm)" \
        in slices
    raw = {}
    for tag in ("odd", "even", "A_b\\c"):
        ids = [i for i, q in enumerate(QIDS) if tag in tags[q]]
        base = np.mean([AP_A[i] for i in ids])
        cand = np.mean([AP_B[i] for i in ids])
        line = next(ln for ln in slices.splitlines() if ln.strip().startswith(escape(tag)))
        assert f" & {len(ids)} & {base:.4f} & {cand:.4f} & $+${cand - base:.4f}" in line
        raw[tag] = next(s.p_value for s in comp.slices if s.slice == tag)
    assert r"A\_b\textbackslash{}c & AP" in slices
    # Holm over the three slice tests, by hand
    order = sorted(raw, key=raw.__getitem__)
    adjusted, running = {}, 0.0
    for j, tag in enumerate(order):
        running = max(running, min(1.0, (3 - j) * raw[tag]))
        adjusted[tag] = running
    assert [s.p_adjusted for s in comp.slices] == pytest.approx(
        [adjusted[s.slice] for s in comp.slices], rel=1e-12)
    assert "p adjusted by Holm over 3 slice tests" in slices
