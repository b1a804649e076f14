"""Recurrent cells and fused recurrent layers (``from ast_hybrid.gluon import rnn``)."""

from ast_hybrid.gluon.rnn.rnn_cell import GRUCell, LSTMCell, RNNCell  # noqa: F401
from ast_hybrid.gluon.rnn.rnn_layer import GRU, LSTM, RNN  # noqa: F401

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU"]
