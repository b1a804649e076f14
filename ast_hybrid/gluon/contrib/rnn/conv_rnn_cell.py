"""``mxnet.gluon.contrib.rnn.conv_rnn_cell``: recurrent cells whose input-to-hidden and hidden-to-hidden
maps are convolutions (Shi et al., 2015, Convolutional LSTM): ``Conv{1,2,3}D{RNN,LSTM,GRU}Cell``, with
MXNet's constructor signatures, parameter shapes and gate order.  ``input_shape`` is one step's shape
without the batch (``(C, H, W)`` for ``NCHW``); the states keep the size the ``i2h`` convolution gives
(the ``h2h`` convolution pads to keep it, so its kernel must be odd).

    >>> from ast_hybrid.gluon.contrib import rnn
    >>> c = rnn.Conv2DLSTMCell((3, 8, 8), 4, i2h_kernel=3, h2h_kernel=3, i2h_pad=1, prefix='c_')
    >>> [(k, v.shape) for k, v in c.collect_params().items()][:2]
    [('c_i2h_weight', (16, 3, 3, 3)), ('c_h2h_weight', (16, 4, 3, 3))]
    >>> c.state_info(2)[0]['shape']
    (2, 4, 8, 8)
"""

from __future__ import annotations

from ast_hybrid.gluon.rnn.rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]


def _conv_out_size(dimensions, kernels, paddings, dilations):
    return tuple(x + 2 * p - d * (k - 1) if x else 0 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


def _tuple(spec, dims):
    return (spec,) * dims if isinstance(spec, (int, float)) else tuple(spec)


class _BaseConvRNNCell(HybridRecurrentCell):
    """Parameters and the two convolutions every convolutional cell has; ``_gates`` gates."""

    _gates = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 dims, conv_layout, activation, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels, self._input_shape = hidden_channels, tuple(input_shape)
        self._conv_layout, self._activation = conv_layout, activation
        assert all(isinstance(spec, int) or len(spec) == dims
                   for spec in (i2h_kernel, i2h_pad, i2h_dilate, h2h_kernel, h2h_dilate)), \
            f"For {dims}D convolution, the convolution settings can only be either int or list/tuple of length {dims}"
        self._i2h_kernel, self._stride = _tuple(i2h_kernel, dims), (1,) * dims
        self._i2h_pad, self._i2h_dilate = _tuple(i2h_pad, dims), _tuple(i2h_dilate, dims)
        self._h2h_kernel, self._h2h_dilate = _tuple(h2h_kernel, dims), _tuple(h2h_dilate, dims)
        assert all(k % 2 == 1 for k in self._h2h_kernel), f"Only support odd number, get h2h_kernel= {h2h_kernel}"
        self._channel_axis = conv_layout.find("C")
        channels_first = self._channel_axis == 1
        in_channels = self._input_shape[self._channel_axis - 1]
        spatial = self._input_shape[1:] if channels_first else self._input_shape[:-1]
        total = hidden_channels * self._gates
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        out = _conv_out_size(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        if channels_first:
            i2h_shape = (total, in_channels) + self._i2h_kernel
            h2h_shape = (total, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out
        else:
            i2h_shape = (total,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out + (hidden_channels,)
        self._in_channels = in_channels
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape, init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape, init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        n = 2 if self._gates == 4 else 1
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout} for _ in range(n)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({in_channels if in_channels else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        n = self._hidden_channels * self._gates
        i2h = F.Convolution(data=inputs, num_filter=n, kernel=self._i2h_kernel, stride=self._stride,
                            pad=self._i2h_pad, dilate=self._i2h_dilate, weight=i2h_weight, bias=i2h_bias,
                            layout=self._conv_layout)
        h2h = F.Convolution(data=states[0], num_filter=n, kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                            pad=self._h2h_pad, stride=self._stride, weight=h2h_weight, bias=h2h_bias,
                            layout=self._conv_layout)
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    _gates = 1

    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        output = self._get_activation(F, i2h + h2h, self._activation)
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gates = 4

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        gi, gf, gc, go = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis)
        in_gate = F.Activation(gi, act_type="sigmoid")
        forget_gate = F.Activation(gf, act_type="sigmoid")
        in_transform = self._get_activation(F, gc, self._activation)
        out_gate = F.Activation(go, act_type="sigmoid")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform)
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation))
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gates = 3

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid")
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation)
        next_h = F.elemwise_add((1.0 - update_gate) * next_h_tmp, update_gate * states[0])
        return next_h, [next_h]


_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _cell(name, base, dims):
    """``Conv{dims}D...Cell``: ``base`` with MXNet's constructor for ``dims`` spatial dimensions."""
    ones, zeros = (1,) * dims, (0,) * dims

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=zeros, i2h_dilate=ones,
                 h2h_dilate=ones, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", conv_layout=_LAYOUTS[dims],
                 activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                      i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                      dims, conv_layout, activation, prefix, params)

    kind = {_ConvRNNCell: "vanilla RNN", _ConvLSTMCell: "LSTM", _ConvGRUCell: "GRU"}[base]
    doc = f"{dims}D convolutional {kind} cell (default layout {_LAYOUTS[dims]})."
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Conv1DRNNCell = _cell("Conv1DRNNCell", _ConvRNNCell, 1)
Conv2DRNNCell = _cell("Conv2DRNNCell", _ConvRNNCell, 2)
Conv3DRNNCell = _cell("Conv3DRNNCell", _ConvRNNCell, 3)
Conv1DLSTMCell = _cell("Conv1DLSTMCell", _ConvLSTMCell, 1)
Conv2DLSTMCell = _cell("Conv2DLSTMCell", _ConvLSTMCell, 2)
Conv3DLSTMCell = _cell("Conv3DLSTMCell", _ConvLSTMCell, 3)
Conv1DGRUCell = _cell("Conv1DGRUCell", _ConvGRUCell, 1)
Conv2DGRUCell = _cell("Conv2DGRUCell", _ConvGRUCell, 2)
Conv3DGRUCell = _cell("Conv3DGRUCell", _ConvGRUCell, 3)
