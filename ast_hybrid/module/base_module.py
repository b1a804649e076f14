"""``mx.mod.BaseModule``: the state flags and the loops every module shares (``fit``, ``score``, ``predict``,
``iter_predict``, ``forward_backward``, ``set_params``, ``save_params``/``load_params``), as MXNet 1.9.1's
``python/mxnet/module/base_module.py`` writes them; ``module.Module`` computes."""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from ast_hybrid.core.errors import unsupported
from ast_hybrid.module.model import BatchEndParam, split_params

__all__ = ["BaseModule"]


def _as_list(obj):
    return obj if isinstance(obj, list) else [obj]


class BaseModule:
    """MXNet's ``BaseModule``: the state flags, and the loops every module shares (``fit``, ``score``,
    ``predict``, ``iter_predict``, ``forward_backward``, ``save_params``/``load_params``)."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        """Parameters from dicts of name to NDArray: all of them (``init_params`` with no initializer) unless
        ``allow_missing``; then the ones given (``_assign_params``)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call ignored.",
                          stacklevel=2)
            return
        self._assign_params(arg_params, aux_params, allow_missing, force_init, allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def forward_backward(self, data_batch):
        """A forward pass in training mode, then the backward."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None, score_end_callback=None,
              reset=True, epoch=0, sparse_row_id_fn=None):
        """The metric over ``eval_data`` (forward passes in prediction mode): ``[(name, value), ...]``."""
        from ast_hybrid.metric import metrics

        if not isinstance(eval_metric, metrics.EvalMetric):
            eval_metric = metrics.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in self._predicted(eval_data, num_batch, reset, sparse_row_id_fn):
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch], pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch, eval_metric=eval_metric, locals=locals())
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yields ``(outputs, nbatch, batch)`` per batch of ``eval_data``, the padding cut off."""
        for nbatch, eval_batch in self._predicted(eval_data, num_batch, reset, sparse_row_id_fn):
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def _predicted(self, eval_data, num_batch, reset, sparse_row_id_fn):
        """``(nbatch, batch)`` for each batch of ``eval_data`` (at most ``num_batch``), after its forward pass
        in prediction mode."""
        assert self.binded and self.params_initialized
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            yield nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True, always_output_list=False,
                sparse_row_id_fn=None):
        """The outputs over ``eval_data`` (a DataIter, or one NDArray/numpy batch), batches concatenated."""
        from ast_hybrid import nd
        from ast_hybrid.io.iterators import DataBatch, DataIter

        assert self.binded and self.params_initialized
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("eval_data must be of type NDArray or DataIter")
        output_list = [[out.copy() for out in outputs]
                       for outputs, _, _ in self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            for out in output_list:
                assert len(out) == num_outputs, "Cannot merge batches, as num of outputs is not the same " \
                                                "in mini-batches. Maybe bucketing is used?"
            merged = [nd.concatenate([out[i] for out in output_list]) for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None, batch_end_callback=None,
            kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None, aux_params=None,
            allow_missing=False, force_rebind=False, force_init=False, begin_epoch=0, num_epoch=None,
            validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """MXNet's training loop: bind, init_params, init_optimizer, then per epoch forward_backward, update
        and the metric per batch, the epoch's log lines, the callbacks and the validation score."""
        from ast_hybrid import init as _init
        from ast_hybrid.metric import metrics

        assert num_epoch is not None, "please specify number of epochs"
        if initializer is None:
            initializer = _init.Uniform(0.01)
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metrics.EvalMetric):
            eval_metric = metrics.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            next_data_batch = next(data_iter)
            while not end_of_batch:
                data_batch = next_data_batch
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch], pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals())
                    for callback in _as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params_now, aux_params_now = self.get_params()
            self.set_params(arg_params_now, aux_params_now)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params_now, aux_params_now)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    # -- parameters on disk ---------------------------------------------------------------------------------
    def save_params(self, fname):
        """The parameters as MXNet's file (``arg:``/``aux:`` names)."""
        from ast_hybrid import nd

        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v for k, v in aux_params.items()})
        nd.save(fname, save_dict)

    def load_params(self, fname):
        """Parameters from MXNet's file (``arg:``/``aux:`` names)."""
        from ast_hybrid import nd

        self.set_params(*split_params(nd.load(fname), fname))

    def prepare(self, data_batch, sparse_row_id_fn=None):
        if sparse_row_id_fn is not None:
            raise unsupported("mxnet.module", "Module.prepare(sparse_row_id_fn=...)",
                              "ast-hybrid has dense storage only")

    def install_monitor(self, mon):
        raise unsupported("mxnet.module", "Module.install_monitor", "there is no executor to watch: the graph "
                          "runs as one compiled program")

    @property
    def symbol(self):
        return self._symbol
