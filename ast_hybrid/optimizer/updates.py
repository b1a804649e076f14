"""MXNet 1.9.1's update rules, as its kernels compute them, each step one compiled program for every parameter.

``sgd_update``/``sgd_mom_update``, ``nag_mom_update``, ``adam_update`` with the bias correction folded into the
learning rate, ``rmsprop_update`` (plain and centered), AdaGrad, ``signum_update``/``signsgd_update``,
``ftml_update``, LAMB's two phases, ``ftrl_update``, and the Python rules of Adamax, AdaDelta and DCASGD
(read from MXNet 1.9.1's ``optimizer_op-inl.h`` and ``optimizer.py``); ``rescale_grad``, ``wd`` and
``clip_gradient`` as MXNet applies them (:func:`effective_clip`).  ``gluon.Trainer`` runs them
(:func:`_compiled_update`); ``mx.optimizer`` objects name them (``Optimizer._rule``).

May import: jax, numpy, and the update operators' kernels (``ast_hybrid.ops.update``).
"""

from __future__ import annotations

import functools

from ast_hybrid.ops.update import lazy_rows, nonzero_rows

__all__ = ["OPTIMIZERS", "effective_clip", "initial_states", "LAZY_RULES", "lazy_rows", "lazy_update"]


def _clip(g, clip):
    """MXNet's ``clip(g, -clip, clip)``: ``g`` above ``clip`` becomes ``clip``, else below ``-clip`` becomes
    ``-clip`` (for a negative ``clip``, which only AdaGrad applies, the bounds cross as in MXNet's kernel)."""
    import jax.numpy as jnp

    return g if clip is None else jnp.where(g > clip, clip, jnp.where(g < -clip, -clip, g))


#: the rules MXNet writes in Python, which clip whenever clip_gradient is not None
PYTHON_CLIPPED = ("adagrad", "adamax", "adadelta", "dcasgd")


def effective_clip(name, clip):
    """The ``clip_gradient`` rule ``name`` applies, None for none: MXNet's SGD, NAG, Adam and RMSProp pass it
    to their C++ kernels only when truthy, and the kernels turn clipping off for ``clip_gradient <= 0``;
    AdaGrad (dense) clips in Python whenever it is not None, 0 and negative values included."""
    if clip is None or name in PYTHON_CLIPPED:
        return clip
    return clip if clip > 0 else None


def _sgd(w, g, states, lr, wd, rescale, clip, t, momentum=0.0):
    g = _clip(rescale * g, clip)
    if momentum == 0.0:
        return (1 - lr * wd) * w - lr * g, states
    mom = momentum * states[0] - lr * wd * w - lr * g
    return w + mom, (mom,)


def _nag(w, g, states, lr, wd, rescale, clip, t, momentum=0.0):
    """MXNet 1.9.1's ``nag_mom_update(weight, grad, mom, out=weight)`` as its NAG optimizer calls it (or
    ``sgd_update`` without momentum): the momentum is stored as ``-lr`` times the gradient sum, and, since
    ``out`` is the weight, the weight-decay term of the new momentum reads the weight already updated."""
    g = _clip(rescale * g, clip)
    if momentum == 0.0:
        return w - lr * (g + wd * w), states
    w_new = w + momentum * momentum * states[0] - (1 + momentum) * lr * (g + wd * w)
    return w_new, (momentum * states[0] - lr * (g + wd * w_new),)


def _adam(w, g, states, lr, wd, rescale, clip, t, beta1=0.9, beta2=0.999, epsilon=1e-8):
    import jax.numpy as jnp

    lr = lr * jnp.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    g = _clip(rescale * g + wd * w, clip)
    mean = beta1 * states[0] + (1 - beta1) * g
    var = beta2 * states[1] + (1 - beta2) * g * g
    return w - lr * mean / (jnp.sqrt(var) + epsilon), (mean, var)


def _rmsprop(w, g, states, lr, wd, rescale, clip, t, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
             clip_weights=None):
    import jax.numpy as jnp

    g = _clip(rescale * g + wd * w, clip)
    if not centered:
        n = (1 - gamma1) * g * g + gamma1 * states[0]
        w = w - lr * g / jnp.sqrt(n + epsilon)
        new = (n,)
    else:
        n = (1 - gamma1) * g * g + gamma1 * states[0]
        mg = (1 - gamma1) * g + gamma1 * states[1]
        delta = gamma2 * states[2] - lr * g / jnp.sqrt(n - mg * mg + epsilon)
        w, new = w + delta, (n, mg, delta)
    if clip_weights is not None and clip_weights > 0:
        w = jnp.clip(w, -clip_weights, clip_weights)
    return w, new


