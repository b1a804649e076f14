"""Gluon's ``nn`` layers (``from ast_hybrid.gluon import nn``)."""

from ast_hybrid.gluon.nn.basic_layers import *  # noqa: F401,F403
from ast_hybrid.gluon.nn.basic_layers import __all__ as _basic
from ast_hybrid.gluon.nn.conv_layers import *  # noqa: F401,F403
from ast_hybrid.gluon.nn.conv_layers import __all__ as _conv

__all__ = list(_basic) + list(_conv)
