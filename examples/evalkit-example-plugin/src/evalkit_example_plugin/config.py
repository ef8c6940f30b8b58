"""The section ``keyword_metrics`` of the eval config, which this plugin declares: a metric
per list of keywords, registered before the run.

.. code-block:: yaml

    keyword_metrics:                      # evalkit.yaml
      mentions_a_capital: [paris, rome, berlin]
    metrics: [mentions_a_capital]

evalkit imports this module (and pydantic) only when it reads a config or prints its
schema: the plugin's record names the model as ``"evalkit_example_plugin.config:
KeywordMetrics"``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, RootModel

#: a metric's name: lower-case letters, digits and ``_``
MetricName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
Keywords = Annotated[list[Annotated[str, Field(min_length=1, pattern=r"\S")]],
                     Field(min_length=1)]


class KeywordMetrics(RootModel[dict[MetricName, Keywords]]):
    """``{metric name: keywords}``: each metric scores a case by the share of its keywords
    found as words in the response text (as keyword_recall does with the case's own)."""
