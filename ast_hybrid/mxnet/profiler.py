"""``mxnet.profiler``: not here; every name is an error naming the API (use ``jax.profiler`` to profile
the compiled programs)."""

from ast_hybrid.mxnet._missing import module_getattr

_WHY = "MXNet's profiler is not implemented; jax.profiler traces the compiled programs"

__getattr__ = module_getattr("mxnet.profiler", __name__,
                             {n: _WHY for n in ("set_config", "set_state", "dump", "dumps", "pause", "resume")})
