"""Runs whose means are not over the judged queries of the qrels they were scored
against: one whose query ids match none of them (:func:`no_judged_match`, refused by
``evalkit compare`` and ``evalkit gate``; ``evalkit eval`` scores it 0 with warnings),
and one scored ``--missing skip`` without some of them (:func:`judged_problems`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.data.coverage import notes_of, skipped_judged
from evalkit.data.query_ids import near_ids_warning

if TYPE_CHECKING:
    from evalkit.data.run_record import RunRecord


def no_judged_match(run: RunRecord) -> str | None:
    """One sentence when ``run``'s query ids match none of the judged queries of the
    qrels it was scored against (every judged query scored 0 or skipped), naming the
    fix; ``None`` when at least one matches, or the header records no evaluation notes
    (a run not scored from qrels).

    Such a run was read with other ids than the qrels (leading zeros stripped, ids read
    as numbers by ``pd.read_csv`` without ``dtype=str``, another collection), so a
    comparison with it measures the mismatch, not the system: ``evalkit compare`` and
    ``evalkit gate`` refuse it; ``evalkit eval`` scores it 0 with warnings."""
    n = notes_of(run)
    count = n["missing_count"]
    if not isinstance(count, int) or count <= 0:
        return None
    held = len(run.per_query)
    matched = held - count if n["missing"] == "zero" else held
    if matched > 0:
        return None
    judged = held if n["missing"] == "zero" else count
    unjudged = n["unjudged_ignored"] or 0
    near = (f"; {near_ids_warning(n['near_ids'])}" if n["near_ids"] else "")
    ids = ", ".join(repr(str(x)) for x in n["missing_ids"][:3])
    topics = ", ".join(repr(str(x)) for x in n["unjudged_ignored_ids"][:3])
    theirs = (f" while its {unjudged} topic(s) ({topics}{', ...' if unjudged > 3 else ''}) "
              "have no judgments" if unjudged else "")
    return (f"its query ids match none of the {judged} judged queries of the qrels "
            f"({ids}{', ...' if judged > 3 else ''}){theirs}, so every judged query would "
            f"score 0{near}. Read the ids as text, as the qrels have them (a CSV read by "
            "pandas: pd.read_csv(..., dtype=str); a TREC run: keep its leading zeros), or "
            "score the run against its own collection's qrels")


def judged_problems(run: RunRecord) -> list[str]:
    """Why ``run``'s means are not over the judged queries of its qrels, one sentence
    each naming the fix: some were skipped (:func:`evalkit.data.coverage.skipped_judged`),
    or its ids match none of them (:func:`no_judged_match`); empty when neither. The
    gate holds such a run incomplete, and ``baseline promote`` refuses it."""
    skipped = skipped_judged(run)
    return [p for p in (skipped and skipped.problem, no_judged_match(run)) if p]


__all__ = ["judged_problems", "no_judged_match"]
