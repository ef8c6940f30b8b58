"""The pairwise artifact: JSON Lines in the run artifacts' envelope (docs/artifacts.md,
"Pairwise artifacts").

Line 1 is the header (``type: "header"``, ``schema_version``, ``name``, ``kind:
"pairwise"``, the systems, the judge, the options, the per-pair statistics, the
Bradley-Terry strengths, totals and notes); then one ``row`` per verdict asked; then the
trailer (row count and SHA-256 of the bytes before it), written by the kernel's
:func:`evalkit.data.artifact.finished_lines` and checked by
:func:`evalkit.data.artifact.read_artifact`, so a cut or edited file is detected as a run
artifact's is.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit_judge.pairwise_ask import Answer, RejectedVerdict, Task
from evalkit_judge.pairwise_stats import PairStats, case_win_matrix, pair_stats, paired_tests

if TYPE_CHECKING:
    from evalkit.data.goldens import GoldenSet
    from evalkit.data.results import RunResult
    from evalkit_judge.judge import LLMJudge
    from evalkit_judge.pairwise_prompt import PairwisePrompt

KIND = "pairwise"
#: The version of the pairwise header's own fields (the envelope is the run artifacts').
PAIRWISE_FORMAT = 1


@dataclass
class PairwiseResult:
    """What :func:`pairwise` found (also what :func:`load_pairwise` reads back).

    Attributes:
        header: the artifact header: ``systems``, ``judge``, ``goldens``, ``options``,
            ``pairs`` (one dict per pair: :meth:`PairStats.as_dict
            <evalkit_judge.pairwise_stats.PairStats.as_dict>`), ``bradley_terry``
            (``None`` under three systems), ``totals`` and ``notes``.
        rows: one dict per verdict asked (``id`` the case, ``sample``, ``first``,
            ``second``, ``verdict``, ``winner``, ``reason``, ``key``, ``cached``,
            ``cost_usd``, tokens), or with ``error`` when none could be had.
    """

    header: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def systems(self) -> list[str]:
        """The systems' names, in the order given."""
        return [s["name"] for s in self.header["systems"]]

    @property
    def pairs(self) -> list[dict[str, Any]]:
        """The per-pair statistics."""
        return list(self.header["pairs"])

    def win_rate(self, a: str, b: str) -> float | None:
        """``a``'s win rate against ``b`` (``None`` for ``a == b`` or without cases)."""
        for pair in self.header["pairs"]:
            if (pair["a"], pair["b"]) == (a, b):
                return pair["win_rate"]  # type: ignore[no-any-return]
            if (pair["a"], pair["b"]) == (b, a):
                rate = pair["win_rate"]
                return None if rate is None else 1.0 - rate
        return None

    def save(self, path: str | Path) -> Path:
        """Write the artifact (:mod:`evalkit_judge.pairwise_artifact`); returns ``path``."""
        return save(self, path)


def verdict_row(task: Task, outcome: Answer | RejectedVerdict | str) -> dict[str, Any]:
    """The artifact row of one verdict (or of the error that left it out: a reply that
    held no verdict keeps what it cost)."""
    row: dict[str, Any] = {"type": "row", "id": task.case}
    if task.sample is not None:
        row["sample"] = task.sample
    row.update({"first": task.first, "second": task.second, "key": task.key})
    if isinstance(outcome, str):
        row["error"] = outcome
        return row
    if isinstance(outcome, RejectedVerdict):
        row.update({"error": str(outcome), "cached": False, "cost_usd": outcome.cost_usd,
                    "input_tokens": outcome.usage.input_tokens,
                    "output_tokens": outcome.usage.output_tokens})
        return row
    winner = {"A": task.first, "B": task.second}.get(outcome.verdict)
    row.update({"verdict": outcome.verdict, "winner": winner, "reason": outcome.reason,
                "cached": outcome.cached, "cost_usd": outcome.cost_usd,
                "input_tokens": outcome.usage.input_tokens,
                "output_tokens": outcome.usage.output_tokens,
                "served_model": outcome.served_model})
    return row


