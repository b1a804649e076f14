"""Neural-network ops: FullyConnected, activations, softmax family, Dropout, Embedding, output layers.

``FullyConnected`` lowers to ``lax.dot_general`` contracting dimension 1 of
the (out, in) weight with the input's last axis, never to ``x @ w.T``
(XLA on CPU materialises the transpose: measured 6-8x slower at batch 1).

Random ops (``Dropout``; ``LeakyReLU`` with ``rrelu``) draw their key and read
the training mode in the public function and pass both to a pure kernel, so
a recorded call replays with the same mask.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.core import autograd
from ast_hybrid.ops import rng
from ast_hybrid.ops._core import check, choice, norm_axis, op, raw, wrap
from ast_hybrid.ops.elemwise import identity, mx_relu

__all__ = ["FullyConnected", "Activation", "LeakyReLU", "softmax", "log_softmax", "softmin", "Softmax",
           "SoftmaxActivation", "SoftmaxOutput", "softmax_cross_entropy", "Dropout", "Embedding", "CTCLoss", "ctc_loss",
           "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput", "SVMOutput", "dropout_kernel"]


@op(compile_arrays=("data", "weight", "bias"))
def FullyConnected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    """``data @ weight.T + bias`` with ``weight`` of shape (num_hidden, in_units); ``flatten`` merges all
    axes but the first, else the last axis is contracted."""
    x, w = jnp.asarray(data), jnp.asarray(weight)
    if flatten and x.ndim != 2:
        x = x.reshape((x.shape[0], -1))
    check(w.ndim == 2 and w.shape[1] == x.shape[-1], "FullyConnected",
          f"weight must have shape (num_hidden, {x.shape[-1]}) for input {tuple(jnp.shape(data))} "
          f"(flatten={flatten}), got {tuple(w.shape)}")
    if num_hidden is not None:
        check(w.shape[0] == num_hidden, "FullyConnected",
              f"weight has {w.shape[0]} rows but num_hidden={num_hidden}")
    out = lax.dot_general(x, w, (((x.ndim - 1,), (1,)), ((), ())))
    if not no_bias:
        check(bias is not None, "FullyConnected", "bias is required unless no_bias=True")
        out = out + bias
    return out


def _softrelu(x):
    return jax.nn.softplus(x)


_ACTIVATIONS = {"relu": mx_relu, "sigmoid": jax.nn.sigmoid, "tanh": jnp.tanh, "softrelu": _softrelu,
                "softsign": jax.nn.soft_sign}


@op(compile_arrays=("data",))
def Activation(data, act_type):
    """``act_type``: relu, sigmoid, tanh, softrelu (log(1 + exp x)) or softsign (MXNet 1.9.1's five)."""
    choice("Activation", "act_type", act_type, tuple(_ACTIVATIONS))
    return _ACTIVATIONS[act_type](jnp.asarray(data))


@op(compile_arrays=("data", "gamma", "key"))
def _leaky_relu(data, gamma=None, act_type="leaky", slope=0.25, key=None, lower_bound=0.125,
                upper_bound=0.334, training=False):
    x = jnp.asarray(data)
    if act_type == "leaky":
        return jnp.where(x > 0, x, x * jnp.asarray(slope, x.dtype))
    if act_type == "prelu":
        g = jnp.asarray(gamma)
        return jnp.where(x > 0, x, x * g.reshape(_prelu_gamma_shape(g.shape, x.shape)))
    if act_type == "rrelu":     # two outputs, as in MXNet: the result and the slopes used
        if training:
            s = jax.random.uniform(key, x.shape, x.dtype, lower_bound, upper_bound)
        else:
            s = jnp.full(x.shape, (lower_bound + upper_bound) / 2, x.dtype)
        return [jnp.where(x > 0, x, x * s), s]
    if act_type == "elu":
        return jnp.where(x > 0, x, jnp.asarray(slope, x.dtype) * jnp.expm1(x))
    if act_type == "selu":
        return jax.nn.selu(x)
    return jax.nn.gelu(x, approximate=False)


def _prelu_gamma_shape(src, dst):
    """MXNet's ``expand_shape``: gamma's axes, from its last, are the data's axes 1 and 0 (a channel's slope,
    or one per sample and channel); the other axes broadcast."""
    result, s = [1] * len(dst), len(src) - 1
    for i in range(len(dst) - 1, -1, -1):
        if s >= 0 and i <= 1 and (dst[i] == src[s] or src[s] == 1):
            result[i], s = src[s], s - 1
    if s != -1:
        raise ValueError(f"LeakyReLU: Cannot broadcast gamma to data. gamma: {tuple(src)}, data: {tuple(dst)}")
    return tuple(result)


def LeakyReLU(data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125, upper_bound=0.334, **kwargs):
    """MXNet's LeakyReLU: ``act_type`` leaky, prelu (``gamma`` per channel), rrelu, elu, selu, gelu."""
    choice("LeakyReLU", "act_type", act_type, ("leaky", "prelu", "rrelu", "elu", "selu", "gelu"))
    if act_type == "prelu":
        check(gamma is not None, "LeakyReLU", "act_type='prelu' needs gamma")
    training = act_type == "rrelu" and autograd.is_training()
    key = rng.next_key() if training else None
    return _leaky_relu(data, gamma, act_type=act_type, slope=slope, key=key, lower_bound=lower_bound,
                       upper_bound=upper_bound, training=training, **kwargs)


def _softmax_kernel(data, length, axis, temperature, dtype, use_length, log):
    x = jnp.asarray(data)
    axis = norm_axis(axis, x.ndim, "softmax")
    out_dtype = np.dtype(dtype) if dtype is not None else x.dtype
    compute = jnp.float32 if x.dtype == jnp.float16 else x.dtype
    x = x.astype(compute)
    if temperature is not None and temperature != 1.0:
        x = x / jnp.asarray(temperature, compute)
    if use_length:
        check(length is not None, "softmax", "use_length=True needs length")
        ln = jnp.asarray(length)
        check(jnp.issubdtype(ln.dtype, jnp.integer), "softmax",
              f"length must have an integer dtype (as in MXNet), got {np.dtype(ln.dtype).name}")
        pos = lax.broadcasted_iota(jnp.int32, x.shape, axis)
        valid = pos < jnp.expand_dims(ln, axis)
        x = jnp.where(valid, x, -jnp.inf)
        out = jax.nn.log_softmax(x, axis=axis) if log else jax.nn.softmax(x, axis=axis)
        out = jnp.where(valid, out, 0)
    else:
        out = jax.nn.log_softmax(x, axis=axis) if log else jax.nn.softmax(x, axis=axis)
    return out.astype(out_dtype)


@op(compile_arrays=("data", "length"))
def softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False):
    """``exp(x / T) / sum(exp(x / T))`` along ``axis``; with ``use_length`` only the first ``length`` entries
    count and the rest are 0."""
    return _softmax_kernel(data, length, axis, temperature, dtype, use_length, log=False)


