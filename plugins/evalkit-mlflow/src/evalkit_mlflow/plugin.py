"""Hook implementations of the evalkit-mlflow plugin: the ``mlflow`` recording reporter
(``--report mlflow:EXPERIMENT``). Registering imports nothing of MLflow."""

from __future__ import annotations

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ReporterSpec


def render(report: object) -> str:
    """The ``mlflow`` reporter renders nothing: it logs (:func:`record`).

    Raises:
        ValueError: always.
    """
    raise ValueError("the mlflow reporter logs to an MLflow tracking server; it renders no "
                     "text")


def record(obj: object, target: str) -> str:
    """The ``mlflow`` reporter: log ``obj`` to the experiment ``target``
    (:func:`evalkit_mlflow.tracking.log_to_mlflow`)."""
    from evalkit_mlflow.tracking import log_to_mlflow

    return log_to_mlflow(obj, target)


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    return [ReporterSpec(
        "mlflow", render, ".mlflow",
        "logs the run, gate or comparison to MLflow: mlflow:EXPERIMENT (the tracking URI "
        "is MLFLOW_TRACKING_URI)", record=record)]
