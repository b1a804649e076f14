"""MXNet 1.x's symbolic training API (``mx.mod``, ``mx.model``, ``mx.callback``) over the Gluon front.

- ``base_module`` and ``module``: ``BaseModule`` and ``Module``: ``bind``/``init_params``/``init_optimizer``/
  ``forward``/``backward``/``update``, and the loops ``fit``, ``score``, ``predict``, as MXNet 1.9.1's
  ``python/mxnet/module`` has them.  A Module's Symbol runs as a hybridized ``gluon.SymbolBlock`` (one compiled
  program per input shape, its backward under autograd), its parameters are initialised by name as MXNet's
  Module does (``InitDesc`` with the variables' attributes), and its optimizer is an ``mx.optimizer`` object
  with MXNet's index-to-name table, called through ``get_updater``;
- ``bucketing_module``: ``BucketingModule``, a Module per bucket key sharing one set of parameters;
- ``rnn_cell`` and ``rnn``: MXNet's legacy symbolic RNN cells and ``mx.rnn`` (checkpoints, bucketing iterator);
- ``model``: ``save_checkpoint``/``load_checkpoint``/``load_params`` (``prefix-symbol.json`` and
  ``prefix-%04d.params`` with ``arg:``/``aux:`` names) and ``BatchEndParam``;
- ``callback``: ``Speedometer``, ``do_checkpoint``, ``log_train_metric``, ``ProgressBar``,
  ``LogValidationMetricsCallback``.

``mxnet.module`` (``mx.mod``), ``mxnet.model``, ``mxnet.callback`` and ``mxnet.rnn`` are these modules (the
import door).

May import: ``ast_hybrid.core``, the ops, ``nd``, ``io``, ``init``, ``symbol``, ``sym``, ``optimizer``,
``metric`` and Gluon (``gluon.SymbolBlock`` runs the graph), numpy, jax.  Never the linter, the transpiler, the CLI or
``testing``.
"""
