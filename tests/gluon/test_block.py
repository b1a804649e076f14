"""Blocks, parameters, hybridize, load errors, export and the functional door (no MXNet needed)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ast_hybrid import init, nd
from ast_hybrid.gluon import HybridBlock, SymbolBlock, nn
from ast_hybrid.gluon.functional import functional


def _mlp(prefix="t_"):
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    return net


X = np.random.default_rng(0).standard_normal((2, 5)).astype("float32")


def _numpy_mlp(net, x):
    p = {k: np.asarray(v.data()) for k, v in net._collect_params_with_prefix().items()}
    h = np.maximum(x @ p["0.weight"].T + p["0.bias"], 0)
    return h @ p["1.weight"].T + p["1.bias"]


def test_names_prefixes_and_deferred_shapes():
    net = _mlp()
    assert list(net.collect_params().keys()) == ["t_dense0_weight", "t_dense0_bias", "t_dense1_weight",
                                                 "t_dense1_bias"]
    assert list(net.collect_params(".*weight").keys()) == ["t_dense0_weight", "t_dense1_weight"]
    assert net[0].weight.shape == (8, 0)
    with pytest.raises(RuntimeError, match="deferred"):
        net[0].weight.data()
    y = np.asarray(net(X))
    assert net[0].weight.shape == (8, 5)
    np.testing.assert_allclose(y, _numpy_mlp(net, X), rtol=1e-5, atol=1e-6)
    # MXNet's default init: Uniform(0.07) weights, zero biases
    assert np.abs(np.asarray(net[0].weight.data())).max() <= 0.07
    assert not np.asarray(net[0].bias.data()).any()


def test_hybridize_same_results_and_params_are_arguments():
    net = _mlp()
    before = np.asarray(net(X))
    net.hybridize()
    after = np.asarray(net(X))
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)
    # replacing a parameter takes effect at the next call: it is an argument, not a baked-in constant
    net[1].bias.set_data(np.full((3,), 10.0, "float32"))
    np.testing.assert_allclose(np.asarray(net(X)), _numpy_mlp(net, X), rtol=1e-5, atol=1e-5)
    jaxpr = str(jax.make_jaxpr(net._compiled.predict_raw)(net._compiled.leaves, X))
    assert "dot_general" in jaxpr and jaxpr.count("f32[8,5]") >= 1


def _counting(traces, units=4):
    class Counting(HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.dense = nn.Dense(units, in_units=5)

        def hybrid_forward(self, F, x):
            traces.append(1)
            return self.dense(x)

    return Counting()


def test_hybridize_compiles_one_program_and_retraces_only_on_new_shapes():
    traces = []
    net = _counting(traces)
    net.initialize()
    net.hybridize()
    for _ in range(3):
        net(X)
    assert len(traces) == 1
    net(np.ones((7, 5), "float32"))
    assert len(traces) == 2


def test_tensor_dependent_if_under_hybridize():
    class Branchy(HybridBlock):
        def hybrid_forward(self, F, x):
            if x.sum() > 0:
                y = x * 2
            else:
                y = -x
            return y

    net = Branchy()
    pos, neg = np.ones((2, 2), "float32"), -np.ones((2, 2), "float32")
    np.testing.assert_array_equal(np.asarray(net(pos)), 2 * pos)
    net.hybridize()
    np.testing.assert_array_equal(np.asarray(net(pos)), 2 * pos)
    np.testing.assert_array_equal(np.asarray(net(neg)), -neg)


def test_load_errors_name_parameter_and_shapes(tmp_path):
    net = _mlp()
    net(X)
    path = str(tmp_path / "p.params")
    net.save_parameters(path)
    other = nn.HybridSequential(prefix="o_")
    with other.name_scope():
        other.add(nn.Dense(8, in_units=6, activation="relu"), nn.Dense(3))
    other.initialize()
    with pytest.raises(ValueError, match=r"'0.weight'.*expected \(8, 6\), found \(8, 5\)"):
        other.load_parameters(path)
    small = nn.HybridSequential(prefix="s_")
    with small.name_scope():
        small.add(nn.Dense(8, activation="relu"))
    with pytest.raises(ValueError, match=r"'1.weight'.*not present in the block.*ignore_extra"):
        small.load_parameters(path)
    small.load_parameters(path, ignore_extra=True)
    big = nn.HybridSequential(prefix="b_")
    with big.name_scope():
        big.add(nn.Dense(8), nn.Dense(3), nn.Dense(1))
    with pytest.raises(ValueError, match=r"'2.weight' is missing.*allow_missing"):
        big.load_parameters(path)
    big.load_parameters(path, allow_missing=True)
    assert big[1].weight.shape == (3, 8)


def test_save_load_roundtrip_gives_same_outputs(tmp_path):
    net = _mlp()
    y = np.asarray(net(X))
    net.save_parameters(str(tmp_path / "m.params"))
    again = _mlp("u_")
    again.load_parameters(str(tmp_path / "m.params"))
    again.hybridize()
    np.testing.assert_array_equal(np.asarray(again(X)), y)


def test_export_and_symbolblock_run_without_source(tmp_path):
    net = _mlp()
    net.hybridize()
    y = np.asarray(net(X))
    assert net.export(str(tmp_path / "m"), epoch=3) is None            # MXNet 1.9.1 returns nothing
    sym_file, params_file = str(tmp_path / "m-symbol.json"), str(tmp_path / "m-0003.params")
    block = SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(np.asarray(block(X)), y, rtol=1e-6)
    xb = np.ones((9, 5), "float32")     # the batch dimension is symbolic
    np.testing.assert_allclose(np.asarray(block(xb)), np.asarray(net(xb)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="hybridize"):
        _mlp("v_").export(str(tmp_path / "n"))


def test_export_writes_mxnets_graph_and_falls_back_to_the_program(tmp_path):
    """A block that runs on Symbols is written as MXNet's graph JSON, its parameters under the graph's
    ``arg:``/``aux:`` names; one whose inputs are a list (no MXNet graph) as the StableHLO program."""
    import json

    from ast_hybrid.io import params_file as params_io

    net = nn.HybridSequential(prefix="e_")
    with net.name_scope():
        net.add(nn.Dense(8), nn.BatchNorm(), nn.Dense(3))
    net.initialize()
    net.hybridize()
    y = np.asarray(net(X))
    net.export(str(tmp_path / "g"))
    graph = json.loads((tmp_path / "g-symbol.json").read_text())
    assert [n["name"] for n in graph["nodes"] if n["op"] == "null"][0] == "data"
    names = sorted(params_io.load(tmp_path / "g-0000.params"))
    assert "aux:e_batchnorm0_running_mean" in names and "arg:e_dense0_weight" in names
    assert not (tmp_path / "g-symbol.stablehlo").exists()
    again = SymbolBlock.imports(str(tmp_path / "g-symbol.json"), ["data"], str(tmp_path / "g-0000.params"))
    np.testing.assert_allclose(np.asarray(again(X)), y, rtol=1e-6)

    class Pair(nn.HybridBlock):
        def hybrid_forward(self, F, xs):
            return xs[0] + xs[1]

    pair = Pair()
    pair.hybridize()
    pair([nd.array(X), nd.array(X)])
    pair.export(str(tmp_path / "p"))
    assert (tmp_path / "p-symbol.stablehlo").exists()
    again = SymbolBlock.imports(str(tmp_path / "p-symbol.json"), ["data"], str(tmp_path / "p-0000.params"))
    np.testing.assert_allclose(np.asarray(again([nd.array(X), nd.array(X)])), 2 * X, rtol=1e-6)


def test_a_symbolblock_graph_runs_as_one_program_without_hybridize():
    """MXNet's SymbolBlock.forward always calls its CachedOp: so the graph is one compiled program from the
    first call, gradients included; ``hybridize(False)`` runs it op by op; a graph that cannot be one program
    (an output whose shape depends on values) runs op by op, as it would have."""
    from ast_hybrid import autograd, nd, sym

    data = sym.var("data")
    out = sym.FullyConnected(sym.Activation(sym.FullyConnected(data, num_hidden=4, name="fc1"), act_type="tanh"),
                             num_hidden=2, name="fc2")
    params = {"fc1_weight": (4, 5), "fc1_bias": (4,), "fc2_weight": (2, 4), "fc2_bias": (2,)}
    rs = np.random.RandomState(0)
    values = {k: nd.array(rs.standard_normal(s).astype("float32")) for k, s in params.items()}
    results = []
    for active in (None, False):
        block = SymbolBlock(out, [data])
        for k, v in values.items():
            block.collect_params()[k].set_data(v)
        if active is not None:
            block.hybridize(active)
        x = nd.array(X)
        with autograd.record():
            y = block(x)
        y.backward()
        assert (block._compiled is not None) == (active is None)
        results.append((y.asnumpy(), block.collect_params()["fc1_weight"].grad().asnumpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-7)

    mask = sym.var("mask")
    masked = SymbolBlock(sym.contrib.boolean_mask(data, mask), [data, mask])
    got = masked(nd.array(X), nd.array([0, 1]))
    np.testing.assert_array_equal(got.asnumpy(), X[1:])
    assert masked._compiled is None and not masked._active         # op by op from its first call on
    np.testing.assert_array_equal(masked(nd.array(X), nd.array([1, 1])).asnumpy(), X)


def test_functional_grad_and_vmap():
    net = _mlp()
    apply_fn, params = functional(net, X)
    np.testing.assert_allclose(np.asarray(apply_fn(params, X)), np.asarray(net(X)), rtol=1e-6)

    def loss(p):
        return (apply_fn(p, X) ** 2).mean()

    grads = jax.jit(jax.grad(loss))(params)
    assert set(grads) == set(params) and float(jnp.abs(grads["t_dense1_bias"]).sum()) > 0
    eps = 1e-2
    bumped = dict(params, t_dense1_bias=params["t_dense1_bias"].at[0].add(eps))
    fd = (loss(bumped) - loss(params)) / eps
    assert abs(float(fd) - float(grads["t_dense1_bias"][0])) < 1e-2
    batched = jax.vmap(lambda x: apply_fn(params, x[None])[0])(X)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(apply_fn(params, X)), rtol=1e-5, atol=1e-6)


def test_initializers_follow_mxnet_rules():
    xav = init.Xavier(magnitude=3)("w_weight", (100, 50))
    bound = np.sqrt(3 / ((100 + 50) / 2))
    assert np.abs(np.asarray(xav)).max() <= bound and np.abs(np.asarray(xav)).max() > 0.9 * bound
    assert np.asarray(init.Uniform()("bn_gamma", (3,))).tolist() == [1, 1, 1]
    assert np.asarray(init.Uniform()("bn_running_var", (2,))).tolist() == [1, 1]
    assert np.asarray(init.Xavier()("x_weight", (2, 2), explicit="zeros")).tolist() == [[0, 0], [0, 0]]
    with pytest.raises(ValueError, match="Unknown initialization pattern"):
        init.Uniform()("strange", (2,))
    with pytest.raises(ValueError, match="at least 2D"):
        init.Xavier()("v_weight", (3,))


def test_set_data_refreshes_the_program_arguments_without_recompiling():
    traces = []
    net = _counting(traces, units=3)
    net.initialize()
    net.hybridize()
    net(X)
    for v in (1.0, 2.0):
        net.dense.bias.set_data(np.full((3,), v, "float32"))
        want = X @ np.asarray(net.dense.weight.data()).T + v
        np.testing.assert_allclose(np.asarray(net(X)), want, rtol=1e-5, atol=1e-5)
    assert len(traces) == 1
