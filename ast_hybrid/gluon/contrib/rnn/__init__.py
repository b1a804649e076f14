"""``mxnet.gluon.contrib.rnn``: ``LSTMPCell``, ``VariationalDropoutCell`` and the convolutional recurrent
cells (``Conv1D/2D/3D`` ``RNN``/``LSTM``/``GRU`` ``Cell``); ``rnn_cell.dynamic_unroll``."""

from ast_hybrid.gluon.contrib.rnn.conv_rnn_cell import *  # noqa: F401,F403
from ast_hybrid.gluon.contrib.rnn.conv_rnn_cell import __all__ as _conv
from ast_hybrid.gluon.contrib.rnn.rnn_cell import LSTMPCell, VariationalDropoutCell, dynamic_unroll  # noqa: F401

__all__ = list(_conv) + ["VariationalDropoutCell", "LSTMPCell"]
