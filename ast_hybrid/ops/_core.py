"""What every op shares: unwrap inputs, wrap outputs, record for autograd, check arguments.

An op is written on raw jax arrays and decorated with :func:`op`::

    @op
    def relu(data):
        return jnp.maximum(data, 0)

The decorated function takes NDArrays, jax arrays, numpy arrays or Python
scalars (top-level arguments and keyword values, and the items of a list or
tuple argument), drops MXNet's ``name=``/``attr=`` keywords, honours ``out=``
(the result is written into that NDArray), and returns NDArrays: one, or a
list for several outputs, as MXNet does.  The same function runs eagerly and
inside a hybridized trace (on NDArrays wrapping tracers).  While
``autograd.record()`` is on and an input is tracked, the call is recorded for
``backward()`` as a pure function of its tracked inputs.

Importing the operators makes MXNet's ``cpu(0)`` the default device where JAX's default backend is a GPU
(``core.context.cpu_by_default``): arrays made without a context live on the CPU, as MXNet's do.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ast_hybrid.core.errors import MXNetError
from ast_hybrid.core.context import cpu_by_default
from ast_hybrid.core.ndarray import ARRAYS, NDArray
from ast_hybrid.core.sparse import SPARSE, STYPE_RULES, to_stype, unary_rule

cpu_by_default()

__all__ = ["op", "raw", "wrap", "OpError", "check", "choice", "dtype_of", "is_int", "norm_axis", "norm_axes",
           "as_tuple", "scalar_like", "c_cast", "rounded", "divided"]

_SEQ = (list, tuple)


class OpError(MXNetError, ValueError):
    """An op was given an argument it cannot take (the message names the op and the argument)."""


def raw(x):
    """The array inside ``x`` (an NDArray), else ``x`` itself."""
    return x._arr if x.__class__ in ARRAYS else x


def wrap(value):
    """NDArray(s) around an op's result: arrays are wrapped, lists/tuples become lists."""
    if value.__class__ in _SEQ or isinstance(value, tuple):     # (jax.numpy's named tuples: svd, eigh...)
        return [wrap(v) for v in value]
    if value is None or value.__class__ in ARRAYS or isinstance(value, (bool, int, float, str)):
        return value
    return NDArray(value)


def _unwrap_arg(a):
    cls = a.__class__
    if cls in ARRAYS:
        return a._arr
    if cls in _SEQ and any(v.__class__ in ARRAYS for v in a):
        return cls(v._arr if v.__class__ in ARRAYS else v for v in a)
    return a


def _tracked(args, kwargs, live):
    """Whether an argument is in a computational graph now (``autograd.live``)."""
    for a in args:
        if a.__class__ in ARRAYS and live(a):
            return True
        if a.__class__ in _SEQ and any(v.__class__ in ARRAYS and live(v) for v in a):
            return True
    return any(v.__class__ in ARRAYS and live(v) for v in kwargs.values())


def _eager_compiler_options():
    """XLA's options for an op's own program run eagerly (op by op; inside a hybridized program the op is
    inlined and the program's options hold): ``core.tiers.loop_options``, on CPU XLA's older loop emitter
    instead of its fusion emitters, which compile a one-op program in about two thirds of the time
    (densenet121's first call op by op: its 65 BatchNorm programs 3.65 -> 2.2-2.5 s, 66 convolutions 1.31 ->
    0.9-1.0 s) and run it as fast (one fusion per program: BatchNorm at 8x128x28x28 492 -> 502 us)."""
    import jax

    from ast_hybrid.core.tiers import loop_options

    return loop_options(jax.default_backend())


