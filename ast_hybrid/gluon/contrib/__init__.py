"""Gluon's contrib layers (``from ast_hybrid.gluon.contrib import nn, rnn``), mirroring ``mxnet.gluon.contrib``."""

from ast_hybrid.gluon.contrib import nn, rnn

__all__ = ["nn", "rnn"]
