"""oneDNN's convolutions in training programs (``xla/onednn.py``): built where the package and a compiler are
(the test extra installs ``onednn-devel-cpu-gomp``, so here they are), equal to XLA's convolutions forward, in
both gradients, to second order, forward-mode and under vmap, over generated geometries (strides, dilation,
uneven padding, groups, depthwise); put into training programs (the compiled program calls them) with the same
training as XLA's kernels; and absent (no compiler, no package) or turned off, the same programs on XLA's own
kernels, with ``AST_HYBRID_ONEDNN=on`` an error saying why."""

import ctypes
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from ast_hybrid import autograd, gluon, nd
from ast_hybrid.gluon import nn
from ast_hybrid.xla import onednn, program

DN = ("NHWC", "HWIO", "NHWC")


def test_the_library_is_built_where_the_package_and_a_compiler_are():
    lib = onednn.library()
    assert isinstance(lib, onednn._Library), lib.reason
    assert onednn.status().startswith("oneDNN 3.")
    assert onednn.enabled()


@pytest.mark.processes
def test_the_module_run_as_a_command_says_which_convolutions_run():
    done = subprocess.run([sys.executable, "-m", "ast_hybrid.xla.onednn"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("oneDNN 3."), done.stderr[-2000:]
    off = subprocess.run([sys.executable, "-m", "ast_hybrid.xla.onednn"], capture_output=True, text=True,
                         timeout=300, env={**os.environ, onednn.ENV: "off"})
    assert off.stdout.startswith("off (AST_HYBRID_ONEDNN=off)")


def _geometries():
    rng = np.random.RandomState(5)
    out = []
    for _ in range(14):
        groups = int(rng.choice([1, 1, 2, 4]))
        depthwise = rng.rand() < 0.2
        c = 8 if depthwise else groups * int(rng.randint(1, 5))
        groups = c if depthwise else groups
        o = groups * int(rng.randint(1, 5))
        k = (int(rng.randint(1, 6)), int(rng.randint(1, 4)))
        st = (int(rng.randint(1, 3)), int(rng.randint(1, 3)))
        dil = (int(rng.randint(1, 3)), 1)
        pad = ((int(rng.randint(0, 3)), int(rng.randint(0, 3))), (int(rng.randint(0, 2)), int(rng.randint(0, 2))))
        hw = (int(rng.randint(9, 15)), int(rng.randint(7, 12)))
        out.append(((int(rng.randint(1, 4)), *hw, c), (*k, c // groups, o), st, dil, pad, groups))
    return out


def _case(xs, ws, st, dil, pad, groups):
    rng = np.random.RandomState(sum(xs) + sum(ws))
    x = jnp.asarray(rng.randn(*xs).astype("f4"))
    w = jnp.asarray(rng.randn(*ws).astype("f4"))

    def ref(x, w):
        return lax.conv_general_dilated(x, w, st, pad, rhs_dilation=dil, dimension_numbers=DN,
                                        feature_group_count=groups)
    # on one thread or one per core (onednn.ONE_THREAD_MACS decides in programs)
    geo = onednn.Geometry(xs[1:3], ws[:2], st, dil, tuple(p[0] for p in pad), tuple(p[1] for p in pad), groups,
                          threads=sum(xs) % 2)
    return x, w, ref, lambda x, w: onednn.conv(x, w, geo), geo


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max() + 1))


@pytest.mark.parametrize("case", _geometries(), ids=lambda c: "x%s-w%s-s%s-d%s-p%s-g%s" % c)
def test_the_primitives_equal_xlas_convolution_in_every_mode_of_differentiation(case):
    x, w, ref, dnn, geo = _case(*case)
    y = ref(x, w)
    assert onednn.prepare(geo, x.shape, w.shape, y.shape)
    _close(jax.jit(dnn)(x, w), y)
    cot = jnp.asarray(np.random.RandomState(1).randn(*y.shape).astype("f4"))

    def grads(fn):
        return jax.grad(lambda x, w: jnp.sum(jnp.sin(fn(x, w)) * cot), (0, 1))

    for got, want in zip(jax.jit(grads(dnn))(x, w), grads(ref)(x, w)):
        _close(got, want, 1e-4)

    def second(fn):      # the gradient of a function of the input gradient: each transpose transposed again
        return jax.grad(lambda x, w: jnp.sum(grads(fn)(x, w)[0] ** 2), (0, 1))

    for got, want in zip(jax.jit(second(dnn))(x, w), second(ref)(x, w)):
        _close(got, want, 1e-4)
    _close(jax.jvp(dnn, (x, w), (x * 0.5, w))[1], jax.jvp(ref, (x, w), (x * 0.5, w))[1])
    xb = jnp.stack([x, x * 2])
    _close(jax.vmap(dnn, (0, None))(xb, w), jax.vmap(ref, (0, None))(xb, w))
    _close(jax.vmap(dnn)(xb, jnp.stack([w, -w])), jax.vmap(ref)(xb, jnp.stack([w, -w])))


def test_a_convolution_onednn_cannot_compute_stays_xlas():
    # negative padding and float64 are not taken
    def fn(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), ((-1, 0), (0, 0)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
    e = [q for q in jax.make_jaxpr(fn)(jnp.ones((1, 2, 5, 5)), jnp.ones((3, 2, 1, 1))).jaxpr.eqns
         if q.primitive.name == "conv_general_dilated"][0]
    assert onednn.geometry(e) is None
    with jax.enable_x64(True):
        e = jax.make_jaxpr(fn)(jnp.ones((1, 2, 5, 5), jnp.float64), jnp.ones((3, 2, 1, 1), jnp.float64)).jaxpr.eqns
        assert onednn.geometry([q for q in e if q.primitive.name == "conv_general_dilated"][0]) is None


def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(2),
            nn.Conv2D(16, 3, strides=2, padding=1, groups=2), nn.Activation("relu"),
            nn.Conv2D(16, 3, padding=1, groups=16), nn.GlobalAvgPool2D(), nn.Dense(4))
    return net


def _train(hybridize, steps=3):
    import ast_hybrid.mxnet as mx

    mx.random.seed(0)
    net = _net()
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(0)
    for _ in range(steps):
        x, y = nd.array(rng.randn(4, 3, 12, 12)), nd.array(rng.randint(0, 4, 4))
        with autograd.record():
            out = loss(net(x), y)
        out.backward()
        trainer.step(4)
    return [p.data().asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize("hybridize", [True, False], ids=["hybridized", "op-by-op"])
def test_a_network_trains_to_the_same_parameters_on_onednns_kernels_as_on_xlas(monkeypatch, hybridize):
    monkeypatch.setenv(onednn.ENV, "off")
    want = _train(hybridize)
    monkeypatch.setenv(onednn.ENV, "on")
    got = _train(hybridize)
    for a, b in zip(got, want):
        _close(a, b, 2e-4)


def test_a_training_program_calls_onednns_kernels_forward_and_backward(monkeypatch):
    def fn(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return jnp.sum(jnp.maximum(y, 0) ** 2)
    x, w = jnp.ones((2, 4, 8, 8)), jnp.ones((8, 4, 3, 3)) * 0.1

    def hlo():
        run = program.differentiable(fn, x, w)
        return jax.jit(jax.grad(run, (0, 1))).lower(x, w).as_text()
    monkeypatch.setenv(onednn.ENV, "on")
    text = hlo()
    for target in ("ah_onednn_conv_forward", "ah_onednn_conv_data", "ah_onednn_conv_weights"):
        assert target in text
    monkeypatch.setenv(onednn.ENV, "off")
    assert "ah_onednn" not in hlo()
    # several devices (a batch split over them: a custom call has no sharding rule): XLA's convolutions
    monkeypatch.setenv(onednn.ENV, "on")
    monkeypatch.setattr(jax, "local_device_count", lambda *a: 8)
    assert "ah_onednn" not in hlo()


_FALLBACK = textwrap.dedent("""
    import numpy as np, sys
    from ast_hybrid.xla import onednn
    if sys.argv[1] == "package":
        onednn._find_onednn = lambda: onednn._Missing("oneDNN is not installed (test)")
    print(onednn.status())
    sys.path.insert(0, sys.argv[2])
    import test_onednn
    from ast_hybrid.xla import program
    import jax, jax.numpy as jnp
    from jax import lax
    fn = lambda x, w: jnp.sum(lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1))) ** 2)
    x, w = jnp.ones((1, 2, 6, 6)), jnp.ones((3, 2, 3, 3))
    assert "ah_onednn" not in jax.jit(jax.grad(program.differentiable(fn, x, w))).lower(x, w).as_text()
    np.save(sys.argv[3], np.concatenate([p.ravel() for p in test_onednn._train(True, steps=2)]))
""")


@pytest.mark.processes
def test_without_a_compiler_or_the_package_training_runs_on_xlas_kernels(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AST_HYBRID")}
    folder = os.path.dirname(__file__)
    results = []
    for case, extra in (("compiler", {"CXX": "/nonexistent/c++", "PATH": "/nonexistent"}), ("package", {})):
        out = tmp_path / f"{case}.npy"
        done = subprocess.run([sys.executable, "-c", _FALLBACK, case, folder, str(out)], capture_output=True,
                              text=True, env={**env, **extra, "XDG_CACHE_HOME": str(tmp_path / case)}, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        first = done.stdout.splitlines()[0]
        assert first.startswith("not available: ") and first.endswith("; XLA's convolutions"), first
        assert ("no C++ compiler" if case == "compiler" else "not installed") in first
        results.append(np.load(out))
        on = subprocess.run([sys.executable, "-c", _FALLBACK.replace("print(onednn.status())",
                                                                     "onednn.enabled()"), case, folder, str(out)],
                            capture_output=True, text=True, timeout=600,
                            env={**env, **extra, "XDG_CACHE_HOME": str(tmp_path / case), onednn.ENV: "on"})
        assert on.returncode != 0 and f"{onednn.ENV}=on, but oneDNN's convolutions are not available" in on.stderr
    np.testing.assert_array_equal(results[0], results[1])


def test_the_primitives_kept_are_bounded_on_ever_new_shapes():
    # code run on ever new shapes (op by op, images of every size) keeps at most 1024 primitives, not one per shape
    lib = onednn.library()
    lib.dll.ah_onednn_cached.restype = ctypes.c_int64
    geo = onednn.Geometry((4, 4), (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1, threads=1)
    for n in range(1, 1100):
        assert onednn.prepare(geo._replace(in_hw=(n, 1)), (1, n, 1, 1), (1, 1, 1, 1), (1, n, 1, 1), ("forward",))
    assert 0 < lib.dll.ah_onednn_cached() <= 1024
