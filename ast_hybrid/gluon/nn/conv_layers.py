"""Convolution and pooling layers with MXNet 1.9.1's signatures, defaults and parameter names.

    >>> from ast_hybrid.gluon import nn
    >>> c = nn.Conv2D(64, 3, padding=1, in_channels=3, prefix='c_')
    >>> c.weight.shape, c.bias.shape
    ((64, 3, 3, 3), (64,))
"""

from __future__ import annotations

from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.nn.basic_layers import Activation
from ast_hybrid.ops._core import raw

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "ReflectionPad2D", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D",
           "GlobalAvgPool2D", "GlobalAvgPool3D"]


def _tup(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _Conv(HybridBlock):
    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout, in_channels=0,
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 op_name="Convolution", adj=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        n = len(kernel_size)
        self._channel_last = layout.endswith("C") and not layout.startswith("NC")
        if self._channel_last and op_name == "Deconvolution":
            raise ValueError(f"layout {layout!r}: transposed convolutions take channel-first layouts "
                             "(NCW/NCHW/NCDHW) only")
        with self.name_scope():
            self._channels, self._in_channels = channels, in_channels
            self._kwargs = {"kernel": tuple(kernel_size), "stride": _tup(strides, n), "dilate": _tup(dilation, n),
                            "pad": _tup(padding, n), "num_filter": channels, "num_group": groups,
                            "no_bias": not use_bias, "layout": layout}
            self._op_name = op_name
            if op_name == "Deconvolution":
                self._kwargs["adj"] = _tup(adj or 0, n)
                wshape = (in_channels, channels // groups) + tuple(kernel_size)
            else:       # MXNet's weight layout follows the data's: (O, C/g, *kernel) or (O, *kernel, C/g)
                wshape = self._weight_shape(in_channels // groups if in_channels else 0)
            self.weight = self.params.get("weight", shape=wshape, init=weight_initializer,
                                          allow_deferred_init=True)
            self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                                        allow_deferred_init=True) if use_bias else None
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def _alias(self):
        return "conv"

    def _weight_shape(self, c_per_group):
        kernel = self._kwargs["kernel"]
        if self._channel_last:
            return (self._channels, *kernel, c_per_group)
        return (self._channels, c_per_group, *kernel)

    def infer_shape(self, x, *args):
        c = int(raw(x).shape[-1 if self._channel_last else 1])
        if self._op_name == "Deconvolution":
            self.weight.shape = (c, self._channels // self._kwargs["num_group"]) + self._kwargs["kernel"]
        else:
            self.weight.shape = self._weight_shape(c // self._kwargs["num_group"])

    def hybrid_forward(self, F, x, weight, bias=None):
        act = getattr(F, self._op_name)(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            act = self.act(act)
        return act

    def __repr__(self):
        s = "{name}({mapping}, kernel_size={kernel}, stride={stride}"
        k = self._kwargs
        if k["pad"] != (0,) * len(k["pad"]):
            s += ", padding={pad}"
        if k["dilate"] != (1,) * len(k["dilate"]):
            s += ", dilation={dilate}"
        if k["num_group"] != 1:
            s += ", groups={num_group}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += ", {}".format(self.act)
        s += ")"
        shape = self.weight.shape
        mapping = "{0} -> {1}".format(shape[1] * k["num_group"] if shape[1] else None, shape[0])
        return s.format(name=type(self).__name__, mapping=mapping, **k)


class Conv1D(_Conv):
    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1, layout="NCW",
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        assert layout in ('NCW',), "Only supports 'NCW' layout for now"     # MXNet 1.9.1's
        super().__init__(channels, _tup(kernel_size, 1), strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer, **kwargs)


class Conv2D(_Conv):
    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 layout="NCHW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only supports 'NCHW' and 'NHWC' layout for now"     # MXNet 1.9.1's
        super().__init__(channels, _tup(kernel_size, 2), strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer, **kwargs)


class Conv3D(_Conv):
    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
                 groups=1, layout="NCDHW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), "Only supports 'NCDHW' and 'NDHWC' layout for now"     # MXNet 1.9.1's
        super().__init__(channels, _tup(kernel_size, 3), strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer, **kwargs)


def _transpose_class(name, n, layout0):
    one, zero = ((1,) * n, (0,) * n) if n > 1 else (1, 0)      # MXNet's defaults, ints in 1-D

    def __init__(self, channels, kernel_size, strides=one, padding=zero, output_padding=zero,
                 dilation=one, groups=1, layout=layout0, activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        _Conv.__init__(self, channels, _tup(kernel_size, n), strides, padding, dilation, groups, layout,
                       in_channels, activation, use_bias, weight_initializer, bias_initializer,
                       op_name="Deconvolution", adj=output_padding, **kwargs)
        self.outpad = _tup(output_padding, n)
    return type(name, (_Conv,), {"__init__": __init__, "__module__": __name__})


Conv1DTranspose = _transpose_class("Conv1DTranspose", 1, "NCW")
Conv2DTranspose = _transpose_class("Conv2DTranspose", 2, "NCHW")
Conv3DTranspose = _transpose_class("Conv3DTranspose", 3, "NCDHW")


class ReflectionPad2D(HybridBlock):
    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, int):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise ValueError("ReflectionPad2D: padding must be an int or 8 values (NCHW, before/after each)")
        self._padding = tuple(padding)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)


class _Pooling(HybridBlock):
    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {"kernel": tuple(pool_size), "stride": _tup(strides, n), "pad": _tup(padding, n),
                        "global_pool": global_pool, "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, padding={k['pad']}, "
                f"ceil_mode={k['pooling_convention'] == 'full'}, global_pool={k['global_pool']}, "
                f"pool_type={k['pool_type']}, layout={k['layout']})")


def _pool_class(name, n, pool_type, default_layout, is_global, ceil_first=False):
    """A pooling layer with MXNet's constructor; ``ceil_first``: ``ceil_mode`` comes before ``layout``
    (MXNet 1.9.1's MaxPool3D, AvgPool2D and AvgPool3D; the others put ``layout`` first)."""
    size = (2,) * n if n > 1 else 2
    if is_global:
        def __init__(self, layout=default_layout, **kwargs):
            _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)
    elif pool_type == "max" and ceil_first:
        def __init__(self, pool_size=size, strides=None, padding=0, ceil_mode=False, layout=default_layout,
                     **kwargs):
            _Pooling.__init__(self, _tup(pool_size, n), strides, padding, ceil_mode, False, "max", layout,
                              **kwargs)
    elif pool_type == "max":
        def __init__(self, pool_size=size, strides=None, padding=0, layout=default_layout, ceil_mode=False,
                     **kwargs):
            _Pooling.__init__(self, _tup(pool_size, n), strides, padding, ceil_mode, False, "max", layout,
                              **kwargs)
    elif ceil_first:
        def __init__(self, pool_size=size, strides=None, padding=0, ceil_mode=False, layout=default_layout,
                     count_include_pad=True, **kwargs):
            _Pooling.__init__(self, _tup(pool_size, n), strides, padding, ceil_mode, False, "avg", layout,
                              count_include_pad, **kwargs)
    else:
        def __init__(self, pool_size=size, strides=None, padding=0, layout=default_layout, ceil_mode=False,
                     count_include_pad=True, **kwargs):
            _Pooling.__init__(self, _tup(pool_size, n), strides, padding, ceil_mode, False, "avg", layout,
                              count_include_pad, **kwargs)
    return type(name, (_Pooling,), {"__init__": __init__, "__module__": __name__})


MaxPool1D = _pool_class("MaxPool1D", 1, "max", "NCW", False)
AvgPool1D = _pool_class("AvgPool1D", 1, "avg", "NCW", False)
GlobalMaxPool1D = _pool_class("GlobalMaxPool1D", 1, "max", "NCW", True)
GlobalAvgPool1D = _pool_class("GlobalAvgPool1D", 1, "avg", "NCW", True)
MaxPool2D = _pool_class("MaxPool2D", 2, "max", "NCHW", False)
AvgPool2D = _pool_class("AvgPool2D", 2, "avg", "NCHW", False, ceil_first=True)
GlobalMaxPool2D = _pool_class("GlobalMaxPool2D", 2, "max", "NCHW", True)
GlobalAvgPool2D = _pool_class("GlobalAvgPool2D", 2, "avg", "NCHW", True)
MaxPool3D = _pool_class("MaxPool3D", 3, "max", "NCDHW", False, ceil_first=True)
AvgPool3D = _pool_class("AvgPool3D", 3, "avg", "NCDHW", False, ceil_first=True)
GlobalMaxPool3D = _pool_class("GlobalMaxPool3D", 3, "max", "NCDHW", True)
GlobalAvgPool3D = _pool_class("GlobalAvgPool3D", 3, "avg", "NCDHW", True)
