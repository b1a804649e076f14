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
                 mode, activation="tanh", dtype="float32", **kwargs):
        object.__setattr__(self, "_mode", mode)    # _alias() needs it during Block.__init__
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._hidden_size, self._num_layers, self._layout = hidden_size, num_layers, layout
        self._mode, self._dropout, self._dir, self._input_size = mode, dropout, 2 if bidirectional else 1, input_size
        self._activation = activation
        self._gates = {"rnn": 1, "lstm": 4, "gru": 3}[mode]
        ng, nh, ni = self._gates, hidden_size, input_size
        for i in range(num_layers):
            for j in ["l", "r"][:self._dir]:
                setattr(self, f"{j}{i}_i2h_weight", self.params.get(f"{j}{i}_i2h_weight", shape=(ng * nh, ni),
                                                                    init=i2h_weight_initializer,
                                                                    allow_deferred_init=True))
                setattr(self, f"{j}{i}_h2h_weight", self.params.get(f"{j}{i}_h2h_weight", shape=(ng * nh, nh),
                                                                    init=h2h_weight_initializer,
                                                                    allow_deferred_init=True))
                setattr(self, f"{j}{i}_i2h_bias", self.params.get(f"{j}{i}_i2h_bias", shape=(ng * nh,),
                                                                  init=i2h_bias_initializer,
                                                                  allow_deferred_init=True))
                setattr(self, f"{j}{i}_h2h_bias", self.params.get(f"{j}{i}_h2h_bias", shape=(ng * nh,),
                                                                  init=h2h_bias_initializer,
                                                                  allow_deferred_init=True))
            ni = nh * self._dir

    def _alias(self):
        return self._mode

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
        return [{"shape": shape, "__layout__": "LNC"}] * (2 if self._mode == "lstm" else 1)

    def begin_state(self, batch_size=0, func=None, **kwargs):
        from ast_hybrid import nd

        func = func or nd.zeros
        return [func(shape=i["shape"], **kwargs) for i in self.state_info(batch_size)]

    def infer_shape(self, inputs, *args):
        ni = int(raw(inputs).shape[2])
        for j in ["l", "r"][:self._dir]:
            self._reg_params[f"{j}0_i2h_weight"].shape = (self._gates * self._hidden_size, ni)

    def __call__(self, inputs, states=None):
        if states is None:
            n = raw(inputs).shape[self._layout.find("N")]
            out, _ = super().__call__(inputs, self.begin_state(n))
            return out
        if not isinstance(states, (list, tuple)):
            states = [states]
        return super().__call__(inputs, list(states))

    forward = __call__

    def hybrid_forward(self, F, inputs, states, **params):
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        flat = [params[f"{d}{i}_{g}_{t}"].reshape((-1,)) for t in ("weight", "bias") for i in range(self._num_layers)
                for d in ["l", "r"][:self._dir] for g in ("i2h", "h2h")]
        mode = f"rnn_{self._activation}" if self._mode == "rnn" else self._mode
        out = F.RNN(inputs, F._internal._rnn_param_concat(*flat, dim=0), *states, state_size=self._hidden_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2, p=self._dropout, state_outputs=True,
                    mode=mode)
        outputs, states = out[0], list(out[1:])
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states

    def __repr__(self):
        shape = self._reg_params["l0_i2h_weight"].shape
        mapping = f"{shape[1] if shape[1] else None} -> {self._hidden_size}"
        return f"{type(self).__name__}({mapping}, {self._layout}, num_layers={self._num_layers}" + \
            (", bidirectional" if self._dir == 2 else "") + ")"


def _layer(mode):
    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", activation="relu" if mode == "rnn" else "tanh",
                 **kwargs):
        _RNNLayer.__init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                           i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                           h2h_bias_initializer, mode, activation, dtype, **kwargs)
    return __init__


class RNN(_RNNLayer):
    __init__ = _layer("rnn")


class LSTM(_RNNLayer):
    __init__ = _layer("lstm")


class GRU(_RNNLayer):
    __init__ = _layer("gru")
