"""TREC-compatible retrieval metrics and TREC run/qrels loaders for paired-evalkit.

The plugin registers itself through the ``evalkit.plugins`` entry point; importing this
package is only needed for the functions themselves (:mod:`evalkit_retrieval.core`) or the
loaders (:mod:`evalkit_retrieval.trec`).
"""

__version__ = "0.3.0"
