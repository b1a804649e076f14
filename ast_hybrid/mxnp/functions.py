"""``mx.np``'s functions: numpy's, computed by jax.numpy where MXNet 1.9.1 computes what numpy does, with
MXNet's differences (float32 where numpy would make float64: ``array`` of Python numbers, ``arange``,
``zeros``/``ones``/``full``/``empty``/``eye``/``linspace``).  Each records for autograd and gives ``mx.np``
arrays (``_base.np_function``)."""

from __future__ import annotations

import functools

import builtins

import jax
import jax.numpy as jnp
import numpy as onp

from ast_hybrid.core.context import current_context, place
from ast_hybrid.core.errors import MXNetValueError
from ast_hybrid.core.ndarray import ARRAYS, ndarray
from ast_hybrid.mxnp._base import default_float, np_function, raw_of
from ast_hybrid.ops import elemwise as _elemwise
from ast_hybrid.ops.reduce import nan_kept

# numpy's names computed by jax.numpy's function of the same name (argument for argument)
SAME = """
abs absolute add all any amax amin append arccos arccosh arcsin arcsinh arctan arctan2 arctanh
argsort around atleast_1d atleast_2d atleast_3d average bitwise_and bitwise_not bitwise_or bitwise_xor
broadcast_arrays cbrt ceil clip column_stack concatenate copysign cos cosh count_nonzero cross
deg2rad degrees diag diagflat diagonal diff dot dstack ediff1d einsum equal exp expand_dims expm1 fabs flip fliplr
flipud float_power floor fmax fmin gcd greater greater_equal heaviside hstack hypot inner insert interp invert
isclose isfinite isinf isnan isneginf isposinf kron lcm ldexp less less_equal log log10 log1p log2 logaddexp
logical_and logical_not logical_or logical_xor matmul max maximum mean median min minimum moveaxis multiply
nanmax nanmin nanprod nansum negative not_equal outer pad positive power prod ptp rad2deg radians ravel
reciprocal repeat reshape rint roll rollaxis rot90 round searchsorted sign signbit sin sinh sqrt
square stack std subtract sum swapaxes take take_along_axis tan tanh tensordot tile trace tril
triu trunc var vdot vstack where floor_divide
""".split()

__all__ = SAME + ["fix", "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
                  "empty_like", "arange", "linspace", "logspace", "eye", "identity", "copy", "shape", "size", "ndim",
                  "round_", "row_stack", "alltrue", "sometrue", "product", "array_equal", "allclose", "unique",
                  "nonzero", "argwhere", "meshgrid", "tri", "indices", "ndarray", "genfromtxt", "histogram",
                  "hanning", "hamming", "blackman", "delete", "split", "array_split", "vsplit", "hsplit", "dsplit",
                  "percentile", "quantile", "polyval", "resize", "divide", "true_divide", "broadcast_to", "nan_to_num",
                  "sort", "cumsum", "argmax", "argmin", "squeeze", "mod", "remainder",
                  "fmod", "unravel_index", "diag_indices_from", "transpose"]

_g = globals()
for _name in SAME:
    _g[_name] = np_function(getattr(jnp, _name), _name)


def _int_keeps(fn):
    """MXNet's sum/prod of an integer array keep its dtype (numpy's, and jax's in x64 mode, widen int32 to
    int64); a float16 array's are accumulated in float32 (MXNet's acc_type)."""
    def call(a, *args, **kwargs):
        x = jnp.asarray(a)
        if kwargs.get("dtype") is None and len(args) < 2 and jnp.issubdtype(x.dtype, jnp.integer):
            kwargs["dtype"] = x.dtype
        if x.dtype == jnp.float16 and kwargs.get("dtype") in (None, "float16", onp.float16) and len(args) < 2:
            kwargs["dtype"] = jnp.float32
            return fn(x, *args, **kwargs).astype(jnp.float16)
        return fn(x, *args, **kwargs)
    return call


