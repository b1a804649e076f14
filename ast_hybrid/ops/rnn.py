"""The fused ``RNN`` op (``mode`` rnn_relu / rnn_tanh / lstm / gru) and the one-step cell kernel.

``RNN(data, parameters, state, state_cell=None, sequence_length=None, state_size, num_layers,
bidirectional=False, mode, p=0, state_outputs=False, projection_size=None, lstm_state_clip_min/max/nan,
use_sequence_length=False)`` runs ``data`` of shape (T, N, C).  ``parameters`` is MXNet's flat vector:
all weights first (for each layer, for each direction: ``i2h`` (G*H, in), ``h2h`` (G*H, H or P), with a
projection also ``h2r`` (P, H)), then all biases in the same order (``i2h``, ``h2h``).  Gate order: LSTM
input, forget, cell, output; GRU reset, update, new (the new gate uses ``reset * h2h``).  Each layer and
direction is one ``lax.scan`` of :func:`cell_step`.

Three options follow MXNet's GPU (cuDNN) build, where a model using them was trained: MXNet 1.9.1's CPU
build silently ignores ``sequence_length`` and the state clipping and refuses ``projection_size``.

- ``use_sequence_length``: ``sequence_length`` (N,) valid steps per sequence; a sequence's states stop at
  its last valid step, its outputs past it are 0, and the reverse direction starts at that step.
- ``projection_size`` (LSTM): ``r = h2r @ h`` is the output and the recurrent state (LSTMP).
- ``lstm_state_clip_min``/``max``: the cell state is clipped to the range after each step
  (``lstm_state_clip_nan``: NaN becomes the bound instead of staying NaN).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.core import autograd
from ast_hybrid.ops import rng
from ast_hybrid.ops._core import check, choice, op
from ast_hybrid.ops.elemwise import mx_relu

__all__ = ["RNN", "cell_step", "GATES", "GATE_NAMES", "param_layout"]

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "rnn": 1, "lstm": 4, "gru": 3}
# MXNet's names of the gates, in the order of their rows in a weight (legacy ``mx.rnn`` cells' parameter names)
GATE_NAMES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"), "gru": ("_r", "_z", "_o")}


def param_layout(mode, num_layers, bidirectional, input_size, hidden):
    """MXNet's flat ``parameters`` vector gate by gate: ``(name, offset, shape)`` in its order, ``name`` as
    MXNet's legacy cells call the piece (``l0_i2h_f_weight``: layer 0, left direction, the forget gate's rows
    of ``i2h``; ``r1_h2h_bias``).  The vector's length is the last offset plus its size."""
    directions = ("l", "r") if bidirectional else ("l",)
    gates, offset = GATE_NAMES[mode], 0
    for kind in ("weight", "bias"):
        for layer in range(num_layers):
            ni = input_size if layer == 0 else hidden * len(directions)
            for d in directions:
                for group, cols in (("i2h", ni), ("h2h", hidden)):
                    for gate in gates:
                        shape = (hidden, cols) if kind == "weight" else (hidden,)
                        yield f"{d}{layer}_{group}{gate}_{kind}", offset, shape
                        offset += int(np.prod(shape))


def _dot(x, w):
    return lax.dot_general(x, w, (((x.ndim - 1,), (1,)), ((), ())))


def cell_step(kind, x, states, i2h_w, i2h_b, h2h_w, h2h_b, activation="tanh", h2r_w=None, clip=None):
    """One step on raw arrays: ``(output, new states)``; ``kind`` rnn, lstm or gru.  LSTM only:
    ``h2r_w`` projects the output (LSTMP), ``clip`` = (min, max, nan) clips the cell state."""
    act = {"tanh": jnp.tanh, "relu": mx_relu}[activation]
    i2h = _dot(x, i2h_w) + i2h_b
    h = states[0]
    h2h = _dot(h, h2h_w) + h2h_b
    if kind == "rnn":
        out = act(i2h + h2h)
        return out, [out]
    if kind == "lstm":
        gi, gf, gc, go = jnp.split(i2h + h2h, 4, axis=-1)
        c = jax.nn.sigmoid(gf) * states[1] + jax.nn.sigmoid(gi) * act(gc)
        if clip is not None:
            lo, hi, nan = clip
            clipped = jnp.clip(c, lo, hi)
            c = jnp.where(jnp.isnan(c), lo, clipped) if nan else jnp.where(jnp.isnan(c), c, clipped)
        out = jax.nn.sigmoid(go) * act(c)
        if h2r_w is not None:
            out = _dot(out, h2r_w)
        return out, [out, c]
    ir, iz, in_ = jnp.split(i2h, 3, axis=-1)
    hr, hz, hn = jnp.split(h2h, 3, axis=-1)
    r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
    n = act(in_ + r * hn)
    out = (1 - z) * n + z * h
    return out, [out]


