"""Model zoo: MXNet's model definitions (structure and parameter names), no pretrained downloads."""

from ast_hybrid.gluon.model_zoo import vision  # noqa: F401
