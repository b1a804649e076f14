"""A block called with ``sym.var`` placeholders gives a Symbol (``ast_hybrid/symbol/graph.py``).

The oracle test runs one MXNet script twice, by MXNet 1.9.1 and under ``python -m ast_hybrid.run``, and
compares what it prints: the hybridization chapter's ``net(sym.var('data'))`` and what can be asked of the
Symbol (name, arguments, outputs, auxiliary states, infer_shape, infer_type, eval with the parameters given
by name, composition, a hybridized net).  Before, ``net(sym.var('data'))`` was JAX's TypeError about
an abstract array.
"""

from __future__ import annotations

import numpy as np
import pytest

SCRIPT = '''
import numpy as np
from mxnet import nd, sym
from mxnet.gluon import nn
import mxnet as mx

net = nn.HybridSequential()
net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
net.initialize()
x = sym.var('data')
y = net(x)
print(repr(y), y.name, isinstance(y, mx.sym.Symbol))
print(y.list_arguments()); print(y.list_outputs()); print(y.list_inputs()); print(y.list_auxiliary_states())
print(y.infer_shape(data=(3, 512)))
print(y.infer_type(data='float32'))
bn = nn.HybridSequential(); bn.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation('relu')); bn.initialize()
z = bn(sym.var('data'))
print(repr(z), z.list_arguments(), z.list_auxiliary_states(), z.list_outputs())
print(z.infer_shape(data=(1, 3, 8, 8)))
net(nd.ones((1, 512)))
given = {k: nd.array(np.sin(np.arange(np.prod(p.shape)) * (i + 1)).reshape(p.shape) / 10)
         for i, (k, p) in enumerate(sorted(net.collect_params().items()))}
out = y.eval(ctx=mx.cpu(), data=nd.array(np.cos(np.arange(512)).reshape(1, 512)), **given)
print(type(out).__name__, len(out), out[0].shape, 'VALUES', ' '.join('%.6f' % v for v in out[0].asnumpy().ravel()))
print(len(y), y[0])
head = nn.Dense(3, prefix='head_'); head.initialize()
w = head(net(sym.var('data')))
print(repr(w), w.list_arguments())
print(w.infer_shape(data=(2, 512)))
net.hybridize()
print(repr(net(sym.var('data'))))
'''


def _both(text, folder):
    """The printed lines of ``text`` run by MXNet 1.9.1 and under ``python -m ast_hybrid.run``."""
    from ast_hybrid.testing.oracle import run_both

    return run_both(text, folder)


def _split(lines):
    values = [line for line in lines if "VALUES" in line]
    assert len(values) == 1
    rest = [line for line in lines if "VALUES" not in line]
    head, numbers = values[0].split("VALUES")
    return rest + [head], np.array([float(v) for v in numbers.split()])


@pytest.mark.oracle
def test_symbol_from_placeholders_matches_mxnet(oracle, tmp_path):
    ours, theirs = _both(SCRIPT, tmp_path)
    (ours_text, ours_values), (their_text, their_values) = _split(ours), _split(theirs)
    assert ours_text == their_text
    np.testing.assert_allclose(ours_values, their_values, rtol=1e-5, atol=1e-6)


def _net():
    from ast_hybrid.gluon import nn

    net = nn.HybridSequential(prefix="s_")
    with net.name_scope():
        net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def test_symbol_needs_shapes_for_what_only_shapes_tell():
    from ast_hybrid import sym

    y = _net()(sym.var("data"))
    with pytest.raises(ValueError, match="shape"):
        y.infer_type()
    y.infer_shape(data=(5, 3))
    assert y.infer_type()[1] == [np.float32]          # the shapes infer_shape was given are kept
    assert [s.shape for s in y.eval(data=np.ones((5, 3), np.float32))] == [(5, 2)]