def _cumsum(a, axis=None, dtype=None, out=None):
    """numpy's cumsum as MXNet's kernel runs it: an integer array's keeps its type; a float16 sum is
    accumulated in float16, one element after the other (numpy's and MXNet's loop), where jax's parallel
    prefix would round differently."""
    x = jnp.asarray(a)
    if jnp.dtype(dtype if dtype is not None else x.dtype) != jnp.float16:
        return _int_keeps(jnp.cumsum)(x, axis=axis, dtype=dtype)
    if axis is None:
        x, axis = x.reshape(-1), 0
    xs = jnp.moveaxis(x.astype(jnp.float16), axis, 0)

    def step(total, v):
        total = (total.astype(jnp.float32) + v.astype(jnp.float32)).astype(jnp.float16)
        return total, total

    _, ys = jax.lax.scan(step, jnp.zeros(xs.shape[1:], jnp.float16), xs)
    return jnp.moveaxis(ys, 0, axis)


cumsum = np_function(_cumsum, "cumsum")


def _transpose(a, axes=None):
    """numpy's transpose; repeated axes are MXNet's ValueError (JAX's is a TypeError)."""
    n = jnp.ndim(a)
    if axes is not None and len(axes) == n and builtins.all(-n <= int(i) < n for i in axes) and \
            len({int(i) % n for i in axes}) != n:
        raise MXNetValueError(f"Check failed: axes_set.size() == axes.ndim(): transpose was given the axes "
                              f"{tuple(axes)}, with repeats, for an array of {n} dimensions")
    return jnp.transpose(a, axes)


transpose = np_function(_transpose, "transpose")


def _arg_extreme(fn):
    """numpy's argmax/argmin, and MXNet's of a 0-d array over axis 0 or -1 (its only element: 0)."""
    def call(a, axis=None, out=None, keepdims=False):
        a = jnp.asarray(a)
        if a.ndim == 0 and axis in (0, -1):
            axis = None
        if axis is not None and not -a.ndim <= axis < a.ndim:
            raise MXNetValueError(f"axis {axis} is out of bounds for array of dimension {a.ndim}")
        return fn(a, axis=axis, keepdims=keepdims)
    return call


def _squeeze(a, axis=None):
    """numpy's squeeze; a 0-d array over axis 0 or -1 is itself (MXNet's)."""
    a = jnp.asarray(a)
    if a.ndim == 0 and axis in (0, -1, (0,), (-1,)):
        return a
    return jnp.squeeze(a, axis)


squeeze = np_function(_squeeze, "squeeze")
argmax = np_function(_arg_extreme(jnp.argmax), "argmax")
argmin = np_function(_arg_extreme(jnp.argmin), "argmin")
max = amax = np_function(nan_kept(jnp.max), "max")  # noqa: A001  (NaN kept: ops/reduce.py)
min = amin = np_function(nan_kept(jnp.min), "min")  # noqa: A001
sum = np_function(_int_keeps(jnp.sum), "sum")  # noqa: A001  (numpy's name)
prod = np_function(_int_keeps(jnp.prod), "prod")
# MXNet's gradients where jax.numpy's differ: a tie of maximum/minimum sends it all to the first argument,
# clip passes it on its bounds too (jax.numpy halves both)
maximum = np_function(_elemwise.max_kernel, "maximum")
minimum = np_function(_elemwise.min_kernel, "minimum")
clip = np_function(lambda a, a_min=None, a_max=None, out=None: _elemwise.clip_kernel(jnp.asarray(a), a_min, a_max),
                   "clip")