def _unpack(params, mode, num_layers, dirs, input_size, hidden, projection=None):
    """``[i2h_w, h2h_w, h2r_w or None, i2h_b, h2h_b]`` per layer and direction, from MXNet's flat vector."""
    g = GATES[mode]
    out_size = projection or hidden
    weights, offset, ni = [], 0, input_size

    def take(*shape):
        nonlocal offset
        n = int(np.prod(shape))
        w = params[offset:offset + n].reshape(shape)
        offset += n
        return w

    for _ in range(num_layers):
        for _ in range(dirs):
            weights.append([take(g * hidden, ni), take(g * hidden, out_size),
                            take(projection, hidden) if projection else None])
        ni = out_size * dirs
    for k in range(num_layers * dirs):
        weights[k] += [take(g * hidden), take(g * hidden)]
    check(offset == params.shape[0], "RNN", f"parameters has {params.shape[0]} values, {offset} expected for "
          f"mode={mode}, num_layers={num_layers}, state_size={hidden}, input size {input_size}"
          + (f", projection_size={projection}" if projection else ""))
    return weights


def _reverse_valid(x, lengths):
    """Each sequence's first ``length`` steps reversed in place (axis 0), the padding left where it is."""
    t = jnp.arange(x.shape[0])[:, None]
    idx = jnp.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)
    return jnp.take_along_axis(x, idx.reshape(idx.shape + (1,) * (x.ndim - 2)), axis=0)


@op(compile_arrays=("data", "parameters", "state", "state_cell", "lengths", "key"))
def _rnn(data, parameters, state, state_cell=None, lengths=None, state_size=None, num_layers=1, bidirectional=False,
         mode="lstm", p=0.0, state_outputs=False, projection=None, clip=None, key=None):
    x = jnp.asarray(data)
    dirs = 2 if bidirectional else 1
    kind = {"rnn_relu": "rnn", "rnn_tanh": "rnn"}.get(mode, mode)
    act = "relu" if mode == "rnn_relu" else "tanh"
    weights = _unpack(jnp.asarray(parameters), mode, num_layers, dirs, x.shape[-1], state_size, projection)
    hs = [jnp.asarray(state)] + ([jnp.asarray(state_cell)] if mode == "lstm" else [])
    if lengths is not None:
        lengths = jnp.asarray(lengths).astype(jnp.int32)
    finals = [[] for _ in hs]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            wi, wh, wr, bi, bh = weights[k]

            def step(carry, xt, wi=wi, wh=wh, wr=wr, bi=bi, bh=bh):
                states, t = carry
                out, new = cell_step(kind, xt, states, wi, bi, wh, bh, act, h2r_w=wr, clip=clip)
                if lengths is not None:         # past a sequence's end: states kept, output 0
                    valid = (t < lengths)[:, None]
                    new = [jnp.where(valid, n, o) for n, o in zip(new, states)]
                    out = jnp.where(valid, out, 0).astype(out.dtype)
                return (new, t + 1), out

            xs = x if not d else x[::-1] if lengths is None else _reverse_valid(x, lengths)
            (carry, _), ys = lax.scan(step, ([h[k] for h in hs], jnp.int32(0)), xs)
            outs.append(ys if not d else ys[::-1] if lengths is None else _reverse_valid(ys, lengths))
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
    if mode != "lstm" and state_cell is not None and sequence_length is None:
        # MXNet's inputs depend on the mode: without a cell state the 4th is sequence_length
        state_cell, sequence_length = None, state_cell
    check(state_size is not None, "RNN", "state_size is required")
    check(mode != "lstm" or state_cell is not None, "RNN", "mode='lstm' needs state_cell")
    check(not projection_size or mode == "lstm", "RNN", "projection_size is only for mode='lstm'")
    check(not use_sequence_length or sequence_length is not None, "RNN",
          "use_sequence_length=True needs sequence_length (one length per sequence)")
    clipping = lstm_state_clip_min is not None or lstm_state_clip_max is not None
    check(not clipping or (lstm_state_clip_min is not None and lstm_state_clip_max is not None), "RNN",
          "lstm_state_clip_min and lstm_state_clip_max are set together")
    clip = (float(lstm_state_clip_min), float(lstm_state_clip_max), bool(lstm_state_clip_nan)) \
        if clipping and mode == "lstm" else None
    key = rng.next_key() if (p > 0 and autograd.is_training() and num_layers > 1) else None
    return _rnn(data, parameters, state, state_cell, sequence_length if use_sequence_length else None,
                state_size=state_size, num_layers=num_layers, bidirectional=bidirectional, mode=mode, p=p,
                state_outputs=state_outputs, projection=int(projection_size) if projection_size else None,
                clip=clip, key=key, **kwargs)
