"""MXNet 1.9.1's MNIST, FashionMNIST, CIFAR10 and CIFAR100, read from MXNet's files already under ``root``,
and ``ImageFolderDataset`` (one folder per class of image files, decoded with Pillow).

MXNet downloads a missing file (or one whose sha1 differs) from its repository; ast-hybrid does not fetch
files: a missing one is :class:`DatasetNotFound` naming the file and where MXNet gets it, and a present one
with another sha1 is read, with a warning (MXNet would fetch it again).  Samples are ``(data, label)``: data
an NDArray (H, W, C) of uint8, the label a numpy int32 scalar, through ``transform(data, label)`` if given.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
import warnings

import numpy as np

from ast_hybrid.core import settings
from ast_hybrid.gluon.data import dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageFolderDataset", "DatasetNotFound"]

_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def _data_dir():
    return settings.mxnet_home()


class DatasetNotFound(FileNotFoundError):
    """A dataset file MXNet would download is not on disk."""


def _sha1(path):
    sha1 = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    return sha1.hexdigest()


def _local(root, namespace, name, sha1, cls):
    path = os.path.join(root, name)
    if not os.path.exists(path):
        raise DatasetNotFound(
            f"{cls}: {path} is not there, and ast-hybrid does not download (MXNet would fetch "
            f"{_REPO}gluon/dataset/{namespace}/{name}). Put MXNet's file there, or point root= at its folder")
    if _sha1(path) != sha1:
        warnings.warn(f"{cls}: {path} is not MXNet's file (sha1 differs); reading it as it is (MXNet would "
                      "download it again)", stacklevel=4)
    return path


class _DownloadedDataset(dataset.Dataset):
    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._data = self._label = None
        root = os.path.expanduser(root)
        self._root = root
        if not os.path.isdir(root):
            os.makedirs(root)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError


class MNIST(_DownloadedDataset):
    """MNIST from ``{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz`` under ``root``: (28, 28, 1) uint8."""

    _namespace = "mnist"
    _files = {True: (("train-images-idx3-ubyte.gz", "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d"),
                     ("train-labels-idx1-ubyte.gz", "2a80914081dc54586dbdf242f9805a6b8d2a15fc")),
              False: (("t10k-images-idx3-ubyte.gz", "c3a25af1f52dad7f726cce8cacb138654b760d48"),
                      ("t10k-labels-idx1-ubyte.gz", "763e7fa3757d93b0cdec073cef058b2004252c17"))}

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "mnist"), train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        from ast_hybrid import nd

        data, label = self._files[bool(self._train)]
        cls = type(self).__name__
        data_file = _local(self._root, self._namespace, *data, cls)
        label_file = _local(self._root, self._namespace, *label, cls)
        with gzip.open(label_file, "rb") as fin:
            struct.unpack(">II", fin.read(8))
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        with gzip.open(data_file, "rb") as fin:
            struct.unpack(">IIII", fin.read(16))
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(len(label), 28, 28, 1)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Fashion-MNIST, MNIST's format and file names (its own sha1s), default root ``.../fashion-mnist``."""

    _namespace = "fashion-mnist"
    _files = {True: (("train-images-idx3-ubyte.gz", "0cf37b0d40ed5169c6b3aba31069a9770ac9043d"),
                     ("train-labels-idx1-ubyte.gz", "236021d52f1e40852b06a4c3008d8de8aef1e40b")),
              False: (("t10k-images-idx3-ubyte.gz", "626ed6a7c06dd17c0eec72fa3be1740f146a2863"),
                      ("t10k-labels-idx1-ubyte.gz", "17f9ab60e7257a1620f4ad76bbbaf857c3920701"))}

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "fashion-mnist"), train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10 from the binary batches (``data_batch_1..5.bin``, ``test_batch.bin``) under ``root``:
    (32, 32, 3) uint8."""

    _namespace = "cifar10"
    _label_bytes = 1
    _files = {True: [("data_batch_1.bin", "aadd24acce27caa71bf4b10992e9e7b2d74c2540"),
                     ("data_batch_2.bin", "c0ba65cce70568cd57b4e03e9ac8d2a5367c1795"),
                     ("data_batch_3.bin", "1dd00a74ab1d17a6e7d73e185b69dbf31242f295"),
                     ("data_batch_4.bin", "aab85764eb3584312d3c7f65fd2fd016e36a258e"),
                     ("data_batch_5.bin", "26e2849e66a845b7f1e4614ae70f4889ae604628")],
              False: [("test_batch.bin", "67eb016db431130d61cd03c7ad570b013799c88c")]}

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "cifar10"), train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self):
        return 0

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(-1, 3072 + self._label_bytes)
        return (data[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1),
                data[:, self._label_column()].astype(np.int32))

    def _get_data(self):
        from ast_hybrid import nd

        cls = type(self).__name__
        files = [_local(self._root, self._namespace, name, sha1, cls) for name, sha1 in self._files[bool(self._train)]]
        data, label = zip(*(self._read_batch(path) for path in files))
        data, label = np.concatenate(data), np.concatenate(label)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class CIFAR100(CIFAR10):
    """CIFAR-100 from ``train.bin``/``test.bin`` under ``root``; ``fine_label`` picks the 100 classes."""

    _namespace = "cifar100"
    _label_bytes = 2
    _files = {True: [("train.bin", "e207cd2e05b73b1393c74c7f5e7bea451d63e08e")],
              False: [("test.bin", "8fb6623e830365ff53cf14adec797474f5478006")]}

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "cifar100"), fine_label=False, train=True,
                 transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self):
        return 0 + self._fine_label


class ImageFolderDataset(dataset.Dataset):
    """The images under ``root/<class>/`` (``.jpg``, ``.jpeg``, ``.png``), labelled by the class folder's rank
    in sorted order (``synsets[label]`` is its name; ``items`` the ``(filename, label)`` pairs).  A sample is
    ``(uint8 NDArray (H, W, 3), or (H, W, 1) with flag=0; int label)``, through ``transform(data, label)``
    if given.  Files are decoded with Pillow (``_image.imread``)."""

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support {', '.join(self._exts)}")
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        from ast_hybrid.gluon.data.vision._image import imread

        img, label = imread(self.items[idx][0], self._flag), self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
