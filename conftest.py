"""For every test and doctest of the project: JAX's persistent compilation cache stays off in the test
processes (``AST_HYBRID_COMPILE_CACHE=0``), and a folder of this run's own, removed at its end, is the cache
directory wherever a test turns it on (``tests/gluon/test_compile_cache.py`` does, in its subprocesses):
never the user's cache.  Set in the environment, so the subprocesses tests start (``python -m
ast_hybrid.run``, examples) inherit it.

After every test, JAX's caches are cleared when the process holds many memory mappings
(``ast_hybrid/testing/memory_maps.py``): a run compiles thousands of programs, and past the kernel's
``vm.max_map_count`` XLA's compiler dies with a segmentation fault (what killed CI's pytest in the property
tier, at the same test each run).

Why the cache off: once a hybridized block turned the cache on (it is process-wide in JAX), every later program of the
run was serialized into it, and CI's pytest process died twice with a segmentation fault inside JAX's cache
path (``_compile_and_write_cache``, ``put_executable_and_time``) in the property tier's thousands of generated
programs.  That guess was wrong (the mapping limit above was the cause; ``_compile_and_write_cache`` is JAX's
compile path whether or not a cache directory is set), but a test run should not write compiled programs to
disk anyway."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_COMPILE_CACHE = tempfile.mkdtemp(prefix="ast_hybrid_test_compile_cache_")
os.environ["AST_HYBRID_COMPILE_CACHE_DIR"] = _COMPILE_CACHE
os.environ["AST_HYBRID_COMPILE_CACHE"] = "0"


# The quick tier (``pytest -m quick``), for the inner loop: every test that needs neither MXNet (the oracle, real
# GluonCV/GluonNLP code, the corpus) nor other processes (marked ``processes``), and is not marked slow.  A test joins it by what it
# uses, not by a list kept by hand.
_NOT_QUICK_MARKS = ("slow", "oracle", "corpus", "processes")
_NOT_QUICK_FIXTURES = {"oracle", "both", "folder", "gluon_tree", "mx_reference"}
_NOT_QUICK_DIRS = (os.path.join("tests", "realcode"), os.path.join("tests", "distributed"))


def pytest_collection_modifyitems(config, items):
    root = str(config.rootpath)
    for item in items:
        where = os.path.relpath(str(item.path), root)
        if any(item.get_closest_marker(m) for m in _NOT_QUICK_MARKS) or \
                _NOT_QUICK_FIXTURES & set(getattr(item, "fixturenames", ())) or where.startswith(_NOT_QUICK_DIRS):
            continue
        item.add_marker(pytest.mark.quick)


def pytest_runtest_teardown(item, nextitem):
    from ast_hybrid.testing.memory_maps import release_compiled_programs

    release_compiled_programs()


def pytest_unconfigure(config):
    shutil.rmtree(_COMPILE_CACHE, ignore_errors=True)
