"""``mxnet.optimizer``: MXNet 1.9.1's optimizer objects over ``gluon.Trainer``'s update rules.

``SGD``, ``NAG``, ``Adam``, ``RMSProp``, ``AdaGrad``, ``Signum``, ``FTML``, ``LAMB``, ``Adamax``, ``AdaDelta``,
``Ftrl``, ``DCASGD`` (compiled rules, ``optimizer.updates``), ``SGLD`` and ``Nadam`` (MXNet's Python updates,
through ``Updater`` only: their noise and their optimizer-wide momentum schedule are not per-parameter rules)
take MXNet's constructor arguments (``learning_rate``,
``wd``, ``rescale_grad``, ``clip_gradient``, ``lr_scheduler``, ``multi_precision``, ``begin_num_update`` and
their own) and are made by name with ``create(name, **kw)``; ``register`` adds a subclass to ``create``.

- ``gluon.Trainer(params, mx.optimizer.SGD(...))`` takes the object as MXNet does (``optimizer_params`` must
  then be empty): the trainer updates with the object's rule and settings, and from then on the object's
  ``learning_rate``, ``lr`` and ``set_learning_rate`` are the trainer's (``trainer.set_learning_rate`` is seen
  through the object and the other way round).  The other settings (``wd``, ``momentum``...) are read when the
  trainer is made.
- Called directly, as MXNet's ``Updater``/``get_updater`` and Module-style loops do, ``create_state(index,
  weight)`` gives MXNet's state NDArrays and ``update(index, weight, grad, state)`` writes the new weight and
  states in place, counting updates per index as MXNet does (``tests/mxnet/test_optimizer.py``).
- A subclass with its own ``update`` works through ``Updater``; ``gluon.Trainer`` refuses it by name, since
  the trainer runs its own compiled rules.
"""

from __future__ import annotations

import functools
import pickle
import warnings
import weakref

from ast_hybrid.core.errors import unsupported
from ast_hybrid.optimizer.updates import lazy_rows, lazy_update

__all__ = ["Optimizer", "SGD", "NAG", "Adam", "RMSProp", "AdaGrad", "Signum", "FTML", "LAMB", "Adamax", "AdaDelta",
           "Ftrl", "DCASGD", "SGLD", "Nadam", "ccSGD", "Updater", "create", "get_updater", "register"]


