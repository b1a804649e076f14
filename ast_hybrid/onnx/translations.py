"""Every translation, by MXNet's registered op name: the families' tables merged (one place to look)."""

from __future__ import annotations

from ast_hybrid.onnx import detection, elemwise, nn, shape

__all__ = ["TABLE"]

TABLE = {**elemwise.TABLE, **shape.TABLE, **nn.TABLE, **detection.TABLE}
