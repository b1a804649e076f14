"""A child block whose ``hybrid_forward`` writes into the list it is given changes its caller's list, as in
MXNet 1.9.1 (GluonCV's DLA-based CenterNet: ``IDAUp`` sets ``layers[i]`` and ``DeconvDLA`` returns ``y[-1]`` of
the list it passed).  The same code runs in MXNet and here, the parent op by op and hybridized."""

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

CODE = """
class Up(gluon.HybridBlock):
    def hybrid_forward(self, F, layers):
        for i in range(1, len(layers)):
            layers[i] = layers[i] * 2 + layers[i - 1]
        return layers

class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.up = Up()

    def hybrid_forward(self, F, x):
        y = [x, x + 1, x - 3]
        self.up(y)
        return y[-1]
"""
RUN = """
net = Net()
net.initialize()
results = [net(x)]
net.hybridize()
results += [net(x), net(x)]
"""


def test_a_list_written_by_a_child_is_the_callers_list(oracle, tmp_path, monkeypatch):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    ref = oracle.run("x = nd.array(inp['x'])\n" + CODE + RUN + "for i, r in enumerate(results):\n"
                     "    out[str(i)] = r.asnumpy()\n", x=x)
    from ast_hybrid import nd

    # a module with source: hybridize() converts hybrid_forward from its source
    (tmp_path / "list_net.py").write_text("from ast_hybrid import gluon\n" + CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import list_net

    scope = {"Net": list_net.Net, "x": nd.array(x)}
    exec(RUN, scope)
    want = (x - 3) * 2 + (x + 1) * 2 + x     # y[2] after the child, not the x - 3 the parent put there
    for i, got in enumerate(scope["results"]):
        np.testing.assert_array_equal(ref[str(i)], want)
        np.testing.assert_array_equal(got.asnumpy(), ref[str(i)], err_msg=f"call {i} (0: op by op, then hybridized)")
