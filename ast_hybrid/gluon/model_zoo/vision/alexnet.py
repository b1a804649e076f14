"""AlexNet ("One weird trick...", Krizhevsky 2014) as in MXNet 1.9.1's
``mxnet/gluon/model_zoo/vision/alexnet.py``: same structure, prefixes and parameter names, so MXNet's
``save_parameters`` files load directly.  Five ReLU convolutions with three 3x3/2 max poolings, then two
4096-wide ReLU dense layers with dropout 0.5 and the classifier."""

from __future__ import annotations

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.model_zoo._zoo import load_pretrained

__all__ = ["AlexNet", "alexnet"]

# (channels, kernel, stride, padding, max pooling after it?)
_CONVS = [(64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False), (256, 3, 1, 1, False),
          (256, 3, 1, 1, True)]


class AlexNet(HybridBlock):
    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                for channels, kernel, stride, padding, pool in _CONVS:
                    self.features.add(nn.Conv2D(channels, kernel_size=kernel, strides=stride, padding=padding,
                                                activation="relu"))
                    if pool:
                        self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(4096, activation="relu"), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=None, root=None, **kwargs):
    """AlexNet; ``kwargs`` go to the network (``classes``, ``prefix``...)."""
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, "alexnet", ctx, root)
    return net
