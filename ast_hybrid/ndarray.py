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

__all__ = ["NDArray", "Context", "cpu", "gpu", "current_context"]


class Context:
    """A device, MXNet-style: ``cpu(0)``, ``gpu(0)``."""

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type="cpu", device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif isinstance(device_type, str) and device_type.endswith(")") and "(" in device_type:
            # "gpu(1)": the string form MXNet's operators take for ctx
            device_type, _, rest = device_type.partition("(")
            device_id = rest[:-1]
        if device_type not in ("cpu", "gpu", "cpu_pinned", "cpu_shared"):
            raise ValueError(f"Context: unknown device_type {device_type!r} (expected 'cpu' or 'gpu')")
        self.device_type, self.device_id = device_type, int(device_id)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, Context) and (self.device_type, self.device_id) == (
            other.device_type, other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __enter__(self):
        _CONTEXT_STACK.append(self)
        return self

    def __exit__(self, *exc):
        _CONTEXT_STACK.pop()

    def jax_device(self):
        """The jax device this context names: ``cpu(i)``/``gpu(i)`` is this process's i-th local device of
        that kind (as MXNet numbers a machine's devices; with several processes, each has its own)."""
        import jax

        kind = "gpu" if self.device_type == "gpu" else "cpu"
        try:
            devices = jax.local_devices(backend=kind)
        except RuntimeError:
            raise RuntimeError(f"{self!r}: jax has no {kind} device here (jax.devices(): {jax.devices()})") from None
        if not 0 <= self.device_id < len(devices):
            more = (" (to simulate more CPU devices, set XLA_FLAGS=--xla_force_host_platform_device_count=N "
                    "before jax starts, or use `ast-hybrid launch --devices-per-process N`)" if kind == "cpu" else "")
            raise RuntimeError(f"{self!r}: only {len(devices)} {kind} device(s) available, numbered from 0{more}")
        return devices[self.device_id]


_CONTEXT_STACK: list = []


def cpu(device_id=0):
    return Context("cpu", device_id)


def gpu(device_id=0):
    return Context("gpu", device_id)


def current_context():
    return _CONTEXT_STACK[-1] if _CONTEXT_STACK else Context("cpu", 0)


def _context_of(arr):
    """The context of the first (lowest-numbered) device holding ``arr``; a tracer's is the current one."""
    devices = getattr(arr, "devices", None)
    if devices is None:
        return current_context()
    try:
        dev = min(devices(), key=lambda d: d.id)
    except Exception:      # a tracer: no device yet
        return current_context()
    import jax

    kind = "gpu" if dev.platform in ("gpu", "cuda", "rocm") else "cpu"
    local = jax.local_devices(backend=dev.platform)
    return Context(kind, local.index(dev) if dev in local else 0)


class NDArray:
    """An MXNet NDArray holding one jax array (``_arr``); ``_ag`` is its autograd record or None."""

    __slots__ = ("_arr", "_ag")
    __array_priority__ = 1000.0     # numpy defers to our reflected operators

    def __init__(self, arr, _ag=None):
        self._arr = arr
        self._ag = _ag

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
        return _context_of(self._arr)

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
    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == np.dtype(self._arr.dtype):
            return self
        return _ops.cast(self, dtype=dtype)

    def copy(self):
        return _ops.identity(self)

    def copyto(self, other):
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise ValueError(f"copyto: shape mismatch, source {self.shape}, destination {other.shape}")
            other._arr = self._arr.astype(other._arr.dtype)
            return other
        if isinstance(other, Context):
            return self.as_in_context(other)
        raise TypeError(f"copyto does not support type {type(other).__name__}")

    def as_in_context(self, context):
        if self.context == context:
            return self
        import jax

        return NDArray(jax.device_put(self._arr, Context(context).jax_device()))

    as_in_ctx = as_in_context

    def as_nd_ndarray(self):
        return self

    def detach(self):
        return NDArray(self._arr)

    def tostype(self, stype):
        if stype != "default":
            raise ValueError(f"tostype: only dense ('default') storage is supported, got {stype!r}")
        return self

    @property
    def T(self):
        return self if self.ndim < 2 else _ops.transpose(self)

    # --- autograd --------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        from ast_hybrid import autograd

        autograd.mark_variables([self], None, grad_reqs=grad_req)

    @property
    def grad(self):
        from ast_hybrid import autograd

        return autograd.grad_of(self)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        from ast_hybrid import autograd

        autograd.backward([self], [out_grad] if out_grad is not None else None, retain_graph, train_mode)

    # --- indexing ----------------------------------------------------------------
    def __getitem__(self, key):
        return _ops.indexing.getitem(self, key)

    def __setitem__(self, key, value):
        out = _ops.indexing.setitem(self, key, value)
        self._arr, self._ag = out._arr, out._ag

    def slice_assign(self, rhs, begin, end, step):
        self[tuple(slice(b, e, s) for b, e, s in zip(begin, end, tuple(step) + (None,) * len(begin)))] = rhs
        return self

    def slice_assign_scalar(self, value, begin, end, step):
        return self.slice_assign(value, begin, end, step)

    # --- reshape takes a tuple or *ints ---------------------------------------------
    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        elif not shape:
            shape = kwargs.get("shape")
            if not shape and shape != ():
                raise TypeError("reshape: shape must be provided")
        unknown = [k for k in kwargs if k not in ("shape", "reverse")]
        if unknown:
            raise TypeError(f"Got unknown keywords in reshape: {', '.join(unknown)}. "
                            "Accepted keyword arguments are 'shape' and 'reverse'.")
        return _ops.reshape(self, shape=tuple(shape), reverse=kwargs.get("reverse", False))

    # --- operators ---------------------------------------------------------------
    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def __rtruediv__(self, other):
        return _ops.divide(other, self)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, other):
        return _ops.modulo(self, other)

    def __rmod__(self, other):
        return _ops.modulo(other, self)

    def __pow__(self, other):
        return _ops.power(self, other)

    def __rpow__(self, other):
        return _ops.power(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, other):
        return _ops.equal(self, other)

    def __ne__(self, other):
        return _ops.not_equal(self, other)

    def __lt__(self, other):
        return _ops.lesser(self, other)

    def __le__(self, other):
        return _ops.lesser_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    def _inplace(self, result):
        if result.shape != self.shape:
            raise ValueError(f"in-place operation would change the shape from {self.shape} to {result.shape}")
        self._arr, self._ag = result._arr, result._ag
        return self

    def __iadd__(self, other):
        return self._inplace(_ops.add(self, other))

    def __isub__(self, other):
        return self._inplace(_ops.subtract(self, other))

    def __imul__(self, other):
        return self._inplace(_ops.multiply(self, other))

    def __itruediv__(self, other):
        return self._inplace(_ops.divide(self, other))

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return self._inplace(_ops.modulo(self, other))


