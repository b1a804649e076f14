"""Basic indexing as MXNet 1.9.1 gives it: a contiguous block of an array is a view of the same memory, so a
write into it (``x[1][0] = v``, ``row += 1``, ``op(..., out=row)``) reaches the array; a block that is not
contiguous is a copy, and a write into it does not.  One script, run by MXNet and under ``ast-hybrid run``:
the same lines."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import numpy as np
import mxnet as mx

a = mx.nd.arange(24).reshape((2, 3, 4))
a[1][0] = -1
a[0][1][2:] = 7
row = a[1]
row += 100
col = a[:, 1]            # not contiguous: a copy
col[:] = 55
mx.nd.relu(mx.nd.ones((4,)) * -3, out=a[0, 2])
a[0][0][np.int64(1)] = np.nan
print(a.asnumpy().tolist())
b = mx.nd.zeros((3, 3))
b[1][1:][0] = 9
b[2:][0][1] = 8
b[::2][0] = 4           # a step: a copy
print(b.asnumpy().tolist())
c = mx.nd.ones((4, 2))
for _ in range(50):     # views of views of views...: each is an array of its own here, none kept too long
    c = c[1:] if c.shape[0] > 1 else c
print(c.shape, c.asnumpy().tolist())
'''


def test_contiguous_blocks_are_views_as_in_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert "nan" in ours[0]


def test_the_view_rule_is_numpys_contiguity():
    """``NDArray._basic_indexing_slice_is_contiguous`` (MXNet's helper, which its tests call) says what numpy's
    own flags say, for every arrangement of four of MXNet's test slices on a 4-D array."""
    import itertools

    import numpy as np

    from ast_hybrid import nd

    x = np.zeros((6, 7, 8, 9))
    slices = [slice(None), slice(2), slice(20), slice(1, 4), slice(None, None, 2), slice(0, 1),
              slice(None, None, -1), slice(3, None, -2)]
    is_view = nd.NDArray._basic_indexing_slice_is_contiguous
    for chosen in itertools.combinations_with_replacement(slices, 4):
        for key in itertools.permutations(chosen):
            assert is_view(key, x.shape) == x[key].flags.contiguous, key
