"""``mxnet.gluon.contrib.nn``: MXNet 1.9.1's contributed layers, with its constructor signatures, block
prefixes and parameter names.

- ``Concurrent``, ``HybridConcurrent`` (concatenate the children's outputs on ``axis``, default -1) and
  ``Identity``: the layers of ``ast_hybrid.gluon.nn``, re-exported;
- ``SparseEmbedding``: ``nd.Embedding`` as a ``Block``, its weight kept dense;
- ``SyncBatchNorm``: ``BatchNorm`` over axis 1, whose statistics MXNet gathers across devices; a program here
  runs on one device, where it is BatchNorm;
- ``PixelShuffle1D``, ``PixelShuffle2D``, ``PixelShuffle3D``: channel groups regrouped into blocks of pixels,
  with MXNet's reshapes.

    >>> import numpy as np
    >>> from ast_hybrid.gluon.contrib import nn
    >>> nn.PixelShuffle2D((2, 3))(np.zeros((1, 12, 3, 5), 'float32')).shape
    (1, 2, 6, 15)
    >>> bn = nn.SyncBatchNorm(in_channels=3, prefix='sbn_')
    >>> list(bn.collect_params().keys())
    ['sbn_gamma', 'sbn_beta', 'sbn_running_mean', 'sbn_running_var']
"""

from __future__ import annotations

from ast_hybrid.gluon.block import Block, HybridBlock
from ast_hybrid.gluon.nn import BatchNorm, Concurrent, HybridConcurrent, Identity

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D"]


class SparseEmbedding(Block):
    """MXNet's SparseEmbedding: rows of ``weight`` (``input_dim``, ``output_dim``) at the integer values of the
    input, as ``nd.Embedding`` gives them.

    As MXNet's, the weight and its gradient are row_sparse (``core/sparse.py``: held dense here): the forward
    reads the rows it looks up with ``weight.row_sparse_data(x)``, which needs a ``Trainer`` made with the
    weight, and the gradient's rows are the looked-up ones, which SGD and Adam update lazily."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype, "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        from ast_hybrid import nd

        return nd.Embedding(x, self.weight.row_sparse_data(x), name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class SyncBatchNorm(BatchNorm):
    """MXNet's cross-device synchronized BatchNorm (``F.contrib.SyncBatchNorm``, axis 1).

    MXNet normalises with the statistics of the whole batch split over ``num_devices`` GPUs (default: all
    visible ones, with a warning).  A program here runs on one device, where SyncBatchNorm is BatchNorm:
    ``num_devices`` is kept (``ndev``, shown by ``repr``) and changes nothing, and no warning is given when
    it is left out (it is then 1).  The parameters are ``gamma``, ``beta``, ``running_mean`` and
    ``running_var``, under the prefix ``syncbatchnorm<n>_``; in training mode the running statistics follow
    ``running = running * momentum + batch * (1 - momentum)`` in a training step's backward, as BatchNorm's."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer, running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer, in_channels=in_channels,
                         **kwargs)
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": 1 if num_devices is None else num_devices,
                        "key": self.prefix}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        # F.contrib.SyncBatchNorm is BatchNorm on axis 1 here; in training its backward calls _update_running
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                                       update=self._update_running, **self._kwargs)

    def __repr__(self):
        # BatchNorm's, with the key quoted: MXNet's repr shows every value with repr()
        return super().__repr__().replace(f"key={self.prefix},", f"key={self.prefix!r},")


def _factors(factor, n):
    """MXNet's reading of a PixelShuffle factor: an int for every axis, or ``n`` ints."""
    try:
        return (int(factor),) * n
    except TypeError:
        factors = tuple(int(f) for f in factor)
        if len(factors) != n:       # MXNet asserts it; raised by hand so that ``python -O`` keeps the check
            raise AssertionError(f"wrong length {len(factors)}")
        return factors


class PixelShuffle1D(HybridBlock):
    """``(N, f*C, W)`` -> ``(N, C, W*f)``: each group of ``f`` channels becomes ``f`` neighbouring values
    along ``W``.  ``factor`` is an int (MXNet reads it with ``int()``)."""

    def __init__(self, factor):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))     # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))        # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))         # (N, C, W*f)

    def __repr__(self):
        return f"{type(self).__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """``(N, f1*f2*C, H, W)`` -> ``(N, C, H*f1, W*f2)``: each group of ``f1*f2`` channels becomes an
    ``f1 x f2`` block of pixels.  ``factor``: an int or 2 ints."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))    # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))      # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))          # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))             # (N, C, H*f1, W*f2)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """``(N, f1*f2*f3*C, D, H, W)`` -> ``(N, C, D*f1, H*f2, W*f3)``: each group of ``f1*f2*f3`` channels
    becomes an ``f1 x f2 x f3`` block of voxels.  ``factor``: an int or 3 ints.  MXNet's steps (its transpose
    stops at 6 axes, so it swaps axes pairwise) are kept."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))   # (N, C, f1*f2*f3, D, H, W)
        x = F.swapaxes(x, 2, 3)                                # (N, C, D, f1*f2*f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))     # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                  # (N, C, D*f1, f2*f3, H, W)
        x = F.swapaxes(x, 3, 4)                                # (N, C, D*f1, H, f2*f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))          # (N, C, D*f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                  # (N, C, D*f1, H*f2, f3, W)
        x = F.swapaxes(x, 4, 5)                                # (N, C, D*f1, H*f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))                  # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors})"
