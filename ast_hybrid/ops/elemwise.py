"""Element-wise ops: unary math, arithmetic and comparisons, ``broadcast_*`` / ``elemwise_*``, clip, where.

MXNet 1.9.1's rules, each checked against it in ``tests/ops/test_elemwise_oracle.py``:

- two arrays must have the SAME dtype (MXNet never promotes); ``elemwise_*``
  also needs the same shape, ``broadcast_*`` and the operators broadcast;
- a Python scalar is cast to the array's dtype first (``int32 * 2.5`` is
  ``int32 * 2``), and the result keeps the array's dtype;
- comparisons and ``logical_*`` give 0/1 in the input dtype, not bool;
- integer ``divide`` truncates toward zero, ``modulo`` has the sign of the
  divisor (Python's ``%``), and ``x % 0`` is 0;
- unary math on integer arrays is computed in float and cast back the C way
  (``sqrt(int32 5)`` is 2, overflow gives INT_MIN); MXNet computes in float64,
  here float32, which differs only where a result lands within float32's
  rounding of an integer (``sigmoid(int32 30)``: MXNet 0, here 1);
- ``round`` rounds half away from zero, ``rint`` half to even.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.ops import deferred
from ast_hybrid.ops._core import OpError, c_cast, check, is_int, op, scalar_like

_SCALARS = (int, float, bool, np.generic)


def _is_scalar(x):
    return isinstance(x, _SCALARS)


def _as_array(x):
    return jnp.asarray(x) if isinstance(x, (np.ndarray, list)) else x


def _check_pair(opname, a, b, same_shape):
    if a.dtype != b.dtype and not deferred.types_free():
        raise OpError(f"{opname}: the two inputs must have the same dtype (MXNet does not promote), got "
                      f"{np.dtype(a.dtype).name} and {np.dtype(b.dtype).name}; cast one with .astype()")
    if same_shape:
        if a.shape != b.shape:
            raise OpError(f"{opname}: the two inputs must have the same shape, got {tuple(a.shape)} and "
                          f"{tuple(b.shape)}; use broadcast_{opname.split('_', 1)[-1]} to broadcast")
        return
    for x, y in zip(a.shape[::-1], b.shape[::-1]):
        if x != y and x != 1 and y != 1:
            raise OpError(f"{opname}: operands could not be broadcast together with shapes "
                          f"{list(a.shape)} {list(b.shape)}")


def _binary(opname, fn, lhs, rhs, same_shape=False, compare=False):
    """Apply ``fn`` with MXNet's dtype rules (see the module doc)."""
    if _is_scalar(lhs) and _is_scalar(rhs):
        return fn(jnp.asarray(lhs), jnp.asarray(rhs)).item()
    if lhs is None or rhs is None:
        raise OpError(f"{opname}: type {type(None)} not supported")
    if _is_scalar(rhs):
        a = _as_array(lhs)
        return _run_kernel(fn, a, scalar_like(rhs, a.dtype, like=a))
    if _is_scalar(lhs):
        b = _as_array(rhs)
        return _run_kernel(fn, scalar_like(lhs, b.dtype, like=b), b)
    a, b = _as_array(lhs), _as_array(rhs)
    _check_pair(opname, a, b, same_shape)
    return _run_kernel(fn, a, b)


def _run_kernel(fn, a, b):
    """``fn(a, b)`` in ``a``'s dtype: eagerly as one compiled program (a new shape compiles one program, not
    one per primitive: MXNet's mod is 5, and a loop over many shapes paid each); in a trace, its primitives
    inline, as the trace's rewrites expect."""
    kernel, program = _kernel_program(fn)
    tracer = jax.core.Tracer
    return kernel(a, b) if isinstance(a, tracer) or isinstance(b, tracer) else program(a, b)


@functools.lru_cache(maxsize=None)
def _kernel_program(fn):
    def kernel(a, b):
        out = fn(a, b)
        return out.astype(a.dtype) if out.dtype != a.dtype else out

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel, jax.jit(kernel)


# --- the arithmetic kernels ---------------------------------------------------------------

def _div(a, b):
    if is_int(a.dtype):
        a, b = jnp.broadcast_arrays(a, b)
        return lax.div(a, jnp.where(b == 0, jnp.ones_like(b), b))
    return a / b


