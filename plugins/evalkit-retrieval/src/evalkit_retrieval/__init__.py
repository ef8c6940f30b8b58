"""TREC-compatible retrieval metrics and TREC run/qrels loaders for paired-evalkit."""

__version__ = "0.3.0"
