"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016) as in MXNet 1.9.1's
``mxnet/gluon/model_zoo/vision/squeezenet.py``: same structure, prefixes and parameter names, so MXNet's
``save_parameters`` files load directly.

A Fire module squeezes to ``s`` channels with a 1x1 convolution and expands with 1x1 and 3x3 convolutions of
``4 s`` channels each, concatenated.  The classifier is a 1x1 convolution, ReLU and a 13x13 average pooling,
so the input must be about 224 x 224 (the last feature map at least 13 x 13)."""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.contrib.nn import HybridConcurrent
from ast_hybrid.gluon.model_zoo._zoo import constructor, load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]

_POOL = "pool"
# version -> (first convolution's channels, its kernel (stride 2), then Fire modules' squeeze widths and poolings)
_SPEC = {"1.0": (96, 7, [16, 16, 32, _POOL, 32, 48, 48, 64, _POOL, 64]),
         "1.1": (64, 3, [16, 16, _POOL, 32, 32, _POOL, 48, 48, 64, 64])}


def _conv_relu(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze):
    out = nn.HybridSequential(prefix="")
    out.add(_conv_relu(squeeze, 1))
    expand = HybridConcurrent(axis=1, prefix="")
    expand.add(_conv_relu(4 * squeeze, 1), _conv_relu(4 * squeeze, 3, 1))
    out.add(expand)
    return out


def _max_pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _SPEC:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 expected")
        channels, kernel, modules = _SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(channels, kernel_size=kernel, strides=2), nn.Activation("relu"),
                              _max_pool())
            for m in modules:
                self.features.add(_max_pool() if m == _POOL else _fire(m))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"), nn.AvgPool2D(13),
                            nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=None, root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1'); ``kwargs`` go to the network (``classes``, ``prefix``...)."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, "squeezenet%s" % version, ctx, root)
    return net


squeezenet1_0 = constructor("squeezenet1_0", get_squeezenet, "1.0")
squeezenet1_1 = constructor("squeezenet1_1", get_squeezenet, "1.1")
