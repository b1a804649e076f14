"""``im2col``/``col2im`` where MXNet 1.9.1's CPU build fails (1-D and 3-D blocks: an index error inside MXNet),
checked by what defines them: the columns times a Convolution's weight reshaped to (O, -1) are the
convolution, and col2im is im2col's adjoint (<im2col(x), c> == <x, col2im(c)>)."""

import numpy as np
import pytest

from ast_hybrid import nd


@pytest.mark.parametrize("shape,kernel,stride,dilate,pad", [
    ((2, 3, 11), (4,), (2,), (1,), (1,)),
    ((2, 3, 9), (3,), (1,), (2,), (0,)),
    ((1, 2, 5, 6, 7), (2, 3, 2), (1, 2, 2), (1, 1, 2), (0, 1, 1)),
])
def test_blocks_times_weights_are_the_convolution_and_col2im_is_the_adjoint(shape, kernel, stride, dilate, pad):
    rng = np.random.default_rng(len(shape))
    x = nd.array(rng.standard_normal(shape).astype("float32"))
    w = nd.array(rng.standard_normal((4, shape[1]) + kernel).astype("float32"))
    args = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad)
    cols = nd.im2col(x, **args)
    conv = nd.Convolution(x, w, num_filter=4, no_bias=True, **args)
    via_cols = np.einsum("ok,nkl->nol", w.asnumpy().reshape(4, -1), cols.asnumpy()).reshape(conv.shape)
    np.testing.assert_allclose(via_cols, conv.asnumpy(), rtol=1e-4, atol=1e-4)
    c = rng.standard_normal(cols.shape).astype("float32")
    back = nd.col2im(nd.array(c), output_size=shape[2:], **args)
    assert back.shape == tuple(shape)
    np.testing.assert_allclose((cols.asnumpy() * c).sum(), (x.asnumpy() * back.asnumpy()).sum(), rtol=1e-4)


def test_col2im_refuses_columns_of_another_size():
    from ast_hybrid.ops._core import OpError

    cols = nd.im2col(nd.ones((1, 2, 6, 6)), kernel=(3, 3))
    with pytest.raises(OpError, match="does not match"):
        nd.col2im(cols, output_size=(7, 6), kernel=(3, 3))
