"""``mxnet.metric``: MXNet 1.9.1's evaluation metrics, with its numbers (``tests/mxnet/test_metric.py``).

``EvalMetric`` (``update(labels, preds)``, ``get``, ``get_name_value``, ``reset``, the global statistics),
``Accuracy``, ``TopKAccuracy``, ``F1`` and ``MCC`` (macro: the mean of per-update scores; micro: over all counts),
``PearsonCorrelation`` (``pearsonr``),
``MAE``, ``MSE``, ``RMSE``, ``CrossEntropy``, ``Perplexity`` (``ignore_label``), ``Loss``,
``CompositeEvalMetric``, ``CustomMetric``/``np`` and ``create`` (a name or alias, a callable, a list, an
instance).  Labels and predictions are NDArrays (or lists of them), read on the host as MXNet does; each
update's float32 value is summed in float64, as MXNet's numpy 1 did (numpy 2 would keep float32).

Over 600 lines: MXNet's ``mxnet/metric.py`` is one module of these metric classes (each short), which
``create`` and ``register`` find by name; kept as one module, in MXNet's order.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy

from ast_hybrid import nd as ndarray
from ast_hybrid.core.ndarray import NDArray

numeric_types = (float, int, numpy.generic)
string_types = (str,)

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "PearsonCorrelation",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "Loss", "CustomMetric", "create", "register", "np", "check_label_shapes"]


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """MXNet's: the lengths (``shape``: shapes) must agree; ``wrap`` makes single arrays lists."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of predictions {}".format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


# lower-case name or alias -> metric class (MXNet's registry; ``register`` adds to it)
_REGISTRY: dict = {}


def register(klass, *aliases):
    """Make ``klass`` (an ``EvalMetric`` subclass) creatable by its lower-case name and ``aliases``."""
    assert issubclass(klass, EvalMetric), "Can only register subclass of EvalMetric"
    for name in (klass.__name__,) + aliases:
        _REGISTRY[name.lower()] = klass
    return klass


def create(metric, *args, **kwargs):
    """A metric from a name or alias (``'acc'``), a callable (a ``CustomMetric``), a list (a composite), or
    an ``EvalMetric`` (returned as it is)."""
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite_metric = CompositeEvalMetric()
        for child_metric in metric:
            composite_metric.add(create(child_metric, *args, **kwargs))
        return composite_metric
    if isinstance(metric, EvalMetric):
        assert not args and not kwargs, "metric is already an instance. Additional arguments are invalid"
        return metric
    if isinstance(metric, dict):
        return create(**metric)
    assert isinstance(metric, str), "metric must be of string type"
    assert metric.lower() in _REGISTRY, (
        "%s is not registered. Please register with metric.register first" % metric.lower())
    return _REGISTRY[metric.lower()](*args, **kwargs)


class EvalMetric:
    """Base class: ``sum_metric / num_inst`` (and the same over all updates since ``reset``, the global
    statistics, which ``reset_local`` keeps)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names, self.label_names = output_names, label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name, "output_names": self.output_names,
                       "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        pred = [pred[name] for name in self.output_names] if self.output_names is not None else list(pred.values())
        label = ([label[name] for name in self.label_names] if self.label_names is not None
                 else list(label.values()))
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError()

    def reset(self):
        self.num_inst, self.sum_metric = 0, 0.0
        self.global_num_inst, self.global_sum_metric = 0, 0.0

    def reset_local(self):
        self.num_inst, self.sum_metric = 0, 0.0

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def _name_value(self, name, value):
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))

    def get_name_value(self):
        return self._name_value(*self.get())

    def get_global_name_value(self):
        if self._has_global_stats:
            return self._name_value(*self.get_global())
        return self.get_name_value()


class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` gives the lists of their names and values."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError("Metric index {} is out of range 0 and {}".format(index, len(self.metrics)))

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for metric in self.metrics:
            name, value = getter(metric)
            names.extend([name] if isinstance(name, string_types) else name)
            values.extend([value] if isinstance(value, numeric_types) else value)
        return (names, values)

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


class Accuracy(EvalMetric):
    """The fraction of labels equal to the prediction (the argmax over ``axis`` where the shapes differ)."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            if pred_label.shape != label.shape:
                pred_label = ndarray.argmax(pred_label, axis=self.axis)
            pred_label = pred_label.asnumpy().astype("int32").flat
            label = label.asnumpy().astype("int32").flat
            check_label_shapes(label, pred_label)
            num_correct = (pred_label == label).sum()
            self.sum_metric += num_correct
            self.global_sum_metric += num_correct
            self.num_inst += len(pred_label)
            self.global_num_inst += len(pred_label)


