"""The oracle process itself: errors come back as OracleError, and a crash of
MXNet's process fails only the call that crashed it."""

from __future__ import annotations

import numpy as np
import pytest

from ast_hybrid.testing.oracle import OracleCrashed, OracleError


def test_an_mxnet_error_comes_back_with_its_traceback(oracle):
    with pytest.raises(OracleError, match="MXNetError|shape") as raised:
        oracle.run("nd.dot(nd.ones((2, 3)), nd.ones((2, 3))).asnumpy()")
    assert not isinstance(raised.value, OracleCrashed)
    assert "in MXNet" in str(raised.value)


@pytest.mark.parametrize("death", ["os.kill(os.getpid(), signal.SIGSEGV)", "os._exit(3)"])
def test_a_crash_fails_one_call_and_the_next_runs_in_a_fresh_process(oracle, death):
    with pytest.raises(OracleCrashed, match="died"):
        oracle.run(f"import os, signal\n{death}")
    got = oracle.run("out['y'] = nd.relu(nd.array(inp['x'])).asnumpy()", x=np.array([-1.0, 2.0], "float32"))
    assert got["y"].tolist() == [0.0, 2.0]