@op(compile_arrays=("data",))
def log_softmax(data, axis=-1, temperature=None, dtype=None, use_length=False):
    """``log(softmax(data))``; MXNet 1.9.1's log_softmax takes no ``length``."""
    check(not use_length, "log_softmax", "use_length=True is not supported (MXNet 1.9.1 has no length here)")
    return _softmax_kernel(data, None, axis, temperature, dtype, False, log=True)


@op(compile_arrays=("data",))
def softmin(data, axis=-1, temperature=None, dtype=None, use_length=False):
    """``softmax(-data)``."""
    check(not use_length, "softmin", "use_length=True is not supported (MXNet 1.9.1 has no length here)")
    return _softmax_kernel(-jnp.asarray(data), None, axis, temperature, dtype, False, log=False)


@op
def SoftmaxActivation(data, mode="instance"):
    """Softmax over the last axis (``instance``) or over axis 1 (``channel``)."""
    choice("SoftmaxActivation", "mode", mode, ("instance", "channel"))
    return jax.nn.softmax(jnp.asarray(data), axis=-1 if mode == "instance" else 1)


def _softmax_output_fwd(data, label, grad_scale, ignore_label, multi_output, use_ignore, normalization):
    axis = 1 if multi_output else -1
    x = data if multi_output else data.reshape((data.shape[0], -1))
    return jax.nn.softmax(x, axis=axis).reshape(data.shape)


