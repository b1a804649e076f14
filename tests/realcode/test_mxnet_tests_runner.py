"""``python -m ast_hybrid.conformance.mxnet_tests`` (issue 30 item 3), end to end on a folder laid out as MXNet's
``tests/python/unittest`` (a ``common.py`` importing ``nose.tools``, a sibling ``common/models.py``) holding test
files of our own: each test's outcome under MXNet 1.9.1 and under ast-hybrid, the cause of each of ours that
fails where MXNet passes, the memory watch, and the report."""

from __future__ import annotations

import json

import pytest

from ast_hybrid.conformance import mxnet_tests

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

TESTS = '''
import mxnet as mx
import pytest
from common import with_seed

@with_seed()
def test_both_pass():
    assert (mx.nd.ones((2,)) * 3).asnumpy().tolist() == [3.0, 3.0]

def test_missing_api():
    mx.optimizer.LARS(learning_rate=0.1)

def test_value_differs_here():
    # the Context class's module: mxnet.context in MXNet, ast_hybrid.core.context here (a differing value)
    assert type(mx.nd.ones((1,)).context).__module__.startswith('mxnet')

def test_fails_everywhere():
    assert False

@pytest.mark.skip(reason="needs a gpu")
def test_skipped():
    pass
'''

COMMON = '''
import functools
from nose.tools import make_decorator, assert_raises
import models

def with_seed(seed=None):
    def decorate(f):
        @functools.wraps(f)
        def test(*args, **kwargs):
            return f(*args, **kwargs)
        return test
    return decorate
'''


def test_a_folder_of_mxnet_style_tests(tmp_path):
    folder = tmp_path / "tests" / "python" / "unittest"
    folder.mkdir(parents=True)
    (folder / "common.py").write_text(COMMON)
    (folder / "test_small.py").write_text(TESTS)
    (folder.parent / "common").mkdir()
    (folder.parent / "common" / "models.py").write_text("")
    out = tmp_path / "report"
    assert mxnet_tests.main([str(folder), "test_small.py", "--out", str(out), "--timeout", "300"]) == 0
    (row,) = json.loads((out / "mxnet_tests.json").read_text())
    assert row["tests"] == 5 and row["mxnet_passed"] == 3
    failures = {k.rsplit("::", 1)[1]: v["cause"] for k, v in row["failures"].items()}
    assert failures == {"test_missing_api": "not available", "test_value_differs_here": "wrong value"}
    assert row["ours_passed"] == 1 and 0 < row["peak_ours"] < 4 * 2 ** 30 and row["stopped"] is None
    table = (out / "mxnet_tests.md").read_text()
    assert "| test_small.py | 3 | 1 | 33% | 1 | 1 | 0 |" in table and "mxnet.optimizer.LARS" in table


def test_causes_from_messages():
    cause = mxnet_tests.cause_of
    assert cause("ast_hybrid.core.errors.NotAvailable: mxnet.mod is not available in ast-hybrid: ...") == \
        "not available"
    assert cause("AssertionError: \nNot equal to tolerance") == "wrong value"
    assert cause("assert 3 == 4") == "wrong value"
    assert cause("RuntimeError: cpu(1): only 1 gpu device(s)") == "gpu/network"
    assert cause("TypeError: 'Symbol' object has no attribute 'shape'") == "internal error"


def test_a_side_stopped_for_memory_keeps_what_it_found(tmp_path):
    """A test growing our process past the limit stops it; the tests before it keep their outcomes, it and those
    after it are counted as "memory", and the report names it."""
    folder = tmp_path / "tests" / "python" / "unittest"
    folder.mkdir(parents=True)
    (folder / "common.py").write_text("")
    (folder / "test_grows.py").write_text(
        "import time\nimport mxnet as mx\nKEEP = []\n"
        "def test_first():\n    assert mx.nd.ones((1,)).asnumpy()[0] == 1\n"
        "def test_grows():\n    import sys\n    if 'ast_hybrid' in sys.modules:\n"
        "        KEEP.append(bytearray(1500 << 20))\n        time.sleep(3)\n"
        "def test_after():\n    time.sleep(2)\n")
    out = tmp_path / "report"
    assert mxnet_tests.main([str(folder), "test_grows.py", "--out", str(out), "--memory-gb", "1"]) == 0
    (row,) = json.loads((out / "mxnet_tests.json").read_text())
    assert row["mxnet_passed"] == 3 and row["ours_passed"] == 1
    assert row["stopped"] == "memory" and row["causes"] == {"memory": 2}
    assert row["stopped_in"].endswith("::test_grows")
    assert "stopped (memory, limit 1.0 GB) in `test_grows.py::test_grows`" in (out / "mxnet_tests.md").read_text()
