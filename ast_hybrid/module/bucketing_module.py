"""MXNet 1.9.1's ``BucketingModule`` (``python/mxnet/module/bucketing_module.py``): one ``Module`` per bucket
key (a sequence length, usually), each made from ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``
and bound sharing the default bucket's parameters and optimizer; ``forward`` switches to the batch's
``bucket_key``.  With ``mx.rnn``'s cells and ``BucketSentenceIter`` it is MXNet's language-model recipe."""

from __future__ import annotations

import logging

from ast_hybrid.core.errors import unsupported
from ast_hybrid.module.base_module import BaseModule
from ast_hybrid.module.module import Module, _checked_names

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """Modules of one shape of graph per bucket key, sharing the parameters (MXNet's)."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None, work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        assert default_bucket_key is not None
        if group2ctxs is not None:
            raise unsupported("mxnet.module", "BucketingModule(group2ctxs=...)", "contexts run as one here")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names, label_names, state_names, fixed_param_names = _checked_names(
            symbol, data_names, label_names, state_names, fixed_param_names)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args, **kwargs):
        from ast_hybrid.symbol import graph

        graph.enter_prefix("")      # a NameManager of its own, as MXNet's (node counters from 0)
        try:
            return self._sym_gen(*args, **kwargs)
        finally:
            graph.exit_prefix()

    def _module(self, symbol, data_names, label_names):
        kwargs = {} if self._context is None else {"context": self._context}
        return Module(symbol, data_names, label_names, logger=self.logger, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names, state_names=self._state_names,
                      compression_params=self._compression_params, **kwargs)

    # -- names and shapes: the current bucket's -----------------------------------------------------------------
    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        assert self.binded
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        assert self.binded
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        assert self.binded
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        assert self.binded
        return self._curr_module.symbol

    # -- parameters -------------------------------------------------------------------------------------------
    def get_params(self):
        assert self.params_initialized
        self._curr_module._params_dirty = self._params_dirty or self._curr_module._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def _assign_params(self, arg_params, aux_params, allow_missing, force_init, allow_extra):
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing, force_init=force_init,
                                     allow_extra=allow_extra)

    def init_params(self, initializer=None, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        assert self.binded, "call bind before initializing the parameters"
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                                      allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        assert self.binded and self.params_initialized
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        assert self.binded and self.params_initialized
        self._curr_module.set_states(states, value)

    # -- binding ----------------------------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write"):
        """Bind the default bucket's Module; the others are bound by :meth:`switch_bucket`, sharing its
        parameters."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        assert shared_module is None, "shared_module for BucketingModule is not supported"
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        module = self._buckets.get(self._default_bucket_key)
        if module is None:
            module = self._module(*self._call_sym_gen(self._default_bucket_key))
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind=False,
                    shared_module=None, grad_req=self._grad_req)
        self._curr_module, self._curr_bucket_key = module, self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s Module the current one, binding it (sharing the default bucket's parameters)
        the first time."""
        assert self.binded, "call bind before switching bucket"
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._module(*self._call_sym_gen(bucket_key))
            self._buckets[bucket_key] = module
        if not module.binded:
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key], grad_req=self._grad_req)
            if self.optimizer_initialized:
                module.borrow_optimizer(self._buckets[self._default_bucket_key])
        self._curr_module, self._curr_bucket_key = module, bucket_key

    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False):
        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # -- computing: the batch's bucket ------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        assert self.binded and self.params_initialized
        bucket_key = data_batch.bucket_key
        original_bucket_key = self._curr_bucket_key
        self.switch_bucket(bucket_key, data_batch.provide_data, data_batch.provide_label)
        self.switch_bucket(original_bucket_key, None, None)

    def forward(self, data_batch, is_train=None):
        assert self.binded and self.params_initialized
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        assert self.binded and self.params_initialized
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        assert self.binded and self.params_initialized and self.optimizer_initialized
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        assert self.binded and self.params_initialized
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        assert self.binded and self.params_initialized and self.inputs_need_grad
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        assert self.binded and self.params_initialized
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        raise unsupported("mxnet.module", "BucketingModule.install_monitor",
                          "Executor.set_monitor_callback on a bound Symbol gives each node's outputs")

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """``prefix-%04d.params``, each bucket's ``prefix-KEY-symbol.json`` and ``prefix.buckets`` (the keys),
        as MXNet writes them."""
        from ast_hybrid import nd

        assert len(self._buckets) > 0, "Empty BucketingModule cannot be saved"
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for bucket_key in self._buckets:
            self._call_sym_gen(bucket_key)[0].save("%s-%s-symbol.json" % (prefix, bucket_key),
                                                   remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix, nd.array(list(self._buckets.keys()), dtype="int32"))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        raise unsupported("mxnet.module", "BucketingModule.load", "make the BucketingModule with its sym_gen, bind "
                          "it, and set_params(*mx.model.load_params(prefix, epoch))")
