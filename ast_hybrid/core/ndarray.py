"""``NDArray``: MXNet's array type as a thin wrapper around ONE jax array.

The wrapped array is concrete (eager code) or a tracer (inside a hybridized
program, ``lax.cond``/``lax.scan``).  ``NDArray`` is a jax pytree node with
one child, so it crosses ``jax.jit`` and ``lax`` boundaries unchanged, and the
transpiler's runtime asks ``__ah_pred__()`` for the array behind a condition.

Operators follow MXNet 1.9.1's NDArray (checked against it in
``tests/ops/test_ndarray_oracle.py``): ``+ - * / ** %`` broadcast, and two
arrays must have the same dtype; a Python scalar is cast to the array's dtype
first (``int32 * 2.5`` multiplies by 2); integer ``/`` truncates; ``%`` has the
sign of the divisor; comparisons give 0/1 in the input dtype.  ``x[i]`` with
every axis indexed by an integer gives shape ``(1,)``.  In-place forms
(``x += y``, ``x[:] = v``, ``x[i] = v``) rebind the wrapped array, so every
reference to ``x`` sees the new value.

Here is what the array is (its data, shape, dtype, device, host copies, autograd hooks); what computes with
it (operators, indexing, ``reshape``, ``astype``, the fluent methods ``x.sum()``...) is installed on the class
by the operator package (``ast_hybrid/ops/array_methods.py``), as jax installs its array's methods: importing
``ast_hybrid.ops`` (or ``nd``, ``gluon``, ``mxnet``) completes it.

What differs from MXNet, by design: slices and reshapes are copies, not views
(writing into ``x.reshape(-1)`` does not change ``x``); there is no async engine
(``wait_to_read`` returns when jax's result is ready); 64-bit dtypes follow
jax's ``jax_enable_x64`` flag (off: int64/float64 become 32-bit).

    >>> from ast_hybrid import nd
    >>> x = nd.array([[1, 2, 3], [4, 5, 6]])
    >>> x
    <BLANKLINE>
    [[1. 2. 3.]
     [4. 5. 6.]]
    <NDArray 2x3 @cpu(0)>
    >>> (x > 2).asnumpy().tolist()
    [[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.core.context import Context, context_of

__all__ = ["NDArray", "ndarray", "ARRAYS", "as_np"]


class NDArray:
    """An MXNet NDArray holding one jax array (``_arr``); ``_ag`` is its autograd record or None; ``_base``,
    for what basic indexing gave where MXNet gives a view of the same memory, ``(array, key)``: a write into
    it is written into that array too (``x[1][0] = v``; ``ops/array_methods.py``)."""

    __slots__ = ("_arr", "_ag", "_base")
    __array_priority__ = 1000.0     # numpy defers to our reflected operators

    def __init__(self, arr, _ag=None):
        self._arr = arr
        self._ag = _ag
        self._base = None

    # --- the array behind it -------------------------------------------------
    def __ah_pred__(self):
        return self._arr

    def __jax_array__(self):
        return self._arr

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self._arr)
        return a if dtype is None else a.astype(dtype)

    @property
    def shape(self):
        return tuple(self._arr.shape)

    @property
    def dtype(self):
        """The numpy scalar type (``numpy.float32``), as MXNet returns it."""
        return np.dtype(self._arr.dtype).type

    @property
    def ndim(self):
        return self._arr.ndim

    @property
    def size(self):
        return int(np.prod(self._arr.shape, dtype=np.int64))

    @property
    def context(self):
        return context_of(self._arr)

    ctx = context

    @property
    def stype(self):
        return "default"

    @property
    def handle(self):
        return self._arr

    @property
    def writable(self):
        return True

    # --- host side -----------------------------------------------------------
    def asnumpy(self):
        return np.array(self._arr)

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        a = self.asnumpy()
        return a[0] if a.ndim == 1 else a[()]    # MXNet's rule: (1, 1) gives back a (1, 1) numpy array

    def item(self):
        return self.asscalar().item()

    def wait_to_read(self):
        block = getattr(self._arr, "block_until_ready", None)
        if block is not None:
            block()

    def tolist(self):
        return self.asnumpy().tolist()

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()!s}\n<{type(self).__name__} {shape} @{self.context}>"

    __str__ = __repr__

    def __trace_str__(self):
        """How ``print`` shows this array inside a hybridized ``hybrid_forward`` (at trace time, once): MXNet's
        ``<_Symbol data>``; None outside Gluon's traces and where the trace prints values (the transpiler's
        print: see ``gluon.programs._mxnet_prints``)."""
        from ast_hybrid.core.trace import FRAMES

        traces = FRAMES.traces
        name = getattr(traces[-1], "symbol_name", None) if traces else None
        name = None if name is None else name(self._arr)
        return None if name is None else f"<_Symbol {name}>"

    def __format__(self, spec):
        if spec and self.size == 1:
            return format(self.asscalar(), spec)
        return str(self) if not spec else format(str(self), spec)

    def __bool__(self):
        n = self.size
        if n == 0:
            return False
        if n == 1:
            return bool(self.asscalar())
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    def __float__(self):    # an extension: MXNet 1.9.1 raises TypeError here
        return float(self.asscalar())

    def __int__(self):      # an extension, as __float__
        return int(self.asscalar())

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    __hash__ = object.__hash__

    def __reduce__(self):
        return _rebuild, (self.asnumpy(),)

    # --- copies, dtypes, devices ---------------------------------------------
    def copyto(self, other):
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise ValueError(f"copyto: shape mismatch, source {self.shape}, destination {other.shape}")
            other._arr = self._arr.astype(other._arr.dtype)
            return other
        if isinstance(other, Context):      # always a new array, as MXNet's (as_in_context may give self)
            moved = self.as_in_context(other)
            return moved.copy() if moved is self else moved
        raise TypeError(f"copyto does not support type {type(other).__name__}")

    def as_in_context(self, context):
        if self.context == context:
            return self
        import jax

        return type(self)(jax.device_put(self._arr, Context(context).jax_device()))

    as_in_ctx = as_in_context

    def as_nd_ndarray(self):
        return self if self.__class__ is NDArray else NDArray(self._arr, self._ag)

    def as_np_ndarray(self):
        """The same array as an ``mx.np`` array (MXNet: zero-copy; here the same jax array and record)."""
        return self if self.__class__ is ndarray else ndarray(self._arr, self._ag)

    def detach(self):
        return type(self)(self._arr)

    def tostype(self, stype):
        """The array in storage ``stype``: 'default', or MXNet's 'row_sparse'/'csr' (``core/sparse.py``)."""
        from ast_hybrid.core.sparse import to_stype

        return to_stype(self if stype not in (None, "default") else NDArray(self._arr), stype)   # a new array

    # --- autograd --------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """A gradient buffer for this array; its storage is ``stype``, else this array's (as MXNet's)."""
        from ast_hybrid.core import autograd

        if stype is not None and stype != "default" or self.stype != "default":
            stype = stype or self.stype
            from ast_hybrid.core.context import filled
            from ast_hybrid.core.sparse import to_stype

            buffer = to_stype(NDArray(filled(self._arr.shape, 0, self._arr.dtype, like=self._arr)), stype)
            autograd.mark_variables([self], [buffer], grad_reqs=grad_req)
            return
        autograd.mark_variables([self], None, grad_reqs=grad_req)

    @property
    def grad(self):
        from ast_hybrid.core import autograd

        return autograd.grad_of(self)

    @property
    def _fresh_grad(self):
        """MXNet's flag: the gradient was written by a backward since the Trainer's last update."""
        return int(getattr(self._ag, "fresh", False))      # MXNet gives 0 or 1

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        if hasattr(self._ag, "fresh"):
            self._ag.fresh = bool(value)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        from ast_hybrid.core import autograd

        autograd.backward([self], [out_grad] if out_grad is not None else None, retain_graph, train_mode)


