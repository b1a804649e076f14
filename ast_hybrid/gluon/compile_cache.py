"""Moved to ``ast_hybrid.xla.compile_cache`` (the XLA rewrites' room); this name is that module, for code written
against the old path (``ast_hybrid.gluon.compile_cache``)."""

import sys

from ast_hybrid.xla import compile_cache as _moved

sys.modules[__name__] = _moved
