"""Fused RNN/LSTM/GRU layers with MXNet's parameter names (``l0_i2h_weight``, ``r0_...`` for the
reverse direction), layouts (``TNC`` default) and state shapes ``(num_layers * dirs, N, H)``.
The forward is MXNet's: the parameters concatenated into one vector for ``F.RNN`` (``ops/rnn.py``:
one ``lax.scan`` per layer and direction)."""

from __future__ import annotations

from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.ops._core import raw

__all__ = ["RNN", "LSTM", "GRU"]


class _RNNLayer(HybridBlock):
    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 mode, projection_size, h2r_weight_initializer, lstm_state_clip_min, lstm_state_clip_max,
                 lstm_state_clip_nan, dtype, use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._hidden_size, self._num_layers, self._layout = hidden_size, num_layers, layout
        self._projection_size = projection_size if projection_size else None
        self._mode, self._dropout, self._dir, self._input_size = mode, dropout, 2 if bidirectional else 1, input_size
        self._lstm_state_clip_min, self._lstm_state_clip_max = lstm_state_clip_min, lstm_state_clip_max
        self._lstm_state_clip_nan, self._dtype = lstm_state_clip_nan, dtype
        self._use_sequence_length = use_sequence_length
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
        self._i2h_weight_initializer, self._h2h_weight_initializer = i2h_weight_initializer, h2h_weight_initializer
        self._i2h_bias_initializer, self._h2h_bias_initializer = i2h_bias_initializer, h2h_bias_initializer
        ng, nh, ni = self._gates, hidden_size, input_size
        nr = self._projection_size or nh              # what the recurrence and the next layer see
        for i in range(num_layers):
            for j in ["l", "r"][:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni), i2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, nr), h2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer, dtype)
                if self._projection_size:
                    self._register_param(f"{j}{i}_h2r_weight", (nr, nh), h2r_weight_initializer, dtype)
            ni = nr * self._dir

    def _unfuse(self):
        """MXNet's ``_unfuse``: the same network as a stack of cells (``HybridSequentialRNNCell``) sharing this
        layer's parameters."""
        from ast_hybrid.gluon.rnn import rnn_cell

        assert not self._projection_size, "_unfuse does not support projection layer yet!"
        assert not self._lstm_state_clip_min and not self._lstm_state_clip_max, \
            "_unfuse does not support state clipping yet!"
        make = {"rnn_relu": lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation="relu", **kw),
                "rnn_tanh": lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation="tanh", **kw),
                "lstm": lambda **kw: rnn_cell.LSTMCell(self._hidden_size, **kw),
                "gru": lambda **kw: rnn_cell.GRUCell(self._hidden_size, **kw)}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kw = {"input_size": ni, "i2h_weight_initializer": self._i2h_weight_initializer,
                      "h2h_weight_initializer": self._h2h_weight_initializer,
                      "i2h_bias_initializer": self._i2h_bias_initializer,
                      "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f"l{i}_", **kw), make(prefix=f"r{i}_", **kw)))
                else:
                    stack.add(make(prefix=f"l{i}_", **kw))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def _collect_params_with_prefix(self, prefix=""):
        # MXNet 1.9.1's structural names for fused layers (its "unfused" compatibility format)
        import re

        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")
        bidirectional = any(pattern.match(k).group(1) == "r" for k in self._reg_params)

        def convert(key):
            d, n, g, t = pattern.match(key).groups()
            return f"_unfused.{n}.{d}_cell.{g}_{t}" if bidirectional else f"_unfused.{n}.{g}_{t}"

        return {prefix + convert(k): v for k, v in self._reg_params.items()}

    def state_info(self, batch_size=0):
        shape = (self._num_layers * self._dir, batch_size, self._hidden_size)
        if self._mode != "lstm":
            return [{"shape": shape, "__layout__": "LNC", "dtype": self._dtype}]
        h = shape[:2] + (self._projection_size or self._hidden_size,)
        return [{"shape": h, "__layout__": "LNC", "dtype": self._dtype},
                {"shape": shape, "__layout__": "LNC", "dtype": self._dtype}]

    def begin_state(self, batch_size=0, func=None, **kwargs):
        from ast_hybrid import nd

        func = func or nd.zeros
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info, **kwargs)
            info.pop("__layout__", None)
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def infer_shape(self, inputs, *args):
        ni = int(raw(inputs).shape[2])
        for j in ["l", "r"][:self._dir]:
            self._reg_params[f"{j}0_i2h_weight"].shape = (self._gates * self._hidden_size, ni)

    def __call__(self, inputs, states=None, sequence_length=None):
        skip_states = states is None
        if skip_states:
            n = raw(inputs).shape[self._layout.find("N")]
            states = self.begin_state(n)
        if not isinstance(states, (list, tuple)):
            states = [states]
        args = (inputs, list(states)) + ((sequence_length,) if self._use_sequence_length else ())
        if self._hooks is None:
            out = super().__call__(*args)
            return out[0] if skip_states else out
        self._skip_states = skip_states         # MXNet's skip_states: what the forward hooks see too
        return super().__call__(*args)

    forward = __call__

    def _unhooked(self, *args):
        out = super()._unhooked(*args)
        return out[0] if getattr(self, "_skip_states", False) else out

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **params):
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        gates = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        flat = [params[f"{d}{i}_{g}_{t}"].reshape((-1,)) for t in ("weight", "bias") for i in range(self._num_layers)
                for d in ["l", "r"][:self._dir] for g in gates if g != "h2r" or t != "bias"]
        extra = [sequence_length] if self._use_sequence_length else []
        out = F.RNN(inputs, F._internal._rnn_param_concat(*flat, dim=0), *states, *extra,
                    use_sequence_length=self._use_sequence_length, state_size=self._hidden_size,
                    projection_size=self._projection_size, num_layers=self._num_layers,
                    bidirectional=self._dir == 2, p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min, lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs, states = out[0], list(out[1:])
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states

    def __repr__(self):
        shape = self._reg_params["l0_i2h_weight"].shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return f"{type(self).__name__}({mapping}, {self._layout}" + \
            (f", num_layers={self._num_layers}" if self._num_layers != 1 else "") + \
            (f", dropout={self._dropout}" if self._dropout != 0 else "") + \
            (", bidirectional" if self._dir == 2 else "") + ")"

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype


class RNN(_RNNLayer):
    """Multi-layer Elman RNN (``activation`` relu or tanh), MXNet's signature."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0, bidirectional=False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, "rnn_" + activation,
                         None, None, None, None, False, dtype, **kwargs)


class LSTM(_RNNLayer):
    """Multi-layer LSTM; ``projection_size`` makes it an LSTMP, ``state_clip_*`` clip the cell state (both as
    MXNet's cuDNN build computes them)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, "lstm",
                         projection_size, h2r_weight_initializer, state_clip_min, state_clip_max, state_clip_nan,
                         dtype, **kwargs)


class GRU(_RNNLayer):
    """Multi-layer GRU, MXNet's signature."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer, "gru",
                         None, None, None, None, False, dtype, **kwargs)
