"""``mxnet.init``/``mxnet.initializer``: ast-hybrid's initializers (``ast_hybrid.init``), with MXNet's
protocol (``init(InitDesc or name, arr)`` fills ``arr``; subclasses override ``_init_weight(name, arr)``...),
registry (``register``, ``alias``, ``create`` by name or JSON), ``InitDesc``, ``Mixed``, ``Load`` and
``FusedRNN``."""

from __future__ import annotations

from ast_hybrid.init import (Bilinear, Constant, FusedRNN, InitDesc, Initializer, Load, LSTMBias, Mixed,  # noqa: F401
                             MSRAPrelu, Normal, One, Orthogonal, Uniform, Xavier, Zero, alias, create, register)
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["Initializer", "InitDesc", "Uniform", "Normal", "Xavier", "MSRAPrelu", "Zero", "One", "Constant",
           "Orthogonal", "Bilinear", "LSTMBias", "FusedRNN", "Mixed", "Load", "create", "register", "alias"]

__getattr__ = module_getattr("mxnet.initializer", __name__)
