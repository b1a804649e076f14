"""MXNet's optimizer update operators (``nd.sgd_update``, ``nd.adam_update``...), as their kernels in MXNet
1.9.1's ``src/operator/optimizer_op-inl.h`` compute them.

Each takes the weight, the gradient and the state arrays, writes the new weight into ``out`` (the weight
itself in MXNet's optimizers) and updates the states in place, as MXNet's mutable inputs are; it returns
``out``.  ``clip_gradient`` (``clip_grad`` for FTML) clips when it is 0 or more (the default -1: never).  A
kernel that reads the weight after writing ``out`` (NAG's momentum) reads the new one when ``out`` is the
weight, as MXNet's does.  One compiled program per operator and option set; the scalars (``lr``, ``wd``...)
are its arguments.  ``lazy_update`` with a row_sparse gradient (SGD, Adam): only the gradient's rows change,
as in MXNet.
"""

from __future__ import annotations

import functools

from ast_hybrid.core.ndarray import NDArray

__all__ = ["sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update", "rmsprop_update", "rmspropalex_update",
           "signsgd_update", "signum_update", "ftml_update", "ftrl_update", "lamb_update_phase1",
           "lamb_update_phase2", "lazy_rows", "nonzero_rows"]


def _clip(g, clip):
    import jax.numpy as jnp

    return jnp.where(g > clip, clip, jnp.where(g < -clip, -clip, g))


def _maybe_clip(g, clip, on):
    return _clip(g, clip) if on else g


def _sgd(w, g, lr, wd, rescale, clip, *, clipped):
    return ((1 - lr * wd) * w - lr * _maybe_clip(rescale * g, clip, clipped),)


def _sgd_mom(w, g, mom, lr, momentum, wd, rescale, clip, *, clipped):
    mom = momentum * mom - lr * wd * w - lr * _maybe_clip(rescale * g, clip, clipped)
    return w + mom, mom


def _nag_mom(w, g, mom, lr, momentum, wd, rescale, clip, *, clipped, aliased):
    g = _maybe_clip(rescale * g, clip, clipped)
    mom = momentum * mom
    new = w - mom + (momentum + 1) * (mom - lr * (g + wd * w))
    return new, mom - lr * (g + wd * (new if aliased else w))


def _adam(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale, clip, *, clipped):
    import jax.numpy as jnp

    g = _maybe_clip(g * rescale + w * wd, clip, clipped)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    return w - lr * mean / (jnp.sqrt(var) + epsilon), mean, var


def _rmsprop(w, g, n, lr, gamma1, epsilon, wd, rescale, clip, clip_weights, *, clipped, weights_clipped):
    import jax.numpy as jnp

    g = _maybe_clip(rescale * g + wd * w, clip, clipped)
    n = (1 - gamma1) * (g * g) + gamma1 * n
    new = w - lr * (g / jnp.sqrt(n + epsilon))
    return _maybe_clip(new, clip_weights, weights_clipped), n


def _rmspropalex(w, g, n, gs, delta, lr, gamma1, gamma2, epsilon, wd, rescale, clip, clip_weights, *, clipped,
                 weights_clipped):
    import jax.numpy as jnp

    g = _maybe_clip(rescale * g + wd * w, clip, clipped)
    n = (1 - gamma1) * g * g + gamma1 * n
    gs = (1 - gamma1) * g + gamma1 * gs
    delta = gamma2 * delta - lr * g / jnp.sqrt(n - gs * gs + epsilon)
    return _maybe_clip(w + delta, clip_weights, weights_clipped), n, gs, delta


def _signsgd(w, g, lr, wd, rescale, clip):
    import jax.numpy as jnp

    return ((1 - lr * wd) * w - lr * jnp.sign(g),)       # MXNet: clip_gradient has no effect


def _signum(w, g, mom, lr, momentum, wd, rescale, clip, wd_lh, *, clipped):
    import jax.numpy as jnp

    mom = momentum * mom - (1 - momentum) * wd * w - (1 - momentum) * _maybe_clip(rescale * g, clip, clipped)
    return (1 - lr * wd_lh) * w + lr * jnp.sign(mom), mom