def _multiply(a, b, *args, **kwargs):
    """jax.numpy's multiply, where XLA's rewrite of ``x * bool`` into a select (+0 where MXNet's product is
    -0 for a negative x) is kept off: ``where(mask, x, x * 0)``."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    if (a.dtype == jnp.bool_) != (b.dtype == jnp.bool_) and not args and not kwargs:
        mask, x = (a, b) if a.dtype == jnp.bool_ else (b, a)
        x = x.astype(jnp.result_type(x, mask))
        return jnp.where(mask, x, x * 0)
    return jnp.multiply(a, b, *args, **kwargs)


multiply = np_function(_multiply, "multiply")


def _broadcast_to(array, shape):
    """numpy's broadcast_to, with MXNet's -2 in ``shape``: that dimension of the input (aligned right)."""
    array = jnp.asarray(array)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    lead = len(shape) - array.ndim
    shape = tuple(array.shape[i - lead] if d == -2 and i >= lead else d for i, d in enumerate(shape))
    return jnp.broadcast_to(array, shape)


broadcast_to = np_function(_broadcast_to, "broadcast_to")


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num_op = np_function(_nan_to_num, "nan_to_num")


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy's nan_to_num; ``copy=False`` writes the result into ``x`` (an ``mx.np`` array) and returns it."""
    out = _nan_to_num_op(x, copy, nan, posinf, neginf)
    if not copy and x.__class__ in ARRAYS:
        x._arr, x._ag = out._arr, out._ag
        return x
    return out


def _sort(a, axis=-1, kind=None, order=None):
    """numpy's sort (``kind`` and ``order`` by position too; a stable sort either way)."""
    return jnp.sort(a, axis=axis)


sort = np_function(_sort, "sort")


