"""MXNet's contexts on JAX's devices, without a GPU: several host devices stand in for several devices
(``--xla_force_host_platform_device_count``, in a child process: the flag must precede jax's start), and the
XLA:CPU rewrites are checked to ask the platform a program runs on.

The GPU itself is checked by ``python -m bench --gpu-check`` (bench/gpu_check.py) on a machine that has one;
its report is in bench/results/gpu/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

TWO_DEVICES = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax
    from ast_hybrid import mxnet as mx
    from ast_hybrid.gluon.model_zoo import vision
    nd = mx.nd
    out = {}
    a = nd.ones((2, 3), ctx=mx.cpu(1))
    out["ones"] = [str(a.context), a._arr.committed, str((a * 2).sum(axis=1).context)]
    out["random"] = str(nd.random.uniform(shape=(3,), ctx=mx.cpu(1)).context)
    # random draws whose parameters are arrays stay on their device (MXNet: the parameters' context)
    out["random_of_arrays"] = str(nd.random.normal(nd.zeros((3,), ctx=mx.cpu(1)), nd.ones((3,), ctx=mx.cpu(1))).context)
    # mx.np takes ctx= too (d2l's np.zeros(shape, ctx=try_gpu()))
    mnp = mx.np
    out["np"] = [str(a.context) for a in (mnp.zeros((2,), ctx=mx.cpu(1)), mnp.array([1, 2], ctx=mx.cpu(1)),
                                         mnp.arange(3, ctx=mx.cpu(1)), mnp.random.uniform(size=(2,), ctx=mx.cpu(1)),
                                         mnp.ones((2,)))]
    out["moved"] = [str(nd.arange(4).as_in_context(mx.cpu(1)).context), str(a.as_in_context(mx.cpu(0)).context)]
    try:
        nd.ones((2,), ctx=mx.gpu(0))
        out["gpu"] = "no error"
    except Exception as exc:
        out["gpu"] = type(exc).__name__ + ": " + str(exc)
    # a hybridized network moved to another device with reset_ctx: its compiled programs follow
    net = vision.get_model("resnet18_v1", classes=10)
    net.initialize(mx.init.Xavier(), ctx=mx.cpu(0))
    net.hybridize()
    x = np.random.RandomState(0).standard_normal((1, 3, 32, 32)).astype("float32")
    y0 = net(nd.array(x, ctx=mx.cpu(0)))
    net.collect_params().reset_ctx(mx.cpu(1))
    y1 = net(nd.array(x, ctx=mx.cpu(1)))
    w = next(iter(net.collect_params().values())).data()
    out["reset_ctx"] = [str(w.context), str(y1.context), float(np.abs(y0.asnumpy() - y1.asnumpy()).max())]
    # initialize(ctx=) on the second device, and a training step there
    net2 = mx.gluon.nn.Dense(4, in_units=3)
    net2.initialize(ctx=mx.cpu(1))
    trainer = mx.gluon.Trainer(net2.collect_params(), "sgd", {"learning_rate": 0.1})
    xb = nd.ones((2, 3), ctx=mx.cpu(1))
    with mx.autograd.record():
        loss = net2(xb).sum()
    loss.backward()
    trainer.step(2)
    out["initialize"] = [str(net2.weight.data().context), str(net2.weight.grad().context), str(loss.context)]
    out["split"] = [str(p.context) for p in mx.gluon.utils.split_and_load(nd.arange(8).reshape((4, 2)),
                                                                          [mx.cpu(0), mx.cpu(1)])]
    json.dump(out, sys.stdout)
""")


@pytest.fixture(scope="module")
def two_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", TWO_DEVICES], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_ctx_places_on_that_device_and_ops_stay_there(two_devices):
    assert two_devices["ones"] == ["cpu(1)", True, "cpu(1)"]
    assert two_devices["random"] == "cpu(1)"
    assert two_devices["random_of_arrays"] == "cpu(1)"
    assert two_devices["np"] == ["cpu(1)"] * 4 + ["cpu(0)"]
    assert two_devices["moved"] == ["cpu(1)", "cpu(0)"]


