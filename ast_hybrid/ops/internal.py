"""``F._internal``: the few MXNet-internal ops that Gluon's own layers call."""

from __future__ import annotations

from ast_hybrid.ops.shape import concat

__all__ = ["_rnn_param_concat"]


def _rnn_param_concat(*data, dim=1, num_args=None, **kwargs):
    """Concatenate the fused RNN's parameter pieces (MXNet's concat, with RNN-aware shape inference)."""
    return concat(*data, dim=dim, **kwargs)