def _true_divide(a, b):
    """MXNet's true division: integer (and bool) operands give float32 (numpy: float64)."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    if not jnp.issubdtype(jnp.result_type(a, b), jnp.inexact):
        booleans = a.dtype == jnp.bool_ or b.dtype == jnp.bool_
        a, b = a.astype(jnp.float32), b.astype(jnp.float32)
        if booleans:    # XLA rewrites float(bool) / y as select(bool, 1 / y, 0): 0 / 0 would give 0, not nan
            a, b = jax.lax.optimization_barrier((a, b))
    return jnp.true_divide(a, b)


divide = true_divide = np_function(_true_divide, "true_divide")
# MXNet's integer mod has no gradient (its float one: 1 and -floor(x1 / x2))
mod = np_function(jnp.mod, "mod", int_no_grad=True)
remainder = np_function(jnp.remainder, "remainder", int_no_grad=True)
fmod = np_function(jnp.fmod, "fmod", int_no_grad=True)


def _splitter(axis_of, uneven):
    """numpy's split family on static sections: ``indices_or_sections`` an int (equal parts; ``array_split``:
    the first ones one longer) or split points, clipped to the axis as numpy slices them."""
    def split(ary, indices_or_sections, axis=0):
        ary = jnp.asarray(ary)
        axis = axis_of(ary, axis)
        n = ary.shape[axis]
        if isinstance(indices_or_sections, (int, onp.integer)):
            parts = int(indices_or_sections)
            if parts <= 0:
                raise ValueError("number sections must be larger than 0.")
            if not uneven and n % parts:
                raise ValueError("array split does not result in an equal division")
            size, extra = divmod(n, parts)
            points = list(onp.cumsum([size + 1] * extra + [size] * (parts - extra))[:-1])
        else:
            points = [int(i) for i in onp.asarray(raw_of(indices_or_sections)).reshape(-1)]
        bounds = zip([0] + points, points + [None])
        return [ary[(slice(None),) * axis + (slice(lo, hi),)] for lo, hi in bounds]
    return split


split = np_function(_splitter(lambda a, axis: axis % builtins.max(a.ndim, 1), False), "split")
array_split = np_function(_splitter(lambda a, axis: axis % builtins.max(a.ndim, 1), True), "array_split")
vsplit = np_function(_splitter(lambda a, axis: 0, False), "vsplit")
hsplit = np_function(_splitter(lambda a, axis: 1 if a.ndim > 1 else 0, False), "hsplit")
dsplit = np_function(_splitter(lambda a, axis: 2, False), "dsplit")


def _quantile(fn):
    """numpy's percentile/quantile with MXNet's (numpy < 1.22's) ``interpolation=`` keyword."""
    def call(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear", keepdims=False):
        if isinstance(axis, list):
            axis = tuple(axis)
        return fn(a, jnp.asarray(q), axis=axis, method=interpolation, keepdims=keepdims)
    return call


percentile = np_function(_quantile(jnp.percentile), "percentile")
quantile = np_function(_quantile(jnp.quantile), "quantile")
polyval = np_function(jnp.polyval, "polyval")
resize = np_function(jnp.resize, "resize")


def _rows_of_1d(fn):
    """numpy's tril/triu: a 1-d input is the rows of a square matrix (jax.numpy's need two dimensions)."""
    def call(m, k=0):
        m = jnp.asarray(m)
        return fn(jnp.broadcast_to(m, (m.shape[0], m.shape[0])) if m.ndim == 1 else m, k)
    return call


def _round(a, decimals=0, out=None):
    """numpy's round, integers with ``decimals < 0`` too (to a multiple of 10**-decimals, ties to even)."""
    a = jnp.asarray(a)
    if decimals < 0 and jnp.issubdtype(a.dtype, jnp.integer):
        scale = 10.0 ** -decimals
        wide = a.astype(jnp.float64 if a.dtype.itemsize > 4 else jnp.float32)
        return (jnp.round(wide / scale) * scale).astype(a.dtype)
    return jnp.round(a, decimals)


tril = np_function(_rows_of_1d(jnp.tril), "tril")
triu = np_function(_rows_of_1d(jnp.triu), "triu")
round = around = np_function(_round, "round")  # noqa: A001  (numpy's name)
fix = np_function(jnp.trunc, "fix")          # round toward zero (jax.numpy.fix is deprecated)

# numpy's ufunc keywords, as MXNet 1.9.1's wrap_np_unary_func/wrap_np_binary_func (python/mxnet/util.py) take
# them: the default values pass, a legal other value is NotImplementedError, anything else TypeError
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None, "subok": True}
_UFUNC_DTYPES = ("int8", "uint8", "int32", "int64", "float16", "float32", "float64")
UNARY_UFUNCS = """sin cos sinh cosh tanh log10 sqrt cbrt abs fabs absolute exp expm1 arcsin arccos arctan sign log rint
log2 log1p degrees rad2deg radians deg2rad reciprocal square negative fix tan ceil floor invert bitwise_not trunc
logical_not arcsinh arccosh arctanh isnan isinf isposinf isneginf isfinite""".split()
BINARY_UFUNCS = """add subtract multiply divide mod matmul remainder power lcm maximum minimum copysign arctan2 hypot
bitwise_and bitwise_xor bitwise_or ldexp""".split()


_BOOL_RESULTS = ("isnan", "isinf", "isposinf", "isneginf", "isfinite")


def _legal(key, value):
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        try:
            return value in _UFUNC_DTYPES or onp.dtype(value).name in _UFUNC_DTYPES and not isinstance(value, str)
        except TypeError:
            return False
    return key == "subok" and isinstance(value, bool)


def _ufunc(fn, arity):
    name = fn.__name__

    # (not jax.numpy's docstring: its examples would run as this module's doctests)
    @functools.wraps(fn, assigned=("__module__", "__name__", "__qualname__"))
    def checked(*args, out=None, **kwargs):
        if len(args) > arity:       # out given by position (numpy's signature)
            args, out = args[:arity], args[arity]
        if name in _BOOL_RESULTS and out is not None and onp.dtype(out.dtype) != onp.bool_:
            raise TypeError(f"{name}: out= must be a bool array (the result's dtype), got {onp.dtype(out.dtype)}")
        for key, value in kwargs.items():
            if key not in _UFUNC_DEFAULTS:
                raise TypeError(f"{key} is an invalid keyword to function '{name}'")
            default = _UFUNC_DEFAULTS[key]
            if value is not default and (default is None or value != default):
                if _legal(key, value):
                    raise NotImplementedError(f"{key}={value} is not implemented yet for operator {name}"
                                              if arity == 1 else f"{key}={value} is not implemented yet")
                raise TypeError(f"{key}={value} not understood for operator {name}" if arity == 1
                                else f"{key} {value} not understood")
        return fn(*args, out=out) if out is not None else fn(*args)
    checked.__doc__ = (f"numpy's ``{name}`` on ``mx.np`` arrays, numpy's ufunc keywords (``where``, ``casting``, "
                       "``order``, ``dtype``, ``subok``) checked as MXNet 1.9.1 checks them.")
    return checked


for _name in UNARY_UFUNCS:
    _g[_name] = _ufunc(_g[_name], 1)
for _name in BINARY_UFUNCS:
    _g[_name] = _ufunc(_g[_name], 2)
round_ = _g["round"]
row_stack = _g["vstack"]
alltrue, sometrue, product = _g["all"], _g["any"], _g["prod"]


def _dtype_of(obj, dtype):
    if dtype is not None:
        return dtype
    if obj.__class__ in ARRAYS or isinstance(obj, onp.ndarray):
        return obj.dtype
    return onp.float32         # MXNet: Python numbers and lists are float32 (numpy: float64 or int64)


def _on(arr, ctx):
    """An ``ndarray`` of ``arr`` on ``ctx`` (no ctx: the current context), as ``nd``'s creation places it."""
    return ndarray(place(arr, current_context() if ctx is None else ctx))


def array(object, dtype=None, ctx=None, copy=True, **kwargs):
    """``mx.np.array``: float32 for Python numbers and lists, the given array's dtype otherwise."""
    dtype = _dtype_of(object, dtype)
    if object.__class__ in ARRAYS:
        return _on(object._arr.astype(dtype), ctx)
    if isinstance(object, (list, tuple)) and builtins.any(v.__class__ in ARRAYS for v in object):
        object = [onp.asarray(v) for v in object]
    return _on(jnp.asarray(onp.asarray(object, dtype=dtype)), ctx)


def asarray(a, dtype=None, ctx=None):
    if a.__class__ is ndarray and (dtype is None or onp.dtype(dtype) == a.dtype):
        return a
    return array(a, dtype=dtype, ctx=ctx)


def _c_order(order):
    if order != "C":       # MXNet 1.9.1: NotImplementedError for any other memory order
        raise NotImplementedError(f"order={order!r}: only 'C' is supported (as in MXNet)")


def _named(make, name, what):
    make.__name__ = make.__qualname__ = name
    make.__doc__ = what
    return make


def _creation(fill, name, what):
    def make(shape, dtype=None, order="C", ctx=None, **kwargs):
        _c_order(order)
        return _on(fill(shape, default_float(dtype)), ctx)
    return _named(make, name, what + """

    Parameters
    ----------
    shape : int or tuple of int
    dtype : str or numpy.dtype, optional (float32 unless told, as MXNet's; NumPy's default is float64)
    order : 'C' only (row-major, as MXNet)
    ctx : Context, optional (the current context unless told)

    Returns
    -------
    out : ndarray
    """)


zeros = _creation(jnp.zeros, "zeros", "Return a new array of the given shape and type, filled with zeros.")
ones = _creation(jnp.ones, "ones", "Return a new array of the given shape and type, filled with ones.")
empty = _creation(jnp.zeros, "empty", "Return a new array of the given shape and type; its values are "
                  "unspecified (zeros here).")


def full(shape, fill_value, dtype=None, order="C", ctx=None, out=None):
    if dtype is None:
        dtype = fill_value.dtype if fill_value.__class__ in ARRAYS else onp.float32
    result = _on(jnp.full(shape, raw_of(fill_value), dtype), ctx)
    if out is not None:
        out._arr, out._ag = result._arr.astype(out._arr.dtype), None
        return out
    return result


def _like(fill, name, what):
    def make(a, dtype=None, order="C", ctx=None, out=None, **kwargs):
        _c_order(order)
        out = fill(raw_of(a), dtype=dtype)
        return ndarray(out) if ctx is None else _on(out, ctx)
    return _named(make, name, what)


zeros_like = _like(jnp.zeros_like, "zeros_like", "Return an array of zeros with the shape and type of `a`.")
ones_like = _like(jnp.ones_like, "ones_like", "Return an array of ones with the shape and type of `a`.")


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None):
    """An array of ``prototype``'s shape (or ``shape``) and dtype (or ``dtype``), MXNet's signature; its values
    are unspecified (zeros here)."""
    _c_order(order)
    if subok:
        raise NotImplementedError("empty_like: subok=True is not supported (MXNet's either)")
    base = raw_of(prototype)
    return ndarray(jnp.zeros(base.shape if shape is None else shape, dtype or base.dtype))


