"""``mx.mod.BaseModule`` and ``mx.mod.Module``: MXNet 1.9.1's symbolic training API (its
``python/mxnet/module/base_module.py`` and ``module.py``, whose loops ``fit``, ``score`` and ``predict`` are
written here as there).

How it runs here: ``bind`` makes a ``gluon.SymbolBlock`` of the Symbol (inputs: the data names, the label
names the graph takes, the state names; parameters: the other arguments and the auxiliary states), hybridized,
and finds the parameters' shapes by calling it once on zeros of the bound shapes.  ``init_params`` fills
MXNet's per-name arrays (``get_params()``) with the initializer called as MXNet's Module calls it
(``initializer(InitDesc(name, attrs), arr)``, so a variable's ``__init__`` attribute and the name patterns
apply) and copies them into the block.  ``forward`` runs the block (recorded when training), ``backward``
takes the outputs' gradients (ones where none are given: MXNet's loss operators ignore them), ``update``
calls the ``mx.optimizer`` updater per parameter index, as MXNet's Module does with one context and no
kvstore, with MXNet's index-to-name table (the optimizer's default ``wd_mult`` of 0 for names other than
``*_weight``/``*_gamma``, the variables' ``lr_mult``/``wd_mult``) and ``rescale_grad = 1 / batch size``.

Several contexts (``context=[...]``) run as one: the batch is not split (MXNet's per-device BatchNorm
statistics become the batch's).  ``kvstore`` other than local, ``group2ctxs``, ``compression_params``,
``install_monitor`` and sparse data (``sparse_row_id_fn``) are refused by name where they would change what
is computed.
"""

from __future__ import annotations

import logging
import warnings

from ast_hybrid.core.errors import unsupported
from ast_hybrid.module.base_module import BaseModule, _as_list
from ast_hybrid.module.model import load_checkpoint, save_checkpoint

__all__ = ["BaseModule", "Module"]


def _check_input_names(symbol, names, typename, throw):
    """MXNet's check that the names given to a Module are arguments of its symbol."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [arg for arg in args if not arg.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = (f"\033[91mYou created Module with Module(..., {typename}_names={names}) but input with name "
               f"'{name}' is not found in symbol.list_arguments(). Did you mean one of:\n\t"
               + "\n\t".join(candidates) + "\033[0m")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _checked_names(symbol, data_names, label_names, state_names, fixed_param_names):
    """The four name lists as lists (None: none), each checked against ``symbol``'s arguments as MXNet's
    Module checks them."""
    given = (data_names, label_names, state_names, fixed_param_names)
    lists = [list(names) if names is not None else [] for names in given]
    for names, kind, throw in zip(lists, ("data", "label", "state", "fixed_param"), (True, False, True, True)):
        _check_input_names(symbol, names, kind, throw)
    return lists


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """The shapes given to ``bind`` as ``DataDesc`` lists, checked against the Module's names."""
    from ast_hybrid.io.iterators import DataDesc

    def descs(shapes):
        return [s if isinstance(s, DataDesc) else DataDesc(*s) for s in shapes]

    data_shapes = descs(data_shapes)
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = descs(label_shapes)
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _check_names_match(data_names, data_shapes, name, throw):
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = (f"Data provided by {name}_shapes don't match names specified by {name}_names "
               f"({data_shapes} vs. {data_names})")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