def _mod(a, b):
    zero = b == 0
    safe = jnp.where(zero, jnp.ones_like(b), b)
    return jnp.where(zero, jnp.zeros_like(a), jnp.remainder(a, safe))


def _pow(a, b):
    return jnp.power(a, b)


def _logical(fn):
    return lambda a, b: fn(a != 0, b != 0)


def _ties_to_lhs(forward, lhs_wins):
    """``forward`` (jnp.maximum or minimum: NaN in, NaN out, as MXNet's) with MXNet's gradient: all of it to
    the left operand where ``lhs_wins(a, b)`` (``a >= b`` for maximum, ``a <= b`` for minimum), to the right
    elsewhere, so a tie sends it all left (MXNet's ``BackwardUseIn<ge, lt>``); JAX splits a tie in halves."""
    @jax.custom_jvp
    def tied(a, b):
        return forward(a, b)

    @tied.defjvp
    def _jvp(primals, tangents):
        a, b = primals
        out = forward(a, b)
        return out, jnp.where(lhs_wins(a, b), tangents[0], tangents[1]).astype(out.dtype)

    def apply(a, b):
        dtype = jnp.result_type(a, b)
        if not jnp.issubdtype(dtype, jnp.inexact):
            return forward(a, b)
        return tied(jnp.asarray(a, dtype), jnp.asarray(b, dtype))    # an int operand's tangent would be float0

    # jitted: called op by op, a custom_jvp costs ~60 us in jax's signature inspection and each asarray ~25 us
    return jax.jit(apply)


#: maximum / minimum with MXNet's gradient (``mx.np``'s too)
max_kernel = _ties_to_lhs(jnp.maximum, jnp.greater_equal)
min_kernel = _ties_to_lhs(jnp.minimum, jnp.less_equal)


@jax.custom_jvp
def _clipped(x, lo, hi):
    return jnp.clip(x, lo, hi)


@_clipped.defjvp
def _clipped_jvp(primals, tangents):
    x, lo, hi = primals
    inside = jnp.ones(x.shape, bool)
    if lo is not None:
        inside = inside & (x >= lo)
    if hi is not None:
        inside = inside & (x <= hi)
    return jnp.clip(x, lo, hi), jnp.where(inside, tangents[0], jnp.zeros_like(tangents[0]))


@jax.jit
def clip_kernel(x, lo, hi):
    """``jnp.clip(x, lo, hi)`` (either bound may be None) whose gradient passes on the bounds too, as MXNet's
    (``x >= a_min and x <= a_max``); jnp.clip halves it there.  Jitted: op by op, a custom_jvp costs ~60 us
    in jax's signature inspection."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.clip(x, lo, hi)
    return _clipped(x, lo, hi)


_KERNELS = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": _div, "mod": _mod, "power": _pow,
    "maximum": max_kernel, "minimum": min_kernel,
    "hypot": jnp.hypot,
    "equal": jnp.equal, "not_equal": jnp.not_equal, "greater": jnp.greater, "greater_equal": jnp.greater_equal,
    "lesser": jnp.less, "lesser_equal": jnp.less_equal,
    "logical_and": _logical(jnp.logical_and), "logical_or": _logical(jnp.logical_or),
    "logical_xor": _logical(jnp.logical_xor),
}
_COMPARE = {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
            "logical_or", "logical_xor"}


def _make_binary(opname, kernel, same_shape=False):
    fn = _KERNELS[kernel]
    compare = kernel in _COMPARE

    def impl(lhs, rhs, **attrs):
        # MXNet's binary ops have no parameters and ignore keyword attributes (gluon's own CosineEmbeddingLoss
        # passes axis=1 to broadcast_maximum); only the NDArray-level helpers (nd.add, ...) refuse them
        if attrs and not opname.startswith(("broadcast_", "elemwise_")):
            raise TypeError(f"{opname}() got unexpected keyword arguments {sorted(attrs)}")
        return _binary(opname, fn, lhs, rhs, same_shape, compare)

    impl.__name__ = impl.__qualname__ = opname
    impl.__doc__ = (f"MXNet's ``{opname}(lhs, rhs)``: "
                    + ("same shapes and dtypes." if same_shape else "broadcasting, same dtypes; scalars allowed."))
    return op(impl)


# nd.add & co.: arrays or scalars on either side (what NDArray's operators call)
add = _make_binary("add", "add")
subtract = _make_binary("subtract", "sub")
multiply = _make_binary("multiply", "mul")
divide = _make_binary("divide", "div")
true_divide = divide
modulo = _make_binary("modulo", "mod")
_power = _make_binary("power", "power")


def power(base, exp):
    """MXNet's ``power(base, exp)``: ``base ** exp`` with broadcasting (either may be a scalar)."""
    return _power(base, exp)


