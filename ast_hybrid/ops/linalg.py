"""Matrix products and ``linalg.*``: dot (MXNet's N-D rule), batch_dot, gemm/gemm2, Cholesky and friends.

``dot(lhs, rhs)`` contracts the LAST axis of ``lhs`` with the FIRST axis of
``rhs`` (result ``lhs.shape[:-1] + rhs.shape[1:]``; numpy's ``dot`` differs
for N-D ``rhs``); ``transpose_a`` contracts ``lhs``'s first axis instead,
``transpose_b`` ``rhs``'s last axis.  ``batch_dot`` multiplies the matrices in the last two axes
of each batch entry.  The ``linalg.*`` ops work on the last two axes.
"""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import lax

from ast_hybrid.ops._core import check, op

__all__ = ["dot", "batch_dot", "gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "sumlogdiag",
           "extractdiag", "makediag", "extracttrian", "maketrian", "inverse", "det", "slogdet", "gelqf", "syevd"]


@op
def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    a, b = jnp.asarray(lhs), jnp.asarray(rhs)
    if transpose_a:     # N-D: the first axis becomes the contracted one
        a = jnp.moveaxis(a, 0, -1)
    if transpose_b:     # N-D: the last axis becomes the contracted one
        b = jnp.moveaxis(b, -1, 0)
    check(a.shape[-1] == b.shape[0], "dot", f"cannot contract {tuple(a.shape)} with {tuple(b.shape)} "
          f"(transpose_a={transpose_a}, transpose_b={transpose_b}): {a.shape[-1]} != {b.shape[0]}")
    out = lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    return out.reshape((1,)) if out.ndim == 0 else out


def _matmul(a, b, ta, tb):
    """Batched ``op(a) @ op(b)`` over the last two axes without materialising transposes."""
    n = a.ndim
    batch = tuple(range(n - 2))
    ca = n - 2 if ta else n - 1
    cb = n - 1 if tb else n - 2
    check(a.shape[ca] == b.shape[cb], "batch_dot", f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)} "
          f"(transpose_a={ta}, transpose_b={tb})")
    return lax.dot_general(a, b, (((ca,), (cb,)), (batch, batch)))   # batch, a's free axis, b's free axis


@op
def batch_dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    a, b = jnp.asarray(lhs), jnp.asarray(rhs)
    check(a.ndim == b.ndim and a.ndim >= 3, "batch_dot",
          f"inputs must have the same number (>= 3) of dimensions, got {tuple(a.shape)} and {tuple(b.shape)}")
    check(a.shape[:-2] == b.shape[:-2], "batch_dot", f"batch dimensions differ: {a.shape[:-2]} and {b.shape[:-2]}")
    return _matmul(a, b, transpose_a, transpose_b)


def _t(x):
    return jnp.swapaxes(x, -1, -2)


@op
def gemm2(A, B, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    """``alpha op(A) op(B)``; the matrices' rows on ``axis``, their columns on the last axis (MXNet's)."""
    a, b = (jnp.moveaxis(jnp.asarray(x), axis, -2) for x in (A, B))
    return jnp.moveaxis(alpha * _matmul(a, b, transpose_a, transpose_b), -2, axis)


@op
def gemm(A, B, C, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2):
    return gemm2.__wrapped__(A, B, transpose_a, transpose_b, alpha, axis) + beta * jnp.asarray(C)


@op
def potrf(A, lower=True):
    """The Cholesky factor: lower ``L`` (``A = L L^T``), or with ``lower=False`` upper ``U`` (``A = U^T U``)."""
    L = jnp.linalg.cholesky(jnp.asarray(A))
    return L if lower else _t(L)


@op
def potri(A, lower=True):
    """``A^-1`` from its Cholesky factor: ``(L L^T)^-1`` (``lower``), or ``(U^T U)^-1``."""
    L = jnp.asarray(A) if lower else _t(jnp.asarray(A))
    eye = jnp.broadcast_to(jnp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    linv = jsl.solve_triangular(L, eye, lower=True)
    return _t(linv) @ linv


@op
def trmm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0):
    a = jnp.tril(jnp.asarray(A)) if lower else jnp.triu(jnp.asarray(A))
    a = _t(a) if transpose else a
    b = jnp.asarray(B)
    return alpha * (b @ a if rightside else a @ b)


@op
def trsm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0):
    """Solve ``op(A) X = alpha B`` (``X op(A) = alpha B`` with ``rightside``) for triangular ``A``."""
    a, b = jnp.asarray(A), jnp.asarray(B)
    if rightside:   # X op(A) = B  <=>  op(A)^T X^T = B^T
        return _t(jsl.solve_triangular(a, _t(alpha * b), lower=lower, trans=0 if transpose else 1))
    return jsl.solve_triangular(a, alpha * b, lower=lower, trans=1 if transpose else 0)


