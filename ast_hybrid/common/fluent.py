"""MXNet's NDArray methods that give tensors, by name: the one list the front and the linter both read.

- :data:`FLUENT_OPS`: the fluent methods, ``x.name(*args, **kwargs)`` being ``nd.name(x, *args, **kwargs)``.
  ``ast_hybrid/ops/array_methods.py`` installs exactly these on ``NDArray``, each calling the op of that name.
  They are MXNet 1.9.1's (:data:`MXNET_FLUENT`, read from ``python/mxnet/ndarray/ndarray.py``: the methods
  documented "Convenience fluent method for :py:func:`name`", and those with a body of their own that call the
  op of the same name) and :data:`BEYOND_MXNET`, two that MXNet's ``NDArray`` lacks.
- :data:`ARRAY_METHODS`: the array's own methods that give a tensor and are not an op of their name
  (``reshape``, ``astype``, ``as_in_context``...): the front defines them on the class itself.
- :data:`TENSOR_METHODS`: both.  The linter reads a call of one of them on a value that may be a tensor or
  a tuple of tensors as a tensor's: a tuple has none of them (a list has ``sort`` and ``copy``, which it leaves
  out: :data:`ast_hybrid.linter.tags.TENSOR_METHODS`).

``tests/layout/test_fluent.py`` holds the front and the linter to this list, and the list to MXNet 1.9.1.

>>> "sum" in FLUENT_OPS, "reshape" in FLUENT_OPS, "reshape" in TENSOR_METHODS
(True, False, True)
"""

from __future__ import annotations

__all__ = ["MXNET_FLUENT", "BEYOND_MXNET", "FLUENT_OPS", "ARRAY_METHODS", "TENSOR_METHODS"]

#: MXNet 1.9.1's fluent methods of ``NDArray`` (``mx.nd.NDArray``): ``x.name(...)`` is ``mx.nd.name(x, ...)``
MXNET_FLUENT = (
    # shapes, indexing, copies of a shape
    "reshape_like", "zeros_like", "ones_like", "broadcast_axes", "broadcast_to", "broadcast_like", "repeat",
    "tile", "pad", "swapaxes", "transpose", "flip", "flatten", "expand_dims", "squeeze", "split", "split_v2",
    "slice", "slice_axis", "slice_like", "take", "one_hot", "pick", "diag", "depth_to_space", "space_to_depth",
    "shape_array", "size_array",
    # sorting and searching
    "sort", "topk", "argsort", "argmax", "argmax_channel", "argmin",
    # reductions
    "sum", "nansum", "prod", "nanprod", "mean", "max", "min", "norm",
    # elementwise
    "clip", "abs", "sign", "round", "rint", "fix", "floor", "ceil", "trunc", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "degrees", "radians", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "exp",
    "expm1", "log", "log10", "log2", "log1p", "sqrt", "rsqrt", "cbrt", "rcbrt", "square", "reciprocal",
    # activations
    "relu", "sigmoid", "softmax", "log_softmax", "softmin",
)
#: fluent methods of the front's ``NDArray`` that MXNet 1.9.1's lacks (there ``x.moveaxis(...)`` is an
#: AttributeError; ``mx.nd.moveaxis`` is a function, ``cumsum`` is ``mx.np``'s)
BEYOND_MXNET = ("moveaxis", "cumsum")
#: what the front installs on ``NDArray`` as ``x.name(...) = ops.name(x, ...)``
FLUENT_OPS = MXNET_FLUENT + BEYOND_MXNET
#: MXNet 1.9.1's ``NDArray`` methods that give an array and are not an op of their name
#: (the front's ``NDArray`` has all but ``as_np_ndarray``)
ARRAY_METHODS = ("reshape", "astype", "copy", "copyto", "as_in_context", "detach", "tostype", "as_nd_ndarray",
                 "as_np_ndarray")
#: every method above: a tensor's methods that give tensors
TENSOR_METHODS = frozenset(FLUENT_OPS + ARRAY_METHODS)
