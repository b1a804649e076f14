"""The fused ``RNN`` op (``mode`` rnn_relu / rnn_tanh / lstm / gru) and the one-step cell kernel.

``RNN(data, parameters, state, state_cell=None, state_size, num_layers,
bidirectional=False, mode, p=0, state_outputs=False)`` runs ``data`` of shape
(T, N, C).  ``parameters`` is MXNet's flat vector: all weights first (for each
layer, for each direction: ``i2h`` (G*H, in), ``h2h`` (G*H, H)), then all
biases in the same order (``i2h``, ``h2h``).  Gate order: LSTM input, forget,
cell, output; GRU reset, update, new (the new gate uses ``reset * h2h``).
Each layer and direction is one ``lax.scan`` of :func:`cell_step`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ast_hybrid import autograd, rng
from ast_hybrid.ops._core import check, choice, op

__all__ = ["RNN", "cell_step", "GATES"]

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "rnn": 1, "lstm": 4, "gru": 3}


def _dot(x, w):
    return lax.dot_general(x, w, (((x.ndim - 1,), (1,)), ((), ())))


def cell_step(kind, x, states, i2h_w, i2h_b, h2h_w, h2h_b, activation="tanh"):
    """One step on raw arrays: ``(output, new states)``; ``kind`` rnn, lstm or gru."""
    act = {"tanh": jnp.tanh, "relu": jax.nn.relu}[activation]
    i2h = _dot(x, i2h_w) + i2h_b
    h = states[0]
    h2h = _dot(h, h2h_w) + h2h_b
    if kind == "rnn":
        out = act(i2h + h2h)
        return out, [out]
    if kind == "lstm":
        gi, gf, gc, go = jnp.split(i2h + h2h, 4, axis=-1)
        c = jax.nn.sigmoid(gf) * states[1] + jax.nn.sigmoid(gi) * act(gc)
        out = jax.nn.sigmoid(go) * act(c)
        return out, [out, c]
    ir, iz, in_ = jnp.split(i2h, 3, axis=-1)
    hr, hz, hn = jnp.split(h2h, 3, axis=-1)
    r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
    n = act(in_ + r * hn)
    out = (1 - z) * n + z * h
    return out, [out]


def _unpack(params, mode, num_layers, dirs, input_size, hidden):
    g = GATES[mode]
    weights, offset, ni = [], 0, input_size
    for _ in range(num_layers):
        for _ in range(dirs):
            wi = params[offset:offset + g * hidden * ni].reshape(g * hidden, ni)
            offset += g * hidden * ni
            wh = params[offset:offset + g * hidden * hidden].reshape(g * hidden, hidden)
            offset += g * hidden * hidden
            weights.append([wi, wh])
        ni = hidden * dirs
    for k in range(num_layers * dirs):
        weights[k].append(params[offset:offset + g * hidden])
        weights[k].append(params[offset + g * hidden:offset + 2 * g * hidden])
        offset += 2 * g * hidden
    check(offset == params.shape[0], "RNN", f"parameters has {params.shape[0]} values, {offset} expected for "
          f"mode={mode}, num_layers={num_layers}, state_size={hidden}, input size {input_size}")
    return weights


@op(compile_arrays=("data", "parameters", "state", "state_cell", "key"))
def _rnn(data, parameters, state, state_cell=None, state_size=None, num_layers=1, bidirectional=False,
         mode="lstm", p=0.0, state_outputs=False, key=None):
    x = jnp.asarray(data)
    dirs = 2 if bidirectional else 1
    kind = {"rnn_relu": "rnn", "rnn_tanh": "rnn"}.get(mode, mode)
    act = "relu" if mode == "rnn_relu" else "tanh"
    weights = _unpack(jnp.asarray(parameters), mode, num_layers, dirs, x.shape[-1], state_size)
    hs = [jnp.asarray(state)] + ([jnp.asarray(state_cell)] if mode == "lstm" else [])
    finals = [[] for _ in hs]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            wi, wh, bi, bh = weights[k]

            def step(carry, xt, wi=wi, wh=wh, bi=bi, bh=bh):
                out, carry = cell_step(kind, xt, carry, wi, bi, wh, bh, act)
                return carry, out

            carry, ys = lax.scan(step, [h[k] for h in hs], x[::-1] if d else x)
            outs.append(ys[::-1] if d else ys)
            for i, c in enumerate(carry):
                finals[i].append(c)
        x = jnp.concatenate(outs, axis=-1) if dirs == 2 else outs[0]
        if p > 0 and key is not None and layer < num_layers - 1:
            keep = jax.random.bernoulli(jax.random.fold_in(key, layer), 1 - p, x.shape)
            x = jnp.where(keep, x / (1 - p), 0).astype(x.dtype)
    if not state_outputs:
        return x
    return [x] + [jnp.stack(f, 0) for f in finals]


def RNN(data, parameters, state, state_cell=None, sequence_length=None, state_size=None, num_layers=1,
        bidirectional=False, mode="lstm", p=0.0, state_outputs=False, projection_size=None,
        lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=False, use_sequence_length=False,
        **kwargs):
    """MXNet's fused RNN (see the module doc); dropout ``p`` between layers in training mode."""
    choice("RNN", "mode", mode, ("rnn_relu", "rnn_tanh", "lstm", "gru"))
    check(state_size is not None, "RNN", "state_size is required")
    check(projection_size is None, "RNN", "projection_size (LSTMP) is not supported")
    check(not use_sequence_length, "RNN", "use_sequence_length is not supported")
    check(mode != "lstm" or state_cell is not None, "RNN", "mode='lstm' needs state_cell")
    key = rng.next_key() if (p > 0 and autograd.is_training() and num_layers > 1) else None
    return _rnn(data, parameters, state, state_cell, state_size=state_size, num_layers=num_layers,
                bidirectional=bidirectional, mode=mode, p=p, state_outputs=state_outputs, key=key, **kwargs)
