"""MXNet 1.9.1's ``DataLoader``: mini-batches from a dataset, through a batch sampler and a batchify function.

Batches are made in this process, one at a time as they are asked for.  ``num_workers > 0``,
``thread_pool``, ``prefetch``, ``pin_memory`` and ``timeout`` are accepted and change nothing but speed in
MXNet; here they change nothing at all (the batches are the same, made in-process: the arrays live in jax,
and forking a process that holds jax is not safe).
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.gluon.data import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data):
    """MXNet's: NDArray samples are stacked (``nd.stack``); tuples are batchified field by field into a list;
    anything else goes through ``np.asarray`` and becomes an NDArray of numpy's dtype."""
    from ast_hybrid import nd
    from ast_hybrid.ndarray import NDArray

    if isinstance(data[0], NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(i) for i in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype)


default_mp_batchify_fn = default_batchify_fn


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
        for batch in self._batch_sampler:
            yield self._batchify_fn([self._dataset[idx] for idx in batch])

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Start a fresh pass over the data for the next ``iter()``."""
        self._iter = self._batches()

    def clean(self):
        """Drop the prepared pass."""
        self._iter = None