class ndarray(NDArray):
    """MXNet 1.9's ``mxnet.numpy.ndarray``: an NDArray with numpy's semantics (scalars of shape ``()``,
    numpy's indexing, reductions and dtype rules, comparisons giving bool), as ``mx.np``'s functions and
    ``npx.set_np()``'s Gluon give it.  What computes with it is installed by ``ast_hybrid/mxnp/arrays.py``."""

    __slots__ = ()

    def __reduce__(self):
        return _rebuild_np, (self.asnumpy(),)


ndarray.__module__ = "mxnet.numpy"      # what type(x) shows, as in MXNet

from ast_hybrid.core.sparse import CSRNDArray, RowSparseNDArray  # noqa: E402 (they are NDArrays)

#: the array classes (an op's inputs, autograd's records): test with ``x.__class__ in ARRAYS``
ARRAYS = (NDArray, ndarray, RowSparseNDArray, CSRNDArray)


def as_np(value):
    """``value`` (an NDArray, or a list/tuple of them, nested) with every legacy NDArray now an ``mx.np``
    array: the same object, its class changed (what an ``npx`` op returns, and Gluon's blocks under
    ``npx.set_np()``)."""
    cls = value.__class__
    if cls is NDArray:
        value.__class__ = ndarray
    elif cls is list or cls is tuple:
        for v in value:
            as_np(v)
    return value


def _rebuild(value):
    import jax.numpy as jnp

    return NDArray(jnp.asarray(value))


def _rebuild_np(value):
    import jax.numpy as jnp

    return ndarray(jnp.asarray(value))


def _register_pytree():
    import jax

    jax.tree_util.register_pytree_node(NDArray, lambda x: ((x._arr,), None), lambda _, c: NDArray(c[0]))
    jax.tree_util.register_pytree_node(ndarray, lambda x: ((x._arr,), None), lambda _, c: ndarray(c[0]))


_register_pytree()
