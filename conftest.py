"""For every test and doctest of the project: JAX's persistent compilation cache stays off in the test
processes (``AST_HYBRID_COMPILE_CACHE=0``), and a folder of this run's own, removed at its end, is the cache
directory wherever a test turns it on (``tests/gluon/test_compile_cache.py`` does, in its subprocesses):
never the user's cache.  Set in the environment, so the subprocesses tests start (``python -m
ast_hybrid.run``, examples) inherit it.

Why off: once a hybridized block turned the cache on (it is process-wide in JAX), every later program of the
run was serialized into it, and CI's pytest process died twice with a segmentation fault inside JAX's cache
path (``_compile_and_write_cache``, ``put_executable_and_time``) in the property tier's thousands of generated
programs (not reproduced in a shorter run with the cache on: a guess from both stack traces, to be
confirmed)."""

from __future__ import annotations

import os
import shutil
import tempfile

_COMPILE_CACHE = tempfile.mkdtemp(prefix="ast_hybrid_test_compile_cache_")
os.environ["AST_HYBRID_COMPILE_CACHE_DIR"] = _COMPILE_CACHE
os.environ["AST_HYBRID_COMPILE_CACHE"] = "0"


def pytest_unconfigure(config):
    shutil.rmtree(_COMPILE_CACHE, ignore_errors=True)
