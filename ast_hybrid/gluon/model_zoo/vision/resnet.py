"""ResNet V1 and V2, 18 to 152 layers, as in ``mxnet/gluon/model_zoo/vision/resnet.py`` (MXNet 1.9.1):
same structure, prefixes and parameter names, so MXNet's ``save_parameters`` files load directly.

V1 (He et al. 2015) adds the shortcut before the last ReLU; V2 (pre-activation, He et al. 2016) normalises
and activates before each convolution and adds the shortcut after the last one, with a parameter-free
BatchNorm on the input and a final BatchNorm + ReLU.  18 and 34 layers use two 3x3 convolutions per block,
50 to 152 a 1x1 / 3x3 / 1x1 bottleneck at a quarter of the block's channels.  ``pretrained=True`` loads
MXNet's weights only if MXNet already downloaded them (``_zoo.load_pretrained``)."""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.model_zoo._zoo import constructor, load_pretrained

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2",
           "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _projection_v1(channels, stride, in_channels):
    """V1's shortcut when the shape changes: a strided 1x1 convolution and a BatchNorm."""
    shortcut = nn.HybridSequential(prefix="")
    shortcut.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False, in_channels=in_channels))
    shortcut.add(nn.BatchNorm())
    return shortcut


class _ResidualV1(HybridBlock):
    """``relu(body(x) + shortcut(x))``; the subclass fills ``body``."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self._build_body(channels, stride, in_channels)
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        shortcut = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + shortcut, act_type="relu")


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions (ResNet V1 18 and 34)."""

    def _build_body(self, channels, stride, in_channels):
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(), nn.Activation("relu"),
                      _conv3x3(channels, 1, channels), nn.BatchNorm())


class BottleneckV1(_ResidualV1):
    """1x1 (strided, with bias as in MXNet), 3x3, 1x1 back to ``channels`` (ResNet V1 50 to 152)."""

    def _build_body(self, channels, stride, in_channels):
        width = channels // 4
        self.body.add(nn.Conv2D(width, kernel_size=1, strides=stride), nn.BatchNorm(), nn.Activation("relu"),
                      _conv3x3(width, 1, width), nn.BatchNorm(), nn.Activation("relu"),
                      nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())


class _ResidualV2(HybridBlock):
    """Pre-activation: ``bn_i`` + ReLU before each ``conv_i``; the shortcut (a strided 1x1 convolution when
    the shape changes) is taken from the first activation."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._build_layers(channels, stride, in_channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)

    def hybrid_forward(self, F, x):
        shortcut = x
        for i, (bn, conv) in enumerate(self._pairs()):
            x = F.Activation(bn(x), act_type="relu")
            if i == 0 and self.downsample:
                shortcut = self.downsample(x)
            x = conv(x)
        return x + shortcut


class BasicBlockV2(_ResidualV2):
    """Two pre-activated 3x3 convolutions (ResNet V2 18 and 34)."""

    def _build_layers(self, channels, stride, in_channels):
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)

    def _pairs(self):
        return [(self.bn1, self.conv1), (self.bn2, self.conv2)]


class BottleneckV2(_ResidualV2):
    """Pre-activated 1x1, 3x3 (strided), 1x1 (ResNet V2 50 to 152)."""

    def _build_layers(self, channels, stride, in_channels):
        width = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(width, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(width, stride, width)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)

    def _pairs(self):
        return [(self.bn1, self.conv1), (self.bn2, self.conv2), (self.bn3, self.conv3)]


def _stem(features, channels, thumbnail):
    """A 3x3 convolution for small images (``thumbnail``), else 7x7/2 + BatchNorm + ReLU + 3x3/2 max pooling."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
                     nn.MaxPool2D(3, 2, 1))


def _stage(block, layers, channels, stride, stage_index, in_channels):
    """``stageN_``: ``layers`` blocks, the first changing stride and channels."""
    stage = nn.HybridSequential(prefix="stage%d_" % stage_index)
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels, prefix=""))
        for _ in range(layers - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


class _ResNet(HybridBlock):
    """The stem, four stages (the first at stride 1), global average pooling and the classifier; V2 adds a
    parameter-free BatchNorm on the input and BatchNorm + ReLU before the pooling (``_PREACTIVATION``)."""

    _PREACTIVATION = False

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if self._PREACTIVATION:
                self.features.add(nn.BatchNorm(scale=False, center=False))
            _stem(self.features, channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                self.features.add(_stage(block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1,
                                         channels[i]))
            if self._PREACTIVATION:
                self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Flatten())
            else:
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """``block`` is BasicBlockV1 or BottleneckV1; ``channels`` has one entry more than ``layers`` (the stem's)."""


class ResNetV2(_ResNet):
    """``block`` is BasicBlockV2 or BottleneckV2; ``channels`` as for ResNetV1."""

    _PREACTIVATION = True


# layers -> (bottleneck?, blocks per stage, channels of the stem and of each stage)
_SPEC = {18: (False, [2, 2, 2, 2], [64, 64, 128, 256, 512]),
         34: (False, [3, 4, 6, 3], [64, 64, 128, 256, 512]),
         50: (True, [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
         101: (True, [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
         152: (True, [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
_VERSIONS = {1: (ResNetV1, BasicBlockV1, BottleneckV1), 2: (ResNetV2, BasicBlockV2, BottleneckV2)}


def get_resnet(version, num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101, 152); ``kwargs`` go to the network
    (``classes``, ``thumbnail``, ``prefix``...)."""
    if num_layers not in _SPEC:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are {sorted(_SPEC)}")
    if version not in _VERSIONS:
        raise ValueError(f"Invalid resnet version: {version}. Options are 1 and 2.")
    bottleneck, layers, channels = _SPEC[num_layers]
    net_class, basic, bottle = _VERSIONS[version]
    net = net_class(bottle if bottleneck else basic, layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, "resnet%d_v%d" % (num_layers, version), ctx, root)
    return net


resnet18_v1 = constructor("resnet18_v1", get_resnet, 1, 18)
resnet34_v1 = constructor("resnet34_v1", get_resnet, 1, 34)
resnet50_v1 = constructor("resnet50_v1", get_resnet, 1, 50)
resnet101_v1 = constructor("resnet101_v1", get_resnet, 1, 101)
resnet152_v1 = constructor("resnet152_v1", get_resnet, 1, 152)
resnet18_v2 = constructor("resnet18_v2", get_resnet, 2, 18)
resnet34_v2 = constructor("resnet34_v2", get_resnet, 2, 34)
resnet50_v2 = constructor("resnet50_v2", get_resnet, 2, 50)
resnet101_v2 = constructor("resnet101_v2", get_resnet, 2, 101)
resnet152_v2 = constructor("resnet152_v2", get_resnet, 2, 152)
