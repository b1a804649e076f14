"""``F.sparse``: sparse storage is not supported; these ops take dense arrays and give MXNet's dense results."""

from __future__ import annotations

from ast_hybrid.ops.elemwise import add_n, cast, clip, elemwise_add, elemwise_mul, elemwise_sub, zeros_like
from ast_hybrid.ops.linalg import dot
from ast_hybrid.ops.reduce import mean, sum

__all__ = ["dot", "elemwise_add", "elemwise_sub", "elemwise_mul", "add_n", "zeros_like", "sum", "mean", "clip",
           "cast", "retain"]


def retain(data, indices):
    raise NotImplementedError("sparse.retain needs row_sparse storage, which ast-hybrid does not have")