def _compiled(impl, arrays):
    """``impl`` compiled as one program, the parameters named in ``arrays`` traced and the rest static: an op
    made of many small steps (a loop, masks) then costs one compilation per signature, not one per step.
    Called eagerly it is its own program, compiled with :func:`_eager_compiler_options`; inside a trace it
    is inlined into the traced program (JAX takes compiler options on a top-level program only)."""
    import inspect

    import jax

    sig = inspect.signature(impl)
    static = tuple(n for n in sig.parameters if n not in arrays)
    nested = jax.jit(impl, static_argnames=static)
    top = []        # the eager program's jit, made at the first eager call (the backend is known by then)
    tracer = jax.core.Tracer
    fast = _Binder(sig, arrays)
    programs = {}   # the options' values -> the eager program over the arrays alone, called positionally

    def run(*args, **kwargs):
        got = fast.bind(args, kwargs)
        if got is not None:     # plain positional/keyword parameters, hashable options
            key, values = got
            if not any(isinstance(v, tracer) for v in jax.tree_util.tree_leaves(values)):
                program = programs.get(key)
                if program is None:
                    if len(programs) >= EAGER_PROGRAMS:     # options met once each (a float per call): bounded
                        programs.clear()
                    options = dict(zip(fast.static, key))
                    program = programs[key] = jax.jit(
                        functools.partial(_with_options, impl, fast.arrays, options),
                        compiler_options=_eager_compiler_options())
                return program(*values)
        bound = sig.bind(*args, **kwargs).arguments
        for n in static:
            if isinstance(bound.get(n), list):
                bound[n] = tuple(bound[n])
        try:
            hash(tuple(bound.get(n) for n in static))
        except TypeError:       # an option given as an array: run the steps one by one
            return impl(**bound)
        if any(isinstance(v, tracer) for v in jax.tree_util.tree_leaves([bound.get(n) for n in arrays])):
            return nested(**bound)
        if not top:
            top.append(jax.jit(impl, static_argnames=static, compiler_options=_eager_compiler_options()))
        return top[0](**bound)      # (inside a trace on constants only too: tests/ops/test_eager_programs.py)

    run.programs = programs
    return run


# the eager programs an op keeps, one per combination of its options' values, before it drops them all
EAGER_PROGRAMS = 256


def _with_options(impl, names, options, *values):
    return impl(**options, **dict(zip(names, values)))


class _Binder:
    """A fast ``inspect.Signature.bind`` for an op whose parameters are all plain (positional or keyword,
    no ``*args``/``**kwargs``): ``bind(args, kwargs)`` gives (the options' values, hashable, in the order of
    the signature; the arrays' values, in the order of ``arrays``), or None where the call is anything else
    (a missing or unknown argument, an unhashable option): the caller then binds it the slow way, which
    also raises Python's own error for a bad call."""

    def __init__(self, sig, arrays):
        params = list(sig.parameters.values())
        plain = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        self.names = [p.name for p in params] if plain else None
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        self.arrays = tuple(n for n in (self.names or ()) if n in arrays)
        self.static = tuple(n for n in (self.names or ()) if n not in arrays)
        self.known = frozenset(self.names or ())

    def bind(self, args, kwargs):
        names = self.names
        if names is None or len(args) > len(names):
            return None
        values = dict(self.defaults)
        values.update(zip(names, args))
        if kwargs:
            if not self.known.issuperset(kwargs) or any(n in kwargs for n in names[:len(args)]):
                return None
            values.update(kwargs)
        if len(values) != len(names):
            return None         # a required argument missing
        key = tuple(tuple(v) if isinstance(v, list) else v for v in (values[n] for n in self.static))
        try:
            hash(key)
        except TypeError:
            return None
        return key, [values[n] for n in self.arrays]


class CallHooks(threading.local):
    """What every op consults on each call, set by the front around a region of calls in one thread (one
    instance, HOOKS, whose attributes are per thread).

    ``resolve_deferred``: set while a block's first call infers the shapes of parameters declared with
    unknown dimensions (:func:`ast_hybrid.ops.deferred.inferring`): a function (op name, impl, args,
    kwargs) -> (args, kwargs) that replaces those parameters' stand-ins by their values; None otherwise.
    """

    def __init__(self):
        self.resolve_deferred = None


HOOKS = CallHooks()


