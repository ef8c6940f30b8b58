"""Runs whose means are not over the judged queries of the qrels they were scored
against: one whose query ids match none of them, or only some with look-alike ids for
others (:func:`judged_id_mismatch`, refused by ``evalkit compare`` and ``evalkit gate``;
``evalkit eval`` scores it with warnings), and one scored ``--missing skip`` without
some of them (:func:`judged_problems`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.data.coverage import notes_of, skipped_judged
from evalkit.data.query_ids import near_ids_warning

if TYPE_CHECKING:
    from evalkit.data.run_record import RunRecord


def judged_id_mismatch(run: RunRecord) -> str | None:
    """One sentence, naming the fix, when ``run``'s query ids do not match the judged
    queries of the qrels it was scored against as they were meant to: they match none of
    them (every judged query scored 0 or skipped), or some run topics without judgments
    look like judged queries the run lacks, equal but for leading zeros, white space or
    invisible characters at their ends (:func:`evalkit.data.query_ids.near_ids`: ``51``
    and ``051``), so queries the run answered score 0. ``None`` otherwise, or when the
    header records no evaluation notes (a run not scored from qrels).

    Such ids come from reading them as numbers (``pd.read_csv`` without ``dtype=str``
    turns ``000`` into ``0``) or from stripping zeros; a comparison with the run measures
    the mismatch, not the system: ``evalkit compare`` and ``evalkit gate`` refuse it;
    ``evalkit eval`` scores it as trec_eval does (ids compared as text) with warnings.
    A run that matches some judged queries and lacks others, with no look-alike topic,
    is not a mismatch (the warnings of ``eval`` and ``compare`` name what it lacks)."""
    n = notes_of(run)
    count = n["missing_count"]
    if not isinstance(count, int) or count <= 0:
        return None
    held = len(run.per_query)
    matched = held - count if n["missing"] == "zero" else held
    judged = held if n["missing"] == "zero" else held + count
    near = f"; {near_ids_warning(n['near_ids'])}" if n["near_ids"] else ""
    fix = (". Read the ids as text, as the qrels have them (a CSV read by pandas: "
           "pd.read_csv(..., dtype=str); a TREC run: keep its leading zeros)")
    if matched > 0:
        if not n["near_ids"]:
            return None
        return (f"{count} of the {judged} judged queries are missing from the run and would "
                f"score {'0' if n['missing'] == 'zero' else 'nothing (left out)'} although "
                f"it has topics with the same ids but for leading zeros or white space"
                f"{near}{fix}")
    unjudged = n["unjudged_ignored"] or 0
    ids = ", ".join(repr(str(x)) for x in n["missing_ids"][:3])
    topics = ", ".join(repr(str(x)) for x in n["unjudged_ignored_ids"][:3])
    theirs = (f" while its {unjudged} topic(s) ({topics}{', ...' if unjudged > 3 else ''}) "
              "have no judgments" if unjudged else "")
    return (f"its query ids match none of the {judged} judged queries of the qrels "
            f"({ids}{', ...' if judged > 3 else ''}){theirs}, so every judged query would "
            f"score 0{near}{fix}, or score the run against its own collection's qrels")


def judged_problems(run: RunRecord) -> list[str]:
    """Why ``run``'s means are not over the judged queries of its qrels, one sentence
    each naming the fix: some were skipped (:func:`evalkit.data.coverage.skipped_judged`),
    or its ids do not match them as meant (:func:`judged_id_mismatch`); empty when neither. The
    gate holds such a run incomplete, and ``baseline promote`` refuses it."""
    skipped = skipped_judged(run)
    return [p for p in (skipped and skipped.problem, judged_id_mismatch(run)) if p]


__all__ = ["judged_id_mismatch", "judged_problems"]
