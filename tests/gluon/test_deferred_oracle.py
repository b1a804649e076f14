"""Deferred initialisation of a user's block (no ``infer_shape`` of its own): the operators its first call
runs fill in the unknown dimensions, as MXNet's shape inference does (the same block, the same shapes and
outputs as in MXNet 1.9.1), imperative and hybridized; a stand-in used any other way is a clear error."""

import runpy

import numpy as np
import pytest

from ast_hybrid.gluon.parameter import DeferredInitializationError

pytestmark = pytest.mark.oracle

BLOCK = """
class Custom(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.params.get('w', shape=(6, 0), allow_deferred_init=True)
        self.b = self.params.get('b', shape=(6,), init='zeros', allow_deferred_init=True)
        self.k = self.params.get('k', shape=(4, 0, 3, 3), allow_deferred_init=True)
        self.g = self.params.get('g', shape=(0,), init='ones', allow_deferred_init=True)
        self.beta = self.params.get('beta', shape=(0,), init='zeros', allow_deferred_init=True)
        self.mean = self.params.get('mean', shape=(0,), init='zeros', allow_deferred_init=True)
        self.var = self.params.get('var', shape=(0,), init='ones', allow_deferred_init=True)
        self.e = self.params.get('e', shape=(0, 0), allow_deferred_init=True)
        self.lg = self.params.get('lg', shape=(0,), init='ones', allow_deferred_init=True)
        self.lb = self.params.get('lb', shape=(0,), init='zeros', allow_deferred_init=True)
        # (MXNet cannot infer a PReLU gamma declared (0,); here it could)
        self.a = self.params.get('a', shape=(4,), init=mx_init.Constant(0.2), allow_deferred_init=True)

    def hybrid_forward(self, F, img, tok, w, b, k, g, beta, mean, var, e, lg, lb, a):
        y = F.Convolution(img, k, no_bias=True, kernel=(3, 3), num_filter=4, pad=(1, 1))
        y = F.BatchNorm(y, g, beta, mean, var, fix_gamma=False)
        y = F.LeakyReLU(y, a, act_type='prelu')
        y = F.FullyConnected(y, w, b, num_hidden=6)
        t = F.Embedding(tok, e, input_dim=10, output_dim=6)
        t = F.LayerNorm(t, lg, lb)
        return F.broadcast_add(y.expand_dims(1), t)
"""

INPUTS = {"img": np.random.default_rng(1).standard_normal((2, 3, 5, 5)).astype("float32"),
          "tok": np.array([[1, 7, 3], [0, 9, 2]], "float32")}


@pytest.mark.parametrize("hybridize", [False, True])
def test_a_users_block_infers_its_parameter_shapes_as_mxnet(oracle, tmp_path, hybridize):
    path = str(tmp_path / "c.params")
    ref = oracle.run(
        "from mxnet.gluon import HybridBlock\nfrom mxnet import init as mx_init\n" + BLOCK +
        "net = Custom(prefix='c_')\nnet.initialize(mx.init.Xavier())\n"
        "net(nd.array(inp['img']), nd.array(inp['tok']))\n"
        "rs = np.random.RandomState(0)\nfor p in net.collect_params().values():\n"
        "    p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))\n"
        f"net.save_parameters({path!r})\n"
        "out['y'] = net(nd.array(inp['img']), nd.array(inp['tok'])).asnumpy()\n"
        "meta['shapes'] = {k: list(p.shape) for k, p in net.collect_params().items()}", **INPUTS)
    module = tmp_path / "custom_block.py"       # a file: hybridize converts the forward from its source
    module.write_text("from ast_hybrid.gluon import HybridBlock\nfrom ast_hybrid import init as mx_init\n" + BLOCK)
    net = runpy.run_path(str(module))["Custom"](prefix="c_")
    net.initialize()
    if hybridize:
        net.hybridize()
    net(INPUTS["img"], INPUTS["tok"])
    assert {k: list(p.shape) for k, p in net.collect_params().items()} == ref["meta"]["shapes"]
    net.load_parameters(path)
    np.testing.assert_allclose(np.asarray(net(INPUTS["img"], INPUTS["tok"])), ref["y"], rtol=1e-4, atol=1e-4)


FORWARDS = {
    "math": ("w * 2", "'u_w'.*used \\(.__mul__\\)|'u_w'.*reaches `"),
    "unused": ("x", "did not pass 'u_w'"),
    "no rule": ("F.dot(x, w)", "'u_w'.*reaches `dot`.*cannot infer it"),
}


@pytest.mark.parametrize("case", list(FORWARDS))
def test_a_stand_in_used_otherwise_is_a_clear_error(tmp_path, case):
    body, match = FORWARDS[case]
    module = tmp_path / f"bad_{case.replace(' ', '_')}.py"
    module.write_text(f"""
from ast_hybrid.gluon import HybridBlock

class Uses(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.params.get('w', shape=(3, 0), allow_deferred_init=True)

    def hybrid_forward(self, F, x, w):
        return {body}
""")
    net = runpy.run_path(str(module))["Uses"](prefix="u_")
    net.initialize()
    with pytest.raises(DeferredInitializationError, match=match):
        net(np.ones((2, 4), "float32"))


def test_gluon_parameters_take_the_given_initializer_whatever_their_name(oracle):
    """Gluon's rule, by the initializer's _init_weight whatever the name: Parameter.initialize(init=) first,
    else the parameter's own init, else the block's (ParameterDict.initialize's) default.  The name patterns
    (bias -> 0, gamma -> 1) are the old module API's, not Gluon's (MXNet 1.9.1: a 'bias' without an init
    is drawn from Uniform, a vector given to Xavier is an error)."""
    from ast_hybrid import init
    from ast_hybrid.gluon import Parameter, ParameterDict

    code = """
from mxnet import gluon
p = gluon.Parameter('c_bias', shape=(200,)); p.initialize(); out['bias'] = p.data().asnumpy()
p = gluon.Parameter('c_k', shape=(3,), init='ones'); p.initialize(init='zeros'); out['k'] = p.data().asnumpy()
d = gluon.ParameterDict(); q = d.get('c_q', shape=(3,), init='ones'); d.initialize(init=mx.init.Xavier())
out['q'] = q.data().asnumpy()
try:
    p = gluon.Parameter('c_gamma', shape=(3,)); p.initialize(init=mx.init.Xavier())
except ValueError as e:
    meta['error'] = str(e)
"""
    ref = oracle.run(code)
    p = Parameter("c_bias", shape=(200,))
    p.initialize()
    ours = np.asarray(p.data())
    assert np.abs(ref["bias"]).max() <= 0.07 and np.abs(ours).max() <= 0.07 and ours.std() > 0.03
    p = Parameter("c_k", shape=(3,), init="ones")
    p.initialize(init="zeros")
    assert np.asarray(p.data()).tolist() == ref["k"].tolist() == [0, 0, 0]
    d = ParameterDict()
    q = d.get("c_q", shape=(3,), init="ones")
    d.initialize(init=init.Xavier())
    assert np.asarray(q.data()).tolist() == ref["q"].tolist() == [1, 1, 1]
    assert "at least 2D" in ref["meta"]["error"]
    with pytest.raises(ValueError, match="at least 2D"):
        Parameter("c_gamma", shape=(3,)).initialize(init=init.Xavier())
