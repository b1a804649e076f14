"""``mxnet.gluon.contrib.nn``: the layers that package holds (being written)."""

from ast_hybrid.gluon.nn import HybridConcurrent, Identity  # noqa: F401

__all__ = ["HybridConcurrent", "Identity"]
