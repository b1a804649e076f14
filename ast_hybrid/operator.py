"""``ast_hybrid.operator``: MXNet's ``mx.operator``, Python custom operators (``CustomOp``, ``CustomOpProp``,
``register``; ``F.Custom(..., op_type=...)`` runs them).

They are an op family: ``ast_hybrid/ops/custom.py`` (its docstring says how they run, eagerly and inside a
compiled program).  This module is the public name they had before the front was layered.
"""

from ast_hybrid.core.errors import CustomError
from ast_hybrid.ops.custom import Custom, CustomOp, CustomOpProp, get_all_registered_operators, register

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom", "CustomError", "get_all_registered_operators"]
