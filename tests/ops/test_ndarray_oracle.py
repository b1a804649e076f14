"""NDArray itself against MXNet 1.9.1: indexing (basic, advanced, the (1,) rule), assignment, properties, repr."""

import numpy as np
import pytest
from ops_harness import check, inputs, mx_results

from ast_hybrid import nd

pytestmark = pytest.mark.oracle

ARR = inputs(2, x=((2, 3, 4), "float32"), v=((5,), "float32"), i=((3, 4), "int32"), h=((2, 3), "float16"),
             k=((3,), "float32", 0, 2))
ARR["k"] = np.array([1.7, 0.2, 1.0], "float32")
ARR["ki"] = np.array([1, 0, 1], "int32")
ARR["neg"] = np.array([-1, 2], "int32")

CASES = [
    # getitem: integer on every axis gives (1,), otherwise numpy's rules
    "v[1]", "v[-1]", "x[1]", "x[1, 2]", "x[1, 2, 3]", "x[-1, -2]", "x[:, 1]", "x[..., 1]", "x[1, ..., 2]",
    "x[None].shape", "x[:, None, 1].shape", "x[::-1, ::2]", "x[1:2]", "x[0:5]", "x[:, 1:3, ::3]", "x[1, None]",
    "x[np.int64(1)]", "x[[0, 1]]", "x[[1, 0, 1]]", "x[k]", "x[ki]", "x[ki, ki[:2].reshape(2, 1) if False else ki]",
    "x[:, ki]", "x[1, :, ki]", "x[np.array([1, 0])]", "x[[0, 1], [1, 2]]", "x[neg]", "v[k]", "v[-3:]",
    "x[5]", "x[0, 7]", "v[nd.array([9])]", "x[nd.array([1, 0], dtype='bool')] if hasattr(nd, 'array') else 0",
    "i[1]", "i[:, 2]", "h[1, 1:]",
    # iteration goes row by row through __getitem__ until IndexError
    "res = [r for r in x]", "res = list(v)", "res = [row.sum() for row in i]",
    # setitem and in-place
    "y = x.copy()\ny[1] = 7\nres = y", "y = x.copy()\ny[:] = 0.5\nres = y", "y = x.copy()\ny[0, 1:3] = -1\nres = y",
    "y = x.copy()\ny[1, 2, 3] = 9\nres = y", "y = x.copy()\ny[:, 1] = nd.ones((2, 4))\nres = y",
    "y = x.copy()\ny[:, 1] = nd.arange(4)\nres = y", "y = v.copy()\ny[ki] = 3\nres = y",
    "y = i.copy()\ny[0] = 2.7\nres = y", "y = x.copy()\ny[1] = nd.ones((1, 3, 4)) * 2\nres = y",
    "y = x.copy()\nz = y\ny[0] = 1\nres = z", "y = x.copy()\ny[:] = nd.ones((3, 4))\nres = y",
    "y = x.copy()\ny[...] = 3\nres = y",
    # properties and host conversions
    "x.shape", "x.size", "x.ndim", "str(x.dtype)", "str(i.dtype)", "x.dtype == np.float32", "len(x)", "len(v)",
    "v[2].asscalar()", "nd.array([3]).asscalar()", "v.asscalar()", "bool(nd.array([1]))", "bool(nd.array([0]))",
    "bool(v)", "nd.array([[2.0]]).asscalar()", "x.T", "v.T", "i.T", "x.copy()", "x.asnumpy()", "str(x.context)",
    "str(x.ctx)", "x.astype('int32').dtype == np.int32", "x.stype",
    # repr
    "repr(x)", "repr(i)", "str(v)", "repr(h)", "repr(nd.array([1.5]))",
    # nd.array's dtype rule: float32 unless the source is an NDArray
    "nd.array([1, 2])", "nd.array(np.array([1, 2]))", "nd.array(np.array([1, 2], dtype='int32'))",
    "nd.array(np.array([1.5, 2], dtype='float64'))", "nd.array(i)", "nd.array(i, dtype='float16')",
    "nd.array([[1, 2], [3, 4]], dtype='int32')", "nd.array(np.array([True, False]))",
    "nd.zeros((2, 3))", "nd.ones((2,), dtype='int32')", "nd.full((2, 2), 7)", "nd.full((2, 2), 7.5, dtype='int32')",
    "nd.empty((2, 3)).shape", "nd.arange(5)", "nd.arange(1, 4, 0.5)", "nd.arange(3, repeat=2)",
    "nd.arange(2, 10, 3, dtype='int32')", "nd.linspace(0, 1, 5)", "nd.linspace(0, 1, 5, endpoint=False)",
    "nd.eye(3)", "nd.eye(2, 3, 1)", "nd.zeros(4, dtype='float16')",
    # reshape method forms
    "x.reshape(6, 4)", "x.reshape((4, -1))", "x.reshape(shape=(0, -1))", "x.reshape((-1, 4), reverse=True)",
    "x.reshape(-3, 0)", "x.reshape((2, 3, 4), bogus=1)",
    # fluent methods dispatch to the ops
    "x.expand_dims(0).shape", "x.flatten()", "x.transpose((2, 0, 1))", "x.swapaxes(0, 2)", "x.sum(axis=1)",
    "x.mean()", "x.max(axis=(0, 2), keepdims=True)", "x.argmax(axis=2)", "x.slice_axis(axis=1, begin=1, end=3)",
    "x.split(num_outputs=3, axis=1)", "x.tile((2, 1, 1))", "x.flip(axis=1)", "x.softmax()", "x.norm()",
    "x.clip(-1, 1)", "x.topk(k=2)", "x.sort(axis=1)", "x.squeeze()", "x.one_hot(3) if False else x.sign()",
    "x.broadcast_to((2, 3, 4))", "v.broadcast_like(nd.zeros((3, 5)))", "x.pick(ki[:2], axis=1)",
    "v.take(ki)", "v.repeat(2)", "v.diag()", "x.slice(begin=(0, 1), end=(2, 3))", "x.size_array().astype('int32')",
    "x.shape_array().astype('int32')", "x.log_softmax(axis=1)", "x.prod(axis=0)", "x.nansum()", "x.min()",
]
CASES = list(dict.fromkeys(CASES))


