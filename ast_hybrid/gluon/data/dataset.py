"""MXNet 1.9.1's ``Dataset`` and its containers (``mxnet.gluon.data.dataset``).

A dataset is anything with ``__getitem__`` and ``__len__``; ``Dataset`` adds the lazy views MXNet has:
``transform(fn, lazy=True)`` (a tuple sample is passed as ``fn(*sample)``), ``transform_first``,
``filter``, ``shard``, ``take`` and ``sample``.
"""

from __future__ import annotations

import os
import struct

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset: subclasses define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (a transformed dataset's samples are transformed
        again when read)."""
        from ast_hybrid.gluon.data.sampler import FilterSampler

        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """The ``index``-th of ``num_shards`` contiguous parts (the first ``len % num_shards`` one longer)."""
        from ast_hybrid.gluon.data.sampler import SequentialSampler

        assert index < num_shards, "Shard index of out bound: %d out of %d" % (index, num_shards)
        assert num_shards > 0, "Number of shards must be greater than 0"
        assert index >= 0, "Index must be non-negative"
        shard_len, rest = divmod(len(self), num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all of them when ``count`` is None or larger)."""
        from ast_hybrid.gluon.data.sampler import SequentialSampler

        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` gives."""
        from ast_hybrid.gluon.data.sampler import Sampler

        if not isinstance(sampler, Sampler):
            raise TypeError("Invalid sampler type: %s. Expected gluon.data.Sampler instead." % type(sampler))
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample through ``fn`` (on read; ``lazy=False``: all at once, into a ``SimpleDataset``)."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([i for i in trans])

    def transform_first(self, fn, lazy=True):
        """The first element of each sample through ``fn``, the rest as they are."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A list or array (anything with ``len()`` and ``[]``) as a dataset."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data, self._fn = data, fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset, self._sampler = dataset, sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._sampler)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Several arrays (or datasets, lists) of one length: sample ``i`` is ``(a[i], b[i], ...)`` (``a[i]``
    alone for one array).  A 1-d NDArray is kept as a numpy array, as MXNet does, so its samples are numpy
    scalars."""

    def __init__(self, *args):
        from ast_hybrid.core.ndarray import NDArray

        assert len(args) > 0, "Needs at least 1 arrays"
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            assert len(data) == self._length, (
                "All arrays must have the same length; array[0] has length %d while array[%d] has %d."
                % (self._length, i + 1, len(data)))
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


_MAGIC = 0xced7230a


class RecordFileDataset(Dataset):
    """The records of a RecordIO file ``name.rec`` (with its index ``name.idx``), each as ``bytes``, as
    MXNet's ``MXIndexedRecordIO`` reads them."""

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._positions = {}
        self.keys = []
        with open(self.idx_file) as f:
            for line in f:
                fields = line.strip().split("\t")
                key = int(fields[0])
                self._positions[key] = int(fields[1])
                self.keys.append(key)

    def _read_at(self, pos):
        parts = []
        with open(self.filename, "rb") as f:
            f.seek(pos)
            while True:
                magic, lrec = struct.unpack("<II", f.read(8))
                if magic != _MAGIC:
                    raise ValueError(f"{self.filename}: not a RecordIO record at offset {pos}")
                cflag, length = lrec >> 29, lrec & ((1 << 29) - 1)
                parts.append(f.read(length))
                f.read((4 - length % 4) % 4)
                if cflag in (0, 3):
                    return struct.pack("<I", _MAGIC).join(parts)

    def __getitem__(self, idx):
        return self._read_at(self._positions[self.keys[idx]])

    def __len__(self):
        return len(self.keys)
