"""For every test and doctest of the project, and every process a test starts (set in the environment, which
xdist's workers and the tests' subprocesses inherit): one folder for the run, made by the first process and
removed at its end, holds

- JAX's persistent compilation cache, for every program (no minimum compile time or size): a program compiled
  once in the run (an op's eager program, a model-zoo network built again by another test file, by the other
  worker, or by a script a test runs) is read back instead of compiled again.  densenet121 op by op then
  hybridized: 35 s in a fresh process, 7.7 s in a second one (the suite: see docs/contributing.md);
- ast-hybrid's own cache folder (``AST_HYBRID_COMPILE_CACHE_DIR``), which blocks do not turn on in the test
  processes (``AST_HYBRID_COMPILE_CACHE=0``): the tests of that cache (``tests/gluon/test_compile_cache.py``,
  ``test_program_cache.py``) turn it on in their own subprocesses, without JAX's folder, on folders of their
  own.  Never the user's cache.

After every test, JAX's in-memory caches are cleared when the process holds many memory mappings
(``ast_hybrid/testing/memory_maps.py``): a run compiles thousands of programs, and past the kernel's
``vm.max_map_count`` XLA's compiler dies with a segmentation fault (what killed CI's pytest in the property
tier, at the same test each run, before this was found; an earlier guess blamed JAX's cache path, which is
JAX's compile path whether or not a cache directory is set)."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_RUN = os.environ.get("AH_TEST_RUN_DIR")
_OWNER = _RUN is None               # this process made the run's folder (not an xdist worker or a subprocess)
if _OWNER:
    _RUN = tempfile.mkdtemp(prefix="ast_hybrid_test_run_")
    os.environ["AH_TEST_RUN_DIR"] = _RUN
os.environ["AST_HYBRID_COMPILE_CACHE_DIR"] = os.path.join(_RUN, "ours")
os.environ["AST_HYBRID_COMPILE_CACHE"] = "0"
#: JAX's own cache for the run (what the two cache test modules take out of their subprocesses' environment)
JAX_CACHE = {"JAX_COMPILATION_CACHE_DIR": os.path.join(_RUN, "jax"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
             "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
os.environ.update(JAX_CACHE)
# JAX's in-memory program caches never emptied in the suite (xla/program_memory.py): tests that count
# compilations or cache entries would otherwise see a clear every 1,000 compilations of their worker;
# tests/ops/test_program_memory.py checks the limit in processes of its own
os.environ.setdefault("AST_HYBRID_PROGRAM_LIMIT", "0")


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
    if _OWNER:
        shutil.rmtree(_RUN, ignore_errors=True)
