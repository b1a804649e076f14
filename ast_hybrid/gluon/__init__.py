"""The Gluon-compatible front: ``from ast_hybrid.gluon import nn, rnn, contrib, Block, HybridBlock, SymbolBlock``.

MXNet 1.9.1's ``mxnet.gluon`` with its module paths: ``block`` (Block, HybridBlock and ``hybridize()`` as
one compiled program), ``parameter``, ``trainer``, ``loss``, ``data`` (datasets, ``DataLoader``, vision
transforms), ``nn``/``rnn``/``contrib``/``model_zoo`` layers, ``params_io`` (MXNet's ``.params`` files), ``export``/``symbol_block``, ``functional`` (a block as
a pure function for jax); ``finish_tuning(block)`` ends now the tuning its programs do over their first
calls (``ast_hybrid/xla/tuning.py``).

May import: the ops (``ast_hybrid.ops``) and MXNet's other twins at the package root (``nd``,
``ndarray``, ``autograd``, ``init``), jax, numpy, and the transpiler's ``api`` (a ``hybrid_forward`` with
control flow on tensors is converted when it is hybridized), ``ast_hybrid.onnx`` (``export(format='onnx')``).
Never the linter, the CLI or ``testing``.
"""

from ast_hybrid.gluon import contrib, data, loss, nn, rnn
from ast_hybrid.gluon.block import Block, HybridBlock
from ast_hybrid.gluon.parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from ast_hybrid.gluon.programs import finish_tuning
from ast_hybrid.gluon.symbol_block import SymbolBlock
from ast_hybrid.gluon.trainer import Trainer

__all__ = ["nn", "rnn", "contrib", "loss", "data", "Block", "HybridBlock", "SymbolBlock", "Parameter",
           "ParameterDict", "Constant", "DeferredInitializationError", "Trainer", "finish_tuning"]
