"""The built-in ``local`` executor: the thread pool of :mod:`evalkit.execute.executor`.

Registered by :mod:`evalkit.builtins` through ``evalkit_register_executors`` like any
plugin's executor. The target object built on the driver is called from
``max_concurrency`` threads of this process; nothing is sent anywhere, so it takes no
recipe and refuses nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.execute.executor import Executor

if TYPE_CHECKING:
    from evalkit.execute.executor_api import Work


class LocalExecutor:
    """``factory()`` of the ``local`` executor; it takes no options.

    Raises:
        TypeError: an option is given (the message names it).
    """

    def __init__(self, **options: Any) -> None:
        if options:
            raise TypeError(f"the local executor takes no options, got "
                            f"{', '.join(sorted(options))}")

    def open(self, work: Work) -> Executor:
        """The thread pool over ``work.jobs`` (not started); an async target's event loop
        (:mod:`evalkit.execute.async_executor`). Both pass ``work.pacing`` and honour
        ``work.window``."""
        from evalkit.execute.async_executor import make_executor

        return make_executor(work.target, work.target_name, work.jobs, work.specs,
                             work.max_concurrency, work.pacing, work.window)
