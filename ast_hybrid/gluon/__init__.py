"""The Gluon-compatible front: ``from ast_hybrid.gluon import nn, rnn, contrib, Block, HybridBlock, SymbolBlock``."""

from ast_hybrid.gluon import contrib, loss, nn, rnn
from ast_hybrid.gluon.block import Block, HybridBlock
from ast_hybrid.gluon.parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from ast_hybrid.gluon.symbol_block import SymbolBlock
from ast_hybrid.gluon.trainer import Trainer

__all__ = ["nn", "rnn", "contrib", "loss", "Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict",
           "Constant", "DeferredInitializationError", "Trainer"]
