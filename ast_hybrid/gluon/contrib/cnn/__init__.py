"""``mxnet.gluon.contrib.cnn``: the deformable convolution layers ``DeformableConvolution`` (v1) and
``ModulatedDeformableConvolution`` (v2), from ``conv_layers``."""

from ast_hybrid.gluon.contrib.cnn import conv_layers
from ast_hybrid.gluon.contrib.cnn.conv_layers import DeformableConvolution, ModulatedDeformableConvolution  # noqa: F401

__all__ = conv_layers.__all__
