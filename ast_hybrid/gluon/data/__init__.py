"""``gluon.data``: MXNet 1.9.1's datasets, samplers and ``DataLoader`` (``mxnet.gluon.data``), in-process.

``dataset`` (``Dataset`` with ``transform``/``transform_first``/``filter``/``shard``/``take``/``sample``,
``SimpleDataset``, ``ArrayDataset``), ``sampler`` (``Sequential``/``Random``/``Filter``/``BatchSampler``),
``dataloader`` (``DataLoader``, ``default_batchify_fn``) and ``vision`` (``transforms`` on NDArrays; ``MNIST``,
``FashionMNIST``, ``CIFAR10``, ``CIFAR100`` read from files already on disk).  Each follows MXNet 1.9.1's
source (``tests/mxnet/test_data.py``, ``test_vision.py`` compare them with MXNet).

May import: ``ast_hybrid.nd``, ``ast_hybrid.ndarray``, the ops, ``ast_hybrid.gluon`` (blocks), numpy, jax.
"""

from ast_hybrid.gluon.data import dataloader, dataset, sampler, vision
from ast_hybrid.gluon.data.dataloader import DataLoader
from ast_hybrid.gluon.data.dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from ast_hybrid.gluon.data.sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler", "SequentialSampler",
           "RandomSampler", "FilterSampler", "BatchSampler", "DataLoader", "dataset", "sampler", "dataloader",
           "vision"]
