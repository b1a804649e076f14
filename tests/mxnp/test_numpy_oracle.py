"""``mx.np`` and ``mx.npx`` (issue 30 item 1) against MXNet 1.9.1: each case runs the same code on both sides
(``mnp`` = ``mxnet.numpy``, ``npx`` = ``mxnet.numpy_extension``, under ``npx.set_np()``), and the result's
values, dtype, shape, type and printed form must be MXNet's.  The cases are where MXNet's numpy interface
differs from MXNet's NDArray or from numpy: float32 defaults, scalars of shape ``()``, bool comparisons, true
division of integers, numpy's indexing (integer arrays, boolean masks, ranges), in-place writes, autograd."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

PRELUDE = "from mxnet import np as mnp, npx, autograd\nnpx.set_np()\n"
EPILOGUE = """
for k, v in list(res.items()):
    out[k] = v.asnumpy() if hasattr(v, 'asnumpy') else np.asarray(v)
    meta[k] = [type(v).__name__, repr(v), str(v)]
"""

CASES = {
    "creation": """
res = {'list': mnp.array([1, 2, 3]), 'ints': mnp.array([[1, 2], [3, 4]], dtype='int32'),
       'arange': mnp.arange(5), 'arange_step': mnp.arange(1, 7, 2), 'zeros': mnp.zeros((2, 3)),
       'ones_int': mnp.ones(3, dtype='int32'), 'full': mnp.full((2,), 7), 'eye': mnp.eye(3),
       'linspace': mnp.linspace(0, 1, 5), 'scalar': mnp.array(3.5), 'from_numpy': mnp.array(inp['x']),
       'zeros_like': mnp.zeros_like(mnp.array(inp['x'])), 'empty_shape': mnp.ones((2, 0, 3))}
""",
    "arithmetic": """
x, i = mnp.array(inp['x']), mnp.array([[1, 2], [3, 4]], dtype='int32')
res = {'add': x + x, 'radd': 1 + x, 'scaled_int': i * 2, 'int_true_div': i / 2, 'int_int_div': i / i,
       'pow': x ** 2, 'rpow': 2 ** x, 'neg': -x, 'abs': abs(x - 0.5), 'mod': x % 0.3,
       'matmul': x @ x.T, 'broadcast': x + mnp.array([1.0, 2.0, 3.0]), 'mixed': i[:, :1] + x[:2, :1]}
""",
    "comparisons": """
x = mnp.array(inp['x'])
res = {'gt': x > 0.5, 'eq': x == x, 'le_scalar': x <= 0.2, 'where': mnp.where(x > 0.5, x, mnp.zeros_like(x))}
""",
    "reductions": """
x, i = mnp.array(inp['x']), mnp.array([[1, 2], [3, 4]], dtype='int32')
res = {'sum': x.sum(), 'sum0': x.sum(axis=0), 'mean': x.mean(), 'int_sum': i.sum(), 'int_mean': i.mean(),
       'max_keep': x.max(axis=1, keepdims=True), 'argmax': x.argmax(axis=1), 'argmax_all': x.argmax(),
       'std': x.std(), 'var0': x.var(axis=0), 'prod': x.prod(axis=1), 'fn_sum': mnp.sum(x, axis=1),
       'cumsum': mnp.cumsum(x, axis=0), 'min': mnp.min(x), 'any': (x > 0.9).any(), 'all': (x > 0).all()}
""",
    "indexing": """
x = mnp.array(inp['x'])
idx = mnp.array([0, 2, 1, 0], dtype='int32')
res = {'row': x[0], 'elem': x[0, 1], 'col': x[:, 1], 'rows': x[[0, 2]], 'neg': x[-1], 'step': x[::2, ::-1],
       'mask': x[x > 0.5], 'pairs': x[mnp.arange(4).astype('int32'), idx], 'range_pairs': x[range(4), idx],
       'newaxis': x[:, None, 1], 'ellipsis': x[..., 0]}
""",
    "setitem": """
x = mnp.array(inp['x'])
x[0] = 5
x[:, 1] = mnp.array([1.0, 2.0, 3.0, 4.0])
x[x > 0.9] = 0
y = mnp.zeros((2, 3))
y += 1
y *= mnp.array([1.0, 2.0, 3.0])
res = {'x': x, 'y': y}
""",
    "shapes": """
