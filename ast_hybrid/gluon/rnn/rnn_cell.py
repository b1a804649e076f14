"""RNNCell, LSTMCell and GRUCell with MXNet 1.9.1's parameter names, shapes and gate order.

LSTM gates (rows of ``i2h_weight``): input, forget, cell candidate, output.
GRU gates: reset, update, candidate (the candidate uses ``reset * h2h``).

    >>> from ast_hybrid.gluon import rnn
    >>> c = rnn.LSTMCell(8, input_size=3, prefix='l_')
    >>> [(k, v.shape) for k, v in c.collect_params().items()][:2]
    [('l_i2h_weight', (32, 3)), ('l_h2h_weight', (32, 8))]
"""

from __future__ import annotations

from ast_hybrid.gluon._ops import raw
from ast_hybrid.gluon.block import HybridBlock

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "cell_step"]


def _dot(x, w):
    from jax import lax

    return lax.dot_general(x, w, (((x.ndim - 1,), (1,)), ((), ())))


def cell_step(kind, x, states, i2h_w, i2h_b, h2h_w, h2h_b, activation="tanh"):
    """One step of a cell on raw arrays: (output, new states)."""
    import jax
    import jax.numpy as jnp

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


class _Cell(HybridBlock):
    _kind, _gates = "rnn", 1

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 input_size=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size, self._activation = hidden_size, input_size, activation
        g = self._gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size), init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, hidden_size), init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        n = 2 if self._kind == "lstm" else 1
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}] * n

    def begin_state(self, batch_size=0, func=None, **kwargs):
        import jax.numpy as jnp

        return [jnp.zeros(info["shape"], "float32") for info in self.state_info(batch_size)]

    def infer_shape(self, x, *args):
        self.i2h_weight.shape = (self._gates * self._hidden_size, int(raw(x).shape[-1]))

    def hybrid_forward(self, F, inputs, states, i2h_weight, i2h_bias, h2h_weight, h2h_bias):
        return cell_step(self._kind, raw(inputs), [raw(s) for s in states], raw(i2h_weight), raw(i2h_bias),
                         raw(h2h_weight), raw(h2h_bias), self._activation)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        import jax.numpy as jnp

        axis = layout.find("T")
        x = raw(inputs) if not isinstance(inputs, (list, tuple)) else jnp.stack([raw(i) for i in inputs], axis)
        states = begin_state if begin_state is not None else self.begin_state(x.shape[layout.find("N")])
        outputs = []
        for t in range(length):
            out, states = self(jnp.take(x, t, axis=axis), states)
            outputs.append(out)
        if merge_outputs is None or merge_outputs:
            outputs = jnp.stack(outputs, axis=axis)
        return outputs, states

    def reset(self):
        return None

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]})"


class RNNCell(_Cell):
    _kind, _gates = "rnn", 1

    def _alias(self):
        return "rnn"


class LSTMCell(_Cell):
    _kind, _gates = "lstm", 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, activation, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "lstm"


class GRUCell(_Cell):
    _kind, _gates = "gru", 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, activation, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "gru"
