"""The random initializers draw on the host (``ast_hybrid.ops.rng.host_generator``): no XLA program per weight
shape (``jax.random`` compiled one per shape: 121 programs and 15 s of densenet121's first call), reproducible
under ``mx.random.seed``, with each initializer's distribution (MXNet's formulas; its random stream itself is
not reproduced by design).  And the trace's key scopes belong to their thread."""

import threading

import jax
import numpy as np
import pytest

from ast_hybrid import gluon, init, nd
from ast_hybrid.gluon import nn, rnn
from ast_hybrid.ops import rng

_COMPILES = [0, False]


def _listener(event, duration, **kwargs):
    if _COMPILES[1] and "backend_compile" in event:
        _COMPILES[0] += 1


jax.monitoring.register_event_duration_secs_listener(_listener)


def _compiles(fn):
    _COMPILES[:] = [0, True]
    try:
        fn()
    finally:
        _COMPILES[1] = False
    return _COMPILES[0]


def _value(initializer, shape, dtype="float32"):
    p = gluon.Parameter("draw_weight", shape=shape, init=initializer, dtype=dtype)
    p.initialize()
    return p.data().asnumpy()


def test_initializing_parameters_of_new_shapes_compiles_nothing():
    _value(init.Xavier(), (3, 4))           # what is compiled once a process (the stream's base key)

    def build():
        net = nn.HybridSequential()
        for i in range(4):
            net.add(nn.Conv2D(8 + i, 3, in_channels=5 + i), nn.BatchNorm(in_channels=8 + i),
                    nn.Dense(6 + i, in_units=3 + i))
        net.add(rnn.LSTM(7, input_size=5))
        for k, initializer in enumerate([init.Xavier(), init.Uniform(), init.Normal(), init.MSRAPrelu(),
                                         init.Orthogonal(), init.Xavier(rnd_type="gaussian", factor_type="in")]):
            _value(initializer, (13 + k, 3, 3, 2))
        net.initialize(init.Xavier())
        for p in net.collect_params().values():
            p.data()

    assert _compiles(build) == 0


def test_a_seed_reproduces_the_draws_and_consecutive_draws_differ():
    nd.random.seed(7)
    a, b = _value(init.Xavier(), (20, 30)), _value(init.Normal(0.5), (20, 30))
    nd.random.seed(7)
    assert np.array_equal(a, _value(init.Xavier(), (20, 30)))
    assert np.array_equal(b, _value(init.Normal(0.5), (20, 30)))
    assert not np.array_equal(a, _value(init.Xavier(), (20, 30)))
    nd.random.seed(8)
    assert not np.array_equal(a, _value(init.Xavier(), (20, 30)))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_each_initializer_draws_its_distribution(dtype):
    nd.random.seed(0)
    shape = (64, 32, 3, 3)
    n = float(np.prod(shape))
    u = _value(init.Uniform(0.3), shape, dtype).astype("float64")
    assert np.abs(u).max() <= 0.3 * (1 + 1e-3) and abs(u.mean()) < 0.01
    assert abs(u.std() - 0.3 / np.sqrt(3)) < 0.005
    g = _value(init.Normal(0.2), shape, dtype).astype("float64")
    assert abs(g.mean()) < 0.01 and abs(g.std() - 0.2) < 0.005
    fan_in, fan_out = 32 * 9, 64 * 9
    scale = np.sqrt(3 / ((fan_in + fan_out) / 2))              # MXNet's Xavier: magnitude 3, factor "avg"
    x = _value(init.Xavier(), shape, dtype).astype("float64")
    assert np.abs(x).max() <= scale * (1 + 1e-3) and abs(x.std() - scale / np.sqrt(3)) < 0.01 * scale
    m = _value(init.MSRAPrelu(), shape, dtype).astype("float64")       # gaussian, magnitude 2 / (1 + 0.25^2)
    assert abs(m.std() - np.sqrt(2 / 1.0625 / ((fan_in + fan_out) / 2))) < 0.02 * m.std()
    assert abs(_value(init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), shape, dtype).std()
               - np.sqrt(2 / fan_in)) < 0.02 * np.sqrt(2 / fan_in)
    q = _value(init.Orthogonal(scale=1.5), (16, 40), dtype).astype("float64") / 1.5
    assert np.allclose(q @ q.T, np.eye(16), atol=5e-3 if dtype == "float16" else 1e-5)
    assert n == u.size


def test_a_key_scope_belongs_to_its_thread():
    """A trace on one thread (key_scope(None): a program without a key) leaves another thread's eager draws
    alone: they come from the process's stream, as MXNet's per-thread engine would run them."""
    inside, leave, seen = threading.Event(), threading.Event(), []

    def trace():
        with rng.key_scope(None):
            inside.set()
            leave.wait(10)
            try:
                rng.next_key()
            except rng.KeyNeeded:
                seen.append("tracing thread: KeyNeeded")

    t = threading.Thread(target=trace)
    t.start()
    inside.wait(10)
    try:
        key = rng.next_key()            # raised KeyNeeded when the scopes were one list for the process
    finally:
        leave.set()
        t.join()
    assert key.shape and seen == ["tracing thread: KeyNeeded"]
