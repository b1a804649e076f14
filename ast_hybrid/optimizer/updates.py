"""MXNet 1.9.1's update rules, as its kernels compute them, each step one compiled program for every parameter.

``sgd_update``/``sgd_mom_update``, ``nag_mom_update``, ``adam_update`` with the bias correction folded into the
learning rate, ``rmsprop_update`` (plain and centered), AdaGrad; ``rescale_grad``, ``wd`` and
``clip_gradient`` as MXNet applies them (:func:`effective_clip`).  ``gluon.Trainer`` runs them
(:func:`_compiled_update`); ``mx.optimizer`` objects name them (``Optimizer._rule``).

May import: jax, numpy.
"""

from __future__ import annotations

import functools

__all__ = ["OPTIMIZERS", "effective_clip"]


def _clip(g, clip):
    """MXNet's ``clip(g, -clip, clip)``: ``g`` above ``clip`` becomes ``clip``, else below ``-clip`` becomes
    ``-clip`` (for a negative ``clip``, which only AdaGrad applies, the bounds cross as in MXNet's kernel)."""
    import jax.numpy as jnp

    return g if clip is None else jnp.where(g > clip, clip, jnp.where(g < -clip, -clip, g))


def effective_clip(name, clip):
    """The ``clip_gradient`` rule ``name`` applies, None for none: MXNet's SGD, NAG, Adam and RMSProp pass it
    to their C++ kernels only when truthy, and the kernels turn clipping off for ``clip_gradient <= 0``;
    AdaGrad (dense) clips in Python whenever it is not None, 0 and negative values included."""
    if clip is None or name == "adagrad":
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


# name -> (update, number of state arrays (given the options), default learning rate)
OPTIMIZERS = {
    "sgd": (_sgd, lambda o: 1 if o.get("momentum", 0.0) else 0, 0.01),
    "nag": (_nag, lambda o: 1 if o.get("momentum", 0.0) else 0, 0.01),
    "adam": (_adam, lambda o: 2, 0.001),
    "rmsprop": (_rmsprop, lambda o: 3 if o.get("centered") else 1, 0.001),
    "adagrad": (_adagrad, lambda o: 1, 0.01),
}


@functools.lru_cache(maxsize=None)
def _compiled_update(name, options):
    """One compiled program that updates every parameter of a step: ``(weights, grads, states, lrs, wds,
    rescale, clip, t) -> (new weights, new states)``, lists in the trainer's order, ``lrs``/``wds`` one
    vector each with every parameter's own learning rate and weight decay (one program per list of shapes; a
    call per step instead of a call per parameter)."""
    import jax
    import jax.numpy as jnp

    fn = functools.partial(OPTIMIZERS[name][0], **dict(options))

    def update_all(ws, gs, states, lrs, wds, rescale, clip, t):
        new_ws, new_states = [], []
        for i, (w, g, st) in enumerate(zip(ws, gs, states)):
            lr, wd = lrs[i], wds[i]
            if jnp.issubdtype(w.dtype, jnp.floating):     # as a Python float would: the weight's precision
                lr, wd = lr.astype(w.dtype), wd.astype(w.dtype)
            new, st = fn(w, g, st, lr, wd, rescale, clip, t)
            new_ws.append(new.astype(w.dtype))
            new_states.append(st)
        return new_ws, new_states

    return jax.jit(update_all, static_argnames=("clip",))
