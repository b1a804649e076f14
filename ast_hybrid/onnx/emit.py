"""What a translation writes with: the ONNX graph being built (:class:`Emitter`) and the MXNet node being
translated (:class:`Node`).

A translation is ``fn(e, n)``: it reads the node's options (``n.attr``), its inputs' ONNX names (``n.inputs``)
and their shapes and dtypes (``n.in_shapes``, ``n.in_dtypes``: inferred for the shapes the export was given),
and writes ONNX nodes with ``e.op(...)`` that end in the names ``n.outputs``.  Constants are initialisers
(``e.const``, ``e.ints``).  Under ``dynamic`` export (``e.dynamic``) the shapes seen are one example of many:
a translation that would bake one into the graph asks ``n.static_shape(i)``, which refuses under it.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.core.errors import NotSupported

__all__ = ["Emitter", "Node", "ExportError", "onnx_dtype"]


class ExportError(NotSupported):
    """An MXNet operator (or one of its options) that the ONNX export cannot write: names the op and the layer."""


def onnx_dtype(dtype) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class Node:
    """One MXNet graph node as a translation sees it."""

    def __init__(self, op, name, attrs, inputs, in_avals, outputs, out_avals):
        self.op, self.name, self.attrs = op, name, attrs
        self.inputs, self.outputs = inputs, outputs
        self.in_shapes = [tuple(a.shape) for a in in_avals]
        self.in_dtypes = [np.dtype(a.dtype) for a in in_avals]
        self.out_shapes = [tuple(a.shape) for a in out_avals]
        self.out_dtypes = [np.dtype(a.dtype) for a in out_avals]
        self.dynamic = False

    @property
    def out(self) -> str:
        return self.outputs[0]

    def attr(self, key, default=None):
        """The option ``key`` as a Python value (MXNet's JSON keeps them as text: ``"(3, 3)"``, ``"True"``)."""
        from ast_hybrid.symbol.graph_json import parse_attr

        value = self.attrs.get(key)
        return default if value is None else parse_attr(value)

    def ints(self, key, default=()):
        value = self.attr(key, default)
        if value is None:
            return None
        return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else (int(value),)

    def flag(self, key, default=False) -> bool:
        value = self.attr(key, default)
        return value in (True, 1, "1", "true", "True")

    def static_shape(self, i=0):
        """Input ``i``'s shape, for a translation that writes it into the graph: refused under ``dynamic``."""
        if self.dynamic:
            raise self.error("needs its input's shape fixed in the graph, and the export is dynamic; export with "
                             "dynamic=False")
        return self.in_shapes[i]

    def error(self, why) -> ExportError:
        return ExportError(f"mxnet.onnx.export_model: operator {self.op!r} (layer {self.name!r}) {why}")


class Emitter:
    """The ONNX graph being written: its nodes and initialisers, and fresh names for the values in between."""

    def __init__(self, opset: int, dynamic: bool):
        self.opset, self.dynamic = opset, dynamic
        self.nodes, self.initializers = [], []
        self._taken: set[str] = set()

    def take(self, name: str) -> str:
        self._taken.add(name)
        return name

    def fresh(self, hint: str) -> str:
        name, i = hint, 0
        while name in self._taken:
            i += 1
            name = f"{hint}_{i}"
        return self.take(name)

    def op(self, op_type, inputs, outputs=None, **attrs):
        """Write one ONNX node; ``outputs`` a name, a list of names, or None (one fresh name).  Returns the
        output name (the list for several).  Empty-string inputs stand for ONNX's omitted optional inputs."""
        from onnx import helper

        if outputs is None:
            outputs = [self.fresh(f"{op_type.lower()}")]
        elif isinstance(outputs, str):
            outputs = [self.take(outputs)]
        else:
            outputs = [self.take(o) for o in outputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=self.fresh(f"{outputs[0]}_{op_type}"),
                                           **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def const(self, value, dtype=None, hint="const") -> str:
        """An initialiser holding ``value`` (its dtype, or ``dtype``); returns its name."""
        from onnx import numpy_helper

        arr = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        # (np.ascontiguousarray would make a 0-d array 1-d: ONNX's Clip takes 0-d bounds)
        self.initializers.append(numpy_helper.from_array(np.asarray(arr, order="C"), name))
        return name

    def ints(self, values, hint="ints") -> str:
        """A 1-d int64 initialiser (ONNX's shapes, axes, starts and ends)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), hint=hint)
