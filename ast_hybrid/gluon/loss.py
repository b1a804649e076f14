"""Gluon's losses with MXNet 1.9.1's semantics (``from ast_hybrid.gluon import loss``), written with ``F`` ops
as MXNet writes them, so they run eagerly (and are recorded by ``autograd``) and inside compiled programs.

Each loss applies ``sample_weight`` (broadcast) and the constant ``weight``, then averages over every axis
but ``batch_axis`` (``KLDivLoss`` sums; ``PoissonNLLLoss`` averages everything; ``CTCLoss``, ``TripletLoss``,
``CosineEmbeddingLoss`` and ``SDMLLoss`` give one value per sample as MXNet does).

A loss of this module that the user did not hybridize still runs as one compiled program once called with
NDArrays (``Loss.__call__``): its few small ops cost more to dispatch one by one than to compute (the chapter's
MLP training step: 0.6 of 2.3 ms, issue 11), and the values are the same ops' (a user's subclass, whose
``hybrid_forward`` may do anything MXNet allows imperatively, keeps the op-by-op call).
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.gluon import block as _block
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.core.ndarray import ARRAYS

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss", "SoftmaxCrossEntropyLoss",
           "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss", "HingeLoss", "SquaredHingeLoss", "LogisticLoss",
           "TripletLoss", "PoissonNLLLoss", "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, (int, float)):
            raise TypeError(f"weight must be a number, got {type(weight).__name__}")
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    return F.reshape_like(x, y)


class Loss(HybridBlock):
    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight, self._batch_axis = weight, batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def __call__(self, *args):
        if (self._compiled is None and not self._active and type(self).__module__ == __name__
                and not _block.FRAMES.traces and not _block.data_parallel.PLACEMENT.active
                and all(a is None or a.__class__ in ARRAYS for a in args)):
            out = self._build(args)(args)      # see the module doc; hybridize(False) does not undo it
            return _block.as_np(out) if _block.NP_MODE.array else out
        return super().__call__(*args)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class L2Loss(Loss):
    """``0.5 * (label - pred)^2``."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.square(_reshape_like(F, label, pred) - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L1Loss(Loss):
    """``|label - pred|``."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.abs(_reshape_like(F, label, pred) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy on logits (stable form) or, with ``from_sigmoid``, on probabilities."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:   # max(x, 0) - x * z + log(1 + exp(-|x|))
                loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (F.Activation(-F.abs(pred), act_type="softrelu")
                                                           + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1.0 - pred + eps) * (1.0 - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1.0 - pred + eps) * (1.0 - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """``-log softmax(pred)[label]`` (``sparse_label``) or ``-sum(label * log softmax(pred))``."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis, self._sparse_label, self._from_logits = axis, sparse_label, from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)`` with ``pred`` log-probabilities (``from_logits``), summed per sample."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._axis = from_logits, axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification; the blank is the last channel, labels are padded with -1."""

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"Only 'NTC' and 'TNC' layouts for pred are supported. Got: {layout}")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"Only 'NT' and 'TN' layouts for label are supported. Got: {label_layout}")
        self._layout, self._label_layout = layout, label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """L2 (scaled by 1 / (2 rho)) below ``rho``, L1 (less rho / 2) above."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.abs(_reshape_like(F, label, pred) - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho, (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` (labels -1 or 1)."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.relu(self._margin - pred * _reshape_like(F, label, pred))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SquaredHingeLoss(HingeLoss):
    """``max(0, margin - pred * label)^2``."""

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.square(F.relu(self._margin - pred * _reshape_like(F, label, pred)))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` (labels -1/1, or 0/1 with ``label_format='binary'``)."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"label_format can only be signed or binary, received {label_format}.")
        self._label_format = label_format

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class TripletLoss(Loss):
    """``max(|positive - pred|^2 - |negative - pred|^2 + margin, 0)`` per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive, negative = _reshape_like(F, positive, pred), _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred), axis=self._batch_axis, exclude=True)
        return _apply_weighting(F, F.relu(loss + self._margin), self._weight, None)


class PoissonNLLLoss(Loss):
    """``exp(pred) - target * pred`` (``from_logits``) or ``pred - target * log(pred + eps)``, averaged over all;
    ``compute_full`` adds Stirling's approximation of ``log(target!)`` where target > 1."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._compute_full = from_logits, compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(x1, x2)`` where label is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1; shape (N, 1)."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        x_norm = F.norm(input1, axis=-1).reshape((-1, 1))
        y_norm = F.norm(input2, axis=-1).reshape((-1, 1))
        dot = F.sum(input1 * input2, axis=-1).reshape((-1, 1))
        cos_sim = dot / F.broadcast_maximum(x_norm * y_norm, F.full((1, 1), 1e-12))
        dissimilar = F.broadcast_maximum(F.zeros((1, 1)), (label == -1) * (cos_sim - self._margin))
        loss = (1 - cos_sim) * (label == 1) + dissimilar
        return _apply_weighting(F, loss, self._weight, sample_weight)


class SDMLLoss(Loss):
    """Smoothed deep metric learning: KL divergence between ``softmax(-distances)`` of the aligned batches and
    a smoothed identity; one value per sample."""

    def __init__(self, smoothing_parameter=0.3, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def hybrid_forward(self, F, x1, x2):
        batch = x1.shape[0]
        distances = F.sum(F.square(F.expand_dims(x1, 1) - F.expand_dims(x2, 0)), axis=2)
        gold = F.eye(batch)
        labels = gold * (1 - self.smoothing_parameter) + (1 - gold) * self.smoothing_parameter / (batch - 1)
        return self.kl_loss(F.log_softmax(-distances, axis=1), labels)
