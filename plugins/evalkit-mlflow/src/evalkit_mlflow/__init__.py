"""The ``mlflow`` reporter of paired-evalkit (:mod:`evalkit_mlflow.tracking`): a run's, a
gate's or a comparison's numbers, settings and files logged to MLflow.

Discovering the plugin imports no MLflow: it is imported when a report is logged.
"""

from __future__ import annotations

__version__ = "0.3.0"
__all__ = ["__version__"]