power.op_name = "power"
maximum = _make_binary("maximum", "maximum")
minimum = _make_binary("minimum", "minimum")
hypot = _make_binary("hypot", "hypot")
equal = _make_binary("equal", "equal")
not_equal = _make_binary("not_equal", "not_equal")
greater = _make_binary("greater", "greater")
greater_equal = _make_binary("greater_equal", "greater_equal")
lesser = _make_binary("lesser", "lesser")
lesser_equal = _make_binary("lesser_equal", "lesser_equal")
logical_and = _make_binary("logical_and", "logical_and")
logical_or = _make_binary("logical_or", "logical_or")
logical_xor = _make_binary("logical_xor", "logical_xor")

# broadcast_*: two arrays, numpy broadcasting
broadcast_add = broadcast_plus = _make_binary("broadcast_add", "add")
broadcast_sub = broadcast_minus = _make_binary("broadcast_sub", "sub")
broadcast_mul = _make_binary("broadcast_mul", "mul")
broadcast_div = _make_binary("broadcast_div", "div")
broadcast_mod = _make_binary("broadcast_mod", "mod")
broadcast_power = _make_binary("broadcast_power", "power")
broadcast_maximum = _make_binary("broadcast_maximum", "maximum")
broadcast_minimum = _make_binary("broadcast_minimum", "minimum")
broadcast_hypot = _make_binary("broadcast_hypot", "hypot")
broadcast_equal = _make_binary("broadcast_equal", "equal")
broadcast_not_equal = _make_binary("broadcast_not_equal", "not_equal")
broadcast_greater = _make_binary("broadcast_greater", "greater")
broadcast_greater_equal = _make_binary("broadcast_greater_equal", "greater_equal")
broadcast_lesser = _make_binary("broadcast_lesser", "lesser")
broadcast_lesser_equal = _make_binary("broadcast_lesser_equal", "lesser_equal")
broadcast_logical_and = _make_binary("broadcast_logical_and", "logical_and")
broadcast_logical_or = _make_binary("broadcast_logical_or", "logical_or")
broadcast_logical_xor = _make_binary("broadcast_logical_xor", "logical_xor")

# elemwise_*: two arrays of the same shape
elemwise_add = _make_binary("elemwise_add", "add", same_shape=True)
elemwise_sub = _make_binary("elemwise_sub", "sub", same_shape=True)
elemwise_mul = _make_binary("elemwise_mul", "mul", same_shape=True)
elemwise_div = _make_binary("elemwise_div", "div", same_shape=True)


# --- unary ops ------------------------------------------------------------------------------

def _float_math(fn):
    """``fn`` on floats; integer inputs are computed in float32 and cast back (C truncation)."""
    def apply(x):
        x = _as_array(x)
        if is_int(x.dtype):
            return c_cast(fn(x.astype(jnp.float32)), x.dtype)
        return fn(x)
    return apply


def _round_half_away(x):
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)


def _exact(fn):
    return lambda x: fn(_as_array(x))


def _int_identity(fn):
    """Rounding ops: the identity on integers."""
    def apply(x):
        x = _as_array(x)
        return x if is_int(x.dtype) else fn(x)
    return apply


@jax.custom_jvp
def _mx_relu(x):
    """``max(x, 0)`` with MXNet's gradient: 1 where ``x > 0``, 0 elsewhere, NaN where ``x`` is NaN (MXNet's
    ``relu_grad`` passes a NaN on; ``jax.nn.relu``'s gradient there is 0)."""
    return jnp.maximum(x, 0)


@_mx_relu.defjvp
def _mx_relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    slope = (x > 0).astype(t.dtype)
    if jnp.issubdtype(x.dtype, jnp.floating):
        slope = jnp.where(jnp.isnan(x), x.astype(t.dtype), slope)
    return _mx_relu(x), t * slope


#: jitted: a custom_jvp called op by op costs ~60 us in jax's signature inspection, a jitted one ~5 us
mx_relu = jax.jit(_mx_relu)


def _softsign(x):
    return x / (1 + jnp.abs(x))


