"""``mx.np.linalg``: numpy's linear algebra, computed by ``jax.numpy.linalg`` (recorded for autograd)."""

from __future__ import annotations

import jax.numpy as jnp

from ast_hybrid.mxnp._base import missing_getattr, np_function

__all__ = ["norm", "inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "eigh", "eigvalsh", "pinv",
           "matrix_rank", "matrix_power", "multi_dot", "tensorinv", "tensorsolve", "lstsq", "eig", "eigvals", "cond"]

_g = globals()
for _name in __all__:
    _g[_name] = np_function(getattr(jnp.linalg, _name), _name)

# where MXNet's differ from jax.numpy's: svd is the reduced one, ``(UT, L, V)`` with ``A = UT * L @ V`` (its
# gradient defined); eigh/eigvalsh read one triangle as numpy's (jax.numpy's symmetrize the input first)
svd = np_function(lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), "svd")


def _norm(x, ord=None, axis=None, keepdims=False):
    """numpy's norm; MXNet also takes ``ord='inf'``/``'-inf'`` as strings."""
    if isinstance(ord, str) and ord in ("inf", "-inf"):
        ord = float(ord)
    return jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


norm = np_function(_norm, "norm")
eigh = np_function(lambda a, UPLO="L": tuple(jnp.linalg.eigh(a, UPLO=UPLO, symmetrize_input=False)), "eigh")
eigvalsh = np_function(lambda a, UPLO="L": jnp.linalg.eigh(a, UPLO=UPLO, symmetrize_input=False)[0], "eigvalsh")

__getattr__ = missing_getattr("mxnet.numpy.linalg", __name__)
