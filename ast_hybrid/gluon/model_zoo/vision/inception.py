"""Inception V3 (Szegedy et al. 2015) as in MXNet 1.9.1's ``mxnet/gluon/model_zoo/vision/inception.py``:
same structure, prefixes (``A1_`` ... ``E2_``) and parameter names, so MXNet's ``save_parameters`` files
load directly.

Every convolution is bias-free, followed by BatchNorm (epsilon 1e-3) and ReLU.  A mixed block concatenates
its branches on the channel axis; a branch is an optional pooling followed by convolutions, written below as
``(pool, (channels, kernel[, stride[, padding]]), ...)``.  The last pooling has a fixed 8x8 window, so the
input must be 299 x 299.  (MXNet's file also defines an auxiliary classifier that Inception3 never uses.)"""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.contrib.nn import HybridConcurrent
from ast_hybrid.gluon.model_zoo._zoo import load_pretrained

__all__ = ["Inception3", "inception_v3"]


def _basic_conv(channels, kernel_size, strides=1, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size=kernel_size, strides=strides, padding=padding, use_bias=False),
            nn.BatchNorm(epsilon=0.001), nn.Activation("relu"))
    return out


def _branch(pool, *convs):
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        out.add(_basic_conv(*conv))
    return out


def _mixed(prefix, *branches):
    """The branches (specs, or functions building one) made in the block's name scope, in order."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for branch in branches:
            out.add(branch() if callable(branch) else _branch(*branch))
    return out


def _block_a(pool_features, prefix):
    return _mixed(prefix, (None, (64, 1)), (None, (48, 1), (64, 5, 1, 2)),
                  (None, (64, 1), (96, 3, 1, 1), (96, 3, 1, 1)), ("avg", (pool_features, 1)))


def _block_b(prefix):
    return _mixed(prefix, (None, (384, 3, 2)), (None, (64, 1), (96, 3, 1, 1), (96, 3, 2)), ("max",))


def _block_c(c7, prefix):
    row, col = ((1, 7), 1, (0, 3)), ((7, 1), 1, (3, 0))   # a 1x7 and a 7x1 convolution, 'same' padding
    return _mixed(prefix, (None, (192, 1)), (None, (c7, 1), (c7, *row), (192, *col)),
                  (None, (c7, 1), (c7, *col), (c7, *row), (c7, *col), (192, *row)), ("avg", (192, 1)))


def _block_d(prefix):
    return _mixed(prefix, (None, (192, 1), (320, 3, 2)),
                  (None, (192, 1), (192, (1, 7), 1, (0, 3)), (192, (7, 1), 1, (3, 0)), (192, 3, 2)), ("max",))


def _split_1x3_3x1():
    """The 1x3 and 3x1 convolutions side by side, concatenated."""
    out = HybridConcurrent(axis=1, prefix="")
    out.add(_branch(None, (384, (1, 3), 1, (0, 1))), _branch(None, (384, (3, 1), 1, (1, 0))))
    return out


def _then_split(*convs):
    def build():
        seq = nn.HybridSequential(prefix="")
        seq.add(_branch(None, *convs))
        seq.add(_split_1x3_3x1())
        return seq
    return build


def _block_e(prefix):
    return _mixed(prefix, (None, (320, 1)), _then_split((384, 1)), _then_split((448, 1), (384, 3, 1, 1)),
                  ("avg", (192, 1)))


class Inception3(HybridBlock):
    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_basic_conv(32, 3, 2), _basic_conv(32, 3), _basic_conv(64, 3, 1, 1),
                              nn.MaxPool2D(pool_size=3, strides=2), _basic_conv(80, 1), _basic_conv(192, 3),
                              nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_block_a(32, "A1_"), _block_a(64, "A2_"), _block_a(64, "A3_"), _block_b("B_"),
                              _block_c(128, "C1_"), _block_c(160, "C2_"), _block_c(160, "C3_"),
                              _block_c(192, "C4_"), _block_d("D_"), _block_e("E1_"), _block_e("E2_"))
            self.features.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=None, root=None, **kwargs):
    """Inception V3; ``kwargs`` go to the network (``classes``, ``prefix``...)."""
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, "inceptionv3", ctx, root)
    return net
