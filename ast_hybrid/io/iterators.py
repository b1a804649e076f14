"""``mxnet.io``: ``NDArrayIter`` over arrays in memory, with MXNet 1.9.1's ``DataBatch``, ``DataDesc`` and
``DataIter`` (``tests/mxnet/test_io.py`` iterates ours and MXNet's and compares every batch and pad).

``NDArrayIter(data, label=None, batch_size=1, shuffle=False, last_batch_handle='pad')`` takes an array, a
list of arrays (named ``_0_data``, ``_1_data``...) or a dict of them; the sources are kept sorted by name,
as MXNet does.  The last, incomplete batch is padded with the first examples ('pad', ``batch.pad`` says
how many), dropped ('discard') or carried into the first batch of the next epoch ('roll_over').  Shuffling
uses numpy's global generator, as MXNet's does (``np.random.seed`` makes it repeat).  The record-file
iterators (``ImageRecordIter``, ``MNISTIter``, ``CSVIter``...) are MXNet's C++ readers and are an error
naming the API.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np


__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name and shape of a data source, with ``dtype`` and ``layout`` as attributes (MXNet's)."""

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, shape)
        ret.dtype, ret.layout = dtype, layout
        return ret

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch: lists ``data`` and ``label`` of NDArrays, ``pad`` (examples padded at the end), ``index``."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None, provide_data=None,
                 provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), "Data must be list of NDArrays"
        if label is not None:
            assert isinstance(label, (list, tuple)), "Label must be list of NDArrays"
        self.data, self.label, self.pad, self.index = data, label, pad, index
        self.bucket_key, self.provide_data, self.provide_label = bucket_key, provide_data, provide_label

    def __str__(self):
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {[d.shape for d in self.data]} label shapes: {label_shapes}"


class DataIter:
    """MXNet's iterator protocol: ``reset``, ``iter_next``, ``getdata``/``getlabel``/``getpad``/``getindex``;
    ``next()`` (and Python iteration) makes the ``DataBatch``."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        pass

    def next(self):
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        pass

    def getdata(self):
        pass

    def getlabel(self):
        pass

    def getindex(self):
        return None

    def getpad(self):
        pass


def _init_data(data, allow_empty, default_name):
    """``[(name, NDArray)]`` sorted by name, from an array, a list of arrays or a dict (MXNet's rules)."""
    from ast_hybrid import ops as nd     # the op namespace nd serves (nd itself imports this room)
    from ast_hybrid.core.ndarray import NDArray

    assert data is not None or allow_empty
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert len(data) > 0
        data = OrderedDict([(default_name, data[0])] if len(data) == 1 else
                           [(f"_{i}_{default_name}", d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, h5py.Dataset a list of them or dict with them as values")
    out = {}
    for k, v in data.items():
        try:
            out[k] = v if isinstance(v, NDArray) else nd.array(v)
        except Exception as e:
            raise TypeError(f"Invalid type '{type(v)}' for {k}, should be NDArray, numpy.ndarray or h5py.Dataset") \
                from e
    return sorted(out.items())


class NDArrayIter(DataIter):
    """MXNet's ``NDArrayIter`` (see the module docstring)."""

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad", data_name="data",
                 label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle, self.last_batch_handle, self.batch_size = shuffle, last_batch_handle, batch_size
        self.cursor = -batch_size
        self.num_data = self.idx.shape[0]
        self.layout = layout
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        self._cache_data = self._cache_label = None     # the incomplete last batch, for 'roll_over'

    def _descs(self, sources):
        axis = self.layout.find("N")
        return [DataDesc(k, tuple(v.shape[:axis]) + (self.batch_size,) + tuple(v.shape[axis + 1:]), v.dtype,
                         layout=self.layout) for k, v in sources]

    @property
    def provide_data(self):
        return self._descs(self.data)

    @property
    def provide_label(self):
        return self._descs(self.label)

    def hard_reset(self):
        """Back to the start, dropping what 'roll_over' carried."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = self._cache_label = None

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and self.num_data - self.batch_size < self.cursor < self.num_data:
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if data[0].shape[self.layout.find("N")] != self.batch_size:    # incomplete: kept for the next epoch
            self._cache_data, self._cache_label = data, label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, sources, start=None, end=None):
        assert start is not None or end is not None, "should at least specify start or end"
        start = 0 if start is None else start
        if end is None:
            end = sources[0][1].shape[0] if sources else 0
        axis = self.layout.find("N")
        return [v.slice_axis(axis=axis, begin=start, end=end) for _, v in sources]

    def _concat(self, first, second):
        from ast_hybrid import ops as nd     # the op namespace nd serves (nd itself imports this room)

        if not first or not second:
            return first if first else second
        assert len(first) == len(second), "data source should contain the same size"
        return [nd.concat(a, b, dim=self.layout.find("N")) for a, b in zip(first, second)]

    def _tile(self, data, repeats):
        from ast_hybrid import ops as nd     # the op namespace nd serves (nd itself imports this room)

        return [nd.tile(d, (repeats,) + (1,) * (d.ndim - 1)) for d in data]

    def _batchify(self, sources):
        assert self.cursor < self.num_data, "DataIter needs reset."
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            # the first batch of an epoch after 'roll_over': last epoch's remainder, then the first examples
            assert self._cache_data is not None or self._cache_label is not None, \
                "next epoch should have cached data"
            cached = self._cache_data if self._cache_data is not None else self._cache_label
            second = self._getdata(sources, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cached, second)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first = self._getdata(sources, start=self.cursor)
            if pad > self.num_data:
                second = self._tile(self._getdata(sources, end=self.num_data), pad // self.num_data)
                if pad % self.num_data:
                    second = self._concat(second, self._getdata(sources, end=pad % self.num_data))
            else:
                second = self._getdata(sources, end=pad)
            return self._concat(first, second)
        return self._getdata(sources, self.cursor, min(self.cursor + self.batch_size, self.num_data))

    def getdata(self):
        return self._batchify(self.data)

    def getlabel(self):
        return self._batchify(self.label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        from ast_hybrid import ops as nd     # the op namespace nd serves (nd itself imports this room)

        np.random.shuffle(self.idx)
        self.data = [(k, nd.array(v.asnumpy()[self.idx], dtype=v.dtype)) for k, v in self.data]
        self.label = [(k, nd.array(v.asnumpy()[self.idx], dtype=v.dtype)) for k, v in self.label]
