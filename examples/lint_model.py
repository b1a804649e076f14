"""A Gluon model with every problem `ast-hybrid lint` knows about (one or more per rule).

Read by the linter, never imported by the tests (it needs MXNet).  Try::

    ast-hybrid lint examples/lint_model.py                  # target jax (default)
    ast-hybrid lint --target mxnet examples/lint_model.py   # what breaks MXNet 1.x hybridize()

Its fixed twin is ``examples/lint_model_fixed.py``.
"""

from mxnet import autograd, nd
from mxnet.gluon import HybridBlock, nn


def scale_rows(F, x, factor):
    """A helper given F: linted as part of the forward that calls it."""
    x *= factor                      # HY001 (x is the caller's array: unsafe fix)
    return x


class Net(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = nn.Dense(4)
        self.prev = 0

    def hybrid_forward(self, F, x, y, weight=None):
        h = F.relu(x)
        h += y                       # HY001 (safe fix: h = h + y)
        h[:, 0] = 0                  # HY002
        F.relu(y, out=h)             # HY003
        peak = h.max().asscalar()    # HY004
        h.wait_to_read()             # HY005
        print("hidden", h)           # HY006
        noise = nd.random.uniform(shape=(2, 4))  # HY007 (unsafe fix: F.random.uniform)
        n = x.shape[0]               # HY008 (target mxnet)
        head = h[:, :2]              # HY009 (target mxnet)
        if h.sum() > 0:              # HY010
            h = h * 2
        first = h[0]                 # HY011
        rows = [F.sigmoid(r) for r in h]   # HY011
        self.prev = h + self.prev    # HY012 (state: the next call reads it)
        h = F.broadcast_add(h, F.array([1.0, 2.0, 3.0, 4.0]))   # HY013 (target mxnet: mx.sym has no array)
        rev = GradReverse()(h)       # HY014 (target mxnet: hybridize() drops its backward)
        pairs = h.reshape(-1, 2)     # HY016 (target mxnet: a Symbol reads the 2 as `reverse`)
        centred = h - h.mean(axis=1, keepdims=True)   # HY017 (target mxnet: a Symbol's `-` does not broadcast)
        h = scale_rows(F, h, 0.5)
        return self.dense(h) + noise + first + head.sum() + n + peak + len(rows) + rev + pairs.sum() + centred


class GradReverse(autograd.Function):
    """A custom gradient (gradient reversal): fine op by op, not in a hybridized MXNet block."""

    def forward(self, x):
        return x * 1

    def backward(self, dy):
        return -dy


class Detector(HybridBlock):
    """Host post-processing behind the block's own flag: one note for the path, not one error per line."""

    def __init__(self, hybridizable=True, **kwargs):
        super().__init__(**kwargs)
        self.hybridizable = hybridizable

    def hybrid_forward(self, F, x):
        scores = F.softmax(x)
        if self.hybridizable:        # HY015 (note): what follows runs only when built with hybridizable=False
            return scores
        return [s.asnumpy() for s in scores]
