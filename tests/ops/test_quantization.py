"""MXNet 1.9.1's int8 ops (its oneDNN build) against MXNet itself, value for value.

The ops alone (quantize_v2 with and without a calibrated range, on values that sit exactly on rounding ties;
dequantize; quantized max and average pooling), then a network MXNet's own quantization pass turned into
int8 (``mx.contrib.quantization.quantize_net``, naive calibration): its graph JSON and parameters, as MXNet
exports them, loaded by ``SymbolBlock.imports`` and run op by op and hybridized.  The network has every kind
of fused ``_sg_mkldnn_conv`` GluonCV's int8 models use (Convolution + BatchNorm + ReLU, a biased convolution
with no activation, a residual sum of an int8 branch followed by ReLU, a depthwise convolution), max and
global average pooling, and is run on inputs past its calibrated range so that outputs saturate.  The int8
values must be equal, not close: one int8 step off early in a network moves its output by far more than
1e-4 of its scale (resnet50_v1_int8 moved 2.6e-2 for a last-bit difference in one folded BatchNorm scale).
"""

import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.gluon import SymbolBlock
from ast_hybrid.ops import contrib

pytestmark = pytest.mark.oracle


def _ties():
    """Floats whose scaled value is k + 0.5 exactly (range 127.5 for int8, 255.5 for uint8: scale 1), others
    random, and values beyond the range (saturate)."""
    rs = np.random.RandomState(3)
    half = np.arange(-130, 130).astype("float32") + 0.5
    return np.concatenate([half, rs.uniform(-140, 140, 200).astype("float32")]).reshape(4, -1)


QUANTIZE = """
x = nd.array(inp['x'])
for i, (lo, hi, kind) in enumerate([(-127.5, 127.5, 'auto'), (0.0, 255.5, 'auto'), (-3.0, 100.0, 'uint8'),
                                     (None, None, 'auto'), (None, None, 'uint8')]):
    kw = {} if lo is None else {'min_calib_range': lo, 'max_calib_range': hi}
    q, mn, mxr = nd.contrib.quantize_v2(x, out_type=kind, **kw)
    out['q%d' % i], out['min%d' % i], out['max%d' % i] = q.asnumpy(), mn.asnumpy(), mxr.asnumpy()
    out['d%d' % i] = nd.contrib.dequantize(q, mn, mxr).asnumpy()
"""


def test_quantize_and_dequantize_match_mxnet(oracle):
    x = _ties()
    ref = oracle.run(QUANTIZE, x=x)
    for i, (lo, hi, kind) in enumerate([(-127.5, 127.5, "auto"), (0.0, 255.5, "auto"), (-3.0, 100.0, "uint8"),
                                        (None, None, "auto"), (None, None, "uint8")]):
        kw = {} if lo is None else {"min_calib_range": lo, "max_calib_range": hi}
        q, mn, mxr = contrib.quantize_v2(nd.array(x), out_type=kind, **kw)
        assert q.dtype == ref[f"q{i}"].dtype, i
        np.testing.assert_array_equal(q.asnumpy(), ref[f"q{i}"], err_msg=f"case {i}")
        np.testing.assert_array_equal(mn.asnumpy(), ref[f"min{i}"])
        np.testing.assert_array_equal(mxr.asnumpy(), ref[f"max{i}"])
        np.testing.assert_array_equal(contrib.dequantize(q, mn, mxr).asnumpy(), ref[f"d{i}"], err_msg=f"case {i}")