@op
def SoftmaxOutput(data, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False, use_ignore=False,
                  preserve_shape=False, normalization="null", out_grad=False, smooth_alpha=0.0):
    """The softmax of ``data`` (forward); its gradient is MXNet's ``(p - onehot(label)) * grad_scale``."""
    choice("SoftmaxOutput", "normalization", normalization, ("null", "batch", "valid"))
    x, lab = jnp.asarray(data), jnp.asarray(label)

    @jax.custom_vjp
    def f(x, lab):
        if preserve_shape:
            return jax.nn.softmax(x, axis=-1)
        return _softmax_output_fwd(x, lab, grad_scale, ignore_label, multi_output, use_ignore, normalization)

    def fwd(x, lab):
        p = f(x, lab)
        return p, (p, lab)

    def bwd(res, _g):
        p, lab = res
        if lab.shape == p.shape:    # MXNet: a label of the data's shape is a probability per class
            grad = (p - lab.astype(p.dtype)) * grad_scale
            return (grad * _g if out_grad else grad).astype(p.dtype), jnp.zeros_like(lab)
        axis = 1 if multi_output else -1
        pp = p if (multi_output or preserve_shape) else p.reshape((p.shape[0], -1))
        n = pp.shape[axis]
        idx = lab.astype(jnp.int32)
        onehot = jnp.moveaxis(jax.nn.one_hot(idx, n, dtype=p.dtype), -1, axis % pp.ndim) if multi_output \
            else jax.nn.one_hot(idx.reshape(pp.shape[:-1]), n, dtype=p.dtype)
        if smooth_alpha and not multi_output:   # MXNet's SmoothSoftmaxGrad (its multi_output path has none):
            onehot = onehot * (1 - smooth_alpha) + (1 - onehot) * (smooth_alpha / (n - 1))   # alpha spread
        grad = pp - onehot
        # MXNet's valid count: the labels other than ignore_label (with or without use_ignore)
        valid = (idx != int(ignore_label)).astype(p.dtype)
        if use_ignore:
            grad = grad * (jnp.expand_dims(valid, axis % pp.ndim) if multi_output
                           else valid.reshape(pp.shape[:-1] + (1,)))
        scale = grad_scale
        if normalization == "batch":    # label.size(0): the batch with multi_output, else every label
            scale = scale / (p.shape[0] if multi_output else idx.size)
        elif normalization == "valid":
            scale = scale / jnp.maximum(valid.sum(), 1.0)
        if multi_output and normalization != "valid":   # MXNet's multi_output gradient: per spatial position
            scale = scale / (int(np.prod(p.shape[2:])) if p.ndim > 2 else 1)
        grad = grad.reshape(p.shape) * scale
        return (grad * _g if out_grad else grad).astype(p.dtype), jnp.zeros_like(lab)

    f.defvjp(fwd, bwd)
    return f(x, lab)


Softmax = SoftmaxOutput      # MXNet's deprecated name of SoftmaxOutput (not of softmax)


@op
def softmax_cross_entropy(data, label):
    """``sum(-log softmax(data)[i, label[i]])`` over the batch, shape (1,)."""
    x = jnp.asarray(data)
    logp = jax.nn.log_softmax(x, axis=-1)
    idx = jnp.clip(jnp.asarray(label).astype(jnp.int32), 0, x.shape[-1] - 1)
    return -jnp.take_along_axis(logp, idx[:, None], axis=-1).sum().reshape((1,))


