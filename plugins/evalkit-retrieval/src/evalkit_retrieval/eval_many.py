"""``evalkit eval`` on several runs: folders and glob patterns expanded
(:mod:`evalkit.io.run_paths`), each run scored in turn in this one process (the qrels
read once), saved with ``--save-dir``, and one table of every run's means.

A file that cannot be scored is named with its error and skipped; the others still run,
and the command then exits 2. The summary names it too, in its place among the runs: a
``{"source": FILE, "error": MESSAGE}`` entry of the JSON list, a line after the table.
With ``--save-dir``, every artifact's path (named after its run: the run tag of a TREC
file's last line, an artifact's name) is checked before any run is scored (an existing
file without ``--overwrite``, an input, two runs on one file), and each artifact is
written as soon as its run is scored: Ctrl-C keeps those written, and says which.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.cli.errors import USER_ERROR, CliError, _user_error_types, message_of
from evalkit.cli.output import note, progress

if TYPE_CHECKING:
    from evalkit.data.judgments import LoadedQrels
    from evalkit.data.results import RunResult


def eval_many(args: list[Path], qrels: Path | None, metric: list[str] | None, fmt_out: str,
              given: Mapping[str, object], *, relevance_level: int | None,
              missing: str | None, depth: int | None, save_dir: Path | None,
              overwrite: bool, allow_incomplete: bool, score: Callable[..., RunResult],
              judged_only: bool = False) -> None:
    """Score every run the arguments name and print the summary (a table, or JSON).

    Raises:
        CliError: an option of one run only, a format other than table and json, a
            folder or pattern with no file; exit 2 (after the summary) when a run failed.
    """
    from evalkit.cli.output import case_notes
    from evalkit.execute.measure_args import read_measure_args
    from evalkit.io.run_paths import expand_run_paths, unique_names
    from evalkit_retrieval import run_scores
    from evalkit_retrieval.run_evaluation import check_scored

    one_run = [option for option, value in given.items() if value]
    if one_run:
        raise CliError(f"{', '.join(one_run)}: for one run; with several runs, save them "
                       "with --save-dir and score one run at a time for its own outputs")
    if fmt_out not in ("table", "json"):
        raise CliError(f"--format {fmt_out}: for one run; several runs print a table or "
                       "json")
    try:
        paths = expand_run_paths(args)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    targets: list[tuple[str, Path]] | None = None
    if save_dir is not None:
        if save_dir.exists() and not save_dir.is_dir():
            raise CliError(f"--save-dir {save_dir}: is a file; --save-dir names a folder "
                           "that holds one artifact per run (it is made when missing)")
        try:
            save_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"--save-dir {save_dir}: the folder cannot be made "
                           f"({exc.strerror or exc}); name a folder you can write") from None
        targets = _targets(paths, qrels, save_dir, overwrite)
    request = read_measure_args(metric)
    case_notes(request.names)
    from evalkit_retrieval.plugin import DEFAULT_METRICS

    request.to_score(DEFAULT_METRICS, fmt_out)  # a line of a format's layout: refused once
    loaded: dict[Path, LoadedQrels] = {}
    scored: list[tuple[Path, RunResult]] = []
    failed: list[Path] = []
    errors: dict[Path, str] = {}  # why each failed file failed, for the summary
    saved: list[Path] = []
    try:
        for i, path in enumerate(paths, start=1):
            try:
                with progress(f"[{i}/{len(paths)}] evaluating {path.name}"):
                    result = score(path, qrels, request, fmt_out,
                                   relevance_level=relevance_level, missing=missing,
                                   depth=depth, name=None, loaded=loaded,
                                   allow_incomplete=allow_incomplete,
                                   judged_only=judged_only)
                for line in check_scored(result, path, qrels):
                    note(f"{path}: {line}")
            except _user_error_types() as exc:
                errors[path] = named(exc, path)
                note(f"error: {errors[path]}")
                failed.append(path)
                continue
            note(f"[{i}/{len(paths)}] {path}: {len(result.per_query)} queries")
            scored.append((path, result))
            if targets is not None:
                result.name, target = targets[i - 1]
                if _save(result, target, path, failed, errors):
                    saved.append(target)
    except KeyboardInterrupt:
        if save_dir is not None:
            kept = ", ".join(p.name for p in saved) or "none"
            note(f"interrupted after {len(scored)} of {len(paths)} runs: {len(saved)} saved "
                 f"in {save_dir} ({kept}); run the same command again with --overwrite "
                 "to finish (the artifacts' names depend on the whole set of runs, so run "
                 "it on the same runs)")
        raise
    if targets is None:
        names = unique_names([r.name for _, r in scored], [p for p, _ in scored])
        for (_, result), name in zip(scored, names, strict=True):
            result.name = name
    _show(scored, request, fmt_out, run_scores, paths, errors)
    if failed:
        raise CliError(f"{len(failed)} of {len(paths)} runs failed: "
                       f"{', '.join(str(p) for p in failed)}", USER_ERROR)


def named(exc: BaseException, path: Path) -> str:
    """The error's message, beginning with the file unless the message names it."""
    text = message_of(exc, [path])
    return text if str(path) in text else f"{path}: {text}"