def op(impl=None, *, name=None, compile_arrays=None):
    """Make ``impl`` (raw arrays in, array or list of arrays out) an MXNet op (see the module doc).

    ``compile_arrays``: the names of the array parameters of an op that should run as one compiled program
    even when called eagerly (the other parameters must then be hashable options)."""
    if impl is None:
        return functools.partial(op, name=name, compile_arrays=compile_arrays)
    from ast_hybrid.core import autograd

    state = autograd.STATE
    live = autograd.live
    hooks = HOOKS
    run = _compiled(impl, compile_arrays) if compile_arrays else impl

    @functools.wraps(impl)
    def call(*args, **kwargs):
        if hooks.resolve_deferred is not None:   # a block's first call is filling in unknown parameter shapes
            args, kwargs = hooks.resolve_deferred(call.op_name, impl, args, kwargs)
        out = kwargs.pop("out", None) if "out" in kwargs else None
        kwargs.pop("name", None)
        kwargs.pop("attr", None)
        if state.recording and _tracked(args, kwargs, live):
            # the compiled form: the forward and backward()'s replay under jax.vjp reuse one program per
            # signature (the raw impl made resnet18's first recorded step 4x slower)
            result = autograd.record_op(run, args, kwargs)
        else:
            result = wrap(run(*[_unwrap_arg(a) for a in args],
                              **{k: _unwrap_arg(v) for k, v in kwargs.items()}))
        if out is not None:
            return _write_out(out, result)
        return result

    call.__wrapped__ = impl
    call.eager = run if compile_arrays else None     # (its eager programs: run.programs)
    call.op_name = name or impl.__name__
    rule = STYPE_RULES.get(call.op_name)
    return call if rule is None else _with_stype(call, rule)


def _with_stype(call, rule):
    """``call`` giving the storage type MXNet's gives when an input is sparse (``core.sparse.STYPE_RULES``)."""

    @functools.wraps(call)
    def sparse_aware(*args, **kwargs):
        result = call(*args, **kwargs)
        if result.__class__ in ARRAYS and any(a.__class__ in SPARSE for a in args[:2]):
            stype = rule(args, kwargs)
            if stype != result.stype:
                out = to_stype(result if result.__class__ is NDArray else NDArray(result._arr), stype)
                out._ag = result._ag
                if rule is unary_rule and args[0].stype == stype:
                    out._aux = args[0]._structure()        # zero to zero: the same entries stored
                return out
        return result

    sparse_aware.op_name = call.op_name
    return sparse_aware


def _write_out(out, result):
    from ast_hybrid.ops.array_methods import write_through     # (a view's value reaches its array)

    if isinstance(result, list):
        for o, r in zip(out, result):
            o._arr, o._ag = r._arr, r._ag
            write_through(o)
        return out
    if out.shape != result.shape:
        raise OpError(f"out= has shape {out.shape}, the result has shape {result.shape}")
    out._arr, out._ag = result._arr.astype(out._arr.dtype), result._ag
    write_through(out)
    return out


# --- argument checks ---------------------------------------------------------------

def check(cond, opname, message):
    if not cond:
        raise OpError(f"{opname}: {message}")


def choice(opname, arg, value, allowed):
    """``value`` if it is one of ``allowed``, else an error naming the op, the argument and the options."""
    if value not in allowed:
        raise OpError(f"{opname}: unknown {arg}={value!r}; expected one of {', '.join(map(repr, allowed))}")
    return value


def dtype_of(x):
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def is_int(dtype) -> bool:
    dt = np.dtype(dtype)
    return dt.kind in "iub"


def as_tuple(v):
    """MXNet's tuple-or-int arguments: None/() -> (), int -> (int,), sequence -> tuple of ints."""
    if v is None:
        return ()
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(int(i) for i in np.asarray(v).reshape(-1)) if isinstance(v, np.ndarray) else \
            tuple(int(i) for i in v)
    return (int(v),)


def norm_axis(axis, ndim, opname, arg="axis"):
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise OpError(f"{opname}: {arg}={axis} is out of range for an input with {ndim} dimensions")
    return axis % ndim if ndim else 0


def norm_axes(axis, ndim, opname, exclude=False):
    """The sorted axes a reduction runs over (MXNet: None or () = all; ``exclude`` inverts the list)."""
    axes = as_tuple(axis)
    if not axes:
        axes = tuple(range(ndim))
    axes = tuple(sorted({norm_axis(a, ndim, opname) for a in axes}))
    if exclude:
        axes = tuple(a for a in range(ndim) if a not in axes)
    return axes


