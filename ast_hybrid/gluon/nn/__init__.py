"""Gluon's ``nn`` layers (``from ast_hybrid.gluon import nn``); ``nn.Block``/``nn.HybridBlock`` as in MXNet."""

from ast_hybrid.gluon.block import Block, HybridBlock  # noqa: F401
from ast_hybrid.gluon.nn.basic_layers import *  # noqa: F401,F403
from ast_hybrid.gluon.nn.basic_layers import __all__ as _basic
from ast_hybrid.gluon.nn.conv_layers import *  # noqa: F401,F403
from ast_hybrid.gluon.nn.conv_layers import __all__ as _conv
from ast_hybrid.gluon.symbol_block import SymbolBlock  # noqa: F401

__all__ = list(_basic) + list(_conv) + ["Block", "HybridBlock", "SymbolBlock"]