POOL = """
q = nd.array(inp['q'], dtype=inp['q'].dtype)
mn, mxr = nd.array([0.0]), nd.array([3.0])
for i, kw in enumerate([dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='max'),
                        dict(kernel=(2, 2), stride=(2, 2), pool_type='avg', pooling_convention='full',
                             count_include_pad=False),
                        dict(kernel=(1, 1), global_pool=True, pool_type='avg', pooling_convention='full'),
                        dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type='avg')]):
    out['p%d' % i] = nd.contrib.quantized_pooling(q, mn, mxr, **kw)[0].asnumpy()
"""


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_quantized_pooling_matches_mxnet(oracle, dtype):
    rs = np.random.RandomState(5)
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    q = rs.randint(lo, hi, (2, 3, 7, 7)).astype(dtype)
    ref = oracle.run(POOL, q=q)
    for i, kw in enumerate([dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
                            dict(kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full",
                                 count_include_pad=False),
                            dict(kernel=(1, 1), global_pool=True, pool_type="avg", pooling_convention="full"),
                            dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg")]):
        got = contrib.quantized_pooling(nd.array(q, dtype=dtype), nd.array([0.0]), nd.array([3.0]), **kw)[0]
        np.testing.assert_array_equal(got.asnumpy(), ref[f"p{i}"], err_msg=str(kw))


NETWORK = """
import json, os
from mxnet.gluon import nn

class Net(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c1 = nn.Conv2D(8, 3, padding=1, use_bias=False); self.b1 = nn.BatchNorm()
            self.c2 = nn.Conv2D(8, 3, padding=1, use_bias=False); self.b2 = nn.BatchNorm()
            self.c3 = nn.Conv2D(8, 1, use_bias=True)
            self.dw = nn.Conv2D(8, 3, padding=1, groups=8, use_bias=False); self.b3 = nn.BatchNorm()
            self.pool = nn.MaxPool2D(3, 2, 1); self.gap = nn.GlobalAvgPool2D()

    def hybrid_forward(self, F, x):
        y = F.Activation(self.b1(self.c1(x)), act_type='relu')
        z = self.c3(x)                                            # int8: no activation
        y = F.Activation(self.b2(self.c2(y)) + z, act_type='relu')   # residual sum of an int8 branch, ReLU
        y = F.Activation(self.b3(self.dw(y)), act_type='relu')      # depthwise
        return self.gap(self.pool(y)), F.Activation(self.c3(x), act_type='relu')

mx.random.seed(int(inp['seed'][0]))
net = Net()
net.initialize(mx.init.Xavier())
x = nd.array(inp['calib'])
net(x)
for k, p in net.collect_params().items():
    if k.endswith(('running_var', 'gamma')):
        p.set_data(nd.random.uniform(0.5, 1.5, p.shape))
    if k.endswith(('running_mean', 'beta')):
        p.set_data(nd.random.uniform(-0.3, 0.3, p.shape))
net.hybridize()
calib = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, nd.zeros((x.shape[0],))), batch_size=x.shape[0])
import warnings
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    q = mx.contrib.quantization.quantize_net(net, quantized_dtype='auto', calib_data=calib, calib_mode='naive',
                                             num_calib_examples=x.shape[0], ctx=mx.cpu())
q.hybridize()
outs = q(nd.array(inp['x']))
prefix = os.path.join(meta_in['folder'], 'int8net')
q.export(prefix)
out['a'], out['b'] = outs[0].asnumpy(), outs[1].asnumpy()
meta['ops'] = sorted({n['op'] for n in json.load(open(prefix + '-symbol.json'))['nodes']})
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_mxnet_quantized_network_runs_bit_for_bit(oracle, tmp_path, seed):
    rs = np.random.RandomState(seed)
    calib = rs.uniform(-1, 1, (2, 3, 12, 12)).astype("float32")
    x = (calib * 2.5).astype("float32")           # past the calibrated ranges: outputs saturate
    code = NETWORK.replace("meta_in['folder']", repr(str(tmp_path)))
    ref = oracle.run(code, calib=calib, x=x, seed=np.array([seed], "int32"))
    assert {"_sg_mkldnn_conv", "_contrib_quantize_v2", "_contrib_quantized_pooling",
            "_contrib_dequantize"} <= set(ref["meta"]["ops"])
    net = SymbolBlock.imports(str(tmp_path / "int8net-symbol.json"), ["data"],
                              str(tmp_path / "int8net-0000.params"))
    for mode in ("plain", "hybridized"):
        if mode == "hybridized":
            net.hybridize()
        a, b = net(nd.array(x))
        # dequantized int8 values: equal ints give equal floats (the last bit of the float scale aside)
        np.testing.assert_allclose(a.asnumpy(), ref["a"], rtol=1e-6, atol=1e-7, err_msg=mode)
        np.testing.assert_allclose(b.asnumpy(), ref["b"], rtol=1e-6, atol=1e-7, err_msg=mode)
