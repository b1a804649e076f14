"""``mxnet.rnn``: MXNet 1.9.1's legacy symbolic RNN cells, RNN checkpoints and ``BucketSentenceIter``; the
implementation is ``ast_hybrid.module.rnn`` (cells in ``ast_hybrid.module.rnn_cell``)."""

from ast_hybrid.module import rnn as _implementation
from ast_hybrid.mxnet import _missing

_missing.door(__name__, _implementation, "mxnet.rnn")
_missing.serve(__name__, {"rnn_cell": (_implementation.rnn_cell, "mxnet.rnn.rnn_cell"),
                          "io": (_implementation, "mxnet.rnn.io"), "rnn": (_implementation, "mxnet.rnn.rnn")})
