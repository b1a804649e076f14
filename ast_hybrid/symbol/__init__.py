"""MXNet's Symbol graphs (``mx.sym``): built by calling a block, or ``sym`` ops, on ``sym.var`` placeholders,
run by replaying them, read and written as MXNet's graph JSON.

- ``graph``: ``Symbol``, its nodes and MXNet's naming (NameManager/Prefix, per thread), ``evaluate`` (replay),
  ``compose``;
- ``recorder``: how nodes are recorded: ``op_recorder`` (an op given Symbols), Symbol's methods and operators
  (installed on the class when this package is imported), the recording ``F`` a block's ``hybrid_forward``
  gets when called with Symbols (``apply``), ``param_variable``;
- ``graph_json``: MXNet's graph JSON both ways (``tojson``/``save``, ``load_json``: MXNet's own exports).

``ast_hybrid.sym`` (MXNet's ``mx.sym``) and ``mxnet.symbol`` are the public doors; ``gluon.SymbolBlock`` runs a
graph as a block.  Blocks and parameters are duck-typed here (``name_scope()``, ``_reg_params``, ``data()``).

May import: ``ast_hybrid.core``, the ops (and ``ast_hybrid.nd``, the op namespace a block's ``F`` wraps),
``ast_hybrid.common`` (operators' output counts), numpy, jax.  Never Gluon, the XLA rewrites, the linter, the
transpiler, the CLI or ``testing``.
"""

from ast_hybrid.symbol import recorder as _recorder

_recorder.install()
