"""How an ``mx.np`` function is made from a jax.numpy one: the ``ops`` machinery (inputs unwrapped, autograd
recorded, ``out=`` honoured) with ``mx.np`` arrays out, and MXNet's default dtype (float32) where numpy's
would be float64."""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as onp

from ast_hybrid.core.errors import NotAvailable, api_message, as_mxnet_error
from ast_hybrid.core.ndarray import ARRAYS, as_np
from ast_hybrid.ops._core import op

__all__ = ["np_function", "np_op", "raw_of", "default_float", "missing_getattr"]


def raw_of(x):
    """The jax array behind an array argument; lists, ranges and numpy arrays as jax arrays; scalars as given."""
    if x.__class__ in ARRAYS:
        return x._arr
    if isinstance(x, (list, range)):
        return jnp.asarray(onp.asarray([raw_of(v) for v in x]))
    return x


def default_float(dtype):
    """MXNet 1.9's np default: a missing dtype is float32 (numpy's is float64)."""
    return onp.float32 if dtype is None else dtype


_NUMBERS = (onp.floating, onp.integer, onp.bool_)


def np_function(jfn, name=None, *, compile_arrays=None, int_no_grad=False):
    """``jfn`` (raw jax arrays in) as an ``mx.np`` function: recorded for autograd, ``mx.np`` arrays out.
    ``int_no_grad``: given integer arrays only, no gradient flows (MXNet's integer mod/remainder), where
    autograd would otherwise differentiate integer inputs on their float values (``core/autograd.py``)."""
    name = name or jfn.__name__

    def impl(*args, **kwargs):
        return jfn(*args, **kwargs)

    impl.__name__ = name
    called = op(impl, name="_np_" + name, compile_arrays=compile_arrays)
    if int_no_grad:
        import jax

        def impl_constant(*args, **kwargs):
            return jax.lax.stop_gradient(jfn(*args, **kwargs))

        impl_constant.__name__ = name
        constant = op(impl_constant, name="_np_" + name)
        plain = called

        def called(*args, **kwargs):
            arrays = [a for a in args if hasattr(a, "_arr")]
            ints = arrays and all(onp.dtype(a._arr.dtype).kind in "iub" for a in arrays)
            return (constant if ints else plain)(*args, **kwargs)

    @functools.wraps(jfn)
    def function(*args, **kwargs):
        kwargs.pop("ctx", None)
        kwargs.pop("device", None)
        # a numpy scalar is a number to MXNet (its numeric_types): it does not widen the array's dtype, where
        # jax, in x64 mode, would make float32 * numpy.float64 a float64 result
        args = [a.item() if isinstance(a, _NUMBERS) else a for a in args]
        kwargs = {k: v.item() if isinstance(v, _NUMBERS) else v for k, v in kwargs.items()}
        try:
            return as_np(called(*args, **kwargs))
        except (TypeError, ValueError) as exc:      # JAX's shape/dtype errors: MXNet's MXNetError (both classes)
            err = as_mxnet_error(exc)
            if err is None:
                raise
            raise err from None

    function.__name__ = function.__qualname__ = name
    function.__module__ = "mxnet.numpy"
    return function


def np_op(legacy, name):
    """An MXNet operator (``ast_hybrid.ops``) as ``npx`` serves it: the same computation, ``mx.np`` arrays out."""
    @functools.wraps(legacy)
    def function(*args, **kwargs):
        return as_np(legacy(*args, **kwargs))

    function.__name__ = function.__qualname__ = name
    function.__module__ = "mxnet.numpy_extension"
    return function


def missing_getattr(module_path: str, module_name: str):
    """A module ``__getattr__``: a name MXNet 1.9.1 has there and we do not is an error naming it."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise NotAvailable(api_message(f"{module_path}.{name}", None))

    return __getattr__
