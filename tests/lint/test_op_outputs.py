"""The linter's table of operators with several outputs is what MXNet 1.9.1 says (the oracle)."""

import pytest

from ast_hybrid.common.op_outputs import OUTPUTS
from op_outputs_oracle import from_oracle


@pytest.mark.oracle
def test_table_is_mxnets(oracle):
    assert from_oracle(oracle) == OUTPUTS


def test_table_holds_the_known_cases():
    assert OUTPUTS["contrib.box_encode"] == 2 and OUTPUTS["contrib.bipartite_matching"] == 2
    assert OUTPUTS["topk"][4][("both",)] == 2 and OUTPUTS["split"][1] == "num_outputs"
    assert OUTPUTS["RNN"][4][("lstm", True)] == 3 and "FullyConnected" not in OUTPUTS