def _file_name(name: str) -> str:
    """A run name as a file name: path separators and leading dots replaced."""
    safe = "".join("_" if c in '/\\:*?"<>|' or ord(c) < 32 else c for c in name)
    return safe.lstrip(".") or "run"


def run_name(path: Path) -> str:
    """The name ``evalkit eval`` gives the run of ``path``, read without scoring it: an
    artifact's recorded name, else the run tag of a TREC file's last data line (as
    trec_eval's ``runid``); the file's stem when neither can be read (the file then fails
    when scored, and names no artifact)."""
    from evalkit.execute.run_files import is_artifact

    try:
        if is_artifact(path):
            with path.open("r", encoding="utf-8-sig", newline="\n") as fh:
                name = json.loads(fh.readline()).get("name")
            return str(name) if isinstance(name, str) and name.strip() else path.stem
        return _last_tag(path) or path.stem
    except (OSError, ValueError, EOFError):
        return path.stem


def _last_tag(path: Path) -> str | None:
    """Field 6 of the last line of ``path`` (plain or gzip) that is not blank or a
    comment, or None."""
    import io

    from evalkit.io.gzip_data import GzipReader, is_gzip
    from evalkit.io.limits import MAX_INFLATED_BYTES

    with path.open("rb") as fh:
        gzipped = is_gzip(fh.read(2))
    last: bytes | None = None
    if gzipped:  # decompressed a piece at a time, to the cap the run's reader applies
        with path.open("rb") as raw:
            text = io.BufferedReader(GzipReader(raw, MAX_INFLATED_BYTES), 1 << 20)
            for line in iter(lambda: text.readline(1 << 20), b""):  # no line held whole
                if _data_line(line):
                    last = line
    else:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            take = 1 << 16
            while last is None:
                fh.seek(max(0, size - take))
                lines = fh.read().split(b"\n")[1 if take < size else 0:]
                last = next((ln for ln in reversed(lines) if _data_line(ln)), None)
                if take >= size:
                    break
                take *= 4
    fields = last.split() if last is not None else []
    return fields[5].decode("utf-8") if len(fields) >= 6 else None


def _data_line(line: bytes) -> bool:
    fields = line.split(None, 1)
    return bool(fields) and not fields[0].startswith(b"#")


def _targets(paths: list[Path], qrels: Path | None, save_dir: Path, overwrite: bool
             ) -> list[tuple[str, Path]]:
    """``(name, artifact)`` of each run: its name made unique, and ``NAME.jsonl`` in
    ``save_dir``, every artifact checked before any run is scored.

    Raises:
        DestinationError (OutputError): a path that is an input, a folder, cannot be
            written, or exists (without ``overwrite``); CliError: two runs whose names
            make one file name.
    """
    from evalkit.io.outputs import require_writable
    from evalkit.io.run_paths import unique_names

    names = unique_names([run_name(p) for p in paths], list(paths))
    targets = [save_dir / f"{_file_name(n)}.jsonl" for n in names]
    first: dict[Path, Path] = {}
    for target, source in zip(targets, paths, strict=True):
        if target in first:
            raise CliError(f"--save-dir: the runs {first[target]} and {source} would both be "
                           f"saved as {target}; rename one run's tag")
        first[target] = source
        require_writable(target, "--save-dir", target.name, inputs=[*paths, qrels],
                         overwrite=overwrite)
    return list(zip(names, targets, strict=True))