x = mnp.array(inp['x'])
res = {'flat': x.reshape(-1), 'reshape_tuple': x.reshape((2, 6)), 'reshape_args': x.reshape(6, 2), 'T': x.T,
       'transpose': mnp.transpose(x), 'expand': mnp.expand_dims(x, 0), 'concat': mnp.concatenate([x, x], axis=1),
       'stack': mnp.stack([x, x]), 'split0': mnp.split(x, 2)[0], 'split1': mnp.split(x, 2)[1],
       'squeeze': mnp.expand_dims(x, 1).squeeze(1), 'tile': mnp.tile(x[0], 2), 'repeat': mnp.repeat(x[0], 2),
       'dot': mnp.dot(x, x.T), 'flip': mnp.flip(x, 0), 'astype': x.astype('int32'), 'clip': x.clip(0.2, 0.6),
       'broadcast_to': mnp.broadcast_to(x[0], (2, 3))}
""",
    "npx": """
x = mnp.array(inp['x'])
res = {'relu': npx.relu(x - 0.5), 'sigmoid': npx.sigmoid(x), 'softmax': npx.softmax(x),
       'log_softmax': npx.log_softmax(x, axis=0), 'batch_dot': npx.batch_dot(x.reshape(2, 2, 3),
                                                                            x.reshape(2, 3, 2)),
       'one_hot': npx.one_hot(mnp.array([0, 2, 1]), 3), 'pick': npx.pick(x, mnp.array([0, 1, 2, 0])),
       'sequence_mask': npx.sequence_mask(x.reshape(4, 3, 1), mnp.array([1, 3, 2]), use_sequence_length=True),
       'topk': npx.topk(x, k=2), 'fc': npx.fully_connected(x, mnp.ones((2, 3)), mnp.zeros(2), num_hidden=2),
       'activation': npx.activation(x, act_type='tanh')}
""",
    "empty_multinomial": """
res = {'no_category': mnp.random.multinomial(10, []), 'no_draw': mnp.random.multinomial(10, [0.5, 0.5], size=(3, 0)),
       'no_category_sized': mnp.random.multinomial(10, mnp.array([]), size=(2,))}
""",
    "autograd": """
x = mnp.array(inp['x'])
x.attach_grad()
with autograd.record():
    y = (x ** 2 * mnp.array([1.0, 2.0, 3.0])).sum() + npx.relu(x - 0.5).mean()
y.backward()
res = {'y': y, 'grad': x.grad}
""",
    # MXNet's gradient at ties and on clip's bounds (jax.numpy halves both)
    "autograd_ties": """
x = mnp.array([[0.0, 1.0, -1.0], [2.0, 0.0, 0.5]])
z = mnp.array([[0.0, 0.0, 0.0], [2.0, 1.0, 0.5]])
x.attach_grad()
z.attach_grad()
with autograd.record():
    y = (mnp.maximum(x, z) + 10 * mnp.minimum(x, z) + 100 * npx.relu(x) + 1000 * mnp.clip(x, 0, 1)
         + 10000 * x.clip(0.5, 2)).sum()
y.backward()
res = {'y': y, 'xg': x.grad, 'zg': z.grad}
""",
    # float16 running sums one element after the other (MXNet's loop); an output dtype given as a NumPy
    # type to a recorded op, then backward (it was an array to the compiled tape); transposes, repeated axes
    # refused as MXNet's ValueError
    "cumsum_transpose": """
h = mnp.array(inp['x'] * 37 - 11).astype('float16')
w = mnp.array(inp['x'])
w.attach_grad()
for _ in range(3):      # (a tape seen again runs as one compiled program)
    with autograd.record():
        c = w.cumsum(axis=0, dtype=np.float32) * w
    c.backward()
try:
    w.transpose((0, 0))
    repeated = 0
except ValueError:
    repeated = 1
