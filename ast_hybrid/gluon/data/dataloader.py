"""MXNet 1.9.1's ``DataLoader``: mini-batches from a dataset, through a batch sampler and a batchify function.

Batches are made in this process, one at a time as they are asked for.  ``num_workers > 0``,
``thread_pool``, ``prefetch``, ``pin_memory`` and ``timeout`` are accepted and change nothing but speed in
MXNet; here they change nothing at all (the batches are the same, made in-process: the arrays live in jax,
and forking a process that holds jax is not safe).
"""

from __future__ import annotations

import io
import multiprocessing.pool
import pickle
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ast_hybrid.gluon.data import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]
# MXNet's internals that GluonCV/GluonNLP import and subclass (their own loaders, with a worker pool they make):
# ForkingPickler (pickles NDArrays by value here), _as_in_context, _worker_fn, _thread_worker_fn,
# _worker_initializer and _MultiWorkerIter, which behave as MXNet 1.9.1's with any pool that has apply_async.


def default_batchify_fn(data):
    """MXNet's: NDArray samples are stacked (``nd.stack``); tuples are batchified field by field into a list;
    anything else goes through ``np.asarray`` and becomes an NDArray of numpy's dtype.  Under
    ``npx.set_np()`` the batches are ``mx.np`` arrays."""
    from ast_hybrid import nd
    from ast_hybrid.core.ndarray import NDArray, as_np
    from ast_hybrid.core.npmode import MODE

    if isinstance(data[0], NDArray):
        out = nd.stack(*data)
    elif isinstance(data[0], tuple):
        return [default_batchify_fn(i) for i in zip(*data)]
    else:
        data = np.asarray(data)
        out = nd.array(data, dtype=data.dtype)
    return as_np(out) if MODE.array else out


default_mp_batchify_fn = default_batchify_fn


def _gatherable(dataset):
    """The fields of an ``ArrayDataset`` of arrays (NDArrays, NumPy arrays), which :func:`_gather` batches in
    one indexing each: what ``default_batchify_fn`` makes of the samples one by one (d2l's ``load_array``:
    a sample at a time cost most of a small model's epoch); None for any other dataset."""
    from ast_hybrid.core.ndarray import NDArray
    from ast_hybrid.gluon.data.dataset import ArrayDataset

    if type(dataset) is not ArrayDataset:
        return None
    fields = dataset._data
    if not all(isinstance(f, (NDArray, np.ndarray)) and f.ndim >= 1 for f in fields):
        return None
    return fields


def _gather(fields, batch):
    import jax.numpy as jnp

    from ast_hybrid import nd
    from ast_hybrid.core.ndarray import NDArray, as_np
    from ast_hybrid.core.npmode import MODE

    out = []
    for f in fields:
        if isinstance(f, NDArray):
            b = NDArray(jnp.take(f._arr, jnp.asarray(batch, dtype=jnp.int32), axis=0))
        else:
            rows = f[np.asarray(batch, dtype=np.int64)]
            b = nd.array(rows, dtype=rows.dtype)
        out.append(as_np(b) if MODE.array else b)
    return out[0] if len(out) == 1 else out


def _as_in_context(data, ctx):
    """``data`` (an NDArray, or nested lists/tuples of them) moved to ``ctx``; anything else as it is."""
    from ast_hybrid.core.ndarray import NDArray

    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


_worker_dataset = None


def _worker_initializer(dataset, active_shape=False, active_array=False):
    """A worker process's initializer: the dataset its ``_worker_fn`` reads."""
    global _worker_dataset
    _worker_dataset = dataset


def _worker_fn(samples, batchify_fn, dataset=None):
    """In a worker process: the batch of ``samples`` from the initializer's dataset, pickled."""
    batch = batchify_fn([_worker_dataset[i] for i in samples])
    buf = io.BytesIO()
    ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(batch)
    return buf.getvalue()


def _thread_worker_fn(samples, batchify_fn, dataset):
    """In a worker thread: the batch of ``samples`` from ``dataset``."""
    return batchify_fn([dataset[i] for i in samples])


class _MultiWorkerIter:
    """MXNet's iterator over batches made by ``worker_pool.apply_async(worker_fn, (indices, batchify_fn,
    dataset))``, ``prefetch`` ahead, returned in order (unpickled when ``dataset`` is None: a process pool)."""

    def __init__(self, worker_pool, batchify_fn, batch_sampler, pin_memory=False, pin_device_id=0,
                 worker_fn=_worker_fn, prefetch=0, dataset=None, data_loader=None, timeout=120):
        self._worker_pool, self._batchify_fn, self._batch_sampler = worker_pool, batchify_fn, batch_sampler
        self._data_buffer = {}
        self._rcvd_idx = self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory, self._pin_device_id = pin_memory, pin_device_id
        self._dataset, self._data_loader, self._timeout = dataset, data_loader, timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def _push_next(self):
        indices = next(self._iter, None)
        if indices is None:
            return
        self._data_buffer[self._sent_idx] = self._worker_pool.apply_async(
            self._worker_fn, (indices, self._batchify_fn, self._dataset))
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            assert not self._data_buffer, "Data buffer should be empty at this moment"
            raise StopIteration
        pending = self._data_buffer.pop(self._rcvd_idx)
        try:
            batch = pending.get(self._timeout)
        except Exception:
            if not isinstance(self._worker_pool, multiprocessing.pool.ThreadPool):
                self._worker_pool.terminate()
            raise
        if self._dataset is None:
            batch = pickle.loads(batch)
        if self._pin_memory:
            from ast_hybrid.core.context import Context

            batch = _as_in_context(batch, Context("cpu_pinned", self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self


class DataLoader:
    """``DataLoader(dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
    batch_sampler=None, batchify_fn=None, num_workers=0, ...)`` as MXNet 1.9.1's (see the module doc for
    ``num_workers``).  ``shuffle`` draws from numpy's global generator, as MXNet's ``RandomSampler``."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None, batch_sampler=None,
                 batchify_fn=None, num_workers=0, pin_memory=False, pin_device_id=0, prefetch=None,
                 thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        assert timeout > 0, "timeout must be positive, given {}".format(timeout)
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                sampler = _sampler.RandomSampler(len(dataset)) if shuffle else _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified if batch_sampler "
                             "is specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn
        self.auto_reload = auto_reload
        self._iter = None
        if auto_reload:
            self.refresh()

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        t, self._iter = self._iter, None
        yield from t
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _batches(self):
        fields = _gatherable(self._dataset) if self._batchify_fn is default_batchify_fn else None
        for batch in self._batch_sampler:
            if fields is not None:
                yield _gather(fields, batch)
            else:
                yield self._batchify_fn([self._dataset[idx] for idx in batch])

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Start a fresh pass over the data for the next ``iter()``."""
        self._iter = self._batches()

    def clean(self):
        """Drop the prepared pass."""
        self._iter = None
