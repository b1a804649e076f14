"""``mxnet.contrib.amp.amp``: MXNet's AMP functions, each an error naming the API when called (see the
package's doc); the module state MXNet code reads (``_amp_initialized``...) as before any ``init()``."""

from ast_hybrid.core.errors import refusing_function
from ast_hybrid.mxnet._missing import module_getattr

# the functions are made by _not_supported below
__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_symbol",  # noqa: F822
           "convert_hybrid_block", "list_lp16_ops", "list_fp32_ops",
           "list_lp16_fp32_ops", "list_conditional_fp32_ops", "list_widest_type_cast", "list_loss_output_functions",
           "list_lp16_use_fp32_params"]

_WHY = "automatic mixed precision is not implemented in ast-hybrid (models run in the dtype of their parameters)"

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None


def _not_supported(name):
    return refusing_function("mxnet.contrib.amp", name, _WHY,
                             f"MXNet's ``amp.{name}``: not supported here (raises ``NotSupported``).")


for _name in (*__all__, "convert_bucketing_module"):
    globals()[_name] = _not_supported(_name)
del _name

__getattr__ = module_getattr("mxnet.contrib.amp.amp", __name__)