class TopKAccuracy(EvalMetric):
    """The fraction of labels among the ``top_k`` highest predictions (``top_k > 1``)."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        assert self.top_k > 1, "Please use Accuracy if top_k is no more than 1"
        self.name += "_%d" % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            assert len(pred_label.shape) <= 2, "Predictions should be no more than 2 dims"
            pred_label = numpy.argpartition(pred_label.asnumpy().astype("float32"), -self.top_k)
            label = label.asnumpy().astype("int32")
            check_label_shapes(label, pred_label)
            num_samples = pred_label.shape[0]
            if pred_label.ndim == 1:
                self.sum_metric += (pred_label.flat == label.flat).sum()
            elif pred_label.ndim == 2:
                num_classes = pred_label.shape[1]
                for j in range(min(num_classes, self.top_k)):
                    num_correct = (pred_label[:, num_classes - 1 - j].flat == label.flat).sum()
                    self.sum_metric += num_correct
                    self.global_sum_metric += num_correct
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics:
    """True/false positives/negatives of a two-class prediction (its argmax over axis 1)."""

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = pred.asnumpy()
        label = label.asnumpy().astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification." % self.__class__.__name__)
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        counts = {"true_positives": (pred_true * label_true).sum(), "false_positives": (pred_true * label_false).sum(),
                  "false_negatives": (pred_false * label_true).sum(),
                  "true_negatives": (pred_false * label_false).sum()}
        for key, value in counts.items():
            setattr(self, key, getattr(self, key) + value)
            setattr(self, "global_" + key, getattr(self, "global_" + key) + value)

    @staticmethod
    def _ratio(a, b):
        return float(a) / (a + b) if a + b > 0 else 0.

    @staticmethod
    def _f(precision, recall):
        return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.

    @property
    def precision(self):
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self):
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self):
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self):
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self):
        return self._f(self.precision, self.recall)

    @property
    def global_fscore(self):
        return self._f(self.global_precision, self.global_recall)

    def matthewscc(self, use_global=False):
        """Matthews' correlation of the counts (since the last reset, or ``use_global``: since ``reset``);
        factors of the denominator that are 0 count as 1, as MXNet's."""
        prefix = "global_" if use_global else ""
        if not (self.global_total_examples if use_global else self.total_examples):
            return 0.
        tp, fp, fn, tn = (float(getattr(self, prefix + key)) for key in
                          ("true_positives", "false_positives", "false_negatives", "true_negatives"))
        denom = 1.
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            denom *= term if term != 0. else 1.
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self):
        return self.false_negatives + self.false_positives + self.true_negatives + self.true_positives

    @property
    def global_total_examples(self):
        return (self.global_false_negatives + self.global_false_positives + self.global_true_negatives
                + self.global_true_positives)

    def local_reset_stats(self):
        self.false_positives = self.false_negatives = self.true_positives = self.true_negatives = 0

    def reset_stats(self):
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


def _update_counts(metric, stats, average, labels, preds, score):
    """``F1``'s and ``MCC``'s update: count, then ``'macro'`` adds this update's score (and forgets the
    counts), ``'micro'`` scores all counts so far (``score(stats, use_global)``)."""
    labels, preds = check_label_shapes(labels, preds, True)
    for label, pred in zip(labels, preds):
        stats.update_binary_stats(label, pred)
    if average == "macro":
        metric.sum_metric += score(stats, False)
        metric.global_sum_metric += score(stats, True)
        metric.num_inst += 1
        metric.global_num_inst += 1
        stats.reset_stats()
    else:
        metric.sum_metric = score(stats, False) * stats.total_examples
        metric.global_sum_metric = score(stats, True) * stats.global_total_examples
        metric.num_inst = stats.total_examples
        metric.global_num_inst = stats.global_total_examples


class F1(EvalMetric):
    """F1 of a binary classification: ``average='macro'`` averages the score of each ``update`` (MXNet resets
    the counts after each), ``'micro'`` scores the counts of all updates."""

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names,
                            has_global_stats=True)

    def update(self, labels, preds):
        _update_counts(self, self.metrics, self.average, labels, preds,
                       lambda stats, use_global: stats.global_fscore if use_global else stats.fscore)

    def reset(self):
        self.sum_metric, self.num_inst = 0., 0
        self.global_num_inst, self.global_sum_metric = 0, 0.0
        self.metrics.reset_stats()

    def reset_local(self):
        self.sum_metric, self.num_inst = 0., 0
        self.metrics.local_reset_stats()


class MCC(EvalMetric):
    """Matthews' correlation coefficient of a binary classification (argmax over axis 1), averaged as
    ``F1``'s: ``'macro'`` per update, ``'micro'`` over the counts of all updates."""

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        self._average = average
        self._metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names,
                            has_global_stats=True)

    def update(self, labels, preds):
        _update_counts(self, self._metrics, self._average, labels, preds,
                       lambda stats, use_global: stats.matthewscc(use_global))

    def reset(self):
        self.sum_metric, self.num_inst = 0., 0.
        self.global_sum_metric, self.global_num_inst = 0., 0.
        self._metrics.reset_stats()

    def reset_local(self):
        self.sum_metric, self.num_inst = 0., 0.
        self._metrics.local_reset_stats()