def test_a_missing_gpu_is_an_error_naming_it(two_devices):
    assert two_devices["gpu"].startswith("RuntimeError: gpu(0)")


def test_reset_ctx_moves_a_hybridized_network_and_its_programs(two_devices):
    # found by the GPU check: the parameters stayed on the first device and the compiled program refused
    # inputs on the second
    w, y, diff = two_devices["reset_ctx"]
    assert (w, y) == ("cpu(1)", "cpu(1)")
    assert diff < 1e-4          # the convolutions' lowering is timed per program: a pick may differ by rounding


def test_initialize_and_train_on_a_given_device(two_devices):
    assert two_devices["initialize"] == ["cpu(1)", "cpu(1)", "cpu(1)"]
    assert two_devices["split"] == ["cpu(0)", "cpu(1)"]


def test_default_device_is_mxnets_cpu_unless_the_user_chose_one():
    code = textwrap.dedent("""
        import sys, jax
        if sys.argv[1] == "preset":
            jax.config.update("jax_default_device", jax.devices()[0])
        from ast_hybrid import mxnet as mx
        a = mx.nd.ones((2,))
        print(repr(jax.config.jax_default_device), a.context)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    got = {}
    for mode in ("plain", "preset"):
        proc = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        got[mode] = proc.stdout.split()
    assert got["plain"] == ["'cpu'", "cpu(0)"]
    assert got["preset"][0].startswith("CpuDevice") and got["preset"][1] == "cpu(0)"


# -- the XLA:CPU rewrites ask the platform ----------------------------------------------------------------------

def test_convolution_rule_is_xlas_off_the_cpu():
    from ast_hybrid.core.context import tracing_for
    from ast_hybrid.ops import conv_lowering

    # 512 -> 512 channels, 3x3 on 2x2: im2col on XLA:CPU (the measured rule), XLA's convolution on a GPU
    shape = ((1, 512, 2, 2), (512, 512, 3, 3), (1, 1), (1, 1), [(1, 1), (1, 1)], 1, True)
    with tracing_for("cpu"):
        assert conv_lowering.choose(*shape) == "im2col"
    with tracing_for("gpu"):
        assert conv_lowering.choose(*shape) == "xla"
    # a depthwise convolution: taps on the CPU only
    dw = ((1, 8, 9, 9), (8, 1, 3, 3), (1, 1), (1, 1), [(1, 1), (1, 1)], 8, True)
    with tracing_for("cpu"):
        assert conv_lowering.choose(*dw) == "taps"
    with tracing_for("gpu"):
        assert conv_lowering.choose(*dw) == "xla"


def test_predict_program_asks_the_platform_of_its_parameters(monkeypatch):
    """A program whose parameters are on a GPU is neither timed per convolution (the timing would run on the
    CPU) nor given weight-first GEMMs (a rule of the CPU's cache); channel-last and hoisting stay."""
    from ast_hybrid import mxnet as mx
    from ast_hybrid.xla import conv_tuning, program

    seen = []
    monkeypatch.setattr(program, "platform_of", lambda arrays: seen.append(len(arrays)) or "gpu")

    def refuse(*a, **k):
        raise AssertionError("an XLA:CPU rule was asked for a GPU program")

    monkeypatch.setattr(conv_tuning, "im2col_picks", refuse)
    monkeypatch.setattr(program, "weight_first", refuse)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(8, 3, padding=1, in_channels=3), mx.gluon.nn.BatchNorm(in_channels=8),
            mx.gluon.nn.Activation("relu"), mx.gluon.nn.Conv2D(4, 1, in_channels=8))
    net.initialize()
    x = mx.nd.array(np.random.RandomState(0).standard_normal((2, 3, 8, 8)))
    want = net(x).asnumpy()
    net.hybridize()
    got = net(x).asnumpy()
    assert seen, "the program did not ask the platform"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