def _regression_output(data, label, grad_scale, forward, backward):
    """MXNet's regression outputs (``regression_output-inl.h``): ``forward(data)``; the gradient ignores the
    head gradient and is ``backward(out, label) * grad_scale / num_output``, the label read in the data's
    element order and ``num_output`` its size over its first axis."""
    x, lab = jnp.asarray(data), jnp.asarray(label)
    num_output = lab.size // lab.shape[0] if lab.ndim else 1

    @jax.custom_vjp
    def f(x, lab):
        return forward(x)

    def fwd(x, lab):
        out = forward(x)
        return out, (out, lab)

    def bwd(res, _g):
        out, lab = res
        grad = backward(out, lab.reshape(out.shape).astype(out.dtype)) * (grad_scale / num_output)
        return grad.astype(out.dtype), jnp.zeros_like(lab)

    f.defvjp(fwd, bwd)
    return f(x, lab)


@op
def SVMOutput(data, label, margin=1.0, regularization_coefficient=1.0, use_linear=False):
    """MXNet's SVMOutput: the identity forward; the gradient (head gradient ignored) is the L1-SVM
    (``use_linear``) or squared-hinge L2-SVM one of ``svm_output.cc``, over ``data`` flattened to 2-D."""
    x, lab = jnp.asarray(data), jnp.asarray(label)

    @jax.custom_vjp
    def f(x, lab):
        return x

    def fwd(x, lab):
        return x, (x, lab)

    def bwd(res, _g):
        out, lab = res
        o = out.reshape((out.shape[0], -1))
        gold = jax.nn.one_hot(lab.reshape(-1).astype(jnp.int32), o.shape[1], dtype=bool)
        m, c = jnp.asarray(margin, o.dtype), jnp.asarray(regularization_coefficient, o.dtype)
        if use_linear:
            grad = jnp.where(gold, -(m > o).astype(o.dtype), (m > -o).astype(o.dtype)) * c
        else:
            grad = jnp.where(gold, jnp.where(m > o, 2 * (m - o), 0) * -c, jnp.where(m > -o, -2 * (m + o), 0) * -c)
        return grad.reshape(out.shape).astype(out.dtype), jnp.zeros_like(lab)

    f.defvjp(fwd, bwd)
    return f(x, lab)


@op
def LinearRegressionOutput(data, label, grad_scale=1.0):
    """The identity; its gradient is MXNet's ``(out - label) * grad_scale / num_output``."""
    return _regression_output(data, label, grad_scale, lambda x: x, lambda out, lab: out - lab)


@op
def MAERegressionOutput(data, label, grad_scale=1.0):
    """The identity; its gradient is MXNet's ``sign(out - label) * grad_scale / num_output`` (+1 or -1)."""
    return _regression_output(data, label, grad_scale, lambda x: x,
                              lambda out, lab: jnp.where(out - lab > 0, 1.0, -1.0).astype(out.dtype))


@op
def LogisticRegressionOutput(data, label, grad_scale=1.0):
    """The sigmoid; its gradient is MXNet's ``(out - label) * grad_scale / num_output``."""
    return _regression_output(data, label, grad_scale, jax.nn.sigmoid, lambda out, lab: out - lab)


@op
def dropout_kernel(data, key, p=0.5, axes=()):
    """Inverted dropout of ``data`` with ``key``: zeros with probability ``p``, the rest scaled by 1/(1-p)."""
    x = jnp.asarray(data)
    shape = list(x.shape)
    for a in axes:
        shape[norm_axis(a, x.ndim, "Dropout", "axes")] = 1
    keep = jax.random.bernoulli(key, 1.0 - p, tuple(shape))
    return jnp.where(keep, x / jnp.asarray(1.0 - p, x.dtype), jnp.zeros((), x.dtype))


def Dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False, **kwargs):
    """MXNet's Dropout: active in training mode (``mode='always'``: always); otherwise the identity."""
    choice("Dropout", "mode", mode, ("training", "always"))
    check(0 <= p <= 1, "Dropout", f"p must be in [0, 1], got {p}")
    if p == 0 or (mode == "training" and not autograd.is_training()):
        if "out" in kwargs:
            return kwargs["out"]
        if autograd.is_recording() and getattr(data, "_ag", None) is not None:
            return identity(data)       # on the tape: the gradient passes through
        return wrap(raw(data))
    if p == 1:      # MXNet's kernel: every value dropped and scaled by 1 / 0, NaN
        x = jnp.asarray(raw(data))
        return wrap(jnp.full_like(x, jnp.nan) if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.zeros_like(x))
    return dropout_kernel(data, rng.next_key(), p=p, axes=tuple(axes), **kwargs)


