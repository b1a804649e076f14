"""For every test and doctest of the project: hybridized blocks cache their compiled programs in a folder of
this run's own, removed at its end, never in the user's cache (``ast_hybrid/gluon/compile_cache.py``).  Set in
the environment, so the subprocesses tests start (``python -m ast_hybrid.run``, examples) use it too."""

from __future__ import annotations

import os
import shutil
import tempfile

_COMPILE_CACHE = tempfile.mkdtemp(prefix="ast_hybrid_test_compile_cache_")
os.environ["AST_HYBRID_COMPILE_CACHE_DIR"] = _COMPILE_CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_COMPILE_CACHE, ignore_errors=True)
