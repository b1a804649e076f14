"""Which op namespace ``F`` is, plus a minimal stand-in while ``ast_hybrid.ops`` is absent.

Blocks receive ``F = namespace()``.  When the ops package exists it is used;
otherwise the few ops the basic layers need are defined here on jax arrays
with MXNet's semantics (``FullyConnected`` contracts dimension 1 of both
operands with ``lax.dot_general``, as PERF_NOTES asks).
"""

from __future__ import annotations

import types

__all__ = ["namespace", "raw"]


def raw(x):
    """The jax array inside ``x`` (an NDArray wrapper or a jax array)."""
    import jax
    import numpy as np

    if isinstance(x, (jax.Array, np.ndarray, np.generic)):
        return x
    return getattr(x, "data", x)


def _fully_connected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    from jax import lax

    x = raw(data)
    if flatten and x.ndim != 2:
        x = x.reshape(x.shape[0], -1)
    out = lax.dot_general(x, raw(weight), (((x.ndim - 1,), (1,)), ((), ())))
    if not no_bias and bias is not None:
        out = out + raw(bias)
    return out


def _activation(data, act_type="relu"):
    import jax
    import jax.numpy as jnp

    x = raw(data)
    fns = {"relu": jax.nn.relu, "sigmoid": jax.nn.sigmoid, "tanh": jnp.tanh,
           "softrelu": jax.nn.softplus, "softsign": jax.nn.soft_sign}
    if act_type not in fns:
        raise ValueError(f"Activation: unknown act_type {act_type!r} (one of {', '.join(fns)})")
    return fns[act_type](x)


def _dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False):
    import jax

    x = raw(data)
    if p <= 0 or (mode != "always" and not is_training()):
        return x
    from ast_hybrid.gluon.block import _TRACE_STACK
    from ast_hybrid.init import _key

    shape = list(x.shape)
    for a in axes:
        shape[a] = 1
    keep = jax.random.bernoulli(_TRACE_STACK[-1].next_key() if _TRACE_STACK else _key(), 1.0 - p, tuple(shape))
    return x * keep.astype(x.dtype) / (1.0 - p)


def _flatten(data):
    x = raw(data)
    return x.reshape(x.shape[0], -1)


_FALLBACK = types.SimpleNamespace(
    FullyConnected=_fully_connected, Activation=_activation, Dropout=_dropout, Flatten=_flatten,
    flatten=_flatten, relu=lambda x: _activation(x, "relu"), sigmoid=lambda x: _activation(x, "sigmoid"),
    tanh=lambda x: _activation(x, "tanh"),
)


MODE_STACK: list = []   # train/predict overrides while ast_hybrid.autograd is absent


def _fallback_is_training() -> bool:
    return MODE_STACK[-1] if MODE_STACK else False


_PROBE = []   # the is_training function, resolved at the first call (a failed import per call costs µs)


def is_training() -> bool:
    """``ast_hybrid.autograd.is_training()``, or the local mode stack while that module is absent."""
    if not _PROBE:
        try:
            from ast_hybrid.autograd import is_training as probe
        except ImportError:
            probe = _fallback_is_training
        _PROBE.append(probe)
    return bool(_PROBE[0]())


def namespace():
    try:
        from ast_hybrid import ops
    except ImportError:
        return _FALLBACK
    return ops
