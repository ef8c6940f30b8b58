"""What flows: golden cases, target responses, per-case rows and the runs that hold them.

Holds golden cases and sets and their loaders (:mod:`.cases`, :mod:`.goldens`, the YAML
reader :mod:`.goldens_yaml`, a golden row's pydantic model :mod:`.goldens_models`), the
cases of judged queries made on demand (:mod:`.judged_queries`) and qrels given as a
mapping (:mod:`.judgments`), what a
target returns (:mod:`.targets`; the keys of its usage, :mod:`.usage_keys`), the rows
of a run (:mod:`.rows`: a ranking run's
:class:`~evalkit.data.rows.QueryResult`, a target run's
:class:`~evalkit.data.rows.CaseResult`; :mod:`.results`:
:class:`~evalkit.data.results.RunResult`, its fields and what is read straight off its
rows, :mod:`.run_record`, and its columns, DataFrame and notebook view,
:mod:`.run_views`; a ranked run and a ranking kept as a lazy view of arrays,
:mod:`.ranked_ids`), the run artifact's format (:mod:`.artifact`) and its reading and
writing (:mod:`.result_files`),
whether a run is complete (:mod:`.coverage`) and its recorded origin still holds
(:mod:`.run_origin`), how many cases each metric scored
(:mod:`.metric_counts`), what its header records about how its rows
were made (:mod:`.provenance`), and what a stored measure name means (:mod:`.metric_info`,
:mod:`.summaries`).

May import: io, stats, core, plugins, tables (the default registry, for loaders and
polarity; the generic DataFrames and HTML tables a run's views are drawn with).
"""
