"""``mxnet.numpy_op_signature``: ``_get_builtin_op(name)``, the ``mx.np``/``mx.npx`` function an operator's
registered name (``_np_sum``, ``_npx_relu``, ``_np_linalg_norm``) stands for, or None for another name."""

from __future__ import annotations

from ast_hybrid import mxnp
from ast_hybrid.mxnet._missing import module_getattr

_SUBMODULES = {"_np_": (mxnp, ("random", "linalg")), "_npx_": (mxnp.extension, ())}


def _get_builtin_op(op_name):
    for prefix, (root, submodules) in _SUBMODULES.items():
        if not op_name.startswith(prefix):
            continue
        rest = op_name[len(prefix):]
        module = root
        for sub in submodules:
            if rest.startswith(sub + "_"):
                module, rest = getattr(root, sub), rest[len(sub) + 1:]
                break
        op = getattr(module, rest, None)
        if op is None:
            raise ValueError(f"Cannot find operator {rest} in module {module.__name__}")
        return op
    return None


__getattr__ = module_getattr("mxnet.numpy_op_signature", __name__)