@pytest.fixture(scope="module")
def ref(oracle):
    return mx_results(oracle, [(c, c) for c in CASES], ARR)


@pytest.mark.parametrize("code", CASES)
def test_matches_mxnet(ref, code):
    check(ref[code], code, ARR)


def test_ndarray_is_a_pytree_node_through_jit_and_lax():
    import jax

    x = nd.array([[1.0, -2.0], [3.0, 4.0]])
    out = jax.jit(lambda a: nd.relu(a) + 1)(x)
    assert isinstance(out, nd.NDArray) and out.asnumpy().tolist() == [[2.0, 1.0], [4.0, 5.0]]
    carry, ys = jax.lax.scan(lambda c, r: (c + r, r * 2), nd.zeros((2,)), x)
    assert isinstance(carry, nd.NDArray) and isinstance(ys, nd.NDArray)
    assert carry.asnumpy().tolist() == [4.0, 2.0]
    assert x.__ah_pred__() is x._arr


def test_int64_and_float64_follow_jax_x64():
    import jax

    want = "int64" if jax.config.jax_enable_x64 else "int32"
    assert np.dtype(nd.array([1, 2], dtype="int64").dtype).name == want


def test_nd_save_and_load_interoperate_with_mxnet(oracle, tmp_path):
    theirs, ours = str(tmp_path / "theirs.nd"), str(tmp_path / "ours.nd")
    oracle.run(f"""
nd.save({theirs!r}, {{'w': nd.arange(6).reshape((2, 3)), 'i': nd.array([1, 2], dtype='int32')}})
nd.save({theirs + '.list'!r}, [nd.ones((2,)), nd.zeros((1, 2), dtype='float16')])
""")
    loaded = nd.load(theirs)
    assert sorted(loaded) == ["i", "w"] and loaded["i"].dtype == np.int32
    np.testing.assert_array_equal(loaded["w"].asnumpy(), np.arange(6, dtype="float32").reshape(2, 3))
    listed = nd.load(theirs + ".list")
    assert isinstance(listed, list) and listed[1].dtype == np.float16 and listed[1].shape == (1, 2)
    nd.save(ours, {"a": nd.array([[1.5, 2.5]]), "b": nd.arange(3, dtype="int32")})
    nd.save(ours + ".one", nd.ones((2, 2)))
    back = oracle.run(f"""
d = nd.load({ours!r})
out['a'], out['b'] = d['a'].asnumpy(), d['b'].asnumpy()
out['one'] = nd.load({ours + '.one'!r})[0].asnumpy()
""")
    np.testing.assert_array_equal(back["a"], [[1.5, 2.5]])
    assert back["b"].dtype == np.int32 and back["b"].tolist() == [0, 1, 2]
    np.testing.assert_array_equal(back["one"], np.ones((2, 2)))


def test_copies_contexts_and_waits():
    x = nd.array([[1.0, 2.0]])
    y = nd.zeros((1, 2))
    assert x.copyto(y) is y and y.asnumpy().tolist() == [[1.0, 2.0]]
    assert x.as_in_context(nd.cpu()) is x and str(x.context) == "cpu(0)"
    z = x.copy()
    z[:] = 5
    assert x.asnumpy().tolist() == [[1.0, 2.0]]
    x.wait_to_read()
    nd.waitall()
    with pytest.raises(ValueError, match="shape"):
        x.copyto(nd.zeros((3,)))