def _unravel_index(indices, shape, order="C"):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if order == "F":        # the first axis varies fastest: unravel over the reversed shape
        return tuple(jnp.unravel_index(jnp.asarray(indices), shape[::-1])[::-1])
    return tuple(jnp.unravel_index(jnp.asarray(indices), shape))


unravel_index = np_function(_unravel_index, "unravel_index")
diag_indices_from = np_function(lambda arr: tuple(jnp.diag_indices_from(jnp.asarray(arr))), "diag_indices_from")


def full_like(a, fill_value, dtype=None, order="C", ctx=None, out=None):
    out = jnp.full_like(raw_of(a), raw_of(fill_value), dtype=dtype)
    return ndarray(out) if ctx is None else _on(out, ctx)


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    """float32 unless told (MXNet 1.9.1; numpy gives int64 for integers)."""
    return _on(jnp.arange(start, stop, step, dtype=default_float(dtype)), ctx)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None):
    out = jnp.linspace(raw_of(start), raw_of(stop), num, endpoint=endpoint, retstep=retstep,
                       dtype=default_float(dtype), axis=axis)
    return (_on(out[0], ctx), out[1]) if retstep else _on(out, ctx)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    return _on(jnp.logspace(start, stop, num, endpoint=endpoint, base=base, dtype=default_float(dtype),
                            axis=axis), ctx)