def _ftml(w, g, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale, clip, *, clipped):
    import jax.numpy as jnp

    g = _maybe_clip(rescale * g + wd * w, clip, clipped)
    v = beta2 * v + (1 - beta2) * g * g
    d_t = (1 - beta1 ** t) / lr * (jnp.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def _ftrl(w, g, z, n, lr, lamda1, beta, wd, rescale, clip, *, clipped):
    import jax.numpy as jnp

    g = _maybe_clip(g * rescale, clip, clipped)
    z = z + g - (jnp.sqrt(n + g * g) - jnp.sqrt(n)) * w / lr
    n = n + g * g
    new = (jnp.sign(z) * lamda1 - z) / ((beta + jnp.sqrt(n)) / lr + wd) * (jnp.abs(z) > lamda1)
    return new, z, n


def _lamb1(w, g, mean, var, beta1, beta2, epsilon, t, wd, rescale, clip, *, clipped, bias_correction):
    import jax.numpy as jnp

    g = _maybe_clip(g * rescale, clip, clipped)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    if bias_correction:
        step = (mean / (1 - beta1 ** t)) / (jnp.sqrt(var / (1 - beta2 ** t)) + epsilon) + wd * w
    else:
        step = mean / (jnp.sqrt(var) + epsilon) + wd * w
    return step, mean, var


def _lamb2(w, g, r1, r2, lr, lower_bound, upper_bound, *, lower, upper):
    import jax.numpy as jnp

    r1, r2 = r1.reshape(()), r2.reshape(())
    if lower:
        r1 = jnp.maximum(r1, lower_bound)
    if upper:
        r1 = jnp.minimum(r1, upper_bound)
    ratio = jnp.where((r1 == 0) | (r2 == 0), 1.0, r1 / jnp.where(r2 == 0, 1.0, r2))
    return (w - lr * ratio * g,)


def lazy_rows(new, old, rows):
    """``new`` on the ``rows`` (a boolean mask over the first axis, broadcastable), ``old`` elsewhere: MXNet's
    lazy update for a row_sparse gradient, whose stored rows these are (:func:`nonzero_rows` for a gradient
    that autograd wrote, ``RowSparseNDArray._stored()`` for one made with its rows)."""
    import jax.numpy as jnp

    return new if new.ndim == 0 else jnp.where(rows, new, old)


def nonzero_rows(grad):
    """The rows of ``grad`` (a jax array) with a non-zero value, as a mask :func:`lazy_rows` takes."""
    import jax.numpy as jnp

    if grad.ndim == 0:
        return True
    return jnp.any(grad.reshape(grad.shape[0], -1) != 0, axis=1).reshape((-1,) + (1,) * (grad.ndim - 1))


@functools.lru_cache(maxsize=None)
def _compiled(kernel, flags):
    import jax

    return jax.jit(functools.partial(kernel, **dict(flags)))


def _run(kernel, arrays, scalars, out, mutated, flags=(), lazy=False):
    """``kernel`` on the arrays' values and the scalars; the first result goes to ``out`` (a new NDArray if
    None), the others into ``mutated`` in place.  ``lazy`` (``lazy_update`` with a row_sparse gradient, the
    second array): only the gradient's rows change, as MXNet's lazy update."""
    import jax.numpy as jnp

    raws = [a._arr if isinstance(a, NDArray) else jnp.asarray(a) for a in arrays]
    dtype = raws[0].dtype
    results = _compiled(kernel, tuple(sorted(flags)))(*raws, *[jnp.asarray(s, dtype) for s in scalars])
    if lazy and getattr(arrays[1], "stype", "default") == "row_sparse":
        olds, rows = [raws[0]] + [m._arr for m in mutated], arrays[1]._stored()
        results = [lazy_rows(r, o, rows) for r, o in zip(results, olds)]
    for state, value in zip(mutated, results[1:]):
        state._arr = value.astype(state._arr.dtype)
    if out is None:
        return NDArray(results[0].astype(dtype))
    out._arr = results[0].astype(out._arr.dtype)
    return out


def sgd_update(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True, out=None,
               name=None):
    """``out = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``."""
    return _run(_sgd, (weight, grad), (lr, wd, rescale_grad, clip_gradient), out, (),
                (("clipped", clip_gradient >= 0),), lazy_update)


def sgd_mom_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                   lazy_update=True, out=None, name=None):
    """``mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad); out = weight + mom``."""
    return _run(_sgd_mom, (weight, grad, mom), (lr, momentum, wd, rescale_grad, clip_gradient), out, (mom,),
                (("clipped", clip_gradient >= 0),), lazy_update)