def pair_verdicts(rows: Sequence[Mapping[str, Any]], a: str, b: str
                  ) -> dict[tuple[str, int | None], tuple[str, str]]:
    """``{(case, sample): (verdict with a shown first, verdict with b shown first)}`` for
    the comparisons of ``a`` and ``b`` judged in both orders."""
    first: dict[tuple[str, int | None], str] = {}
    second: dict[tuple[str, int | None], str] = {}
    for row in rows:
        verdict = row.get("verdict")
        if not isinstance(verdict, str):
            continue
        slot = (str(row["id"]), row.get("sample"))
        if (row["first"], row["second"]) == (a, b):
            first[slot] = verdict
        elif (row["first"], row["second"]) == (b, a):
            second[slot] = verdict
    return {s: (first[s], second[s]) for s in first if s in second}


def statistics(systems: Sequence[str], rows: Sequence[Mapping[str, Any]],
               options: Mapping[str, Any]) -> tuple[list[PairStats], dict[str, Any] | None]:
    """The per-pair statistics and (with three systems or more) the Bradley-Terry
    strengths of ``rows`` under ``options`` (see :func:`evalkit_judge.pairwise.pairwise`)."""
    from itertools import combinations

    pairs = [pair_stats(a, b, pair_verdicts(rows, a, b), flips=options["flips"],
                        ties=options["ties"])
             for a, b in combinations(systems, 2)]
    paired_tests(pairs, alpha=options["alpha"], method=options["method"],
                 n_resamples=options["n_resamples"], seed=options["seed"])
    strengths = None
    if len(systems) >= 3 and any(p.case_scores for p in pairs):
        from evalkit_judge.bradley_terry import bootstrap

        _cases, matrix = case_win_matrix(systems, pairs)
        bt = bootstrap(matrix, penalty=options["bt_penalty"],
                       n_resamples=options["bt_resamples"], seed=options["seed"],
                       alpha=options["alpha"])
        strengths = {"penalty": bt.penalty, "n_resamples": bt.n_resamples, "seed": bt.seed,
                     "generator": "numpy PCG64", "n_cases": int(matrix.shape[0]),
                     "interval": "percentile",
                     "systems": [{"name": s, "strength": float(bt.theta[i]),
                                  "ci_low": float(bt.low[i]), "ci_high": float(bt.high[i])}
                                 for i, s in enumerate(systems)]}
    return pairs, strengths


def totals(rows: Sequence[Mapping[str, Any]], unasked: int) -> dict[str, Any]:
    """Counts and cost of the verdicts: ``requested`` the replies requested in this
    invocation (billed: a reply that held no verdict included, also counted in
    ``errors``), ``cached`` the verdicts served from the cache (or shared with an
    identical request of the same invocation), ``errors``, ``unasked`` (dry run);
    ``input_tokens``, ``output_tokens`` and ``cost_usd`` (US dollars) what the requested
    replies cost, the money spent now; ``cached_cost_usd`` what the cached verdicts cost
    when they were first requested (not spent again); ``unpriced`` requested replies
    without a price."""
    ok = [r for r in rows if "verdict" in r]
    billed = [r for r in rows if "cost_usd" in r and not r.get("cached")]
    costs = [r["cost_usd"] for r in billed if isinstance(r.get("cost_usd"), int | float)]
    cached = [r["cost_usd"] for r in ok if r.get("cached")
              and isinstance(r.get("cost_usd"), int | float)]
    return {"verdicts": len(ok), "requested": len(billed),
            "cached": sum(bool(r["cached"]) for r in ok),
            "errors": sum("error" in r for r in rows), "unasked": unasked,
            "input_tokens": sum(int(r.get("input_tokens") or 0) for r in billed),
            "output_tokens": sum(int(r.get("output_tokens") or 0) for r in billed),
            "cost_usd": math.fsum(costs), "cached_cost_usd": math.fsum(cached),
            "unpriced": len(billed) - len(costs)}


def _sha256(path: str | None) -> str | None:
    if path is None:
        return None
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def no_evidence(pairs: Sequence[PairStats], options: Mapping[str, Any]) -> dict[str, str]:
    """``{"A vs B": note}`` of the pairs whose every comparison the ``flips``/``ties``
    rules dropped: such a pair has no evidence (no win rate, no test), which must not
    read as "no difference", so the result's status is ``incomplete`` (exit 4)."""
    rules = " and ".join(f"--{name} drop" for name in ("flips", "ties")
                         if options.get(name) == "drop")
    return {f"{p.a} vs {p.b}": (
        f"{p.a} vs {p.b}: all {p.comparisons} comparison(s) were dropped by {rules} "
        f"({p.flipped} flipped with the order); the pair has no evidence, which is not "
        "'no difference' (status incomplete)")
        for p in pairs if p.comparisons and not p.n_cases}