class PearsonCorrelation(EvalMetric):
    """Pearson's correlation of predictions and labels (flattened, float64): ``'macro'`` averages
    ``numpy.corrcoef`` per array; ``'micro'`` accumulates running means, sums of squares (Welford) and the
    co-moment over all arrays, as MXNet's (whose global value in that mode stays 0)."""

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        if self.average == "micro":
            self.reset_micro()

    def reset_micro(self):
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = 0
        self._pred_nums = self._label_nums = 0
        self._conv = 0

    def reset(self):
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    def update_variance(self, new_values, *aggregate):
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        m_2 += numpy.sum(delta * (new_values - mean))
        return count, mean, m_2

    def update_cov(self, label, pred):
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = label.asnumpy().ravel().astype(numpy.float64)
            pred = pred.asnumpy().ravel().astype(numpy.float64)
            self.num_inst += 1
            self.global_num_inst += 1
            if self.average == "macro":
                corr = numpy.corrcoef(pred, label)[0, 1]
                self.sum_metric += corr
                self.global_sum_metric += corr
            else:
                self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                    label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                    pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        return (self.name, self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                                         * numpy.sqrt(self._sse_l / (n - 1))))


class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability of the labels; labels equal to ``ignore_label`` count
    for nothing."""

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None, label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.ignore_label, self.axis = ignore_label, axis

    def update(self, labels, preds):
        assert len(labels) == len(preds)
        loss, num = 0., 0
        for label, pred in zip(labels, preds):
            assert label.size == pred.size / pred.shape[-1], "shape mismatch: %s vs. %s" % (label.shape, pred.shape)
            label = label.reshape((label.size,))
            pred = ndarray.pick(pred, label.astype(dtype="int32"), axis=self.axis)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(pred.dtype)
                num -= ndarray.sum(ignore).asscalar()
                pred = pred * (1 - ignore) + ignore
            loss -= numpy.float64(ndarray.sum(ndarray.log(ndarray.maximum(1e-10, pred))).asscalar())
            num += pred.size
        self.sum_metric += loss
        self.global_sum_metric += loss
        self.num_inst += num
        self.global_num_inst += num

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


class _Regression(EvalMetric):
    """Mean over updates of a per-update error of (n, 1)-shaped label and prediction."""

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def _error(self, label, pred):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = label.asnumpy(), pred.asnumpy()
            if len(label.shape) == 1:
                label = label.reshape(label.shape[0], 1)
            if len(pred.shape) == 1:
                pred = pred.reshape(pred.shape[0], 1)
            err = numpy.float64(self._error(label, pred))
            self.sum_metric += err
            self.global_sum_metric += err
            self.num_inst += 1
            self.global_num_inst += 1


class MAE(_Regression):
    """Mean absolute error (averaged per update, then over updates)."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    def _error(self, label, pred):
        return numpy.abs(label - pred).mean()


class MSE(_Regression):
    """Mean squared error (averaged per update, then over updates)."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    def _error(self, label, pred):
        return ((label - pred) ** 2.0).mean()


class RMSE(_Regression):
    """Root mean squared error of each update, averaged over updates."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    def _error(self, label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class CrossEntropy(EvalMetric):
    """Mean of ``-log(p[label] + eps)`` over samples."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = label.asnumpy().ravel(), pred.asnumpy()
            assert label.shape[0] == pred.shape[0]
            prob = pred[numpy.arange(label.shape[0]), numpy.int64(label)]
            cross_entropy = numpy.float64((-numpy.log(prob + self.eps)).sum())
            self.sum_metric += cross_entropy
            self.global_sum_metric += cross_entropy
            self.num_inst += label.shape[0]
            self.global_num_inst += label.shape[0]


class Loss(EvalMetric):
    """Mean of the loss values given as ``preds`` (labels ignored)."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            loss = numpy.float64(ndarray.sum(pred).asscalar())
            self.sum_metric += loss
            self.global_sum_metric += loss
            self.num_inst += pred.size
            self.global_num_inst += pred.size


class CustomMetric(EvalMetric):
    """``feval(label, pred)`` on numpy arrays: a value, or ``(sum_metric, num_inst)``."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = "custom(%s)" % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self._feval, self._allow_extra_outputs = feval, allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(label.asnumpy(), pred.asnumpy())
            sum_metric, num_inst = reval if isinstance(reval, tuple) else (reval, 1)
            self.sum_metric += sum_metric
            self.global_sum_metric += sum_metric
            self.num_inst += num_inst
            self.global_num_inst += num_inst

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A ``CustomMetric`` from a function of numpy arrays."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


for _klass, _aliases in ((CompositeEvalMetric, ("composite",)), (Accuracy, ("acc",)),
                         (TopKAccuracy, ("top_k_accuracy", "top_k_acc")), (F1, ()), (MCC, ()),
                         (PearsonCorrelation, ("pearsonr",)), (Perplexity, ()), (MAE, ()),
                         (MSE, ()), (RMSE, ()), (CrossEntropy, ("ce",)), (Loss, ()), (CustomMetric, ())):
    register(_klass, *_aliases)
