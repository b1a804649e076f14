"""When BatchNorm's running statistics move, against MXNet 1.9.1: in the backward of a recorded training step,
only for a BatchNorm whose backward runs (one of data, gamma, beta leads to a variable that gets a gradient),
once per backward, in backward order; never in the forward, never without recording.  The same code runs in
MXNet and here, imperative and hybridized (MXNet's two modes agree on every case)."""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import nn

pytestmark = pytest.mark.oracle

X = np.random.RandomState(0).uniform(0, 1, (5, 3)).astype("float32")
IMG = np.random.RandomState(1).uniform(0, 1, (2, 3, 4, 4)).astype("float32")

SETUP = """
x = nd.array(inp['x']); x2 = nd.array(inp['x']) * 2 + 1
def mk(hyb, scale=True, center=True, dense=True):
    net = nn.HybridSequential()
    if dense:
        net.add(nn.Dense(4, in_units=3, flatten=False))
    net.add(nn.BatchNorm(axis=-1, in_channels=4 if dense else 3, scale=scale, center=center),
            nn.Dense(2, in_units=4 if dense else 3, flatten=False))
    net.initialize()
    for i, p in enumerate(p for p in net.collect_params().values() if p.name.endswith('weight')):
        p.set_data(nd.array(np.linspace(-1, 1, p.data().size).reshape(p.shape) * (1 + i)))
    if hyb:
        net.hybridize()
    return net
def stats(net):
    bn = net[1] if len(net) == 3 else net[0]
    return [bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()]
"""

CASES = {
    "no_record": "net = mk(H)\nwith autograd.train_mode():\n    net(x)\nres = stats(net)",
    "record_no_backward": "net = mk(H)\nwith autograd.record():\n    y = net(x)\nres = stats(net)",
    "one_step": "net = mk(H)\nwith autograd.record():\n    y = net(x)\ny.backward()\nres = stats(net)",
    "backward_twice": "net = mk(H)\nwith autograd.record():\n    y = net(x)\ny.backward(retain_graph=True)\n"
                      "a = stats(net)\ny.backward()\nres = a + stats(net)",
    "two_calls_one_backward": "net = mk(H)\nwith autograd.record():\n    y = net(x) + net(x2)\ny.backward()\n"
                              "res = stats(net)",
    "second_call_not_in_graph": "net = mk(H)\nwith autograd.record():\n    y = net(x)\n    z = net(x2)\n"
                                "y.backward()\nres = stats(net)",
    "autograd_grad": "net = mk(H)\nwith autograd.record():\n    y = net(x)\n"
                     "autograd.grad(y, [net[0].weight.data()])\nres = stats(net)",
    "input_needs_no_gradient": "net = mk(H, scale=False, center=False, dense=False)\nwith autograd.record():\n"
                               "    y = net(x)\ny.backward()\nres = stats(net)",
    "input_attached": "net = mk(H, scale=False, center=False, dense=False)\nx.attach_grad()\n"
                      "with autograd.record():\n    y = net(x) ** 2\ny.backward()\nres = stats(net) + [x.grad]",
    "beta_only": "net = mk(H, scale=False, dense=False)\nwith autograd.record():\n    y = net(x)\ny.backward()\n"
                 "res = stats(net)",
    "op_twice_same_aux": "mm, mv = nd.zeros((3,)), nd.ones((3,))\ng, b = nd.ones((3,)), nd.zeros((3,))\n"
                         "g.attach_grad()\nimg = nd.array(inp['img'])\nwith autograd.record():\n"
                         "    y = nd.BatchNorm(img, g, b, mm, mv, fix_gamma=False).sum() + "
                         "nd.BatchNorm(img * 3 - 1, g, b, mm, mv, fix_gamma=False).sum()\n"
                         "y.backward()\nres = [mm, mv]",
}


def _code(case, hyb):
    return SETUP + CASES[case].replace("mk(H", f"mk({hyb}")


@pytest.fixture(scope="module")
def ref(oracle):
    code = "from mxnet import autograd\nfrom mxnet.gluon import nn\n"
    for case in CASES:
        for hyb in (False, True):
            body = _code(case, hyb).replace("\n", "\n    ")
            code += f"def run():\n    {body}\n    return res\n"
            code += (f"for i, r in enumerate(run()):\n"
                     f"    out['{case}/{hyb}/%d' % i] = r if isinstance(r, np.ndarray) else r.asnumpy()\n")
    return oracle.run(code, x=X, img=IMG)


@pytest.mark.parametrize("hyb", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("case", list(CASES))
def test_running_statistics_move_as_in_mxnet(ref, case, hyb):
    env = {"nd": nd, "nn": nn, "np": np, "autograd": autograd, "inp": {"x": X, "img": IMG}}
    exec(_code(case, hyb), env)
    got = [r if isinstance(r, np.ndarray) else r.asnumpy() for r in env["res"]]
    for i, g in enumerate(got):
        want = ref[f"{case}/{hyb}/{i}"]
        # MXNet's imperative and hybridized runs agree on each case: the cases are about which update happens
        np.testing.assert_array_equal(ref[f"{case}/{not hyb}/{i}"].round(5), want.round(5))
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=f"{case}: output {i}")
