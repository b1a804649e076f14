"""``mx.np``: MXNet 1.9.1's numpy interface on JAX (``from mxnet import np, npx; npx.set_np()``).

- ``functions``: numpy's functions on ``mx.np`` arrays, computed by jax.numpy, with MXNet's float32 defaults;
- ``arrays``: what computes with an ``mx.np`` array (operators, indexing, methods, printing), installed on
  ``ast_hybrid.core.ndarray.ndarray``;
- ``random``, ``linalg``: ``mx.np.random`` and ``mx.np.linalg``;
- ``extension``: ``mx.npx`` (the switches, contexts, and the neural-network operators); ``npx_random``:
  ``mx.npx.random``.

Every function records for autograd and runs inside a hybridized program as eagerly.  A name MXNet 1.9.1's
``mx.np`` has and this package does not is an error naming it.

May import: ``ast_hybrid.core``, the ops (``ast_hybrid.ops``), ``ast_hybrid.io`` (``npx.save``/``load``),
numpy and jax.
"""

from __future__ import annotations

import numpy as _onp

from ast_hybrid.core.ndarray import ndarray
from ast_hybrid.mxnp import arrays as _arrays
from ast_hybrid.mxnp import extension, linalg, random  # noqa: F401
from ast_hybrid.mxnp._base import missing_getattr
from ast_hybrid.mxnp.functions import *  # noqa: F401,F403
from ast_hybrid.mxnp.functions import __all__ as _functions

_arrays.install()

# numpy's constants and dtypes, as mx.np gives them
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None
NAN = NaN = _onp.nan
PINF, NINF, PZERO, NZERO = _onp.inf, -_onp.inf, 0.0, -0.0
bool_, int8, uint8, int32, int64, float16, float32, float64 = (_onp.bool_, _onp.int8, _onp.uint8, _onp.int32,
                                                                _onp.int64, _onp.float16, _onp.float32, _onp.float64)
bool = _onp.bool_   # noqa: A001 (MXNet's np.bool)
finfo, iinfo, dtype, promote_types, result_type = _onp.finfo, _onp.iinfo, _onp.dtype, _onp.promote_types, \
    _onp.result_type

__all__ = list(_functions) + ["ndarray", "random", "linalg", "pi", "e", "inf", "nan", "newaxis"]

__getattr__ = missing_getattr("mxnet.numpy", __name__)