@op
def syrk(A, transpose=False, alpha=1.0):
    a = jnp.asarray(A)
    return alpha * (_t(a) @ a if transpose else a @ _t(a))


@op
def sumlogdiag(A):
    return jnp.sum(jnp.log(jnp.diagonal(jnp.asarray(A), axis1=-2, axis2=-1)), axis=-1)


@op
def extractdiag(A, offset=0):
    return jnp.diagonal(jnp.asarray(A), offset=offset, axis1=-2, axis2=-1)


@op
def makediag(A, offset=0):
    a = jnp.asarray(A)
    n = a.shape[-1] + abs(offset)
    idx = jnp.arange(a.shape[-1])
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out = jnp.zeros(a.shape[:-1] + (n, n), a.dtype)
    return out.at[..., rows, cols].set(a)


def _triangle(n, offset, lower):
    """MXNet's triangle: ``offset > 0`` the upper one from the k-th diagonal up, ``offset < 0`` the lower one
    from the k-th diagonal down, 0 the lower or upper one by ``lower``; a lower one row by row, an upper one
    column by column (the lower one of the transpose, as MXNet's kernel walks it)."""
    if offset > 0 or (offset == 0 and not lower):
        rows, cols = jnp.tril_indices(n, -offset)
        return cols, rows
    return jnp.tril_indices(n, offset)


@op
def extracttrian(A, offset=0, lower=True):
    a = jnp.asarray(A)
    rows, cols = _triangle(a.shape[-1], offset, lower)
    return a[..., rows, cols]


@op
def maketrian(A, offset=0, lower=True):
    a = jnp.asarray(A)
    m = a.shape[-1]
    n = int(round(((8 * m + 1) ** 0.5 - 1) / 2)) + abs(offset)
    rows, cols = _triangle(n, offset, lower)
    return jnp.zeros(a.shape[:-1] + (n, n), a.dtype).at[..., rows, cols].set(a)


@op
def inverse(A):
    return jnp.linalg.inv(jnp.asarray(A))


@op
def det(A):
    return jnp.linalg.det(jnp.asarray(A))


@op
def slogdet(A):
    sign, logdet = jnp.linalg.slogdet(jnp.asarray(A))
    return [sign, logdet]


@op
def syevd(A):
    """Symmetric eigendecomposition ``[U, L]``: ``U``'s rows the eigenvectors, ``L`` ascending, each row's sign
    such that its largest-magnitude entry (the first of a tie) is positive, as MXNet's kernel makes it."""
    w, v = jnp.linalg.eigh(jnp.asarray(A))
    u = _t(v)
    top = jnp.take_along_axis(u, jnp.argmax(jnp.abs(u), axis=-1)[..., None], axis=-1)
    return [jnp.where(top < 0, -u, u), w]


@op
def gelqf(A):
    """LQ factorisation ``A = L Q`` of a wide matrix: ``[Q, L]``."""
    a = jnp.asarray(A)
    q, r = jnp.linalg.qr(_t(a))
    return [_t(q), _t(r)]
