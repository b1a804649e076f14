"""VGG 11/13/16/19 (Simonyan and Zisserman 2014), with and without BatchNorm, as in MXNet 1.9.1's
``mxnet/gluon/model_zoo/vision/vgg.py``: same structure, prefixes, parameter names and initialisers, so
MXNet's ``save_parameters`` files load directly.  Five groups of 3x3 ReLU convolutions, each ending in a
2x2/2 max pooling, then two 4096-wide ReLU dense layers with dropout 0.5 and the classifier."""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.model_zoo._zoo import constructor, load_pretrained
from ast_hybrid.init import Xavier

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn", "get_vgg"]

# layers -> convolutions per group, channels per group
_SPEC = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
         13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
         16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
         19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def _dense(units, **kwargs):
    return nn.Dense(units, weight_initializer="normal", bias_initializer="zeros", **kwargs)


class VGG(HybridBlock):
    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            for convs, channels in zip(layers, filters):
                for _ in range(convs):
                    self.features.add(nn.Conv2D(
                        channels, kernel_size=3, padding=1, bias_initializer="zeros",
                        weight_initializer=Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)))
                    if batch_norm:
                        self.features.add(nn.BatchNorm())
                    self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(strides=2))
            for _ in range(2):
                self.features.add(_dense(4096, activation="relu"), nn.Dropout(rate=0.5))
            self.output = _dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_vgg(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """VGG with ``num_layers`` (11, 13, 16, 19); ``kwargs`` go to the network (``classes``, ``batch_norm``...)."""
    if num_layers not in _SPEC:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are {sorted(_SPEC)}")
    layers, filters = _SPEC[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        load_pretrained(net, "vgg%d%s" % (num_layers, "_bn" if kwargs.get("batch_norm") else ""), ctx, root)
    return net


vgg11 = constructor("vgg11", get_vgg, 11)
vgg13 = constructor("vgg13", get_vgg, 13)
vgg16 = constructor("vgg16", get_vgg, 16)
vgg19 = constructor("vgg19", get_vgg, 19)
vgg11_bn = constructor("vgg11_bn", get_vgg, 11, batch_norm=True)
vgg13_bn = constructor("vgg13_bn", get_vgg, 13, batch_norm=True)
vgg16_bn = constructor("vgg16_bn", get_vgg, 16, batch_norm=True)
vgg19_bn = constructor("vgg19_bn", get_vgg, 19, batch_norm=True)
