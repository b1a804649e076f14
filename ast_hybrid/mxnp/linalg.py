"""``mx.np.linalg``: numpy's linear algebra, computed by ``jax.numpy.linalg`` (recorded for autograd)."""

from __future__ import annotations

import jax.numpy as jnp

from ast_hybrid.mxnp._base import missing_getattr, np_function

__all__ = ["norm", "inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "eigh", "eigvalsh", "pinv",
           "matrix_rank", "matrix_power", "multi_dot", "tensorinv", "tensorsolve", "lstsq", "eig", "eigvals", "cond"]

_g = globals()
for _name in __all__:
    _g[_name] = np_function(getattr(jnp.linalg, _name), _name)

__getattr__ = missing_getattr("mxnet.numpy.linalg", __name__)
