"""Gluon's contrib layers (``from ast_hybrid.gluon.contrib import cnn, nn, rnn``), mirroring ``mxnet.gluon.contrib``."""

from ast_hybrid.gluon.contrib import cnn, nn, rnn

__all__ = ["cnn", "nn", "rnn"]
