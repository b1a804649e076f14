"""MXNet's evaluation metrics (``mx.metric``): ``create``, ``Accuracy``, ``TopKAccuracy``, ``F1``, ``MCC``,
``Perplexity``, ``MAE``/``MSE``/``RMSE``, ``CrossEntropy``, ``PearsonCorrelation``, ``Loss``, ``CompositeEvalMetric``,
``CustomMetric``/``np`` (``metrics.py``).  ``mxnet.metric`` is that module (``ast_hybrid/mxnet``, the import door).

May import: ``ast_hybrid.core``, ``ast_hybrid.nd`` (MXNet's metrics compute with ``mx.nd``), numpy.  Never
Gluon, the linter, the transpiler, the CLI or ``testing``.
"""

from ast_hybrid.metric.metrics import *  # noqa: F401,F403