def eye(N, M=None, k=0, dtype=None, ctx=None, **kwargs):
    if N < 0 or (M is not None and M < 0):
        raise MXNetValueError(f"negative dimensions are not allowed: N={N}, M={M}")
    return _on(jnp.eye(N, M, k, dtype=default_float(dtype)), ctx)


def identity(n, dtype=None, ctx=None):
    return _on(jnp.identity(n, dtype=default_float(dtype)), ctx)


def tri(N, M=None, k=0, dtype=None, ctx=None):
    return _on(jnp.tri(N, M, k, dtype=default_float(dtype)), ctx)


def indices(dimensions, dtype=None, ctx=None):
    return _on(jnp.indices(dimensions, dtype=dtype or onp.int64), ctx)


copy = np_function(jnp.array, "copy")


def shape(a):
    return tuple(a.shape)


def size(a, axis=None):
    return int(onp.prod(a.shape)) if axis is None else a.shape[axis]


def ndim(a):
    return len(a.shape)


def array_equal(a1, a2, equal_nan=False):
    return bool(jnp.array_equal(raw_of(a1), raw_of(a2), equal_nan=equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(jnp.allclose(raw_of(a), raw_of(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """Eager only (its size depends on the values)."""
    out = onp.unique(onp.asarray(raw_of(ar)), return_index, return_inverse, return_counts, axis)
    if isinstance(out, tuple):
        return tuple(ndarray(jnp.asarray(o)) for o in out)
    return ndarray(jnp.asarray(out))


def nonzero(a):
    """The indices of the non-zero entries (eager only); a 0-d array as a 1-d one, as numpy < 1.24 did."""
    return tuple(ndarray(jnp.asarray(o)) for o in onp.nonzero(onp.atleast_1d(onp.asarray(raw_of(a)))))


def argwhere(a):
    return ndarray(jnp.asarray(onp.argwhere(onp.asarray(raw_of(a)))))


def meshgrid(*xi, **kwargs):
    """numpy's ``meshgrid`` (each input flattened first, as numpy does)."""
    return [ndarray(o) for o in jnp.meshgrid(*[jnp.ravel(raw_of(x)) for x in xi], **kwargs)]


def genfromtxt(*args, **kwargs):
    """NumPy's ``genfromtxt``, its result an ``mx.np`` array (in its dtype) on ``ctx`` (MXNet 1.9.1's
    ``mxnet.numpy.genfromtxt``: d2l reads the airfoil data with it)."""
    ctx = kwargs.pop("ctx", None)
    ret = onp.genfromtxt(*args, **kwargs)
    return array(ret, dtype=ret.dtype, ctx=ctx)


def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002  (numpy's name)
    """``(counts, bin_edges)`` as MXNet 1.9.1's: ``bins`` a count with ``range``, or an array of edges; counts
    int64, edges float32; no automatic range, weights or density (MXNet's errors)."""
    if normed is True:
        raise NotImplementedError("normed is not supported yet...")
    if weights is not None:
        raise NotImplementedError("weights is not supported yet...")
    if density is True:
        raise NotImplementedError("density is not supported yet...")
    if isinstance(bins, (int, onp.integer)):
        if range is None:
            raise NotImplementedError("automatic range is not supported yet...")
        lo, step = onp.float32(range[0]), onp.float32((float(range[1]) - float(range[0])) / int(bins))
        edges = jnp.asarray(lo + onp.arange(int(bins) + 1, dtype=onp.float32) * step)     # MXNet's edges
    elif isinstance(bins, (list, tuple)):
        raise NotImplementedError("array_like bins is not supported yet...")
    elif isinstance(bins, str):
        raise NotImplementedError("string bins is not supported yet...")
    elif bins.__class__ in ARRAYS:
        edges = bins._arr
    else:
        raise ValueError("np.histogram fails with", locals())
    values = jnp.asarray(raw_of(a)).reshape(-1)
    n = edges.shape[0] - 1
    # numpy's bins: [e_i, e_{i+1}), the last one closed
    idx = jnp.searchsorted(edges, values, side="right") - 1
    idx = jnp.where(values == edges[-1], n - 1, idx)
    inside = (idx >= 0) & (idx < n)
    counts = jnp.zeros((n,), jnp.int64).at[jnp.where(inside, idx, 0)].add(inside.astype(jnp.int64))
    return ndarray(counts), ndarray(edges)


def _window(fn, M, dtype, ctx):
    return _on(jnp.asarray(fn(int(M)), dtype=onp.dtype(dtype or onp.float32)), ctx)


def hanning(M, dtype=None, ctx=None):
    return _window(onp.hanning, M, dtype, ctx)


def hamming(M, dtype=None, ctx=None):
    return _window(onp.hamming, M, dtype, ctx)


def blackman(M, dtype=None, ctx=None):
    return _window(onp.blackman, M, dtype, ctx)


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, a slice or an integer array) along ``axis`` (None: the
    flattened array), as MXNet's: a list for ``obj`` is a TypeError."""
    if not (isinstance(obj, (int, onp.integer, slice)) or obj.__class__ in ARRAYS):
        raise TypeError(f"'obj' can not support type {type(obj)}")
    return _delete(arr, obj if obj.__class__ not in ARRAYS else onp.asarray(raw_of(obj)), axis)


def _delete_impl(arr, obj, axis=None):
    arr = jnp.asarray(arr)
    if isinstance(obj, onp.ndarray):    # MXNet ignores the indices out of [0, n)
        n = arr.size if axis is None else arr.shape[axis]
        obj = obj.reshape(-1).astype(onp.int64)
        obj = obj[(obj >= 0) & (obj < n)]
    return jnp.delete(arr, obj, axis=axis)


_delete = np_function(_delete_impl, "delete")
