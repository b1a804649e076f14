"""Float ops whose output MXNet's int8 graphs quantize next must equal MXNet's to the last bit.

In GluonCV's psp/deeplab int8 graphs, AdaptiveAvgPooling2D and BilinearResize2D sit between a dequantize and a
quantize_v2: an ulp of difference there moves an int8 value now and then, and the network's output with it.
Each is compared bit for bit with MXNet 1.9.1, op by op and compiled inside a hybridized block (where XLA:CPU
fuses a multiply into an add, rewrites a division by a constant into a multiplication by its reciprocal and
reassociates a division chain unless told not to), and its gradient at the usual tolerance.
"""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import nn

pytestmark = pytest.mark.oracle

CASES = [("BilinearResize2D", dict(height=15, width=20)),
         ("BilinearResize2D", dict(height=60, width=45)),
         ("BilinearResize2D", dict(height=15, width=20, align_corners=False)),
         ("BilinearResize2D", dict(height=5, width=4, align_corners=False)),
         ("AdaptiveAvgPooling2D", dict(output_size=1)),
         ("AdaptiveAvgPooling2D", dict(output_size=3)),
         ("AdaptiveAvgPooling2D", dict(output_size=6)),
         ("AdaptiveAvgPooling2D", dict(output_size=(4, 7)))]

CODE = """
from mxnet import autograd
x = nd.array(inp['x'])
x.attach_grad()
with autograd.record():
    y = getattr(nd.contrib, meta_in['op'])(x, **meta_in['kw'])
    loss = (y * nd.array(inp['w'])).sum() if 'w' in inp else y.sum()
loss.backward()
out['y'], out['dx'] = y.asnumpy(), x.grad.asnumpy()
"""


class _Op(nn.HybridBlock):
    def __init__(self, name, kw):
        super().__init__()
        self._op, self._kw = name, kw

    def hybrid_forward(self, F, x):
        return getattr(F.contrib, self._op)(x, **self._kw)


@pytest.mark.parametrize("name,kw", CASES)
def test_bit_for_bit_with_mxnet(oracle, name, kw):
    rs = np.random.RandomState(len(str(kw)))
    x = (rs.randn(2, 3, 30, 18) * 3).astype("float32")
    y0 = oracle.run(CODE.replace("meta_in['op']", repr(name)).replace("meta_in['kw']", repr(kw)), x=x)["y"]
    w = rs.randn(*y0.shape).astype("float32")
    ref = oracle.run(CODE.replace("meta_in['op']", repr(name)).replace("meta_in['kw']", repr(kw)), x=x, w=w)
    np.testing.assert_array_equal(getattr(nd.contrib, name)(nd.array(x), **kw).asnumpy(), ref["y"], err_msg="op")
    block = _Op(name, kw)
    block.hybridize()
    xin = nd.array(x)
    xin.attach_grad()
    with autograd.record():
        y = block(xin)
        loss = (y * nd.array(w)).sum()
    loss.backward()
    np.testing.assert_array_equal(y.asnumpy(), ref["y"], err_msg="hybridized")
    np.testing.assert_allclose(xin.grad.asnumpy(), ref["dx"], rtol=1e-5, atol=1e-5, err_msg="gradient")