res = {'inf_norm': mnp.linalg.norm(w, 'inf', axis=1), 'ninf_norm': mnp.linalg.norm(w, '-inf', axis=0),
       'fro': mnp.linalg.norm(w), 'h0': mnp.cumsum(h, axis=0), 'h_flat': mnp.cumsum(h), 'h1': h.cumsum(axis=1),
       'c': c, 'wg': w.grad,
       't': w.transpose((1, 0)), 't_neg': mnp.transpose(w, (-1, 0)), 'repeated': mnp.array(repeated)}
""",
}


def _as_here(dtype):
    """MXNet's int64/float64 as this process computes them: 32-bit unless jax's x64 mode is on (the front's
    documented rule for every 64-bit dtype)."""
    import jax

    if jax.config.jax_enable_x64 or dtype.itemsize < 8 or dtype.kind not in "iuf":
        return dtype
    return np.dtype(dtype.kind + "4")


@pytest.fixture
def np_mode():
    from ast_hybrid.mxnet import npx

    npx.set_np()
    yield
    npx.reset_np()


def _ours(code, x):
    from ast_hybrid import autograd
    from ast_hybrid.mxnet import np as mnp
    from ast_hybrid.mxnet import npx

    ns = {"mnp": mnp, "npx": npx, "autograd": autograd, "np": np, "inp": {"x": x}}
    exec(compile(code, "<case>", "exec"), ns)
    return ns["res"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_numpy_interface_matches_mxnet(oracle, np_mode, case):
    x = np.random.default_rng(0).uniform(0, 1, (4, 3)).astype("float32")
    ref = oracle.run(PRELUDE + "try:\n" + "".join("    " + line + "\n" for line in CASES[case].splitlines()) +
                     "".join("    " + line + "\n" for line in EPILOGUE.splitlines()) +
                     "finally:\n    npx.reset_np()\n", x=x)
    ours = _ours(CASES[case], x)
    assert sorted(ours) == sorted(ref["meta"])
    for k, v in ours.items():
        kind, shown, printed = ref["meta"][k]
        got = v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)
        want = ref[k]
        assert type(v).__name__ == kind, (k, type(v).__name__, kind)
        assert got.dtype == _as_here(want.dtype) and got.shape == want.shape, \
            (k, got.dtype, got.shape, want.dtype, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=k)
        if got.dtype == want.dtype and (got.dtype.kind in "biu" or np.array_equal(got, want)):
            assert (repr(v), str(v)) == (shown, printed), k


def test_npx_save_and_load_as_mxnet_writes_and_reads_them(oracle, np_mode, tmp_path):
    """``npx.save``/``npx.load`` in MXNet's file format under numpy shape semantics (its V3 records: a scalar
    keeps shape ``()``, zero-size shapes their zeros), read and written both ways: one array (a list of one
    on loading), a list, a dict."""
    from ast_hybrid.mxnet import np as mnp
    from ast_hybrid.mxnet import npx

    shapes = [(2, 0, 1), (), (3, 2), (0,)]
    arrays = [np.arange(int(np.prod(s)), dtype="float32").reshape(s) + 1 for s in shapes]
    ours_file, theirs_file = str(tmp_path / "ours.npy"), str(tmp_path / "theirs.npy")
    npx.save(ours_file + ".one", mnp.array(arrays[1]))
    npx.save(ours_file, {f"a{i}": mnp.array(a) for i, a in enumerate(arrays)})
    ref = oracle.run(PRELUDE + f"""
try:
    one = npx.load({ours_file + '.one'!r})
    meta['one'] = [type(one).__name__, len(one), list(one[0].shape)]
    got = npx.load({ours_file!r})
    meta['keys'] = sorted(got)
    for k, v in got.items():
        out[k] = v.asnumpy()
    npx.save({theirs_file!r}, [mnp.array(inp['a%d' % i]) for i in range({len(arrays)})])
finally:
    npx.reset_np()
""", **{f"a{i}": a for i, a in enumerate(arrays)})
    assert ref["meta"]["one"] == ["list", 1, []]
    assert ref["meta"]["keys"] == [f"a{i}" for i in range(len(arrays))]
    for i, a in enumerate(arrays):
        assert ref[f"a{i}"].shape == a.shape and np.array_equal(ref[f"a{i}"], a)
    loaded = npx.load(theirs_file)
    assert [tuple(v.shape) for v in loaded] == shapes and all(type(v) is mnp.ndarray for v in loaded)