def c_cast(x, dtype):
    """``x.astype(dtype)`` with C's float-to-integer conversion as MXNet's kernels do it on x86: truncate toward
    zero, out-of-range and NaN give INT_MIN, and narrow integer types take the low bits of that int32."""
    import jax.numpy as jnp

    dt = np.dtype(dtype)
    if dt.kind not in "iu" or np.dtype(x.dtype).kind != "f":
        return x.astype(dt)
    from jax import dtypes

    # int64 is int32 while jax's x64 flag is off: its bounds then are int32's
    wide = np.dtype(dtypes.canonicalize_dtype(np.int64 if dt.itemsize == 8 else np.int32))
    info = np.iinfo(wide)
    ok = (x >= float(info.min)) & (x < -float(info.min)) & ~jnp.isnan(x)
    as_int = jnp.where(ok, jnp.trunc(jnp.where(ok, x, 0)), 0).astype(wide)
    return jnp.where(ok, as_int, jnp.asarray(info.min, wide)).astype(dt)


def from_host(x):
    """``jnp.asarray(x)`` without a compile: a NumPy array is put on the default device as it is (JAX 0.10's
    ``jnp.asarray`` of one compiles a program, ``stage``, for each new shape and dtype: an image pipeline
    compiled one per image size); anything else (a jax array, a tracer) goes through ``jnp.asarray``."""
    import jax
    import jax.numpy as jnp

    if isinstance(x, np.ndarray):     # (device_put narrows float64/int64 without x64, as jnp.asarray does)
        return jax.device_put(x)
    return jnp.asarray(x)


def scalar_like(value, dtype, like=None):
    """A Python scalar cast to ``dtype`` the way MXNet's scalar ops do (C cast: 2.5 -> 2 for ints).  Given
    ``like``, the array it is combined with, and that array concrete (op by op, not inside a trace), the
    array is kept per value and dtype (JAX's arrays do not change): made anew at each call, its device
    transfer was 9% of an op-by-op training step of mobilenetv2 (ReLU6's clip bounds)."""
    import jax

    if like is not None and not isinstance(like, jax.core.Tracer):
        try:
            return _scalar_array(type(value), value, np.dtype(dtype), jax.config.jax_enable_x64)
        except TypeError:       # not hashable (a 0-d array given as the scalar)
            pass
    return _scalar_array.__wrapped__(type(value), value, dtype, None)


@functools.lru_cache(maxsize=1024)
def _scalar_array(kind, value, dtype, x64):
    import jax.numpy as jnp

    return jnp.asarray(np.asarray(value, dtype=np.float64 if kind is not bool else np.bool_).astype(dtype),
                       dtype=dtype)


def rounded(value):
    """``value`` as computed, rounded to its type, before whatever uses it: XLA would otherwise fuse it into
    its consumer with another rounding.  XLA:CPU's code generator contracts ``p * q + r`` into one fused
    multiply-add, and its algebraic simplifier rewrites ``a / b / c`` into ``a / (b * c)``; an optimization
    barrier does not reach the first.  A select on ``value == value`` (false only for NaN, kept as NaN) sits
    between the two operations, so each rounds as MXNet's C++ rounds it (ops that must equal MXNet's to the
    last bit, because an int8 graph quantizes their output, use it)."""
    import jax.numpy as jnp

    return jnp.where(value == value, value, jnp.nan)


def divided(a, b):
    """``a / b`` correctly rounded everywhere.  XLA:CPU divides by a value that is the same across a loop (a
    constant, or one scalar broadcast) by multiplying with its reciprocal, which is off by an ulp for a third
    of the values (``x / 30``: 37% equal), and an optimization barrier does not always stop it.  Here the
    division is in double, rounded once to the operands' type: a float32 quotient so obtained is the correctly
    rounded one (the double's own error, reciprocal or not, is 2**-29 of a float32 ulp).  For ops whose output
    MXNet's graphs quantize next."""
    import jax
    import jax.numpy as jnp

    a = jnp.asarray(a)
    with jax.enable_x64(True):
        return (a.astype(jnp.float64) / jnp.asarray(b).astype(jnp.float64)).astype(a.dtype)
