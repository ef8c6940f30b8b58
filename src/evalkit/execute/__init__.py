"""Making rows: targets called on golden cases, rankings scored, metrics computed.

Holds the three ways to get a run: :func:`~evalkit.execute.run_retriever.run`
(a retriever callable over queries and qrels, :mod:`.run_retriever`), :func:`evalkit.evaluate_run`
(a precomputed TREC run, ``{qid: {doc: score}}`` or a DataFrame, scored by the run
evaluator a plugin registers, :mod:`.run_evaluator`), and the target
runner (:mod:`.target_runner`: concurrent, resumable, with :mod:`.executor` calling the
target, :mod:`.artifact_writer` and :mod:`.run_header` keeping the artifact, and
:mod:`.rescore` computing a saved run's metrics again). Scoring with the registered
metrics is one path for all of them (:mod:`.scoring`; what a metric needs
of each case, checked before scoring, :mod:`.case_needs`), as are the kernel's
aggregates (:mod:`.aggregates`), the eval config of ``evalkit run`` and ``evalkit gate``
(:mod:`.evalconfig`, its pydantic models :mod:`.evalconfig_models`, the gate's options
filled from it :mod:`.gate_options`) and what ``evalkit run`` refuses before the first
call (:mod:`.run_checks`),
runs named by a path (:mod:`.run_files`), the ``-m`` values of the commands, read by the
measure syntaxes plugins register (:mod:`.measure_args`), and a run's spending limits with
the protocol paid metrics follow to honour them (:mod:`.spending`).

May import: io, stats, core, plugins, data, metrics.
"""
