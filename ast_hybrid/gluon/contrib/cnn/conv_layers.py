"""``mxnet.gluon.contrib.cnn.conv_layers``: MXNet 1.9.1's deformable convolution layers, with its constructor
signatures, block prefixes (``deformable_conv0_``, ``modulated_deformable_conv0_``), parameter names, shapes,
order and initialisers.

Each layer holds two convolutions over its input: an ordinary one (``offset_weight``/``offset_bias``, zeros
by default, so a new layer samples the regular grid) that computes the offsets, then the deformable one
(``deformable_conv_weight``/``deformable_conv_bias``) that samples the input there.  In v2 the offset
convolution has a third part, ``num_deformable_group * kh * kw`` channels after the offsets, which becomes the
mask ``2 * sigmoid(.)`` (1 where the offset convolution gives 0).  The ops are ``F.contrib.DeformableConvolution``
and ``F.contrib.ModulatedDeformableConvolution`` (``ops/deformable.py``), which take NCHW only, as MXNet's do.

    >>> import numpy as np
    >>> from ast_hybrid.gluon.contrib.cnn import ModulatedDeformableConvolution
    >>> layer = ModulatedDeformableConvolution(8, 3, padding=1, in_channels=4, prefix='d_')
    >>> layer.initialize()
    >>> layer(np.zeros((1, 4, 6, 6), 'float32')).shape
    (1, 8, 6, 6)
    >>> for name, p in layer.collect_params().items():
    ...     print(name, p.shape)
    d_deformable_conv_weight (8, 4, 3, 3)
    d_deformable_conv_bias (8,)
    d_offset_weight (27, 4, 3, 3)
    d_offset_bias (27,)
"""

from __future__ import annotations

from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.nn.basic_layers import Activation
from ast_hybrid.ops._core import raw

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v):
    return (v, v) if isinstance(v, (int, float)) else tuple(v)


class _Deformable(HybridBlock):
    """What both layers share: the arguments of the two convolutions and the four parameters.  ``_offset_parts``
    is 2 (v1: offsets) or 3 (v2: offsets and mask) channels per deformable group and kernel tap; ``_offset_first``:
    whether MXNet declares the offset convolution's parameters first."""

    _offset_parts = 2
    _op = "DeformableConvolution"
    _offset_first = True

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 num_deformable_group=1, layout="NCHW", use_bias=True, in_channels=0, activation=None,
                 weight_initializer=None, bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name=None, adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        assert layout in ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now"
        if layout != "NCHW":
            raise ValueError(f"{type(self).__name__}: layout {layout!r}: MXNet's deformable convolution ops take "
                             "NCHW only (MXNet accepts 'NHWC' here and fails at the first call)")
        if adj:
            raise ValueError(f"{type(self).__name__}: adj={adj!r} is not an argument of MXNet's Convolution "
                             "(MXNet fails at the first call)")
        kernel = _pair(kernel_size)
        n = len(kernel)
        strides, padding, dilation = ((v,) * n if isinstance(v, (int, float)) else tuple(v)
                                      for v in (strides, padding, dilation))
        taps = kernel[0] * kernel[1]
        self._channels, self._in_channels = channels, in_channels
        self._op_name = op_name or self._op
        self.offset_split_index = num_deformable_group * 2 * taps
        offset_channels = num_deformable_group * self._offset_parts * taps
        self._kwargs_offset = {"kernel": kernel, "stride": strides, "dilate": dilation, "pad": padding,
                               "num_filter": offset_channels, "num_group": groups, "no_bias": not offset_use_bias,
                               "layout": layout}
        self._kwargs_deformable_conv = {"kernel": kernel, "stride": strides, "dilate": dilation, "pad": padding,
                                        "num_filter": channels, "num_group": groups,
                                        "num_deformable_group": num_deformable_group, "no_bias": not use_bias,
                                        "layout": layout}
        per_group = in_channels // groups if in_channels else 0
        offset = ("offset", (offset_channels, per_group) + kernel, offset_channels, offset_weight_initializer,
                  offset_bias_initializer, offset_use_bias)
        # MXNet leaves the deformable weight's input dimension 0 (found at the first call) even with in_channels
        conv = ("deformable_conv", (channels, 0) + kernel, channels, weight_initializer, bias_initializer, use_bias)
        with self.name_scope():
            for spec in (offset, conv) if self._offset_first else (conv, offset):   # MXNet's order of declaration
                self._declare(*spec)
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _declare(self, name, wshape, channels, weight_init, bias_init, use_bias):
        setattr(self, f"{name}_weight", self.params.get(f"{name}_weight", shape=wshape, init=weight_init,
                                                        allow_deferred_init=True))
        setattr(self, f"{name}_bias", self.params.get(f"{name}_bias", shape=(channels,), init=bias_init,
                                                      allow_deferred_init=True) if use_bias else None)

    def infer_shape(self, x, *args):
        c = int(raw(x).shape[1])
        per_group = c // self._kwargs_offset["num_group"]
        self.offset_weight.shape = (self._kwargs_offset["num_filter"], per_group) + self._kwargs_offset["kernel"]
        self.deformable_conv_weight.shape = (self._channels, per_group) + self._kwargs_offset["kernel"]

    def _offset_and_mask(self, F, offset):
        return offset, None

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None, deformable_conv_bias=None):
        offset = F.Convolution(x, offset_weight, offset_bias, cudnn_off=True, **self._kwargs_offset)
        offset, mask = self._offset_and_mask(F, offset)
        masks = {} if mask is None else {"mask": mask}
        act = getattr(F.contrib, self._op)(data=x, offset=offset, weight=deformable_conv_weight,
                                           bias=deformable_conv_bias, name="fwd", **masks,
                                           **self._kwargs_deformable_conv)
        return self.act(act) if self.act is not None else act


class DeformableConvolution(_Deformable):
    """2-D deformable convolution v1 (Dai et al. 2017): ``2 * num_deformable_group * kh * kw`` offset channels,
    computed by the layer's own convolution of the input."""

    def _alias(self):
        return "deformable_conv"

    def __repr__(self):
        k = self._kwargs_deformable_conv
        n = len(k["kernel"])
        cin, cout = self.deformable_conv_weight.shape[1], self.deformable_conv_weight.shape[0]
        shown = [f"{cin or None} -> {cout}", f"kernel_size={k['kernel']}", f"stride={k['stride']}"]
        optional = [(k["pad"] != (0,) * n, f"padding={k['pad']}"), (k["dilate"] != (1,) * n, f"dilation={k['dilate']}"),
                    (k["num_group"] != 1, f"groups={k['num_group']}"),
                    (self.deformable_conv_bias is None, "bias=False"), (self.act is not None, f"{self.act}")]
        return f"{type(self).__name__}({', '.join(shown + [text for wanted, text in optional if wanted])})"


class ModulatedDeformableConvolution(_Deformable):
    """2-D modulated deformable convolution v2 (Zhu et al. 2018): the offset convolution gives
    ``3 * num_deformable_group * kh * kw`` channels, offsets then the mask's, ``2 * sigmoid`` of them."""

    _offset_parts = 3
    _op = "ModulatedDeformableConvolution"
    _offset_first = False

    def _alias(self):
        return "modulated_deformable_conv"

    def _offset_and_mask(self, F, offset):
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)
        return offset_t, F.sigmoid(mask) * 2
