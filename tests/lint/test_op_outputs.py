"""The linter's table of operators with several outputs is what MXNet 1.9.1 says (the oracle)."""

import pytest

from ast_hybrid.common.op_names import NAMES
from ast_hybrid.common.op_outputs import OUTPUTS
from op_outputs_oracle import from_oracle, names_from_oracle


@pytest.mark.oracle
def test_table_is_mxnets(oracle):
    assert from_oracle(oracle) == OUTPUTS


def test_table_holds_the_known_cases():
    assert OUTPUTS["contrib.box_encode"] == 2 and OUTPUTS["contrib.bipartite_matching"] == 2
    assert OUTPUTS["topk"][4][("both",)] == 2 and OUTPUTS["split"][1] == "num_outputs"
    assert OUTPUTS["RNN"][4][("lstm", True)] == 3 and "FullyConnected" not in OUTPUTS


@pytest.mark.oracle
def test_names_under_f_are_mxnets(oracle):
    assert names_from_oracle(oracle) == NAMES


def test_an_operator_mxnet_lacks_has_outputs_of_unknown_count():
    # MXNet-Gluon-SyncBN's syncbn.py: `isum, isqu = F.SumSquare(x)`, an operator of the repository's own MXNet build
    from lint_helpers import codes, model

    assert "SumSquare" not in NAMES and "split" in NAMES and "contrib.box_encode" in NAMES and "np.split" in NAMES
    assert codes(model("isum, isqu = F.SumSquare(x)\nreturn isum + isqu"), "mxnet") == []
    # MXNet's own one-output operator unpacked: still HY011
    assert codes(model("a, b = F.relu(x)\nreturn a + b"), "mxnet") == ["HY011"]
