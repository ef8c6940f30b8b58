"""``evalkit fuse``: several TREC runs fused into one (:func:`evalkit_retrieval.fusion.fuse`).

evalkit imports this module only when the command runs; ``evalkit --help`` lists the
command from the plugin's :class:`~evalkit.core.specs.CommandSpec`.
"""

from __future__ import annotations

from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evalkit_retrieval.fusion import FUSION_METHODS, FUSION_NORMS, RRF_K

Method = Enum("Method", {m: m for m in FUSION_METHODS}, type=str)  # type: ignore[misc]
Norm = Enum("Norm", {n: n for n in FUSION_NORMS}, type=str)  # type: ignore[misc]


class Missing(StrEnum):
    """What a run that lacks a query means."""

    refuse = "refuse"
    empty = "empty"


def fuse(
    runs: Annotated[list[Path], typer.Argument(
        metavar="RUN...", help="Two or more TREC run files (plain or .gz).",
        show_default=False)],
    method: Annotated[Method, typer.Option(
        "--method", help="How scores are combined: rrf (ranks only), combsum, combmnz, "
        "combmax, combmin, combanz, wsum (needs --weights).", case_sensitive=False,
        show_default=False)],
    output: Annotated[Path, typer.Option(
        "-o", "--output", metavar="FUSED", help="The fused TREC run to write (.gz: "
        "compressed).", show_default=False)],
    norm: Annotated[Norm | None, typer.Option(
        "--norm", help="Per-query normalisation before combining (ranx's names): min-max, "
        "max, sum, zmuv (zero mean, unit variance), rank, borda or none (docs/fusion.md). "
        "Default: min-max, and none for rrf (which takes no other).", case_sensitive=False,
        show_default=False)] = None,
    weights: Annotated[str | None, typer.Option(
        "--weights", metavar="W1,W2,...", help="wsum's weights, one per run, in order.",
        show_default=False)] = None,
    rrf_k: Annotated[float, typer.Option("--rrf-k", help="RRF's k (rrf only).")] = RRF_K,
    depth: Annotated[int | None, typer.Option(
        "--depth", help="Keep the best N documents of each query (default: all).",
        show_default=False)] = None,
    missing: Annotated[Missing, typer.Option(
        "--missing", help="A run without a query: refuse (as ranx) or count it as empty "
        "for that query.")] = Missing.refuse,
    tag: Annotated[str | None, typer.Option(
        "--tag", help="The fused run's tag (default: the method's name).",
        show_default=False)] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing file at -o (never one of the RUNs).")
    ] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Also print what was fused as JSON on standard output: runs, "
        "method, norm, weights, rrf_k (rrf only), tag, queries, lines, output.")
    ] = False,
) -> None:
    """Fuse TREC runs into one (docs/fusion.md): normalise each query's scores, combine
    them per document, write the fused ranking in trec_eval's order."""
    from evalkit.io.outputs import require_writable
    from evalkit_retrieval.fusion import FusionError
    from evalkit_retrieval.fusion import fuse as fuse_runs

    # before any work: not over an input, not over a file without --overwrite
    require_writable(output, "-o", "fused.txt", inputs=list(runs), overwrite=overwrite)

    parsed: list[float] | None = None
    if weights is not None:
        try:
            parsed = [float(w) for w in weights.split(",")]
        except ValueError:
            raise FusionError(f"--weights {weights!r}: expected numbers separated by commas, "
                           "one per run (--weights 0.6,0.4)") from None
    fused = fuse_runs(runs, method=method.value, norm=norm.value if norm else None,
                      weights=parsed, rrf_k=rrf_k, depth=depth, missing=missing.value,
                      name=tag)
    fused.save(output)
    n_docs = sum(len(r) for r in fused.rankings.values())
    typer.echo(f"fused {len(runs)} runs ({fused.method}, norm {fused.norm}): "
               f"{len(fused.rankings)} queries, {n_docs:,} lines -> {output}", err=True)
    if as_json:
        import json

        from evalkit.cli.output import stdout_document

        stdout_document(json.dumps({
            "runs": [str(r) for r in runs], "method": fused.method, "norm": fused.norm,
            "weights": parsed, "rrf_k": rrf_k if fused.method == "rrf" else None,
            "tag": fused.name, "queries": len(fused.rankings), "lines": n_docs,
            "output": str(output)}, indent=2, allow_nan=False))
