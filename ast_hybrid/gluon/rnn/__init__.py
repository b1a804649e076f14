"""Recurrent cells and fused recurrent layers (``from ast_hybrid.gluon import rnn``), as ``mxnet.gluon.rnn``."""

from ast_hybrid.gluon.rnn.rnn_cell import *  # noqa: F401,F403
from ast_hybrid.gluon.rnn.rnn_cell import __all__ as _cells
from ast_hybrid.gluon.rnn.rnn_layer import GRU, LSTM, RNN  # noqa: F401

__all__ = list(_cells) + ["RNN", "LSTM", "GRU"]
