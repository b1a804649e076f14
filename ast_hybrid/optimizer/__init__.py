"""Optimizers: MXNet's update rules as compiled programs, ``mx.optimizer`` objects, learning-rate schedulers.

- ``updates``: each rule (sgd, nag, adam, rmsprop, adagrad) as MXNet 1.9.1's update kernel computes it, compiled
  once per rule and options (``gluon.Trainer`` runs them);
- ``optimizer``: ``mx.optimizer``'s ``Optimizer`` objects (``SGD``, ``NAG``, ``Adam``, ``RMSProp``, ``AdaGrad``,
  ``create``, ``register``), which a Trainer takes and updates with the rules above;
- ``lr_scheduler``: MXNet's learning-rate schedulers.

``mxnet.optimizer`` and ``mxnet.lr_scheduler`` are these modules (``ast_hybrid/mxnet``, the import door).

May import: ``ast_hybrid.core``, the ops (``nd``'s namespace), jax, numpy.  Never Gluon (a Trainer is
duck-typed here), the linter, the transpiler, the CLI or ``testing``.
"""