def _adagrad(w, g, states, lr, wd, rescale, clip, t, epsilon=1e-7):
    import jax.numpy as jnp

    g = _clip(rescale * g, clip)
    history = states[0] + g * g
    return w - lr * (g / jnp.sqrt(history + epsilon) + wd * w), (history,)


def _signum(w, g, states, lr, wd, rescale, clip, t, momentum=0.9, wd_lh=0.0):
    """MXNet's ``signum_update`` (with momentum) and ``signsgd_update`` (without: the clip has no effect, and
    ``wd`` decays the weight directly)."""
    import jax.numpy as jnp

    if not momentum > 0:
        return (1 - lr * wd) * w - lr * jnp.sign(g), states
    mom = momentum * states[0] - (1 - momentum) * wd * w - (1 - momentum) * _clip(rescale * g, clip)
    return (1 - lr * wd_lh) * w + lr * jnp.sign(mom), (mom,)


def _ftml(w, g, states, lr, wd, rescale, clip, t, beta1=0.6, beta2=0.999, epsilon=1e-8):
    """MXNet's ``ftml_update``: states ``(d, v, z)``."""
    import jax.numpy as jnp

    d, v, z = states
    g = _clip(rescale * g + wd * w, clip)
    v = beta2 * v + (1 - beta2) * g * g
    d_t = (1 - beta1 ** t) / lr * (jnp.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
    return -z / d_t, (d_t, v, z)


def _lamb(w, g, states, lr, wd, rescale, clip, t, beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None,
          upper_bound=None, bias_correction=True):
    """MXNet's ``lamb_update_phase1`` then ``lamb_update_phase2`` (the operators' kernels, ``ops.update``) with
    ``r1 = |w|``, ``r2 = |g|`` (the bounds only where truthy, as its optimizer passes them)."""
    import jax.numpy as jnp

    from ast_hybrid.ops.update import _lamb1, _lamb2

    step, mean, var = _lamb1(w, g, *states, beta1, beta2, epsilon, t, wd, rescale, 0.0 if clip is None else clip,
                             clipped=clip is not None, bias_correction=bias_correction)
    r1, r2 = jnp.linalg.norm(w.ravel()), jnp.linalg.norm(step.ravel())
    (new,) = _lamb2(w, step, r1, r2, lr, lower_bound or 0.0, upper_bound or 0.0, lower=bool(lower_bound),
                    upper=bool(upper_bound))
    return new, (mean, var)


def _adamax(w, g, states, lr, wd, rescale, clip, t, beta1=0.9, beta2=0.999):
    import jax.numpy as jnp

    lr = lr / (1 - beta1 ** t)
    g = _clip(rescale * g + wd * w, clip)
    m = beta1 * states[0] + (1 - beta1) * g
    u = jnp.maximum(beta2 * states[1], jnp.abs(g))
    return w - lr * m / u, (m, u)


def _adadelta(w, g, states, lr, wd, rescale, clip, t, rho=0.9, epsilon=1e-5):
    """MXNet's Python AdaDelta (no learning rate: ``lr`` is unused, as there)."""
    import jax.numpy as jnp

    g = _clip(rescale * g, clip)
    acc_g = rho * states[0] + (1 - rho) * g * g
    delta = jnp.sqrt(states[1] + epsilon) / jnp.sqrt(acc_g + epsilon) * g
    acc_delta = rho * states[1] + (1 - rho) * delta * delta
    return w - (delta + wd * w), (acc_g, acc_delta)


def _ftrl(w, g, states, lr, wd, rescale, clip, t, lamda1=0.01, beta=1.0):
    """MXNet's ``ftrl_update`` (the operator's kernel, ``ops.update``): states ``(z, n)``."""
    from ast_hybrid.ops.update import _ftrl as kernel

    new, z, n = kernel(w, g, *states, lr, lamda1, beta, wd, rescale, 0.0 if clip is None else clip,
                       clipped=clip is not None)
    return new, (z, n)


def _dcasgd(w, g, states, lr, wd, rescale, clip, t, momentum=0.0, lamda=0.04):
    """MXNet's Python DCASGD: states ``(momentum,)* + (previous weight,)``."""
    g = _clip(rescale * g, clip)
    previous = states[-1]
    step = -lr * (g + wd * w + lamda * g * g * (w - previous))
    if momentum != 0.0:
        mom = momentum * states[0] + step
        return w + mom, (mom, w)
    return w + step, (w,)


# name -> (update, number of state arrays (given the options), default learning rate)
OPTIMIZERS = {
    "sgd": (_sgd, lambda o: 1 if o.get("momentum", 0.0) else 0, 0.01),
    "nag": (_nag, lambda o: 1 if o.get("momentum", 0.0) else 0, 0.01),
    "adam": (_adam, lambda o: 2, 0.001),
    "rmsprop": (_rmsprop, lambda o: 3 if o.get("centered") else 1, 0.001),
    "adagrad": (_adagrad, lambda o: 1, 0.01),
    "signum": (_signum, lambda o: 1 if o.get("momentum", 0.9) > 0 else 0, 0.01),
    "ftml": (_ftml, lambda o: 3, 0.01),
    "lamb": (_lamb, lambda o: 2, 0.001),
    "adamax": (_adamax, lambda o: 2, 0.002),
    "adadelta": (_adadelta, lambda o: 2, 1.0),
    "ftrl": (_ftrl, lambda o: 2, 0.1),
    "dcasgd": (_dcasgd, lambda o: 2 if o.get("momentum", 0.0) else 1, 0.01),
}


def initial_states(name, weight, count):
    """The ``count`` state arrays rule ``name`` starts from: zeros, except DCASGD's last, the weight itself
    (MXNet's ``weight.copy()``)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    if isinstance(weight, jax.Array) and not isinstance(weight, jax.core.Tracer):
        # zeros made on the host and placed as jnp.zeros_like places them (committed where the weight is), which
        # compiles a program per shape (41 of them, 1 s, in the first step of mobilenetv2's training)
        where = weight.sharding if weight.committed else None
        states = [jax.device_put(np.zeros(weight.shape, weight.dtype), where) for _ in range(count)]
    else:
        states = [jnp.zeros_like(weight) for _ in range(count)]
    if name == "dcasgd":
        states[-1] = jnp.array(weight, copy=True)
    return tuple(states)


#: the rules MXNet updates lazily for a row_sparse gradient (``lazy_update=True``, their default): only the
#: gradient's rows of the weight and the states change (``sgd_update``/``sgd_mom_update``/``adam_update``)
LAZY_RULES = ("sgd", "adam")


def lazy_update(rule, lazy, weight_stype):
    """Whether MXNet updates only a row_sparse gradient's rows: SGD and Adam with ``lazy_update``; FTRL when
    the weight (and so its states) is row_sparse."""
    return (lazy and rule in LAZY_RULES) or (rule == "ftrl" and weight_stype == "row_sparse")


@functools.lru_cache(maxsize=None)
def _compiled_update(name, options, lazy=()):
    """One compiled program that updates every parameter of a step: ``(weights, grads, states, lrs, wds,
    rescale, clip, t) -> (new weights, new states)``, lists in the trainer's order, ``lrs``/``wds`` one
    vector each with every parameter's own learning rate and weight decay (one program per list of shapes; a
    call per step instead of a call per parameter).  ``lazy``: per parameter, whether its gradient is
    row_sparse and updated lazily (:func:`lazy_rows`)."""
    import jax.numpy as jnp

    fn = functools.partial(OPTIMIZERS[name][0], **dict(options))

    def update_all(ws, gs, states, lrs, wds, rescale, t, clip=None):
        new_ws, new_states = [], []
        for i, (w, g, st) in enumerate(zip(ws, gs, states)):
            lr, wd = lrs[i], wds[i]
            if jnp.issubdtype(w.dtype, jnp.floating):     # as a Python float would: the weight's precision
                lr, wd = lr.astype(w.dtype), wd.astype(w.dtype)
            new, new_st = fn(w, g, st, lr, wd, rescale, clip, t)
            if lazy and lazy[i]:
                rows = nonzero_rows(g)
                new = lazy_rows(new, w, rows)
                new_st = tuple(lazy_rows(n, o, rows) for n, o in zip(new_st, st))
            new_ws.append(new.astype(w.dtype))
            new_states.append(new_st)
        return new_ws, new_states

    return _PerClip(update_all)


class _PerClip:
    """``update_all`` compiled per value of its static ``clip`` (``core.tiers.compiled``: a ``jax.jit``, or
    two tiers on request)."""

    def __init__(self, update_all):
        self._update_all, self._programs = update_all, {}

    def __call__(self, ws, gs, states, lrs, wds, rescale, clip, t):
        program = self._programs.get(clip)
        if program is None:
            from ast_hybrid.core.tiers import compiled

            program = self._programs.setdefault(clip, compiled(functools.partial(self._update_all, clip=clip)))
        return program(ws, gs, states, lrs, wds, rescale, t)

    @property
    def signatures(self) -> int:
        """How many signatures (clip values and lists of shapes) have a program."""
        return sum(p.signatures if hasattr(p, "signatures") else p._cache_size() for p in self._programs.values())