_UNARY = {
    # name: (kernel, doc)
    "sqrt": (_float_math(jnp.sqrt), "square root"),
    "rsqrt": (_float_math(lax.rsqrt), "1 / sqrt(x)"),
    "cbrt": (_float_math(jnp.cbrt), "cube root"),
    "rcbrt": (_float_math(lambda x: 1.0 / jnp.cbrt(x)), "1 / cbrt(x)"),
    "exp": (_float_math(jnp.exp), "e ** x"),
    "expm1": (_float_math(jnp.expm1), "exp(x) - 1"),
    "log": (_float_math(jnp.log), "natural logarithm"),
    "log10": (_float_math(jnp.log10), "base-10 logarithm"),
    "log2": (_float_math(jnp.log2), "base-2 logarithm"),
    "log1p": (_float_math(jnp.log1p), "log(1 + x)"),
    "sin": (_float_math(jnp.sin), "sine"), "cos": (_float_math(jnp.cos), "cosine"),
    "tan": (_float_math(jnp.tan), "tangent"), "arcsin": (_float_math(jnp.arcsin), "inverse sine"),
    "arccos": (_float_math(jnp.arccos), "inverse cosine"), "arctan": (_float_math(jnp.arctan), "inverse tangent"),
    "sinh": (_float_math(jnp.sinh), "hyperbolic sine"), "cosh": (_float_math(jnp.cosh), "hyperbolic cosine"),
    "tanh": (_float_math(jnp.tanh), "hyperbolic tangent"),
    "arcsinh": (_float_math(jnp.arcsinh), "inverse hyperbolic sine"),
    "arccosh": (_float_math(jnp.arccosh), "inverse hyperbolic cosine"),
    "arctanh": (_float_math(jnp.arctanh), "inverse hyperbolic tangent"),
    "degrees": (_float_math(jnp.degrees), "radians to degrees"),
    "radians": (_float_math(jnp.radians), "degrees to radians"),
    "sigmoid": (_float_math(jax.nn.sigmoid), "1 / (1 + exp(-x))"),
    "softsign": (_float_math(_softsign), "x / (1 + |x|)"),
    "erf": (_float_math(jax.scipy.special.erf), "the error function"),
    "erfinv": (_float_math(jax.scipy.special.erfinv), "the inverse error function"),
    "gamma": (_float_math(lambda x: jnp.exp(jax.scipy.special.gammaln(x)) * jnp.where(
        (x < 0) & (jnp.floor(x) % 2 == 1), -1.0, 1.0).astype(x.dtype)), "the gamma function"),
    "gammaln": (_float_math(jax.scipy.special.gammaln), "log |gamma(x)|"),
    "reciprocal": (_float_math(lambda x: 1.0 / x), "1 / x"),
    "abs": (_exact(jnp.abs), "absolute value"),
    "sign": (_exact(jnp.sign), "-1, 0 or 1"),
    "negative": (_exact(jnp.negative), "-x"),
    "square": (_exact(jnp.square), "x * x"),
    "relu": (_exact(mx_relu), "max(x, 0); its gradient 0 at 0, as MXNet's (x > 0), NaN at NaN"),
    "floor": (_int_identity(jnp.floor), "round down"),
    "ceil": (_int_identity(jnp.ceil), "round up"),
    "round": (_int_identity(_round_half_away), "round half away from zero"),
    "rint": (_int_identity(jnp.rint), "round half to even"),
    "fix": (_int_identity(jnp.trunc), "round toward zero"),
    "trunc": (_int_identity(jnp.trunc), "round toward zero"),
    "logical_not": (_exact(lambda x: (x == 0).astype(x.dtype)), "1 where x is 0, else 0 (input dtype)"),
}


def _make_unary(name, kernel, doc):
    def impl(data):
        return kernel(data)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"MXNet's ``{name}(data)``: {doc}."
    return op(impl)


globals().update({name: _make_unary(name, k, d) for name, (k, d) in _UNARY.items()})


@op
def identity(data):
    """A copy of ``data`` (MXNet's ``identity`` / ``_copy``)."""
    return jnp.asarray(data)


_copy = identity


@op
def stop_gradient(data):
    """``data`` with its gradient blocked (MXNet's ``BlockGrad`` / ``stop_gradient``)."""
    return lax.stop_gradient(jnp.asarray(data))


