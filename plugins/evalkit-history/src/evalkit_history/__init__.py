"""A run history for paired-evalkit: every run's header and rows in a SQLite database
(:mod:`evalkit_history.store`), the trend of each metric with the paired difference and
significance of each step between comparable runs (:mod:`evalkit_history.steps`), and
the ``evalkit history`` command (:mod:`evalkit_history.commands`).

Discovering the plugin imports none of them: :mod:`evalkit_history.plugin` names the
command by an import string and imports the store when a run is recorded.
"""

from __future__ import annotations

__version__ = "0.3.0"
__all__ = ["__version__"]