class Module(BaseModule):
    """MXNet's ``Module``: a Symbol trained and run with data and label names (see the module docstring)."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",), logger=logging,
                 context=None, work_load_list=None, fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        from ast_hybrid.core.context import Context, cpu

        context = cpu() if context is None else context
        self._context = [context] if isinstance(context, Context) else list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        assert len(work_load_list) == len(self._context)
        self._work_load_list = work_load_list
        if group2ctxs is not None:
            raise unsupported("mxnet.module", "Module(group2ctxs=...)", "the graph runs as one program on one "
                              "device; model parallelism over context groups is not there")
        self._symbol = symbol
        data_names, label_names, state_names, fixed_param_names = _checked_names(
            symbol, data_names, label_names, state_names, fixed_param_names)
        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names, self._label_names, self._state_names = data_names, label_names, state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = self._kvstore = self._update_on_kvstore = self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._block = None
        self._data_shapes = self._label_shapes = None
        self._outputs = None
        self._inputs = None
        self._input_grads = {}       # a data input's gradient under grad_req 'add': summed over backwards

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module of the checkpoint ``prefix`` at ``epoch`` (``save_checkpoint``'s files); its parameters
        are set at ``bind``."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """``prefix-symbol.json``, ``prefix-%04d.params`` (and ``.states``)."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        param_name = "%s-%04d.params" % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._block = None
        self._data_shapes = self._label_shapes = None
        self._input_grads = {}

    # -- names and shapes ----------------------------------------------------------------------------------
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        assert self.binded
        return self._data_shapes

    @property
    def label_shapes(self):
        assert self.binded
        return self._label_shapes

    @property
    def output_shapes(self):
        from ast_hybrid.io.iterators import DataDesc

        assert self.binded
        shapes = self._symbol.infer_shape(**self._known_shapes())[1]
        return [DataDesc(n, s) for n, s in zip(self._output_names, shapes)]

    def _known_shapes(self):
        known = {d.name: d.shape for d in self._data_shapes + (self._label_shapes or [])
                 if d.name in self._input_names}
        known.update((n, tuple(p.shape)) for n, p in self._block_params().items())
        return known

    # -- parameters ------------------------------------------------------------------------------------------
    def _block_params(self):
        return {n: self._block.params[n] for n in self._param_names + self._aux_names}

    def get_params(self):
        """``(arg_params, aux_params)``: dicts of name to NDArray."""
        assert self.params_initialized
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=None, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False):
        """Fill each parameter from ``arg_params``/``aux_params`` by name, else with ``initializer`` called
        as MXNet's Module calls it (default ``Uniform(0.01)``)."""
        from ast_hybrid import init as _init
        from ast_hybrid.init import InitDesc

        if initializer is None and arg_params is None and aux_params is None:
            initializer = _init.Uniform(0.01)
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params call ignored.",
                          stacklevel=2)
            return
        assert self.binded, "call bind before initializing the parameters"

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    if cache[name] is not arr:
                        cache[name].copyto(arr)
                else:
                    if not allow_missing:
                        raise RuntimeError(f"{name} is not presented")
                    if initializer is not None:
                        initializer(name, arr)
            else:
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._push_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def _assign_params(self, arg_params, aux_params, allow_missing, force_init, allow_extra):
        self._push_params(arg_params, aux_params, allow_extra=allow_extra)

    def _push_params(self, arg_params, aux_params, allow_extra=False):
        """Copy the named arrays into the block's parameters (what MXNet's executor group's set_params does)."""
        params = self._block_params()
        for source in (arg_params or {}, aux_params or {}):
            for name, arr in source.items():
                if name in params:
                    params[name].set_data(arr)
                elif not allow_extra:
                    raise ValueError(f"Find name \"{name}\" that is not in the arguments")

    def _sync_params_from_devices(self):
        params = self._block_params()
        for name in self._param_names:
            params[name].data().copyto(self._arg_params[name])
        for name in self._aux_names:
            params[name].data().copyto(self._aux_params[name])
        self._params_dirty = False

    # -- binding -------------------------------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write"):
        """Ready the Module for ``data_shapes`` (and ``label_shapes``): the graph as a hybridized block,
        the parameters' shapes found from these."""
        from ast_hybrid import nd
        from ast_hybrid.core import autograd
        from ast_hybrid.gluon.symbol_block import ModuleGraph as SymbolBlock   # (row_sparse variables taken)
        from ast_hybrid.symbol.graph import variable

        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training, self.inputs_need_grad, self._grad_req = for_training, inputs_need_grad, grad_req
        if not for_training:
            assert not inputs_need_grad
        self._data_shapes, self._label_shapes = _parse_data_desc(self._data_names, self._label_names,
                                                                 data_shapes, label_shapes)
        arguments = set(self._symbol.list_arguments())
        self._input_names = self._data_names + [n for n in self._label_names if n in arguments] + \
            self._state_names
        if shared_module is not None:
            assert isinstance(shared_module, Module) and shared_module.binded and shared_module.params_initialized
            self._block = SymbolBlock(self._symbol, [variable(n) for n in self._input_names],
                                      params=shared_module._block.collect_params())
        else:
            self._block = SymbolBlock(self._symbol, [variable(n) for n in self._input_names])
            self._block.initialize()      # shapes at the first call; the values are init_params' to give
        for name in self._fixed_param_names:
            self._block.params[name].grad_req = "null"
        if grad_req != "write":
            for name in self._param_names:
                if name not in self._fixed_param_names:
                    self._block.params[name].grad_req = grad_req if isinstance(grad_req, str) else \
                        grad_req.get(name, "write")
        self._block.hybridize(static_alloc=True, static_shape=True)
        with autograd.pause(train_mode=False):       # a first call: every parameter's shape
            self._block(*[nd.zeros(s, dtype=d) for s, d in self._input_specs()])
        params = self._block_params()
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params, self._aux_params = shared_module._arg_params, shared_module._aux_params
        elif self.params_initialized:        # re-bound, or made by Module.load: the arrays go into the block
            self._push_params(self._arg_params, self._aux_params)
        else:
            self._arg_params = {n: nd.zeros(params[n].shape, dtype=params[n].dtype) for n in self._param_names}
            self._aux_params = {n: nd.zeros(params[n].shape, dtype=params[n].dtype) for n in self._aux_names}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def _input_specs(self):
        """``(shape, dtype)`` of each block input at the bound shapes; a label the graph takes that is not
        given is zeros of shape ``(batch size,)`` (prediction: MXNet's loss outputs do not read it in their
        forward), as ``forward`` gives it."""
        given = {d.name: (tuple(d.shape), getattr(d, "dtype", "float32") or "float32")
                 for d in self._data_shapes + (self._label_shapes or [])}
        batch_size = self._data_shapes[0].shape[0]
        return [given.get(name, ((batch_size,), "float32")) for name in self._input_names]

    def reshape(self, data_shapes, label_shapes=None):
        """New input shapes (a later call compiles for them)."""
        assert self.binded
        self._data_shapes, self._label_shapes = _parse_data_desc(self._data_names, self._label_names,
                                                                 data_shapes, label_shapes)

    # -- the optimizer --------------------------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False):
        """The optimizer (a name with ``optimizer_params``, or an ``mx.optimizer`` object) and its updater;
        ``rescale_grad`` defaults to ``1 / batch size``."""
        from ast_hybrid.optimizer import optimizer as opt

        assert self.binded and self.params_initialized
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv_type = kvstore if isinstance(kvstore, str) or kvstore is None else getattr(kvstore, "type", "local")
        if kv_type and "dist" in kv_type:
            raise unsupported("mxnet.module", f"Module.init_optimizer(kvstore={kv_type!r})",
                              "a Module trains in one process; use gluon.Trainer with ast-hybrid launch for "
                              "distributed training")
        batch_size = self._data_shapes[0].shape[0]
        rescale_grad = 1.0 / batch_size
        idx2name = dict(enumerate(self._param_names))
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if "rescale_grad" not in optimizer_params:
                optimizer_params["rescale_grad"] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name, **optimizer_params)
        else:
            assert isinstance(optimizer, opt.Optimizer)
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is not normalized to "
                              f"1.0/batch_size/num_workers ({optimizer.rescale_grad} vs. {rescale_grad}). Is "
                              "this intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer, self._kvstore, self._update_on_kvstore = optimizer, None, False
        self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        assert shared_module.optimizer_initialized
        self._optimizer, self._kvstore = shared_module._optimizer, shared_module._kvstore
        self._update_on_kvstore, self._updater = shared_module._update_on_kvstore, shared_module._updater
        self.optimizer_initialized = True

    # -- computing ----------------------------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """The outputs for ``data_batch`` (its ``data`` and ``label`` lists, in the names' order); recorded for
        ``backward`` when training (``is_train``, default: bound for training)."""
        from ast_hybrid import nd
        from ast_hybrid.core import autograd

        assert self.binded and self.params_initialized
        if is_train is None:
            is_train = self.for_training
        data = list(data_batch.data)
        labels = list(data_batch.label or []) if hasattr(data_batch, "label") else []
        by_name = dict(zip(self._data_names, data))
        by_name.update(zip(self._label_names, labels))
        batch_size = data[0].shape[0] if data else self._data_shapes[0].shape[0]
        inputs = []
        for name in self._input_names:
            value = by_name.get(name)
            if value is None:
                value = nd.zeros((batch_size,))
            elif not isinstance(value, nd.NDArray):
                value = nd.array(value)
            inputs.append(value)
        if is_train:
            if self.inputs_need_grad:      # the executor's own array (MXNet copies the batch into it)
                for i, name in enumerate(self._data_names):
                    if self._input_grad_req(name) != "null":
                        inputs[i] = inputs[i].copy()
                        inputs[i].attach_grad()
            with autograd.record(train_mode=True):
                out = self._block(*inputs)
            self._params_dirty = True     # BatchNorm's running statistics moved
        else:
            with autograd.pause(train_mode=False):
                out = self._block(*inputs)
        self._inputs = inputs
        self._outputs = list(out) if isinstance(out, (list, tuple)) else [out]

    def backward(self, out_grads=None):
        """Gradients of the last training forward (``out_grads``: the outputs' head gradients; ones if none)."""
        from ast_hybrid import nd
        from ast_hybrid.core import autograd

        assert self.binded and self.params_initialized
        heads = self._outputs
        if out_grads is None:
            grads = [nd.ones(h.shape, dtype=h.dtype) for h in heads]
        else:
            grads = [g if isinstance(g, nd.NDArray) else nd.array(g) for g in _as_list(out_grads)]
        autograd.backward(heads, head_grads=grads)
        if self.inputs_need_grad:      # MXNet's executor keeps one gradient array per data input
            for name, x in zip(self._data_names, self._inputs):
                req, held = self._input_grad_req(name), self._input_grads.get(name)
                if req != "null":
                    self._input_grads[name] = x.grad if req == "write" or held is None else held + x.grad

    def _input_grad_req(self, name):
        """A data input's grad_req as MXNet's executor group sets it (a dict names it, or 'write')."""
        req = self._grad_req
        return req if isinstance(req, str) else dict(req or {}).get(name, "write")

    def update(self):
        """One optimizer step on every parameter with a gradient (updater index = the parameter's position
        among the symbol's parameter arguments)."""
        assert self.binded and self.params_initialized and self.optimizer_initialized
        self._params_dirty = True
        params = self._block.params
        for index, name in enumerate(self._param_names):
            p = params[name]
            if p.grad_req == "null":
                continue
            weight = p.data()
            self._updater(index, p.grad(), weight)
            p.set_data(weight)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward (one list; several contexts run as one here)."""
        assert self.binded and self.params_initialized
        return self._outputs if merge_multi_context else [[o] for o in self._outputs]

    def get_input_grads(self, merge_multi_context=True):
        """The data inputs' gradients (bound with ``inputs_need_grad=True``)."""
        assert self.binded and self.params_initialized and self.inputs_need_grad
        grads = [self._input_grads.get(name) for name in self._data_names]
        return grads if merge_multi_context else [[g] for g in grads]

    def get_states(self, merge_multi_context=True):
        assert self.binded and self.params_initialized
        by_name = dict(zip(self._input_names, self._inputs or []))
        states = [by_name[n] for n in self._state_names if n in by_name]
        return states if merge_multi_context else [[s] for s in states]

    def set_states(self, states=None, value=None):
        raise unsupported("mxnet.module", "Module.set_states", "give the states as inputs of each batch")

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """``eval_metric.update_dict`` with the labels and outputs by name, as MXNet's executor group calls it."""
        if pre_sliced:
            labels = labels[0]
        label_dict = dict(zip(self._label_names, labels or []))
        pred_dict = dict(zip(self._output_names, self._outputs))
        eval_metric.update_dict(label_dict, pred_dict)

    # -- optimizer states on disk ------------------------------------------------------------------------------
    def save_optimizer_states(self, fname):
        assert self.optimizer_initialized
        with open(fname, "wb") as fout:
            fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        assert self.optimizer_initialized
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())


# MXNet's checkpoint functions are module-level in mx.model; a Module also offers them
__all__ += ["save_checkpoint", "load_checkpoint"]


from ast_hybrid.module.bucketing_module import BucketingModule  # noqa: E402,F401  (mx.mod.BucketingModule)
