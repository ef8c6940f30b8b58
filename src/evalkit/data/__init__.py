"""What flows: golden cases, target responses, per-case rows and the runs that hold them.

Holds golden cases and sets and their loaders (:mod:`.cases`, :mod:`.goldens`,
:mod:`.beir`, :mod:`.topics`), what a target returns (:mod:`.targets`), the rows of a run
(:mod:`.rows`: a target run's :class:`~evalkit.data.rows.CaseResult`;
:mod:`.results`: :class:`~evalkit.data.results.QueryResult` and
:class:`~evalkit.data.results.RunResult`), the run artifact's format (:mod:`.artifact`),
whether a run is complete (:mod:`.coverage`), what its header records about how its rows
were made (:mod:`.provenance`), and what a stored measure name means (:mod:`.metric_info`,
:mod:`.summaries`).

May import: io, stats, core, plugins (the default registry, for loaders and polarity).
"""
