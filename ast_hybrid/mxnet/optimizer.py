"""``mxnet.optimizer``: not yet here; ``gluon.Trainer`` takes its optimizer by name.

``Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})`` works (sgd, nag, adam,
rmsprop, adagrad, with MXNet's update rules); optimizer objects (``mx.optimizer.SGD(...)``,
``mx.optimizer.create``) are an error naming the API.
"""

from ast_hybrid.mxnet._missing import module_getattr

_WHY = ("optimizer objects are not implemented yet; pass the optimizer by name to gluon.Trainer: "
        "Trainer(params, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9}) (sgd, nag, adam, rmsprop, adagrad)")

__getattr__ = module_getattr("mxnet.optimizer", __name__, {"Optimizer": _WHY, "SGD": _WHY, "create": _WHY})
