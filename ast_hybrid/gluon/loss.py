"""A few Gluon losses with MXNet 1.9.1's semantics (``from ast_hybrid.gluon import loss``):
the per-sample loss is averaged over every axis except ``batch_axis``, after
``sample_weight`` and the constant ``weight`` are applied."""

from __future__ import annotations

from ast_hybrid.ops._core import raw
from ast_hybrid.gluon.block import HybridBlock

__all__ = ["Loss", "L1Loss", "L2Loss", "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "SigmoidBinaryCrossEntropyLoss",
           "SigmoidBCELoss"]


def _weighting(loss, weight=None, sample_weight=None):
    if sample_weight is not None:
        loss = loss * raw(sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _batch_mean(loss, batch_axis):
    axes = tuple(i for i in range(loss.ndim) if i != batch_axis)
    return loss.mean(axis=axes) if axes else loss


class Loss(HybridBlock):
    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight, self._batch_axis = weight, batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"


class L2Loss(Loss):
    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        pred, label = raw(pred), raw(label)
        loss = (label.reshape(pred.shape) - pred) ** 2
        return _batch_mean(_weighting(loss, self._weight / 2, sample_weight), self._batch_axis)


class L1Loss(Loss):
    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        import jax.numpy as jnp

        pred, label = raw(pred), raw(label)
        loss = jnp.abs(label.reshape(pred.shape) - pred)
        return _batch_mean(_weighting(loss, self._weight, sample_weight), self._batch_axis)


class SoftmaxCrossEntropyLoss(Loss):
    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis, self._sparse_label, self._from_logits = axis, sparse_label, from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        import jax
        import jax.numpy as jnp

        pred, label = raw(pred), raw(label)
        if not self._from_logits:
            pred = jax.nn.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            idx = jnp.expand_dims(label.astype("int32"), self._axis) if label.ndim < pred.ndim else \
                label.astype("int32")
            idx = jnp.clip(idx, 0, pred.shape[self._axis] - 1)
            loss = -jnp.take_along_axis(pred, idx, axis=self._axis)
        else:
            loss = -(pred * label.reshape(pred.shape)).sum(axis=self._axis, keepdims=True)
        return _batch_mean(_weighting(loss, self._weight, sample_weight), self._batch_axis)


class SigmoidBinaryCrossEntropyLoss(Loss):
    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        import jax
        import jax.numpy as jnp

        pred, label = raw(pred), raw(label).reshape(raw(pred).shape)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = jax.nn.relu(pred) - pred * label + jax.nn.softplus(-jnp.abs(pred))
            else:
                lw = 1 + (raw(pos_weight) - 1) * label
                loss = pred - pred * label + lw * (jax.nn.softplus(-jnp.abs(pred)) + jax.nn.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(jnp.log(pred + eps) * label + jnp.log(1.0 - pred + eps) * (1.0 - label))
            else:
                loss = -(jnp.log(pred + eps) * label * raw(pos_weight) + jnp.log(1.0 - pred + eps) * (1.0 - label))
        return _batch_mean(_weighting(loss, self._weight, sample_weight), self._batch_axis)


SoftmaxCELoss = SoftmaxCrossEntropyLoss
SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss
