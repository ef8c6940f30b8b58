"""What the ``mlflow`` reporter logs, and logging it.

One call logs one MLflow run in the experiment the reporter's target names (created when
missing), to the tracking server of ``MLFLOW_TRACKING_URI`` (MLflow's own setting), with
MLflow's client (:class:`mlflow.MlflowClient`, no global active run):

* a run (``evalkit run --report mlflow:EXP``): each metric's mean and each aggregate's
  value as metrics; its settings and provenance as parameters (``run_name``,
  ``n_cases``, ``relevance_level``, ``missing``, ``depth``, ``qrels_sha256``,
  ``evalkit_version``, ``metric.KEY`` = the metric's provider and definition version)
  and tags (``evalkit.kind``, ``evalkit.run``, ``evalkit.created``); the run artifact
  (``evalkit/run.jsonl``) and its per-query table (``evalkit/per_query.csv``);
* a gate (``evalkit gate --report mlflow:EXP``): the gated run as above, and the gate:
  tag ``evalkit.gate.status``, a tag ``evalkit.check.ID`` per check with its verdict,
  metrics ``evalkit.exit_code`` and ``check.ID.value`` (the observed value), the
  reports ``evalkit/gate.json`` and, when the html reporter is installed,
  ``evalkit/gate.html``;
* a comparison (``evalkit compare --report mlflow:EXP``): per metric and candidate,
  ``KEY.baseline``, ``KEY.candidate``, ``KEY.diff``, ``KEY.ci_low``, ``KEY.ci_high``,
  ``KEY.p_value``, ``KEY.p_adjusted`` and ``KEY.significant`` (1 or 0), the
  comparison's settings as parameters, and ``evalkit/comparison.json`` (and ``.html``).

MLflow keys hold letters, digits, ``_ - . /`` and spaces: :func:`metric_key` writes
``@`` as ``_at_`` (``ndcg@10`` is ``ndcg_at_10``) and any other character as ``_``, a name
that needed such a ``_`` then ending in ``_`` and the first 8 hex digits of its SHA-256
(``f1?floor`` is ``f1_floor_37c9c637``), so that two names never share a key (``f1?floor``
and ``f1!floor`` would both be ``f1_floor``) and a name keeps its key from run to run. A
name whose key another name of the same run already holds (``ndcg_at_10`` after
``ndcg@10``) ends in its digest too (:meth:`Logged.key`): nothing logged overwrites
another name's value.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import socket
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_NOT_A_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")
#: The most parameters, tags or metrics MLflow takes in one ``log_batch``.
BATCH = 100


#: hex digits of a name's SHA-256 that end the key of a name that sanitising changed
DIGEST_CHARS = 8


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def metric_key(name: str) -> str:
    """``name`` as an MLflow key: ``@`` as ``_at_``; any other character MLflow refuses as
    ``_``, and then ``_`` and the first :data:`DIGEST_CHARS` hex digits of the name's
    SHA-256 after it (the same name always has the same key; two names that differ in
    such characters have two keys)."""
    key = name.replace("@", "_at_")
    sanitised = _NOT_A_KEY.sub("_", key)
    return sanitised if sanitised == key else f"{sanitised}_{_digest(name)}"


@dataclass
class Logged:
    """What one MLflow run receives.

    Attributes:
        kind: ``"run"``, ``"gate"`` or ``"comparison"``.
        name: the MLflow run's name.
        metrics: ``{key: value}`` (finite values only).
        params: ``{key: text}``.
        tags: ``{key: text}``.
        files: ``{path under the run's artifacts: text}``.
    """

    kind: str
    name: str
    metrics: dict[str, float] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    #: ``{(kind of key, key): the name it stands for}``: :meth:`key`'s keys
    owners: dict[tuple[str, str], str] = field(default_factory=dict)

    def key(self, name: str, kind: str = "metric") -> str:
        """The key of ``name`` among this run's keys of ``kind`` (``"metric"``,
        ``"param"``, ``"check"``...): :func:`metric_key`, or, when another name of the
        same kind holds that key already, the key ending in ``_`` and the name's digest.

        Raises:
            ValueError: that key is taken too (two digests alike: never seen).
        """
        key = metric_key(name)
        if self.owners.setdefault((kind, key), name) != name:
            key = f"{_NOT_A_KEY.sub('_', name.replace('@', '_at_'))}_{_digest(name)}"
            owner = self.owners.setdefault((kind, key), name)
            if owner != name:
                raise ValueError(f"mlflow: {name!r} and {owner!r} both have the key {key!r}")
        return key

    def metric(self, name: str, value: float | int | bool | None) -> None:
        """Add the metric ``name`` (under :meth:`key`), unless ``value`` is None or not
        finite."""
        if value is not None and math.isfinite(float(value)):
            self.metrics[self.key(name)] = float(value)


def run_logged(run: Any, kind: str = "run") -> Logged:
    """What a run (:class:`~evalkit.data.results.RunResult`) logs (the module docstring)."""
    from evalkit.data.definitions import version_label
    from evalkit.data.result_files import write_run
    from evalkit.data.run_views import run_columns
    from evalkit.report.tables import csv_text

    header: Mapping[str, Any] = run.header
    out = Logged(kind, run.name)
    for name in run.metric_names():
        try:
            out.metric(name, run.mean(name))
        except (KeyError, ValueError):  # a metric that failed on a case has no mean
            continue
    aggregates = header.get("aggregates")
    if isinstance(aggregates, Mapping):
        for name, value in aggregates.items():
            if isinstance(value, int | float):
                out.metric(str(name), value)
    qrels = header.get("qrels") if isinstance(header.get("qrels"), Mapping) else {}
    params: dict[str, Any] = {
        "run_name": run.name, "n_cases": len(run.per_query),
        "relevance_level": header.get("relevance_level"), "missing": header.get("missing"),
        "depth": header.get("depth"), "qrels_sha256": (qrels or {}).get("sha256"),
        "evalkit_version": header.get("evalkit_version"), "epochs": run.epochs,
    }
    for name, definition in (header.get("metrics") or {}).items():
        if isinstance(definition, Mapping):
            params[f"metric.{out.key(str(name), 'definition')}"] = (
                f"{definition.get('provider')} {version_label(definition.get('version'))}")
    out.params.update({out.key(k, "param"): str(v) for k, v in params.items()
                       if v is not None})
    out.tags.update({"evalkit.kind": kind, "evalkit.run": run.name,
                     "evalkit.created": str(header.get("created") or "")})
    with tempfile.TemporaryDirectory() as folder:  # the artifact exactly as saved
        path = write_run(Path(folder) / "run.jsonl", run.name, header,
                         run.samples or run.per_query)
        out.files["run.jsonl"] = path.read_text(encoding="utf-8")
    out.files["per_query.csv"] = csv_text(run_columns(run))
    return out


def _reports(obj: Any, stem: str, out: Logged) -> None:
    """The JSON report of ``obj``, and the HTML one when a reporter ``html`` is installed."""
    from evalkit.core.registry import RegistryError
    from evalkit.report.writing import render_report

    out.files[f"{stem}.json"] = render_report(obj, "json")
    try:
        out.files[f"{stem}.html"] = render_report(obj, "html")
    except (RegistryError, ImportError):
        out.tags["evalkit.html"] = "not written: the html reporter is not installed"


def gate_logged(gate: Any) -> Logged:
    """What a gate (:class:`~evalkit.gate.verdicts.GateReport`) logs: its run, if it kept
    it, and its checks."""
    from evalkit.report.model import as_report

    out = run_logged(gate.run, "gate") if gate.run is not None else Logged("gate",
                                                                          gate.run_name)
    report = as_report(gate)
    out.tags["evalkit.gate.status"] = report.status
    out.metric("evalkit.exit_code", gate.exit_code)
    if gate.baseline_name:
        out.tags["evalkit.baseline"] = gate.baseline_name
    for row in report.rows:
        check = out.key(row.name, "check")
        out.tags[f"evalkit.check.{check}"] = row.status
        out.metric(f"check.{check}.value", row.value)
    _reports(gate, "gate", out)
    return out


def comparison_logged(report: Any) -> Logged:
    """What a comparison's report (:class:`~evalkit.report.model.Report` of kind
    ``compare``) logs."""
    names = [r.name for r in report.runs]
    out = Logged("comparison", " vs ".join(names) or report.subject)
    several = len({r.candidate for r in report.rows}) > 1
    for row in report.rows:
        metric = out.key(row.metric, "compared metric")
        key = f"{out.key(row.candidate, 'candidate')}/{metric}" if several else metric
        out.metric(f"{key}.baseline", row.reference_value)
        out.metric(f"{key}.candidate", row.value)
        out.metric(f"{key}.diff", row.difference)
        out.metric(f"{key}.ci_low", row.ci_low)
        out.metric(f"{key}.ci_high", row.ci_high)
        out.metric(f"{key}.p_value", row.p_value)
        out.metric(f"{key}.p_adjusted", row.p_adjusted)
        if row.significant is not None:
            out.metric(f"{key}.significant", row.significant)
    out.params.update({out.key(str(k), "param"): str(v)
                       for k, v in (report.settings or {}).items()
                       if v is not None and not isinstance(v, list | dict)})
    out.tags.update({"evalkit.kind": "comparison", "evalkit.runs": ", ".join(names)})
    _reports(report, "comparison", out)
    return out


def what_to_log(obj: Any) -> Logged:
    """:func:`run_logged`, :func:`gate_logged` or :func:`comparison_logged`, by what
    ``obj`` is.

    Raises:
        ValueError: an object none of them logs.
    """
    from evalkit.data.results import RunResult
    from evalkit.gate.verdicts import GateReport
    from evalkit.report.model import Report

    if isinstance(obj, RunResult):
        return run_logged(obj)
    if isinstance(obj, GateReport):
        return gate_logged(obj)
    if isinstance(obj, Report) and obj.kind == "compare":
        return comparison_logged(obj)
    raise ValueError(f"mlflow: logs a run, a gate or a comparison, not a {type(obj).__name__}")


def log_to_mlflow(obj: Any, experiment: str, tracking_uri: str | None = None) -> str:
    """Log ``obj`` (:func:`what_to_log`) as one finished MLflow run of ``experiment``
    (created when missing), to ``tracking_uri`` (default: MLflow's, from
    ``MLFLOW_TRACKING_URI``).

    Returns:
        One line naming the experiment, the run's id and the tracking URI.

    The tracking server of an ``http(s)`` URI must accept a connection within
    :data:`CONNECT_TIMEOUT_S` (:func:`check_reachable`), and MLflow's HTTP requests are
    bounded (:data:`HTTP_SETTINGS`, unless the environment sets them).

    Raises:
        ValueError: an object it does not log, or an empty experiment name.
        TrackingUnavailable: the tracking store cannot be reached or opened (refused
            connection, a server that fails, MLflow's default ``sqlite:///mlflow.db``
            without SQLAlchemy); one line naming the URI and the fix (a ``ValueError``).
    """
    if not experiment.strip():
        raise ValueError("--report mlflow:EXPERIMENT: name the experiment")
    logged = what_to_log(obj)
    import mlflow
    import requests
    from mlflow.exceptions import MlflowException

    uri = tracking_uri or mlflow.get_tracking_uri()
    check_reachable(uri)
    try:
        with bounded_requests():
            return _log(logged, experiment, uri)
    except (MlflowException, ImportError, OSError, requests.RequestException) as exc:
        default = tracking_uri is None and not os.environ.get("MLFLOW_TRACKING_URI")
        raise TrackingUnavailable(unavailable_message(uri, exc, default)) from None


class TrackingUnavailable(ValueError):
    """The tracking store cannot be reached or opened; the message names the URI (without
    credentials) and what to do."""


#: MLflow's HTTP settings (its environment variables) while evalkit logs, unless the
#: user set them: a few seconds per request and two retries, instead of MLflow's
#: 120 s and 7 retries with backoff (minutes before a dead server is reported).
HTTP_SETTINGS = {"MLFLOW_HTTP_REQUEST_TIMEOUT": "15", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
                 "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}
#: The most characters of MLflow's error quoted in the message.
MAX_WHY_CHARS = 160
#: Seconds to wait for the tracking server to accept a connection.
CONNECT_TIMEOUT_S = 5.0


@contextmanager
def bounded_requests() -> Iterator[None]:
    """Apply :data:`HTTP_SETTINGS` (those the environment does not set) while the block
    runs, then restore the environment."""
    added = {k: v for k, v in HTTP_SETTINGS.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def check_reachable(uri: str) -> None:
    """Refuse, before anything is logged, an ``http(s)`` tracking URI whose server does
    not accept a connection within :data:`CONNECT_TIMEOUT_S` (refused, no route, a
    name that does not resolve). Other URIs (a file store, a database) are opened by
    MLflow itself.

    Raises:
        TrackingUnavailable: naming the URI and the fix.
    """
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TrackingUnavailable(unavailable_message(uri, why, False)) from None


def unavailable_message(uri: str, why: BaseException | str, default: bool) -> str:
    """One line: the tracking store ``uri`` (credentials removed) cannot be used, why
    (the first line of the error), and the fix; ``default``: the URI is MLflow's default,
    MLFLOW_TRACKING_URI being unset."""
    from evalkit.io.redaction import mask, redact_url, redact_urls

    if isinstance(why, BaseException):
        text = str(why).strip().splitlines()[0] if str(why).strip() else ""
        if len(text) > MAX_WHY_CHARS:
            text = text[:MAX_WHY_CHARS].rstrip() + "..."
        why = f"{type(why).__name__}: {text}" if text else type(why).__name__
    where = f"the MLflow tracking store {redact_url(uri)}"
    if default:
        where += " (MLflow's default: MLFLOW_TRACKING_URI is not set)"
    return (f"mlflow: {where} cannot be used ({mask(redact_urls(why))}); nothing was "
            "logged. Set MLFLOW_TRACKING_URI to a running tracking server "
            "(http://HOST:PORT) and try again, or leave out --report mlflow:...")


def _log(logged: Logged, experiment: str, uri: str) -> str:
    """Log ``logged`` as one finished run of ``experiment`` at ``uri``; the line
    :func:`log_to_mlflow` returns."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param, RunTag

    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = (found.experiment_id if found is not None
                     else client.create_experiment(experiment))
    run = client.create_run(experiment_id, run_name=logged.name)
    run_id = run.info.run_id
    try:
        now = int(run.info.start_time)
        metrics = [Metric(k, v, now, 0) for k, v in logged.metrics.items()]
        params = [Param(k, v) for k, v in logged.params.items()]
        tags = [RunTag(k, v) for k, v in logged.tags.items()]
        for i in range(0, max(len(metrics), len(params), len(tags)), BATCH):
            client.log_batch(run_id, metrics=metrics[i:i + BATCH], params=params[i:i + BATCH],
                             tags=tags[i:i + BATCH])
        with tempfile.TemporaryDirectory() as folder:
            for name, text in logged.files.items():
                (Path(folder) / name).write_text(text, encoding="utf-8")
            client.log_artifacts(run_id, folder, "evalkit")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id)
    from evalkit.io.redaction import redact_url

    return (f"mlflow: logged {logged.kind} {logged.name!r} to experiment {experiment!r} as "
            f"run {run_id} ({redact_url(str(client.tracking_uri))})")


__all__ = ["BATCH", "CONNECT_TIMEOUT_S", "DIGEST_CHARS", "HTTP_SETTINGS", "Logged",
           "TrackingUnavailable",
           "bounded_requests", "check_reachable", "comparison_logged", "gate_logged",
           "log_to_mlflow", "metric_key", "run_logged", "unavailable_message",
           "what_to_log"]