class Optimizer:
    """MXNet's ``Optimizer`` base: the learning rate (or ``lr_scheduler``), ``wd``, ``rescale_grad``,
    ``clip_gradient`` and the per-index multipliers and update counts."""

    opt_registry: dict = {}
    _master_last = False     # SGD and NAG keep the float32 master copy after the state (MXNet's order)
    _tuple_state = False     # MXNet's state is a tuple even of one array (Adam, RMSProp, FTML, LAMB...)
    _rule = None             # the gluon.Trainer rule (a key of optimizer.updates.OPTIMIZERS) of a built-in class

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None, learning_rate=None,
                 lr_scheduler=None, sym=None, begin_num_update=0, multi_precision=False, param_dict=None):
        self._trainer = None
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self._lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and lr_scheduler.base_lr != learning_rate:
            print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` "
                              "in optimizer."))
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.begin_num_update = self.num_update = begin_num_update
        self._index_update_count = {}
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        assert isinstance(param_idx2name, dict), "param_idx2name should be a dict of param indexes to names."
        self.idx2name = param_idx2name.copy()
        # a Symbol's per-variable multipliers (sym.var(..., lr_mult=, wd_mult=)), as the Module API passes it
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # --- registry ---------------------------------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Register an Optimizer subclass under its lower-cased class name (for ``create``)."""
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
                          f"optimizer {old.__module__}.{old.__name__}")
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """The registered optimizer ``name`` (case-insensitive) made with ``kwargs``."""
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    # --- learning rate: the trainer's once a gluon.Trainer has taken this object ---------------------------
    @property
    def _bound(self):
        return self._trainer() if self._trainer is not None else None

    @property
    def learning_rate(self):
        trainer = self._bound
        if trainer is not None:
            return trainer.learning_rate
        return self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self._lr

    @property
    def lr(self):
        trainer = self._bound
        return trainer.learning_rate if trainer is not None and self.lr_scheduler is None else self._lr

    @lr.setter
    def lr(self, value):
        self._lr = value
        trainer = self._bound
        if trainer is not None and self.lr_scheduler is None:
            trainer.set_learning_rate(value)

    def set_learning_rate(self, lr):
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        self.lr_mult = self._symbol_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith(("_weight", "_gamma"))}
        self.wd_mult.update(self._symbol_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _symbol_mults(self, key):
        if not getattr(self, "sym_info", ()):
            return {}
        attr, arg_names = self.sym_info
        return {name: float(attr[name][key]) for name in arg_names if key in attr.get(name, {})}

    def _update_count(self, index):
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            self._index_update_count[idx] = self._index_update_count.get(idx, self.begin_num_update) + 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _mult(self, index, own, attr):
        """MXNet's lookup order: the trainer's ``param_dict`` (the Parameter's ``lr_mult``/``wd_mult``), then
        ``set_lr_mult``/``set_wd_mult``'s entry by index, then by the name ``param_idx2name`` gives."""
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in own:
            return own[index]
        return own.get(self.idx2name[index], 1.0) if index in self.idx2name else 1.0

    def _get_lrs(self, indices):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def _get_wds(self, indices):
        return [self.wd * self._mult(i, self.wd_mult, "wd_mult") for i in indices]

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # --- MXNet's update protocol ------------------------------------------------------------------------
    def _n_states(self):
        from ast_hybrid.optimizer.updates import OPTIMIZERS

        return OPTIMIZERS[self._rule][1](dict(self._options()))

    def create_state(self, index, weight):
        """MXNet's state for ``weight``: None, one NDArray of zeros or a tuple of them (per optimizer)."""
        if self._rule is None:
            return None
        from ast_hybrid.core.ndarray import NDArray
        from ast_hybrid.optimizer.updates import initial_states

        states = initial_states(self._rule, weight._arr, self._n_states())
        return self._pack(tuple(NDArray(s) for s in states))

    def _unpack(self, state):
        return () if state is None else tuple(state) if isinstance(state, (tuple, list)) else (state,)

    def _pack(self, states):
        if self._tuple_state:
            return states
        return states[0] if len(states) == 1 else (states or None)

    def create_state_multi_precision(self, index, weight):
        """With ``multi_precision`` and a float16 weight, MXNet's mixed-precision state: a float32 master copy
        of the weight beside the state ``create_state`` makes for it (``(master, state)``; SGD and NAG:
        ``(state, master)``); otherwise ``create_state``'s."""
        import numpy as np

        if self.multi_precision and np.dtype(weight.dtype) == np.float16:
            master = weight.astype("float32")
            state = self.create_state(index, master)
            return (state, master) if self._master_last else (master, state)
        if np.dtype(weight.dtype) == np.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """One update of ``weight`` (in place) from ``grad``, with ``state`` from ``create_state`` (in place)."""
        if self._rule is None:
            raise NotImplementedError()
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                self.update(i, w, g, s)
            return
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        states = self._unpack(state)
        new, new_states = _rule_fn(self._rule, self._options())(
            weight._arr, grad._arr, tuple(s._arr for s in states), lr, wd, self.rescale_grad, self._clip(),
            self._index_update_count[index])
        if grad.stype == "row_sparse" and lazy_update(self._rule, getattr(self, "lazy_update", False), weight.stype):
            rows = grad._stored()       # MXNet's lazy update: the gradient's rows only
            new = lazy_rows(new, weight._arr, rows)
            new_states = [lazy_rows(n, s._arr, rows) for n, s in zip(new_states, states)]
        weight._arr = new.astype(weight._arr.dtype)
        for s, v in zip(states, new_states):
            s._arr = v.astype(s._arr.dtype)

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, on the float32 master copy (with the gradient in float32) when the state is
        ``create_state_multi_precision``'s mixed-precision one; the weight then gets the master's values."""
        import numpy as np

        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        if self.multi_precision and np.dtype(weight.dtype) == np.float16 and isinstance(state, (tuple, list)):
            state, master = (state[0], state[1]) if self._master_last else (state[1], state[0])
            self.update(index, master, grad.astype("float32"), state)
            weight._arr = master._arr.astype(weight._arr.dtype)
            return
        self.update(index, weight, grad, state)

    # --- what gluon.Trainer takes ----------------------------------------------------------------------
    def _clip(self):
        from ast_hybrid.optimizer.updates import effective_clip

        return effective_clip(self._rule, self.clip_gradient)

    def _options(self):
        """The rule's own options (momentum, beta1...) as ``optimizer.updates.OPTIMIZERS``'s rule names them."""
        return ()

    def _trainer_spec(self, trainer):
        """``(name, optimizer_params)`` for ``gluon.Trainer``, which from then on owns the learning rate."""
        rule = self._rule
        if rule is None or type(self).update is not Optimizer.update:
            raise unsupported("mxnet.optimizer", f"{type(self).__name__} in gluon.Trainer",
                              "gluon.Trainer runs its own compiled update rules (sgd, nag, adam, rmsprop, adagrad "
                              "and their mx.optimizer classes); a user-defined update works through "
                              "mx.optimizer.get_updater(optimizer)")
        if self.begin_num_update:
            raise unsupported("mxnet.optimizer", "Optimizer(begin_num_update=...) in gluon.Trainer",
                              "the trainer counts its updates from 0")
        params = dict(self._options(), wd=self.wd, rescale_grad=self.rescale_grad, clip_gradient=self._clip(),
                      lr_scheduler=self.lr_scheduler, multi_precision=self.multi_precision)
        if self.lr_scheduler is None:
            params["learning_rate"] = self._lr
        self._bind(trainer)
        return rule, params

    def _bind(self, trainer):
        """From now on the learning rate is ``trainer``'s and, as MXNet's ``Trainer._init_optimizer`` makes it,
        the multipliers are its Parameters' own (not a copy: a later change of p.lr_mult is seen;
        set_lr_mult/set_wd_mult entries no longer apply)."""
        self._trainer = weakref.ref(trainer)
        self.param_dict = dict(enumerate(trainer._params))

    def __getstate__(self):
        state = self.__dict__.copy()
        state["param_dict"], state["_trainer"] = {}, None
        return state

    def _make_updater(self):
        """``get_updater(self)``, for ``KVStore.set_optimizer`` (whose room does not import this one)."""
        return Updater(self)


@functools.lru_cache(maxsize=None)
def _rule_fn(rule, options):
    import jax

    from ast_hybrid.optimizer.updates import OPTIMIZERS

    return jax.jit(functools.partial(OPTIMIZERS[rule][0], **dict(options)), static_argnames=("clip",))


register = Optimizer.register
create = Optimizer.create_optimizer


@register
class SGD(Optimizer):
    """``weight = weight - lr * (rescale_grad * clip(grad) + wd * weight)``, with ``momentum`` if given."""

    _master_last = True
    _rule = "sgd"

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum, self.lazy_update = momentum, lazy_update

    def _options(self):
        return (("momentum", self.momentum),)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet's ``nag_mom_update``)."""

    _master_last = True
    _rule = "nag"

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def _options(self):
        return (("momentum", self.momentum),)


@register
class Adam(Optimizer):
    """Adam with MXNet's bias correction folded into the learning rate."""

    _rule = "adam"
    _tuple_state = True

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon, self.lazy_update = beta1, beta2, epsilon, lazy_update

    def _options(self):
        return (("beta1", self.beta1), ("beta2", self.beta2), ("epsilon", self.epsilon))


@register
class RMSProp(Optimizer):
    """RMSProp (Tieleman and Hinton), or the centered version (Graves) with ``centered=True``."""

    _rule = "rmsprop"
    _tuple_state = True

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.centered = gamma1, gamma2, centered
        self.epsilon, self.clip_weights = epsilon, clip_weights

    def _options(self):
        return (("centered", self.centered), ("clip_weights", self.clip_weights), ("epsilon", self.epsilon),
                ("gamma1", self.gamma1), ("gamma2", self.gamma2))


@register
class AdaGrad(Optimizer):
    """AdaGrad: ``history += grad ** 2; weight -= lr * (grad / sqrt(history + eps) + wd * weight)``."""

    _rule = "adagrad"

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def _options(self):
        return (("epsilon", self.float_stable_eps),)


@register
class Signum(Optimizer):
    """signSGD (``momentum=0``) or Signum: the sign of the gradient or of its momentum (``signum_update``)."""

    _rule = "signum"

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum, self.wd_lh = momentum, wd_lh

    def _options(self):
        return (("momentum", self.momentum), ("wd_lh", self.wd_lh))


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (``ftml_update``); state ``(d, v, z)``."""

    _rule = "ftml"
    _tuple_state = True

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def _options(self):
        return (("beta1", self.beta1), ("beta2", self.beta2), ("epsilon", self.epsilon))


@register
class LAMB(Optimizer):
    """LAMB (``lamb_update_phase1`` and ``lamb_update_phase2``); state ``(mean, var)``."""

    _rule = "lamb"
    _tuple_state = True

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None,
                 upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound, self.bias_correction = lower_bound, upper_bound, bias_correction

    def _options(self):
        return (("beta1", self.beta1), ("beta2", self.beta2), ("bias_correction", self.bias_correction),
                ("epsilon", self.epsilon), ("lower_bound", self.lower_bound), ("upper_bound", self.upper_bound))


@register
class Adamax(Optimizer):
    """AdaMax, Adam's infinity-norm variant; state ``(mean, u)``."""

    _rule = "adamax"
    _tuple_state = True

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def _options(self):
        return (("beta1", self.beta1), ("beta2", self.beta2))


@register
class AdaDelta(Optimizer):
    """AdaDelta (no learning rate); state ``(accumulated g, accumulated delta)``."""

    _rule = "adadelta"
    _tuple_state = True

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def _options(self):
        return (("epsilon", self.epsilon), ("rho", self.rho))


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (``ftrl_update``); state ``(z, n)``."""

    _rule = "ftrl"
    _tuple_state = True

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lamda1, self.beta = lamda1, beta

    def _options(self):
        return (("beta", self.beta), ("lamda1", self.lamda1))


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD; state ``(momentum or None, previous weight)``."""

    _rule = "dcasgd"

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum, self.lamda = momentum, lamda
        self.weight_previous = {}

    def _pack(self, states):
        return states if len(states) == 2 else (None, states[0])

    def _unpack(self, state):
        return tuple(s for s in state if s is not None)

    def _options(self):
        return (("lamda", self.lamda), ("momentum", self.momentum))


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: half an SGD step plus Gaussian noise of variance ``lr`` (drawn
    from ``mx.random``, so ``mx.random.seed`` repeats it)."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        import math

        from ast_hybrid import nd

        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += nd.random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype)


@register
class Nadam(Optimizer):
    """Nesterov Adam, with MXNet's momentum schedule (one ``m_schedule`` for the whole optimizer, as there)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, schedule_decay=0.004,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon, self.schedule_decay = beta1, beta2, epsilon, schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        from ast_hybrid import nd

        return (nd.zeros(weight.shape, dtype=weight.dtype), nd.zeros(weight.shape, dtype=weight.dtype))

    def update(self, index, weight, grad, state):
        from ast_hybrid import nd

        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        grad = grad * self.rescale_grad + wd * weight
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        v_t[:] *= self.beta2
        v_t[:] += (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight[:] -= lr * m_t_bar / (nd.sqrt(v_t_prime) + self.epsilon)


@register
class ccSGD(SGD):      # noqa: N801 (MXNet's name)
    """MXNet's deprecated alias of :class:`SGD`."""


class Updater:
    """MXNet's ``Updater``: ``updater(index, grad, weight)`` makes the state on first use and updates."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states, self.states_synced = {}, {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        indices, grads, weights = (index, grad, weight) if isinstance(index, (list, tuple)) else \
            ([index], [grad], [weight])
        for i, w, g in zip(indices, weights, grads):
            if i not in self.states:
                self.states[i] = self.optimizer.create_state_multi_precision(i, w)
                self.states_synced[i] = True
            self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def set_states(self, states):
        states = pickle.loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer=False):
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """MXNet's ``get_updater``: an :class:`Updater` over ``optimizer``."""
    return Updater(optimizer)
