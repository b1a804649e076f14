"""RNNCell, LSTMCell and GRUCell with MXNet 1.9.1's parameter names, shapes and gate order, written with ``F``
ops as MXNet writes them (so ``autograd`` records them when they run op by op).

LSTM gates (rows of ``i2h_weight``): input, forget, cell candidate, output.
GRU gates: reset, update, candidate (the candidate uses ``reset * h2h``).

    >>> from ast_hybrid.gluon import rnn
    >>> c = rnn.LSTMCell(8, input_size=3, prefix='l_')
    >>> [(k, v.shape) for k, v in c.collect_params().items()][:2]
    [('l_i2h_weight', (32, 3)), ('l_h2h_weight', (32, 8))]
"""

from __future__ import annotations

from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.ops._core import raw

__all__ = ["RNNCell", "LSTMCell", "GRUCell"]


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
        from ast_hybrid import nd

        func = func or nd.zeros
        return [func(shape=info["shape"], **kwargs) for info in self.state_info(batch_size)]

    def infer_shape(self, x, *args):
        self.i2h_weight.shape = (self._gates * self._hidden_size, int(raw(x).shape[-1]))

    def hybrid_forward(self, F, inputs, states, i2h_weight, i2h_bias, h2h_weight, h2h_bias):
        n = self._gates * self._hidden_size
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=n)
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=n)
        return self._step(F, i2h, h2h, states)

    def _act(self, F, x, activation):
        if isinstance(activation, str):
            if activation in ("tanh", "relu", "sigmoid", "softsign"):
                return getattr(F, activation)(x)
            return F.Activation(x, act_type=activation)
        return activation(x)     # a block, as MXNet allows

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        """Run ``length`` steps; with ``valid_length`` the outputs past each length are 0 and the states
        are those of each sequence's last valid step (MXNet's rules)."""
        from ast_hybrid import nd

        axis = layout.find("T")
        if isinstance(inputs, (list, tuple)):
            steps, merge = list(inputs), bool(merge_outputs)
        else:
            steps = nd.split(inputs, num_outputs=length, axis=axis, squeeze_axis=True)
            steps, merge = (steps if length > 1 else [steps]), merge_outputs is None or merge_outputs
        states = begin_state if begin_state is not None else self.begin_state(steps[0].shape[0])
        outputs, history = [], []
        for t in range(length):
            out, states = self(steps[t], states)
            outputs.append(out)
            history.append(states)
        if valid_length is not None:
            states = [nd.SequenceLast(nd.stack(*[h[i] for h in history], axis=0), sequence_length=valid_length,
                                      use_sequence_length=True, axis=0) for i in range(len(states))]
            merged = nd.SequenceMask(nd.stack(*outputs, axis=axis), sequence_length=valid_length,
                                     use_sequence_length=True, axis=axis)
            outputs = merged if merge else nd.split(merged, num_outputs=length, axis=axis, squeeze_axis=True)
        elif merge:
            outputs = nd.stack(*outputs, axis=axis)
        return outputs, states

    def reset(self):
        return None

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]})"


class RNNCell(_Cell):
    """``h' = activation(i2h(x) + h2h(h))``."""

    _kind, _gates = "rnn", 1

    def _alias(self):
        return "rnn"

    def _step(self, F, i2h, h2h, states):
        out = self._act(F, F.elemwise_add(i2h, h2h), self._activation)
        return out, [out]


class LSTMCell(_Cell):
    """Gates input, forget, cell, output (MXNet's order); ``c' = f * c + i * g``, ``h' = o * act(c')``."""

    _kind, _gates = "lstm", 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, activation, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return "lstm"

    def _step(self, F, i2h, h2h, states):
        gi, gf, gc, go = F.SliceChannel(F.elemwise_add(i2h, h2h), num_outputs=4)
        rec = self._recurrent_activation
        in_gate, forget_gate, out_gate = self._act(F, gi, rec), self._act(F, gf, rec), self._act(F, go, rec)
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1]),
                                F.elemwise_mul(in_gate, self._act(F, gc, self._activation)))
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=self._activation))
        return next_h, [next_h, next_c]


class GRUCell(_Cell):
    """Gates reset, update, new; the new gate uses ``reset * h2h``; ``h' = (1 - z) * n + z * h``."""

    _kind, _gates = "gru", 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None,
                 params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, activation, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return "gru"

    def _step(self, F, i2h, h2h, states):
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3)
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3)
        rec = self._recurrent_activation
        reset = self._act(F, F.elemwise_add(i2h_r, h2h_r), rec)
        update = self._act(F, F.elemwise_add(i2h_z, h2h_z), rec)
        new = self._act(F, F.elemwise_add(i2h_n, F.elemwise_mul(reset, h2h_n)), self._activation)
        out = F.elemwise_add(F.elemwise_mul(F.ones_like(update) - update, new), F.elemwise_mul(update, states[0]))
        return out, [out]
