"""The ``evalkit.plugins`` entry point of evalkit-judge.

It implements no hook, on purpose. The judge is a metric the client defines (rubric,
model, scale) and registers under a name of its choice, with ``register_metric`` or from
its own plugin's ``evalkit_register_metrics``; there is no judge metric this package could
register by itself. The entry point is kept so that ``evalkit plugins list`` shows the
distribution and its version, the project's plugin selection (``plugins =
["evalkit-judge>=0.3"]``) can require it, and run headers record its version.
"""

from __future__ import annotations
