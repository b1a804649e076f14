"""The fixed twin of ``examples/lint_model.py``: lints clean for both targets.

Each line says which rule the original broke and how it is written instead.
"""

from mxnet.gluon import HybridBlock, nn


def scale_rows(F, x, factor):
    x = x * factor                   # HY001: no in-place update
    return x


class Net(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = nn.Dense(4)

    def hybrid_forward(self, F, x, y, weight=None):
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
        h = scale_rows(F, h, 0.5)
        return (self.dense(h) + noise + F.broadcast_add(first, peak)
                + head.sum() + flat.sum() + rows.sum() + z.sum())