BlockGrad = stop_gradient


@op
def make_loss(data):
    """``data`` marked as a loss (the identity in the forward pass)."""
    return jnp.asarray(data)


@op
def MakeLoss(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    return jnp.asarray(data)


@op
def hard_sigmoid(data, alpha=0.2, beta=0.5):
    """``clip(alpha * x + beta, 0, 1)``."""
    return jnp.clip(alpha * data + beta, 0, 1).astype(data.dtype)


@op
def smooth_l1(data, scalar=1.0):
    """``0.5 (scalar x)^2`` where ``|x| < 1 / scalar^2``, else ``|x| - 0.5 / scalar^2``."""
    s2 = scalar * scalar
    return jnp.where(jnp.abs(data) < 1.0 / s2, 0.5 * s2 * data * data, jnp.abs(data) - 0.5 / s2).astype(data.dtype)


@op
def clip(data, a_min, a_max):
    """Clip to ``[a_min, a_max]``; the bounds are cast to ``data``'s dtype first."""
    check(a_min is not None and a_max is not None, "clip", "a_min and a_max are required")
    return clip_kernel(data, scalar_like(a_min, data.dtype, like=data), scalar_like(a_max, data.dtype, like=data))


@op
def where(condition, x, y):
    """``x`` where ``condition`` is non-zero, else ``y``; ``condition`` has ``x``'s shape, or is 1-D
    with ``x.shape[0]`` entries (then it picks whole rows)."""
    x, y, condition = jnp.asarray(x), jnp.asarray(y), jnp.asarray(condition)
    check(x.shape == y.shape, "where", f"x and y must have the same shape, got {x.shape} and {y.shape}")
    check(x.dtype == y.dtype, "where", f"x and y must have the same dtype, got {x.dtype} and {y.dtype}")
    if condition.shape != x.shape:
        check(condition.ndim == 1 and x.ndim >= 1 and condition.shape[0] == x.shape[0], "where",
              f"condition must have the shape of x {x.shape} or be 1-D with {x.shape[0] if x.ndim else 0} "
              f"entries, got {condition.shape}")
        condition = condition.reshape((-1,) + (1,) * (x.ndim - 1))
    return jnp.where(condition != 0, x, y)


@op
def add_n(*args):
    """The sum of all arguments (same shapes and dtypes); MXNet's ``ElementWiseSum``."""
    check(len(args) > 0, "add_n", "needs at least one input")
    out = jnp.asarray(args[0])
    for a in args[1:]:
        _check_pair("add_n", out, a, True)
        out = out + a
    return out


ElementWiseSum = add_n


@op
def cast(data, dtype):
    """``data`` converted to ``dtype`` (C casts: float to int truncates)."""
    return c_cast(jnp.asarray(data), dtype)


Cast = cast


@op
def amp_cast(data, dtype):
    return c_cast(jnp.asarray(data), dtype)


@op
def amp_multicast(*data, num_outputs, cast_narrow=False):
    dts = [np.dtype(d.dtype) for d in data]
    wide = min(dts, key=lambda d: d.itemsize) if cast_narrow else max(dts, key=lambda d: d.itemsize)
    return [d.astype(wide) for d in data]


@op
def zeros_like(data, dtype=None):
    """``dtype`` is accepted and ignored, as MXNet 1.9.1 does (the result has ``data``'s type; GluonCV's
    CenterNet decoder passes ``dtype='int64'``)."""
    return jnp.zeros_like(data)


@op
def ones_like(data, dtype=None):
    """``dtype`` is accepted and ignored, as in MXNet 1.9.1 (see ``zeros_like``)."""
    return jnp.ones_like(data)


@op
def all_finite(data, init_output=True):
    return jnp.all(jnp.isfinite(data)).astype(jnp.float32).reshape((1,))


@op
def multi_all_finite(*data, num_arrays=1, init_output=True):
    """1 (float32, shape (1,)) where every value of the ``num_arrays`` arrays is finite, else 0."""
    check(len(data) == int(num_arrays), "multi_all_finite",
          f"expects {int(num_arrays)} inputs (num_arrays), but got {len(data)}")
    ok = jnp.asarray(True)
    for d in data:
        ok = ok & jnp.all(jnp.isfinite(d))
    return ok.astype(jnp.float32).reshape((1,))


__all__ = sorted(n for n, v in globals().items() if getattr(v, "op_name", None))