@op
def Embedding(data, weight, input_dim=None, output_dim=None, dtype="float32", sparse_grad=False):
    """Rows of ``weight`` (input_dim, output_dim) at the (clipped) integer values of ``data``."""
    w = jnp.asarray(weight)
    if input_dim is not None:
        check(w.shape[0] == input_dim, "Embedding", f"weight has {w.shape[0]} rows but input_dim={input_dim}")
    idx = jnp.clip(jnp.asarray(data).astype(jnp.int32), 0, w.shape[0] - 1)
    return jnp.take(w, idx, axis=0)


@op(compile_arrays=("data", "label", "data_lengths", "label_lengths"))
def CTCLoss(data, label, data_lengths=None, label_lengths=None, use_data_lengths=False, use_label_lengths=False,
            blank_label="first"):
    """Connectionist temporal classification loss, shape (batch,): ``data`` (T, N, C) activations (softmax is
    applied here), ``label`` (N, L) padded with 0 (``blank_label='first'``: blank is channel 0) or -1
    (``'last'``: blank is channel C - 1).  Computed with the forward (alpha) recursion in log space."""
    choice("CTCLoss", "blank_label", blank_label, ("first", "last"))
    x = jnp.asarray(data)
    t_len, batch, classes = x.shape
    n_t = jnp.asarray(data_lengths).astype(jnp.int32) if use_data_lengths else jnp.full((batch,), t_len)
    # the frames past a sequence's length are not read (MXNet's gradient there is 0, whatever they hold:
    # a NaN there must not reach the gradient through the masked recursion)
    x = jnp.where((jnp.arange(t_len)[:, None] < n_t[None, :])[..., None], x, jnp.zeros((), x.dtype))
    logp = jax.nn.log_softmax(x.astype(jnp.float32), axis=-1)
    lab = jnp.asarray(label).astype(jnp.int32)
    blank, pad = (0, 0) if blank_label == "first" else (classes - 1, -1)
    if use_label_lengths:
        n_lab = jnp.asarray(label_lengths).astype(jnp.int32)
    else:   # the labels up to the first padding value
        n_lab = jnp.argmax(jnp.concatenate([lab == pad, jnp.ones((batch, 1), bool)], axis=1), axis=1)
    s_len = 2 * lab.shape[1] + 1
    ext = jnp.full((batch, s_len), blank).at[:, 1::2].set(jnp.where(lab == pad, blank, jnp.clip(lab, 0, classes - 1)))
    skip = jnp.concatenate([jnp.zeros((batch, 2), bool), (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])], 1)
    neg = jnp.asarray(-1e30, jnp.float32)     # "log 0", finite so that logaddexp's gradient stays defined
    emit = jnp.take_along_axis(logp, jnp.broadcast_to(ext[None], (t_len, batch, s_len)), axis=2)
    alpha0 = jnp.full((batch, s_len), neg).at[:, :2].set(emit[0, :, :2])

    def step(alpha, inputs):
        e, t = inputs
        a1 = jnp.concatenate([jnp.full((batch, 1), neg), alpha[:, :-1]], 1)
        a2 = jnp.where(skip, jnp.concatenate([jnp.full((batch, 2), neg), alpha[:, :-2]], 1), neg)
        new = jnp.logaddexp(jnp.logaddexp(alpha, a1), a2) + e
        return jnp.where((t < n_t)[:, None], new, alpha), None

    alpha, _ = lax.scan(step, alpha0, (emit[1:], jnp.arange(1, t_len)))
    last = jnp.take_along_axis(alpha, (2 * n_lab)[:, None], axis=1)[:, 0]
    prev = jnp.where(n_lab > 0, jnp.take_along_axis(alpha, jnp.maximum(2 * n_lab - 1, 0)[:, None], axis=1)[:, 0], neg)
    return (-jnp.logaddexp(last, prev)).astype(x.dtype)


ctc_loss = CTCLoss
