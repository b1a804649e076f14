"""``gluon.data.vision``: image ``transforms`` on NDArrays, the MNIST/CIFAR datasets read from disk and
``ImageFolderDataset``."""

from ast_hybrid.gluon.data.vision import datasets, transforms
from ast_hybrid.gluon.data.vision.datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset

__all__ = ["datasets", "transforms", "MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageFolderDataset"]
