"""The fixed twin of ``examples/lint_model.py``: lints clean for both targets.

Each line says which rule the original broke and how it is written instead.
"""

from mxnet import operator
from mxnet.gluon import HybridBlock, nn


def scale_rows(F, x, factor):
    x = x * factor                   # HY001: no in-place update
    return x


class Net(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = nn.Dense(4)
        self.offset = self.params.get_constant("offset", [1.0, 2.0, 3.0, 4.0])   # HY013: a constant

    def hybrid_forward(self, F, x, y, offset, weight=None):
        h = F.relu(x)
        h = h + y                                           # HY001
        col0 = F.one_hot(F.zeros((1,)), 4)                  # HY002: build, don't assign
        h = F.broadcast_mul(h, 1 - col0)
        z = F.relu(y)                                       # HY003: no out=
        peak = h.max()                                      # HY004: stays a tensor
        # HY005: no wait_to_read(); HY006: no print of tensors
        noise = F.random.uniform(shape=(2, 4))              # HY007: through F
        flat = F.reshape(x, (0, -1))                        # HY008: no .shape
        head = F.slice_axis(h, axis=1, begin=0, end=2)      # HY009: no [a:b]
        h = F.where(h.sum() > 0, h * 2, h)                  # HY010: no Python if
        first = F.slice_axis(h, axis=0, begin=0, end=1)     # HY011: no h[0]
        rows = F.sigmoid(h)                                 # HY011: no iteration
        # HY012: no state kept on self
        h = F.broadcast_add(h, offset)                      # HY013: made outside, passed in
        h = F.Custom(h, op_type="grad_reverse")             # HY014: a custom op, not a Function
        pairs = h.reshape((-1, 2))                          # HY016: the shape as one tuple
        centred = F.broadcast_sub(h, h.mean(axis=1, keepdims=True))   # HY017: broadcasting said
        h = scale_rows(F, h, 0.5)
        return (self.dense(h) + noise + F.broadcast_add(first, peak)
                + head.sum() + flat.sum() + rows.sum() + z.sum() + pairs.sum() + centred)


class GradReverse(operator.CustomOp):
    """HY014: the gradient reversal as a custom operator, which hybridizes."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], -out_grad[0])


@operator.register("grad_reverse")
class GradReverseProp(operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return GradReverse()


class Detector(HybridBlock):
    """HY015: the host post-processing out of the forward; the block returns the scores."""

    def hybrid_forward(self, F, x):
        return F.softmax(x)


def detect(net, x):
    """What the imperative-only path did, on the outputs of the hybridized block."""
    return [s.asnumpy() for s in net(x)]