def nag_mom_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, out=None,
                   name=None):
    """Nesterov momentum (``NAGMomKernel``)."""
    return _run(_nag_mom, (weight, grad, mom), (lr, momentum, wd, rescale_grad, clip_gradient), out, (mom,),
                (("clipped", clip_gradient >= 0), ("aliased", out is weight)))


def adam_update(weight, grad, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, lazy_update=True, out=None, name=None):
    """Adam without bias correction (MXNet's optimizer folds it into ``lr``)."""
    return _run(_adam, (weight, grad, mean, var), (lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient),
                out, (mean, var), (("clipped", clip_gradient >= 0),), lazy_update)


def rmsprop_update(weight, grad, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                   clip_weights=-1.0, out=None, name=None):
    """RMSProp (Tieleman and Hinton)."""
    return _run(_rmsprop, (weight, grad, n), (lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights),
                out, (n,), (("clipped", clip_gradient >= 0), ("weights_clipped", clip_weights >= 0)))


def rmspropalex_update(weight, grad, n, g, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0,
                       rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0, out=None, name=None):
    """Centered RMSProp (Graves)."""
    return _run(_rmspropalex, (weight, grad, n, g, delta),
                (lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights), out, (n, g, delta),
                (("clipped", clip_gradient >= 0), ("weights_clipped", clip_weights >= 0)))


def signsgd_update(weight, grad, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, out=None, name=None):
    """``out = (1 - lr * wd) * weight - lr * sign(grad)``."""
    return _run(_signsgd, (weight, grad), (lr, wd, rescale_grad, clip_gradient), out, ())


def signum_update(weight, grad, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, wd_lh=0.0,
                  out=None, name=None):
    """Signum: the sign of the momentum."""
    return _run(_signum, (weight, grad, mom), (lr, momentum, wd, rescale_grad, clip_gradient, wd_lh), out, (mom,),
                (("clipped", clip_gradient >= 0),))


def ftml_update(weight, grad, d, v, z, lr, beta1=0.6, beta2=0.999, epsilon=1e-8, t=None, wd=0.0, rescale_grad=1.0,
                clip_grad=-1.0, out=None, name=None):
    """FTML (``FTMLKernel``); ``t`` (the update count) is required."""
    if t is None:
        raise TypeError("ftml_update: Required parameter t of int is not presented")
    return _run(_ftml, (weight, grad, d, v, z), (lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad), out,
                (d, v, z), (("clipped", clip_grad >= 0),))


def ftrl_update(weight, grad, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                out=None, name=None):
    """FTRL-Proximal (``FtrlUpdateKernel``)."""
    return _run(_ftrl, (weight, grad, z, n), (lr, lamda1, beta, wd, rescale_grad, clip_gradient), out, (z, n),
                (("clipped", clip_gradient >= 0),))


def lamb_update_phase1(weight, grad, mean, var, beta1=0.9, beta2=0.999, epsilon=1e-6, t=None, bias_correction=True,
                       wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, out=None, name=None):
    """LAMB's first phase: the step ``g`` (returned), mean and var updated in place; ``t`` is required."""
    if t is None:
        raise TypeError("lamb_update_phase1: Required parameter t of int is not presented")
    return _run(_lamb1, (weight, grad, mean, var), (beta1, beta2, epsilon, t, wd, rescale_grad, clip_gradient),
                out, (mean, var), (("clipped", clip_gradient >= 0), ("bias_correction", bool(bias_correction))))


def lamb_update_phase2(weight, g, r1, r2, lr, lower_bound=-1.0, upper_bound=-1.0, out=None, name=None):
    """LAMB's second phase: ``weight - lr * (r1 / r2) * g`` with ``r1`` bounded (a zero norm: ratio 1)."""
    return _run(_lamb2, (weight, g, r1, r2), (lr, lower_bound, upper_bound), out, (),
                (("lower", lower_bound >= 0), ("upper", upper_bound >= 0)))
