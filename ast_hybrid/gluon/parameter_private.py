"""MXNet's private fields of a ``Parameter``, which real subclasses copy: one mixin of :class:`Parameter`.

GluonNLP's WeightDropParameter builds a Parameter from another one with ``self._data = p._data; self._grad =
p._grad; self._ctx_list = p._ctx_list`` and reads ``self._check_and_get(self._data, ctx)``; MXNet 1.9.1's own
tests read ``x._data[0]``.  ``_data`` is MXNet's list of NDArrays, one per context (ours: the one value,
``_value``, for each; row_sparse where the parameter is); ``_grad`` the gradient's holder (MXNet: the list of
gradient arrays; opaque here, only to be copied), ``_ctx_list`` the contexts, ``_allow_deferred_init`` the
public flag.
"""

from __future__ import annotations

from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import raw

__all__ = ["MXNetPrivateFields"]


class MXNetPrivateFields:
    """Properties over :class:`~ast_hybrid.gluon.parameter.Parameter`'s own state (``_value``, ``_leaf``,
    ``_ctx``, ``allow_deferred_init``), under the names MXNet's code reads and writes."""

    @property
    def _data(self):
        if self._value is None:
            return None
        if self._stype == "row_sparse":
            from ast_hybrid.core.sparse import RowSparseNDArray

            one = RowSparseNDArray(self._value)
        else:
            one = self._cls(self._value)
        return [one] * (self._copies if self._mesh is None else len(self._ctx))

    @_data.setter
    def _data(self, value):
        if isinstance(value, (list, tuple)):
            value = value[0] if value else None
        self._value = raw(value) if isinstance(value, NDArray) else value

    @property
    def _allow_deferred_init(self):
        return self.allow_deferred_init

    @_allow_deferred_init.setter
    def _allow_deferred_init(self, value):
        self.allow_deferred_init = value

    @property
    def _grad(self):
        return self._leaf

    @_grad.setter
    def _grad(self, holder):
        self._leaf = holder

    @property
    def _ctx_list(self):
        return self._ctx

    @_ctx_list.setter
    def _ctx_list(self, ctx):
        if ctx is None:
            self._ctx, self._mesh, self._copies = None, None, 1
        else:
            self._set_ctx(ctx)
