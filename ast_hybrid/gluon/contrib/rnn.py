"""``mxnet.gluon.contrib.rnn`` (being written)."""

__all__ = []
