"""MobileNet (Howard et al. 2017) and MobileNetV2 (Sandler et al. 2018) as in MXNet 1.9.1's
``mxnet/gluon/model_zoo/vision/mobilenet.py``: same structure, prefixes and parameter names, so MXNet's
``save_parameters`` files load directly.

Every convolution is bias-free and followed by a BatchNorm.  MobileNet stacks depthwise-separable pairs (a
3x3 depthwise convolution, then a 1x1 pointwise one, each with ReLU); MobileNetV2 stacks inverted residual
``LinearBottleneck`` blocks (1x1 expansion by ``t``, 3x3 depthwise, linear 1x1 projection; ReLU6) with the
classifier a 1x1 convolution.  ``multiplier`` scales every width (``int(c * multiplier)``)."""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.model_zoo._zoo import constructor, load_pretrained

__all__ = ["MobileNet", "MobileNetV2", "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75",
           "mobilenet0_5", "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet",
           "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)`` (the class name gives MXNet's block prefix ``relu6N_``)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True, relu6=False):
    """Append a bias-free convolution, a BatchNorm and (if ``active``) ReLU or ReLU6 to ``out``."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


class LinearBottleneck(HybridBlock):
    """Expand ``in_channels`` by ``t`` (1x1), filter each channel (3x3 at ``stride``), project to ``channels``
    without activation; the input is added back when the shape is unchanged."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        wide = in_channels * t
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, wide, relu6=True)
            _add_conv(self.out, wide, kernel=3, stride=stride, pad=1, num_group=wide, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


# MobileNet after its first 3x3/2 convolution (32 channels): (pointwise channels, depthwise stride) of each
# separable pair; the depthwise convolution keeps the channels that come in
_V1_PAIRS = ([(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5
             + [(1024, 2), (1024, 1)])
# MobileNetV2 after its first 3x3/2 convolution (32 channels): (expansion t, channels, blocks, first stride)
_V2_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
              (6, 320, 1, 1)]


class MobileNet(HybridBlock):
    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                in_channels = int(32 * multiplier)
                _add_conv(self.features, channels=in_channels, kernel=3, pad=1, stride=2)
                for channels, stride in _V1_PAIRS:
                    channels = int(channels * multiplier)
                    _add_conv(self.features, channels=in_channels, kernel=3, stride=stride, pad=1,
                              num_group=in_channels)
                    _add_conv(self.features, channels=channels)
                    in_channels = channels
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                in_channels = int(32 * multiplier)
                _add_conv(self.features, in_channels, kernel=3, stride=2, pad=1, relu6=True)
                for t, channels, blocks, first_stride in _V2_STAGES:
                    channels = int(channels * multiplier)
                    for i in range(blocks):
                        self.features.add(LinearBottleneck(in_channels=in_channels, channels=channels, t=t,
                                                           stride=first_stride if i == 0 else 1))
                        in_channels = channels
                _add_conv(self.features, int(1280 * multiplier) if multiplier > 1.0 else 1280, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _weights_name(family, multiplier):
    """MXNet's name of the pretrained file: ``mobilenet0.25``, ``mobilenet1.0``, ``mobilenetv2_0.5``..."""
    width = "%.2f" % multiplier
    return family + (width[:-1] if width in ("1.00", "0.50") else width)


def get_mobilenet(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNet with width ``multiplier``; ``kwargs`` go to the network (``classes``, ``prefix``...)."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, _weights_name("mobilenet", multiplier), ctx, root)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNetV2 with width ``multiplier``; ``kwargs`` go to the network (``classes``, ``prefix``...)."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, _weights_name("mobilenetv2_", multiplier), ctx, root)
    return net


mobilenet1_0 = constructor("mobilenet1_0", get_mobilenet, 1.0)
mobilenet0_75 = constructor("mobilenet0_75", get_mobilenet, 0.75)
mobilenet0_5 = constructor("mobilenet0_5", get_mobilenet, 0.5)
mobilenet0_25 = constructor("mobilenet0_25", get_mobilenet, 0.25)
mobilenet_v2_1_0 = constructor("mobilenet_v2_1_0", get_mobilenet_v2, 1.0)
mobilenet_v2_0_75 = constructor("mobilenet_v2_0_75", get_mobilenet_v2, 0.75)
mobilenet_v2_0_5 = constructor("mobilenet_v2_0_5", get_mobilenet_v2, 0.5)
mobilenet_v2_0_25 = constructor("mobilenet_v2_0_25", get_mobilenet_v2, 0.25)