def build_header(loaded: Sequence[tuple[str, RunResult, str | None]], gset: GoldenSet,
                 judge: LLMJudge, prompt: PairwisePrompt, rows: Sequence[Mapping[str, Any]],
                 notes: Sequence[str], *, options: Mapping[str, Any], unasked: int
                 ) -> dict[str, Any]:
    """The header of a pairwise artifact (its statistics computed from ``rows``)."""
    from evalkit import __version__

    systems = [name for name, _, _ in loaded]
    pairs, strengths = statistics(systems, rows, options)
    all_notes = list(notes)
    errors = [r for r in rows if "error" in r]
    if errors:
        all_notes.append(f"{len(errors)} verdict(s) could not be had (first: "
                         f"{errors[0]['error']}); their comparisons are left out, so "
                         "the win rates are not the systems' (status incomplete)")
    if unasked:
        all_notes.append(f"dry run: {unasked} verdict(s) not in the cache were not asked")
    empty = no_evidence(pairs, options)
    all_notes.extend(empty.values())
    return {
        "type": "header", "name": " vs ".join(systems), "kind": KIND,
        "status": "incomplete" if errors or empty else "complete",
        "no_evidence": list(empty),
        "pairwise_format": PAIRWISE_FORMAT, "evalkit_version": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "systems": [{"name": name, "path": path, "sha256": _sha256(path),
                     "run_name": run.name, "epochs": run.epochs}
                    for name, run, path in loaded],
        "goldens": {"path": None if gset.path is None else str(gset.path),
                    "n_cases": len(gset)},
        "judge": {"provider": judge.provider.name, "base_url": _url(judge.provider.endpoint),
                  "grade_via": judge.provider.settings.grade_via,
                  "model": judge.model, "definition": prompt.definition_hash(),
                  "grading_definition": judge.definition, "max_tokens": judge.max_tokens,
                  "temperature": judge.temperature, "system": judge.system,
                  "judge_resamples": judge.judge_resamples,
                  "rubric_sha256": hashlib.sha256(judge.rubric.encode()).hexdigest()},
        "options": dict(options),
        "pairs": [p.as_dict() for p in pairs],
        "bradley_terry": strengths,
        "totals": totals(rows, unasked),
        "notes": all_notes,
    }


def save(result: PairwiseResult, path: str | Path) -> Path:
    """Write ``result`` as a pairwise artifact at ``path`` (replaced atomically; registered
    secrets masked); returns ``path``."""
    from evalkit.data.artifact import artifact_line, finished_lines, header_line
    from evalkit.io.outputs import write_output

    head = header_line(result.header["name"], result.header)
    return write_output(path, finished_lines(head, [artifact_line(r) for r in result.rows]))


def load_pairwise(path: str | Path) -> PairwiseResult:
    """Read a pairwise artifact.

    Raises:
        ArtifactError: not an artifact, not a pairwise one, cut short or edited after it
            was written (file named; the kernel's integrity check).
    """
    from evalkit.data.artifact import ArtifactError, read_artifact

    header, rows, integrity = read_artifact(path)
    if header.get("kind") != KIND:
        raise ArtifactError(f"{path}: not a pairwise artifact (kind {header.get('kind')!r}); "
                            "write one with evalkit pairwise --output")
    if not integrity.ok:
        raise ArtifactError("; ".join(integrity.problems))
    return PairwiseResult(header, [row for _, row in rows])


def rescored(result: PairwiseResult, **options: Any) -> PairwiseResult:
    """The same verdicts under other ``options`` (``flips``, ``ties``, ``alpha``...): the
    statistics recomputed, nothing asked."""
    header = dict(result.header)
    merged = {**header["options"], **options}
    pairs, strengths = statistics([s["name"] for s in header["systems"]], result.rows, merged)
    header.update(options=merged, pairs=[p.as_dict() for p in pairs], bradley_terry=strengths)
    empty = no_evidence(pairs, merged)
    header["no_evidence"] = list(empty)
    header["notes"] = [n for n in header.get("notes", []) if "has no evidence" not in n] \
        + list(empty.values())
    if empty:
        header["status"] = "incomplete"
    return type(result)(header, list(result.rows))


def _url(url: str | None) -> str | None:
    """``url`` as an artifact records it (:func:`evalkit.io.redaction.redact_url`)."""
    from evalkit.io.redaction import redact_url

    return None if url is None else redact_url(url)
