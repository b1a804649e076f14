"""DenseNet 121/161/169/201 (Huang et al. 2016) as in MXNet 1.9.1's
``mxnet/gluon/model_zoo/vision/densenet.py``: same structure, prefixes and parameter names, so MXNet's
``save_parameters`` files load directly.

Each dense layer (BatchNorm, ReLU, 1x1 convolution to ``bn_size * growth_rate``, BatchNorm, ReLU, 3x3
convolution to ``growth_rate``) concatenates its output to its input; between the four dense blocks a
transition halves the channels (1x1 convolution) and the resolution (2x2 average pooling).  The last
pooling has a fixed 7x7 window, so the input must be 224 x 224."""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.contrib.nn import HybridConcurrent, Identity
from ast_hybrid.gluon.model_zoo._zoo import constructor, load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]

# layers -> (channels of the first convolution, growth rate, dense layers per block)
_SPEC = {121: (64, 32, [6, 12, 24, 16]),
         161: (96, 48, [6, 12, 36, 24]),
         169: (64, 32, [6, 12, 32, 32]),
         201: (64, 32, [6, 12, 48, 32])}


def _bn_relu_conv(seq, channels, **conv):
    seq.add(nn.BatchNorm(), nn.Activation("relu"), nn.Conv2D(channels, use_bias=False, **conv))


def _dense_layer(growth_rate, bn_size, dropout):
    """``concat([x, f(x)], axis=1)`` with ``f`` the bottleneck and 3x3 convolution."""
    new_features = nn.HybridSequential(prefix="")
    _bn_relu_conv(new_features, bn_size * growth_rate, kernel_size=1)
    _bn_relu_conv(new_features, growth_rate, kernel_size=3, padding=1)
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), new_features)
    return out


def _dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    block = nn.HybridSequential(prefix="stage%d_" % stage_index)
    with block.name_scope():
        for _ in range(num_layers):
            block.add(_dense_layer(growth_rate, bn_size, dropout))
    return block


def _transition(channels):
    out = nn.HybridSequential(prefix="")
    _bn_relu_conv(out, channels, kernel_size=1)
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0, classes=1000,
                 **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3, use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            channels = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_dense_block(num_layers, bn_size, growth_rate, dropout, i + 1))
                channels += num_layers * growth_rate
                if i != len(block_config) - 1:
                    channels //= 2
                    self.features.add(_transition(channels))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_densenet(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """DenseNet with ``num_layers`` (121, 161, 169, 201); ``kwargs`` go to the network (``classes``...)."""
    if num_layers not in _SPEC:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are {sorted(_SPEC)}")
    net = DenseNet(*_SPEC[num_layers], **kwargs)
    if pretrained:
        load_pretrained(net, "densenet%d" % num_layers, ctx, root)
    return net


densenet121 = constructor("densenet121", get_densenet, 121)
densenet161 = constructor("densenet161", get_densenet, 161)
densenet169 = constructor("densenet169", get_densenet, 169)
densenet201 = constructor("densenet201", get_densenet, 201)
