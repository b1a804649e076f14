"""Transpiler passes: one gast transformer per module; see ast_hybrid.transpiler.pipeline for their order.

Each pass is a module with a ``transform(fn, ctx)`` entry point; its docstring
says what it rewrites and what holds after it, with a before/after run as a
doctest.

May import: gast, ``ast_hybrid.common`` (``walkers`` above all), the tools of
``ast_hybrid.transpiler.ast_tools``, and ``ast_hybrid.transpiler.sites`` (the
control-flow pass records what the runtime needs to explain a failure).  A pass
never imports the runtime: generated code reaches it only through the reserved
name ``ah__``.  Never jax or numpy, the linter, another pass, or the Gluon front.
"""

import time as _time

_IMPORT_STARTED = _time.time()     # each module of the package is read after this (xla/program_cache.py)
