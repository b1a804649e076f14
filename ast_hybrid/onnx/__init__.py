"""MXNet's ONNX export (``mx.onnx``): an MXNet graph and its parameters written as an ONNX model, op by op.

- ``export``: :func:`export_model` (MXNet 1.9.1's signature and file), :func:`get_operator_support`, the walk;
- ``importer``: ``import_model``/``get_model_metadata`` (``mx.contrib.onnx``'s): ONNX models as MXNet graphs;
- ``emit``: what a translation writes with (the graph being built, the node being translated);
- ``nn``, ``elemwise``, ``shape``: the translations by family; ``translations``: their one table.

The ``onnx`` package is needed only when a model is exported (``pip install ast-hybrid[onnx]``).  Why op by op
from the graph (as MXNet) and not from the XLA program: docs/deploy.md.

May import: ``ast_hybrid.core`` (errors), ``ast_hybrid.symbol`` (the graph, its JSON, shape inference),
``ast_hybrid.sym`` (the operators an imported model is built of), ``ast_hybrid.nd`` (a ``.params`` file),
numpy, onnx.  Never Gluon, the XLA rewrites, the linter, the
transpiler, the CLI or ``testing``.
"""

from ast_hybrid.onnx.export import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