def _rebuild(value):
    import jax.numpy as jnp

    return NDArray(jnp.asarray(value))


# MXNet's fluent methods: ``x.name(*args, **kwargs)`` is ``nd.name(x, *args, **kwargs)``.
FLUENT = (
    "reshape_like", "zeros_like", "ones_like", "broadcast_axes", "repeat", "pad", "swapaxes", "split",
    "split_v2", "slice", "slice_axis", "slice_like", "take", "one_hot", "pick", "sort", "topk", "argsort",
    "argmax", "argmax_channel", "argmin", "clip", "abs", "sign", "flatten", "shape_array", "size_array",
    "expand_dims", "tile", "transpose", "flip", "depth_to_space", "space_to_depth", "diag", "sum", "nansum",
    "prod", "nanprod", "mean", "max", "min", "norm", "round", "rint", "fix", "floor", "ceil", "trunc", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "degrees", "radians", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "exp", "expm1", "log", "log10", "log2", "log1p", "sqrt", "rsqrt", "cbrt", "rcbrt",
    "square", "reciprocal", "relu", "sigmoid", "softmax", "log_softmax", "softmin", "squeeze",
    "broadcast_to", "broadcast_like", "moveaxis", "cumsum",
)


def _fluent(name):
    def method(self, *args, **kwargs):
        return getattr(_ops, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Fluent form of ``nd.{name}(self, ...)``."
    return method


for _name in FLUENT:
    setattr(NDArray, _name, _fluent(_name))


def _register_pytree():
    import jax

    jax.tree_util.register_pytree_node(NDArray, lambda x: ((x._arr,), None), lambda _, c: NDArray(c[0]))


_register_pytree()

from ast_hybrid import ops as _ops  # noqa: E402  (the ops import NDArray from here)
