"""``mxnet.contrib.amp``: automatic mixed precision is not here; each name is an error naming the API."""

from ast_hybrid.mxnet._missing import module_getattr

_WHY = "automatic mixed precision is not implemented in ast-hybrid"

__getattr__ = module_getattr("mxnet.contrib.amp", __name__,
                             {n: _WHY for n in ("init", "init_trainer", "scale_loss", "unscale", "convert_model",
                                                "convert_hybrid_block", "convert_symbol")})