def _save(result: RunResult, target: Path, source: Path, failed: list[Path],
          errors: dict[Path, str]) -> bool:
    """Write the artifact (its path checked before the work); whether it was written."""
    try:
        note(f"saved run artifact {result.save(target)}")
    except _user_error_types() as exc:
        errors[source] = named(exc, source)
        note(f"error: {errors[source]}")
        failed.append(source)
        return False
    return True


def _show(scored: list[tuple[Path, RunResult]], request: Any, fmt_out: str,
          run_scores: Any, paths: list[Path], errors: Mapping[Path, str]) -> None:
    """One row per run: its name, file, queries scored and the mean of each metric; then,
    for each run with run topics left unjudged or judged queries it lacks, the sentence
    ``evalkit eval`` prints for one run (:func:`~evalkit_retrieval.run_scores.summary_line`),
    and for each file that failed (``errors``), ``not scored: FILE...: MESSAGE``.
    JSON: a list, in the order of ``paths``, of the one-run JSON document
    (:func:`~evalkit_retrieval.run_scores.as_json`) of every run, with ``queries`` (the
    number of queries scored), and ``{"source": FILE, "error": MESSAGE}`` for a file that
    was not scored (a run scored but not saved keeps its document, with ``error``).
    When no run was scored the table is not printed (standard error names every file
    and its error), and the JSON list holds the errors only."""
    if not scored and (fmt_out != "json" or not errors):
        return
    rows = []
    for path, result in scored:
        metrics, counts = run_scores.select_measures(result, request, path)
        rows.append((path, result, metrics, counts))
    if fmt_out == "json":
        from evalkit.cli.output import stdout_document
        from evalkit.stats.numeric import json_ready

        documents: dict[Path, dict[str, Any]] = {
            p: {**run_scores.as_json(r, ms, False, p, cs), "queries": len(r.per_query)}
            for p, r, ms, cs in rows}
        out = []
        for path in paths:
            if path in documents:
                out.append({**documents[path], **({"error": errors[path]}
                                                  if path in errors else {})})
            elif path in errors:
                out.append({"source": str(path), "error": errors[path]})
        stdout_document(json.dumps(json_ready(out), indent=2, allow_nan=False))
        return
    from evalkit.cli.output import output_console
    from evalkit.report.escaping import terminal_text
    from evalkit.report.rich_tables import new_table

    metrics = list(dict.fromkeys(m for _, _, ms, _ in rows for m in ms))
    counts = list(dict.fromkeys(c for _, _, _, cs in rows for c in cs))
    table = new_table("run", "file", "queries", *metrics, *counts, box=None, pad_edge=False)
    for col in table.columns[2:]:
        col.justify = "right"
    for path, result, ms, cs in rows:
        table.add_row(terminal_text(result.name), terminal_text(path.name),
                      str(len(result.per_query)),
                      *(run_scores.fmt(result.mean(m)) if m in ms else "-" for m in metrics),
                      *(run_scores.total_cell(result, c) if c in cs else "-"
                        for c in counts))
    console = output_console(highlight=False)
    if not console.is_terminal:  # a file or a pipe: one line a run, however wide
        from rich.measure import Measurement

        wide = Measurement.get(console, console.options.update(width=10_000), table).maximum
        console = output_console(highlight=False, width=max(console.width, wide))
    console.print(table)
    for _, result, _, _ in rows:
        if run_scores.format_remark(result) is not None:
            console.print(terminal_text(f"{result.name}: {run_scores.summary_line(result)}"),
                          soft_wrap=True, markup=False)
    for path in paths:
        if path in errors and path not in dict(scored):
            console.print(terminal_text(f"not scored: {errors[path]}"),
                          soft_wrap=True, markup=False)