def test_graph_json_round_trip_and_what_is_not_there():
    from ast_hybrid import nd, sym
    from ast_hybrid.core.context import cpu
    from ast_hybrid.mxnet._missing import NotSupported

    net = _net()
    y = net(sym.var("data"))
    with pytest.raises(TypeError, match="Context"):          # MXNet's check, before anything is bound
        y.bind(None, {})
    with pytest.raises(NotSupported, match="dense"):
        y.simple_bind(cpu(), data=(2, 3), stype_dict={"data": "csr"})
    from ast_hybrid.symbol.graph import load_json

    again = load_json(y.tojson())                   # MXNet's graph JSON, read back: the same graph
    assert again.list_arguments() == y.list_arguments() and again.name == y.name
    x = np.ones((2, 3), np.float32)
    expected = y.eval(data=x)[0].asnumpy()          # (gives the deferred parameters their shapes first)
    np.testing.assert_allclose(again.eval(data=x, **{p.name: p.data() for p in net.collect_params().values()})[0]
                               .asnumpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        net(sym.var("data"), nd.ones((1, 3)))
    with pytest.raises(ValueError, match="not a placeholder"):
        y.infer_shape(date=(1, 3))
    with pytest.raises(TypeError, match="integer index"):
        y[:, 0]                                     # a Symbol's [] picks outputs, as in MXNet
    with pytest.raises(NotImplementedError, match="asnumpy"):
        y.asnumpy()


def test_operators_and_methods_on_symbols_build_nodes_that_compute():
    from ast_hybrid import sym

    a, b = sym.var("a"), sym.var("b")
    c = (a + b) * 2 - a.reshape((-1,)).exp()
    got = c.eval(a=np.array([1.0, 2.0], np.float32), b=np.array([3.0, 4.0], np.float32))[0].asnumpy()
    np.testing.assert_allclose(got, (np.array([1, 2]) + np.array([3, 4])) * 2 - np.exp([1.0, 2.0]), rtol=1e-6)
    assert c.list_arguments() == ["a", "b"]
    parts = sym.split(a, num_outputs=2, axis=0)
    assert len(parts) == 2 and parts.list_outputs() == [f"{parts[0].name}_output0", f"{parts[0].name}_output1"]
    first, second = parts
    assert second.eval(a=np.array([5.0, 6.0], np.float32))[0].asnumpy().tolist() == [6.0]


CHAPTER = '''
from mxnet import nd, sym
from mxnet.gluon import nn
import time

def get_net():
    net = nn.HybridSequential()  # Here we use the class HybridSequential.
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize()
    return net

x = nd.random.normal(shape=(1, 512))
net = get_net()
net(x)
net.hybridize()
net(x)

def benchmark(net, x):
    start = time.time()
    for i in range(1000):
        _ = net(x)
    nd.waitall()  # To facilitate timing, we wait for all computations to be completed
    return time.time() - start

net = get_net()
print('before hybridizing: %.4f sec' % (benchmark(net, x)))
net.hybridize()
print('after hybridizing: %.4f sec' % (benchmark(net, x)))

net.export('my_mlp')

x = sym.var('data')
print(net(x))
'''


@pytest.mark.oracle
def test_the_chapters_code_runs_unmodified(oracle, tmp_path):
    """MXNet's hybridization chapter, as written (``import mxnet``, ``net(sym.var('data'))``)."""
    ours, theirs = _both(CHAPTER, tmp_path)
    assert [line for line in ours if "Symbol" in line] == [line for line in theirs if "Symbol" in line] \
        == ["<Symbol dense5_fwd>"]
    times = {line.split(":")[0]: float(line.split()[-2]) for line in ours if "hybridizing" in line}
    assert times["after hybridizing"] < times["before hybridizing"]
    assert (tmp_path / "my_mlp-0000.params").exists() and (tmp_path / "my_mlp-symbol.json").exists()


def test_op_hook_is_an_error_naming_it():
    """MXNet's register_op_hook (per-operator outputs of a hybridized block) is not there: an error naming
    it and pointing at register_forward_hook, not an AttributeError."""
    from ast_hybrid.mxnet._missing import NotSupported

    net = _net()
    net.hybridize()
    with pytest.raises(NotSupported, match="register_op_hook.*register_forward_hook"):
        net.register_op_hook(lambda name, op, arr: None, monitor_all=True)
