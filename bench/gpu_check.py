"""The GPU check: ``python -m bench --gpu-check [--dry-run] [--budget SECONDS] [--out DIR]`` (or
``tests/gpu/run.sh``), one script for a machine with a GPU, writing one report (``gpu.md``, ``gpu.json``).

What it checks, each against the same computation on the CPU in the same process (our CPU results are the
ones the suite holds to MXNet 1.9.1; no MXNet is needed on the GPU machine):

- ``contexts``: ``mx.gpu(i)``, ``ctx=``, ``as_in_context``, ``initialize(ctx=...)``, ``split_and_load``,
  ``num_gpus()`` on JAX's GPU devices, a context whose device does not exist, arrays of two devices in one op;
- ``ops``: MXNet's operators on GPU inputs (forward, and the gradient where there is one);
- ``zoo``: model-zoo networks' forward, hybridized and not, and a training step (loss and updated weights);
- ``control flow``: a hybridized block whose ``if``/``while`` test tensor values (``lax.cond``/``while_loop``);
- ``custom ops``: an ``mx.operator.CustomOp`` (NumPy in its forward: a host callback), eager and hybridized;
- ``launch``: ``ast-hybrid launch`` with one process per GPU;
- ``bench``: inference (zoo at batch 1, 16, 64) and training steps on the GPU, ours against the same network
  as one hand-jitted JAX function (``jax.jit``) and PyTorch's torchvision twin where PyTorch sees the GPU.

Matrix products and convolutions in float32 run in TF32 on NVIDIA GPUs since Ampere under JAX's default
precision (as in PyTorch and cuDNN): each comparison is made twice, at JAX's default precision (TF32's
tolerance) and at ``highest`` (float32's).

On a GPU machine with no network: bring gast and beniget as wheels (``pip download --no-deps
--only-binary=:all: --python-version 3.12 -d .whl gast beniget``, in the repository root) and run
``sh tests/gpu/run.sh``, which installs them into /tmp/site and runs this from the source tree; JAX (with its
CUDA plugin), NumPy and, optionally, PyTorch come from the machine.  ``--dry-run`` runs every section on the
CPU in miniature (CI runs it so that the script stays wired); without a GPU and without ``--dry-run`` it
stops and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

BUDGET_S = 400          # the whole check; what does not fit is reported as not run
TF32_RTOL = 2e-2        # relative to the output's scale: TF32 keeps 10 bits of mantissa
F32_RTOL = 2e-4


class Check:
    """The checks' results and the bench rows, written as one report."""

    def __init__(self, out: Path, budget: float, dry: bool):
        from bench import harness

        self.out, self.dry, self.started = out, dry, time.perf_counter()
        self.deadline = self.started + budget
        self.results = []           # (section, name, status, detail)
        self.env = {}
        self.report = harness.Report()

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def record(self, section, name, ok, detail=""):
        status = "pass" if ok is True else "FAIL" if ok is False else str(ok)
        self.results.append((section, name, status, detail))
        print(f"[{section}] {name}: {status}{' - ' + detail if detail else ''}", flush=True)

    def run(self, section, name, fn):
        """``fn()`` -> (ok, detail); an exception is a failure with its message."""
        if self.left() <= 0:
            self.record(section, name, "not run", "time budget spent")
            return None
        try:
            ok, detail = fn()
        except Exception as exc:  # noqa: BLE001 - every failure is one line of the report
            tb = traceback.format_exc(limit=-3)
            ok, detail = False, f"{type(exc).__name__}: {str(exc)[:400]} | {tb.splitlines()[-3].strip()[:200]}"
        self.record(section, name, ok, detail)
        return ok

    def write(self):
        self.out.mkdir(parents=True, exist_ok=True)
        counts = {}
        for r in self.results:
            counts[r[2]] = counts.get(r[2], 0) + 1
        lines = ["# GPU check", "", f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                 f"{time.perf_counter() - self.started:.0f} s{' (dry run on the CPU)' if self.dry else ''}.", "",
                 "| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in self.env.items()] + [
                 "", "Checks: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), "",
                 "| section | check | result | detail |", "|---|---|---|---|"]
        lines += [f"| {s} | {n} | {st} | {d.replace('|', '/')} |" for s, n, st, d in self.results]
        lines += ["", "## Speed (GPU, medians of interleaved rounds)", "", self.report.markdown()]
        (self.out / "gpu.md").write_text("\n".join(lines) + "\n")
        from dataclasses import asdict

        (self.out / "gpu.json").write_text(json.dumps(
            {"environment": self.env, "dry_run": self.dry, "seconds": round(time.perf_counter() - self.started, 1),
             "checks": [dict(zip(("section", "check", "result", "detail"), r)) for r in self.results],
             "rows": [asdict(r) for r in self.report.rows], "not_run": self.report.missing}, indent=1))


def rel_err(a, b):
    """Largest difference relative to ``b``'s scale (its largest magnitude, at least 1e-6)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shapes differ: {a.shape} vs {b.shape}")
    if not a.size:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-6))


def _np(v):
    return np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v)


def _compare(outs, refs, rtol):
    errs = [rel_err(_np(o), _np(r)) for o, r in zip(outs, refs)]
    worst = max(errs) if errs else 0.0
    return worst <= rtol, f"rel err {worst:.1e}"


def _both_precisions(fn, ctx, cpu, matmul):
    """``fn(ctx)`` against ``fn(cpu)`` at JAX's default precision and at ``highest``."""
    details, ok = [], True
    for prec, rtol in (("default", TF32_RTOL if matmul else F32_RTOL), ("highest", F32_RTOL)):
        with _precision(prec):
            got, want = fn(ctx), fn(cpu)
        good, d = _compare(got, want, rtol)
        ok &= good
        details.append(f"{prec}: {d}")
    return ok, "; ".join(details)


def _precision(prec):
    import contextlib

    import jax

    return jax.default_matmul_precision("highest") if prec == "highest" else contextlib.nullcontext()


# -- environment ----------------------------------------------------------------------------------------------
def environment(chk, target):
    import jax

    chk.env.update({"python": platform.python_version(), "jax": jax.__version__, "numpy": np.__version__,
                    "backend": jax.default_backend(), "devices": ", ".join(
                        f"{d.platform}:{d.device_kind}" for d in jax.devices()), "target": repr(target)})
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        chk.env["nvidia-smi"] = smi.stdout.strip() or smi.stderr.strip()[:200]
    except (OSError, subprocess.SubprocessError) as exc:
        chk.env["nvidia-smi"] = f"not available ({type(exc).__name__})"
    torch = _torch()
    chk.env["torch"] = (f"{torch.__version__}, cuda {torch.cuda.is_available()}" if torch else "not installed")


def _torch():
    try:
        import torch
    except Exception:  # noqa: BLE001 - PyTorch is optional here
        return None
    return torch


# -- contexts -------------------------------------------------------------------------------------------------
def contexts(chk, mx, target, gpus):
    nd = mx.nd
    cpu = mx.cpu(0)

    def count():
        n = mx.context.num_gpus()
        return n == gpus, f"num_gpus() = {n}, jax's GPU devices {gpus}"

    def placed():
        a = nd.ones((2, 3), ctx=target)
        b = (a * 2).sum(axis=1)
        dev = next(iter(b._arr.devices()))
        want = "cpu" if target.device_type == "cpu" else "gpu"
        plat = "gpu" if dev.platform in ("gpu", "cuda", "rocm") else dev.platform
        return (a.context == target and b.context == target and plat == want,
                f"ones(ctx={target}).context {a.context}, an op's result {b.context} on {dev.platform}")

    def moved():
        a = nd.arange(6, ctx=cpu).as_in_context(target)
        back = a.as_in_context(cpu)
        copy = a.copyto(cpu)
        return (a.context == target and back.context == cpu and copy.context == cpu
                and np.array_equal(back.asnumpy(), np.arange(6)),
                f"as_in_context: {a.context} then {back.context}; copyto {copy.context}")

    def missing():
        bad = mx.gpu(gpus) if target.device_type == "gpu" else mx.gpu(0)
        try:
            nd.ones((2,), ctx=bad).asnumpy()
        except Exception as exc:  # noqa: BLE001 - MXNet raises MXNetError; the message is what is checked
            return True, f"{bad}: {type(exc).__name__}: {str(exc)[:160]}"
        return False, f"nd.ones(ctx={bad}) did not fail"

    def default():
        a = nd.ones((2,))
        dev = next(iter(a._arr.devices())).platform
        return (a.context == cpu and dev == "cpu",
                f"nd.ones(2).context = {a.context} on {dev} (MXNet: cpu(0)), current_context() = "
                f"{mx.current_context()}")

    def params():
        net = mx.gluon.nn.Dense(4, in_units=3)
        net.initialize(ctx=[target])
        w = net.weight.data()
        y = net(nd.ones((2, 3), ctx=target))
        return (w.context == target and y.context == target and net.weight.list_ctx() == [target],
                f"weight on {w.context}, output on {y.context}, list_ctx {net.weight.list_ctx()}")

    def split():
        parts = mx.gluon.utils.split_and_load(nd.arange(8).reshape((4, 2)), [target])
        return (len(parts) == 1 and parts[0].context == target, f"split_and_load -> {[p.context for p in parts]}")

    def mixed():
        if target.device_type == "cpu":
            return "not applicable", "one device"
        a, b = nd.ones((2,), ctx=cpu), nd.ones((2,), ctx=target)
        try:
            c = a + b
            c.asnumpy()
        except Exception as exc:  # noqa: BLE001 - MXNet: an error for arrays on two devices
            return True, f"error (MXNet: error): {type(exc).__name__}: {str(exc)[:160]}"
        return False, f"cpu + gpu gave an array on {c.context} (MXNet raises)"

    for name, fn in (("num_gpus", count), ("ctx= places", placed), ("as_in_context/copyto", moved),
                     ("missing device", missing), ("no ctx given", default), ("initialize(ctx=)", params),
                     ("split_and_load", split), ("two devices in one op", mixed)):
        chk.run("contexts", name, fn)


# -- operators ------------------------------------------------------------------------------------------------
def _op_cases(nd, rs):
    """name -> (fn(*arrays) on NDArrays, input arrays, matmul-like, differentiable)."""
    x4 = rs.standard_normal((2, 8, 9, 9)).astype("float32")
    w3 = rs.standard_normal((16, 8, 3, 3)).astype("float32") * 0.2
    wd = rs.standard_normal((8, 1, 3, 3)).astype("float32")
    m = rs.standard_normal((6, 20)).astype("float32")
    f = rs.standard_normal((12, 20)).astype("float32")
    g = rs.standard_normal((2, 8)).astype("float32")
    return {
        "FullyConnected": (lambda x, w: nd.FullyConnected(x, w, no_bias=True, num_hidden=12), (m, f), True, True),
        "dot": (lambda a, b: nd.dot(a, b, transpose_b=True), (m, f), True, True),
        "batch_dot": (lambda a, b: nd.batch_dot(a, b, transpose_b=True), (x4[:, 0], x4[:, 1]), True, True),
        "Convolution 3x3": (lambda x, w: nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True),
                            (x4, w3), True, True),
        "Convolution stride 2": (lambda x, w: nd.Convolution(x, w, kernel=(3, 3), stride=(2, 2), num_filter=16,
                                                             no_bias=True), (x4, w3), True, True),
        "Convolution depthwise": (lambda x, w: nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_group=8,
                                                              num_filter=8, no_bias=True), (x4, wd), True, True),
        "Deconvolution": (lambda x, w: nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2), num_filter=8,
                                                        no_bias=True), (x4, w3.transpose(1, 0, 2, 3)[:, :8].copy()),
                          True, True),
        "Pooling max": (lambda x: nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max"), (x4,), False, True),
        "Pooling avg": (lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg"), (x4,), False, True),
        "BatchNorm": (lambda x, gm, bt: nd.BatchNorm(x, gm, bt, nd.zeros_like(gm), nd.ones_like(gm),
                                                     fix_gamma=False, use_global_stats=True),
                      (x4, rs.standard_normal(8).astype("float32"), rs.standard_normal(8).astype("float32")),
                      False, True),
        "LayerNorm": (lambda x, gm, bt: nd.LayerNorm(x, gm, bt), (m, np.ones(20, "float32"), np.zeros(20, "float32")),
                      False, True),
        "softmax": (lambda x: nd.softmax(x, axis=-1), (m,), False, True),
        "log_softmax": (lambda x: nd.log_softmax(x), (m,), False, True),
        "Activation": (lambda x: nd.Activation(x, act_type="tanh") + nd.relu(x) + nd.sigmoid(x), (m,), False, True),
        "elementwise": (lambda a, b: nd.exp(a * 0.1) / (1 + nd.abs(b)) - nd.sqrt(nd.abs(a)), (m, m[::-1].copy()),
                        False, True),
        "broadcast": (lambda a, b: nd.broadcast_mul(a, b[:1]) + nd.broadcast_add(a, b[:, :1]), (m, m), False, True),
        "sum/mean/max": (lambda a: nd.concat(a.sum(axis=1), a.mean(axis=0), a.max(axis=1), dim=0), (m,), False, True),
        "argmax/topk/sort": (lambda a: nd.concat(nd.argmax(a, axis=1), nd.topk(a, k=3, axis=1).reshape(-1),
                                                 nd.sort(a, axis=1).reshape(-1), dim=0), (m,), False, False),
        "take/Embedding": (lambda w: nd.Embedding(nd.array([1, 3, 5]), w, input_dim=12, output_dim=20)
                           + nd.take(w, nd.array([0, 2, 4])), (f,), False, True),
        "slice/transpose/reshape": (lambda a: a[1:4, 2:10].T.reshape((4, -1)), (m,), False, True),
        "where/clip": (lambda a, b: nd.where(a > b, a, b).clip(-0.5, 0.5), (m, m[::-1].copy()), False, True),
        "one_hot/SequenceMask": (lambda a: nd.SequenceMask(a.reshape((6, 4, 5)), nd.array([1, 2, 3, 6]),
                                                           use_sequence_length=True).reshape((6, 20))
                                 + nd.one_hot(nd.array([0, 19, 3, 4, 5, 6]), 20), (m,), False, True),
        "linalg gemm2": (lambda a, b: nd.linalg.gemm2(a, b, transpose_b=True), (m, f), True, True),
        "LRN/L2Normalization": (lambda x: nd.L2Normalization(nd.LRN(x, nsize=3)), (x4,), False, True),
        "Dropout (predict)": (lambda x: nd.Dropout(x, p=0.5), (g,), False, False),     # random under record()
    }


def operators(chk, mx, target):
    nd, autograd = mx.nd, mx.autograd
    cpu = mx.cpu(0)
    rs = np.random.RandomState(0)
    for name, (fn, inputs, matmul, diff) in _op_cases(nd, rs).items():
        def forward(ctx, fn=fn, inputs=inputs):
            return [fn(*[nd.array(a, ctx=ctx) for a in inputs])]

        def gradient(ctx, fn=fn, inputs=inputs):
            xs = [nd.array(a, ctx=ctx) for a in inputs]
            for x in xs:
                x.attach_grad()
            with autograd.record():
                y = fn(*xs)
                # weights of y's shape: (y * y).sum() of a normalized y is constant, its gradient only rounding
                r = np.random.RandomState(9).standard_normal(y.shape).astype("float32")
                loss = (y * nd.array(r, ctx=ctx)).sum()
            loss.backward()
            return [x.grad for x in xs]

        def both(fn=forward, diff=diff, matmul=matmul):
            ok, detail = _both_precisions(fn, target, cpu, matmul)
            return ok, detail

        chk.run("ops", name, both)
        if diff:
            chk.run("ops", name + " (gradient)", lambda g=gradient, m=matmul: _both_precisions(g, target, cpu, m))


# -- model zoo ------------------------------------------------------------------------------------------------
def zoo(chk, mx, target, models, side):
    from ast_hybrid.gluon.model_zoo import vision

    nd, cpu = mx.nd, mx.cpu(0)
    x = np.random.RandomState(1).standard_normal((2, 3, side, side)).astype("float32")
    for name in models:
        def forward(name=name):
            mx.random.seed(0)
            net = vision.get_model(name)
            net.initialize(mx.init.Xavier(), ctx=cpu)
            net.hybridize()
            ref = net(nd.array(x, ctx=cpu))
            net.collect_params().reset_ctx(target)
            details, ok = [], True
            for mode in ("hybridized", "not hybridized"):
                if mode == "not hybridized":
                    net.hybridize(False)
                for prec in ("default", "highest") if mode == "hybridized" else ("default",):
                    with _precision(prec):
                        got = net(nd.array(x, ctx=target))
                    good, d = _compare([got], [ref], TF32_RTOL if prec == "default" else 1e-3)
                    ok &= good and got.context == target
                    details.append(f"{mode} {prec}: {d}")
            return ok, "; ".join(details)

        chk.run("zoo", f"{name} forward {side}x{side}", forward)
    chk.run("zoo", "training step (CIFAR ResNet-20, b8)", lambda: _train_step(mx, target))


def _train_step(mx, target):
    """One record/backward/step from the same weights on the CPU and on ``target``: loss and weights after."""
    from bench import train

    nd, cpu = mx.nd, mx.cpu(0)
    x = np.random.RandomState(2).standard_normal((8, 3, 32, 32)).astype("float32")
    y = np.arange(8).astype("float32") % 10
    results = {}
    for ctx in (cpu, target):
        for hyb in (True, False):
            env = {"mx": mx, "nd": nd, "gluon": mx.gluon, "nn": mx.gluon.nn, "vision": mx.gluon.model_zoo.vision}
            exec(train.RESNET20, env)
            net = env["net"]
            mx.random.seed(3)
            net.initialize(mx.init.Xavier(), ctx=ctx)
            if hyb:
                net.hybridize()
            loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
            trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
            xs, ys = nd.array(x, ctx=ctx), nd.array(y, ctx=ctx)
            with _precision("highest"):
                for _ in range(2):
                    with mx.autograd.record():
                        loss = loss_fn(net(xs), ys)
                    loss.backward()
                    trainer.step(8)
            params = [p.data().asnumpy() for p in net.collect_params().values()]
            results[(str(ctx), hyb)] = (loss.asnumpy(), params, net.collect_params().values())
    details, ok = [], True
    for hyb in (True, False):
        (l0, p0, _), (l1, p1, _) = results[(str(cpu), hyb)], results[(str(target), hyb)]
        e_loss = rel_err(l1, l0)
        e_par = max(rel_err(a, b) for a, b in zip(p1, p0))
        ok &= e_loss < 1e-3 and e_par < 1e-3
        details.append(f"{'hybridized' if hyb else 'not hybridized'}: loss {e_loss:.1e}, weights {e_par:.1e}")
    return ok, "; ".join(details) + " (highest precision, two steps)"


# -- control flow and custom ops ------------------------------------------------------------------------------
def control_flow(chk, mx, target):
    nd, cpu = mx.nd, mx.cpu(0)

    class Flow(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            if x.sum() > 0:
                y = x * 2
            else:
                y = -x
            while y.sum() < 100:
                y = y * 1.5 + 1
            for _ in range(3):
                y = F.tanh(y) + y
            return y

    def run():
        outs = {}
        for ctx in (cpu, target):
            net = Flow()
            net.hybridize()
            outs[str(ctx)] = [net(nd.array(v, ctx=ctx)) for v in ([[1.0, 2.0]], [[-3.0, 0.5]], [[50.0, 60.0]])]
            on = {str(o.context) for o in outs[str(ctx)]}
        ok, d = _compare(outs[str(target)], outs[str(cpu)], F32_RTOL)
        return ok and on == {str(target)}, f"{d}, results on {sorted(on)}"

    chk.run("control flow", "if/while on tensor values, hybridized", run)


def custom_ops(chk, mx, target):
    nd, cpu = mx.nd, mx.cpu(0)

    class Scale(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0].asnumpy()                          # host NumPy: a callback from the device
            self.assign(out_data[0], req[0], mx.nd.array(x * 3.0 + np.sign(x)))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 3.0)

    @mx.operator.register("gpu_check_scale")
    class ScaleProp(mx.operator.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=True)

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Scale()

    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.Custom(x * 2, op_type="gpu_check_scale").sum(axis=1)

    v = np.random.RandomState(4).standard_normal((3, 5)).astype("float32")

    def run():
        outs = {}
        for ctx in (cpu, target):
            res = []
            for hyb in (False, True):
                net = Net()
                if hyb:
                    net.hybridize()
                x = nd.array(v, ctx=ctx)
                x.attach_grad()
                with mx.autograd.record():
                    y = net(x)
                y.backward()
                res += [y, x.grad]
            outs[str(ctx)] = res
        ok, d = _compare(outs[str(target)], outs[str(cpu)], F32_RTOL)
        return ok and outs[str(target)][0].context == target, d + " (eager and hybridized, value and gradient)"

    chk.run("custom ops", "CustomOp with NumPy inside, on the device", run)


# -- launch ---------------------------------------------------------------------------------------------------
LAUNCHED = """
import mxnet as mx
from mxnet import autograd, gluon, nd
kv = mx.kv.create('dist_sync')
n = mx.context.num_gpus()
ctx = mx.gpu(kv.rank % n) if n else mx.cpu()
net = gluon.nn.Dense(3, in_units=4)
net.initialize(mx.init.One(), ctx=ctx)
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore=kv)
x = nd.ones((2, 4), ctx=ctx) * (kv.rank + 1)
with autograd.record():
    loss = net(x).sum()
loss.backward()
trainer.step(2)
print('LAUNCHED', kv.rank, kv.num_workers, net.weight.data().context, float(net.weight.data().sum().asscalar()))
"""


def launch(chk, gpus, tmp):
    def run():
        script = tmp / "launched.py"
        script.write_text(LAUNCHED)
        n = max(gpus, 1)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                                        os.environ.get("PYTHONPATH")])))
        proc = subprocess.run([sys.executable, "-m", "ast_hybrid", "launch", "-n", str(n), "--all-output",
                               str(script)], capture_output=True, text=True, timeout=max(30, min(150, chk.left())),
                              env=env)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("LAUNCHED")]
        # each weight starts at 1 and takes 0.1 * (sum of every worker's gradient) / batch 2 per element
        want = 12 - 0.1 * 2 * sum(range(1, n + 1)) / 2 * 12
        ok = proc.returncode == 0 and len(lines) == n and all(abs(float(ln.split()[-1]) - want) < 1e-3 for ln in lines)
        detail = "; ".join(lines) or (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return ok, f"-n {n}: rc {proc.returncode}, {detail} (expected weight sum {want:g})"

    chk.run("launch", "ast-hybrid launch, one process per GPU", run)


# -- speed ----------------------------------------------------------------------------------------------------
def bench(chk, mx, target, dry):
    """Rows in order of importance; each only while the budget lasts."""
    from bench import harness, mlp, train

    nd = mx.nd
    calls, rounds = (3, 2) if dry else (30, 3)
    rep = chk.report

    def row(scenario, case, contenders, note=""):
        if chk.left() < (5 if dry else 20):
            rep.cannot(f"{scenario}: {case}", "time budget spent")
            return
        try:
            runs = {k: harness.local(f) for k, f in contenders.items() if f is not None}
            t = harness.interleave(runs, calls, rounds)
            rep.add(scenario, case, "ms", {k: v * 1e3 for k, v in t.items()}, note)
        except Exception as exc:  # noqa: BLE001 - a row that fails is reported, the rest still run
            rep.cannot(f"{scenario}: {case}", f"{type(exc).__name__}: {str(exc)[:300]}")

    # the chapter's MLP: ours hybridized against the same MLP written by hand in jax.jit
    for b in (1, 64) if dry else (1, 64, 1024):
        with target:
            net = mlp._net()
            net.hybridize()
            x = nd.array(np.random.RandomState(0).standard_normal((b, 512)), ctx=target)
            net(x)
            hand = mlp._hand(net)
        row("inference", f"MLP b{b}", {harness.OURS: lambda net=net, x=x: net(x),
                                       harness.JIT: lambda hand=hand, x=x: hand(x._arr)})
    # training steps: ours (record/backward/step) against the whole step as one jitted program
    for name in ("MLP b256", "CIFAR ResNet-20 b64 32x32") if not dry else ("MLP b256",):
        x, y = train.data(name)
        with target:
            ours = train.ours_step(name, x, y)
            whole = train.one_program_step(name, x, y)
        row("training step", name, {harness.OURS: ours, harness.JIT: whole,
                                    "torch": _torch_train(name, x, y) if not dry else None},
            "jax.jit: the whole step, functional(net), one jitted program")
        if chk.left() > (5 if dry else 20):
            try:
                with target:
                    parts = _step_parts(mx, name, x, y, 3 if dry else 30)
                rep.add("training step parts", name, "ms", {k: v * 1e3 for k, v in parts.items()},
                        "each part waited for before the next: where a step's time goes")
            except Exception as exc:  # noqa: BLE001 - reported, the other rows still run
                rep.cannot(f"training step parts: {name}", f"{type(exc).__name__}: {str(exc)[:300]}")

    def resnet18_training():
        if dry:
            return
        x, y = train.data("resnet18_v1 b16 64x64")
        with target:
            row("training step", "resnet18_v1 b16 64x64",
                {harness.OURS: train.ours_step("resnet18_v1 b16 64x64", x, y),
                 harness.JIT: train.one_program_step("resnet18_v1 b16 64x64", x, y),
                 "torch": _torch_train("resnet18_v1 b16 64x64", x, y)})

    # the zoo: ours hybridized (as is, and with ast_hybrid/xla's rewrites off), the same network as one jitted
    # function, torchvision's twin
    models = ("resnet18_v1",) if dry else ("resnet18_v1", "resnet50_v1", "mobilenetv2_1.0")
    batches = (1,) if dry else (1, 16, 64)
    side = 32 if dry else 224
    for name in models:
        if name == "mobilenetv2_1.0":
            resnet18_training()
        for b in batches:
            if chk.left() < (5 if dry else 30):
                rep.cannot(f"inference: {name} b{b}", "time budget spent")
                continue
            try:
                ours, first, jitted = _zoo_contenders(mx, target, name, b, side)
                plain, first_plain, _ = _zoo_contenders(mx, target, name, b, side, REWRITES_OFF, jit=False)
            except Exception as exc:  # noqa: BLE001 - reported, the other rows still run
                rep.cannot(f"inference: {name} b{b}", f"{type(exc).__name__}: {str(exc)[:300]}")
                continue
            row("inference", f"{name} b{b} {side}x{side}",
                {harness.OURS: ours, "ours, rewrites off": plain, harness.JIT: jitted,
                 "torch": None if dry else _torch_zoo(name, b, side)},
                f"first call {first:.1f} s, {first_plain:.1f} s with the rewrites off; "
                "jax.jit: functional(net) under one jax.jit")


def _step_parts(mx, name, x, y, n):
    """Median seconds of each part of ``bench/train.py``'s step for ``name``: the network's forward under
    ``record()``, the loss, ``backward()``, ``trainer.step``, each waited for before the next."""
    import statistics

    from bench import harness, train

    env = {"mx": mx, "nd": mx.nd, "gluon": mx.gluon, "nn": mx.gluon.nn, "autograd": mx.autograd,
           "vision": mx.gluon.model_zoo.vision, "np": np, "inp": {"x": x, "y": y}}
    exec(train.NETS[name][0] + train.SETUP + "net.hybridize()\n", env)
    net, loss_fn, trainer, xs, ys = (env[k] for k in ("net", "loss_fn", "trainer", "x", "y"))
    times = {"forward": [], "loss": [], "backward": [], "trainer.step": []}
    for i in range(n + 3):
        t0 = time.perf_counter()
        with mx.autograd.record():
            out = net(xs)
            harness.ready(out)
            t1 = time.perf_counter()
            loss = loss_fn(out, ys)
            harness.ready(loss)
        t2 = time.perf_counter()
        loss.backward()
        harness.ready([p.grad() for p in net.collect_params().values() if p.grad_req != "null"])
        t3 = time.perf_counter()
        trainer.step(xs.shape[0])
        harness.ready([p.data() for p in net.collect_params().values()])
        t4 = time.perf_counter()
        if i >= 3:          # the first steps compile
            for k, a, b in (("forward", t0, t1), ("loss", t1, t2), ("backward", t2, t3), ("trainer.step", t3, t4)):
                times[k].append(b - a)
    return {k: statistics.median(v) for k, v in times.items()}


# ast_hybrid/xla's rewrites off: a hybridized block's predict program as jax.jit traces it
REWRITES_OFF = {"AST_HYBRID_CHANNEL_LAST": "0", "AST_HYBRID_CONV_LOWERING": "xla", "AST_HYBRID_CONV_TUNE": "off",
                "AST_HYBRID_HOIST": "off", "AST_HYBRID_WEIGHT_FIRST": "off"}


def _zoo_contenders(mx, target, name, batch, side, env=None, jit=True):
    """(ours, seconds of its first call, the same network as one jitted function or None)."""
    import jax

    from ast_hybrid import functional
    from ast_hybrid.gluon.model_zoo import vision

    nd = mx.nd
    net = vision.get_model(name)
    net.initialize(mx.init.Xavier(), ctx=target)
    x = nd.array(np.random.RandomState(0).standard_normal((batch, 3, side, side)), ctx=target)
    jitted = None
    if jit:
        apply_fn, params = functional(net, x)
        fn, xa = jax.jit(apply_fn), x._arr
        jitted = lambda: fn(params, xa)                 # noqa: E731
    net.hybridize()
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        t = time.perf_counter()
        net(x).wait_to_read()
        first = time.perf_counter() - t
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return (lambda: net(x)), first, jitted


TORCH_NETS = {"resnet18_v1": "resnet18", "resnet50_v1": "resnet50", "mobilenetv2_1.0": "mobilenet_v2"}


def _torch_zoo(name, batch, side):
    torch = _torch()
    if torch is None or not torch.cuda.is_available() or name not in TORCH_NETS:
        return None
    import torchvision

    torch.backends.cudnn.benchmark = True
    net = getattr(torchvision.models, TORCH_NETS[name])().cuda().eval()
    x = torch.randn(batch, 3, side, side, device="cuda")

    def call():
        with torch.no_grad():
            net(x)
        torch.cuda.synchronize()
        return np.zeros(1)
    return call


def _torch_train(name, x, y):
    torch = _torch()
    if torch is None or not torch.cuda.is_available():
        return None
    import torch.nn as tnn

    if name == "MLP b256":
        net = tnn.Sequential(tnn.Linear(512, 256), tnn.ReLU(), tnn.Linear(256, 128), tnn.ReLU(), tnn.Linear(128, 2))
    elif name.startswith("resnet18"):
        import torchvision

        net = torchvision.models.resnet18(num_classes=10)
    else:
        return None
    net = net.cuda().train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    xs, ys = torch.as_tensor(x).cuda(), torch.as_tensor(y).long().cuda()
    loss_fn = tnn.CrossEntropyLoss(reduction="sum")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(xs), ys)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        return np.zeros(1)
    return step


# -- main -----------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench --gpu-check", description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="run every section in miniature on the CPU")
    ap.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for the whole check")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "gpu")
    ap.add_argument("--only", nargs="+", choices=("contexts", "ops", "zoo", "control_flow", "custom_ops", "launch",
                                                  "bench"))
    args = ap.parse_args(argv)
    import jax

    try:
        gpus = len(jax.devices("gpu"))
    except RuntimeError:
        gpus = 0
    if not gpus and not args.dry_run:
        print("gpu-check: jax sees no GPU here (jax.devices(): "
              f"{jax.devices()}); run with --dry-run to check the script's wiring on the CPU", file=sys.stderr)
        return 2
    from ast_hybrid import mxnet as mx

    target = mx.gpu(0) if gpus else mx.cpu(0)
    chk = Check(args.out, args.budget, dry=not gpus)
    environment(chk, target)
    tmp = args.out / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    sections = {
        "contexts": lambda: contexts(chk, mx, target, gpus),
        "ops": lambda: operators(chk, mx, target),
        "control_flow": lambda: control_flow(chk, mx, target),
        "custom_ops": lambda: custom_ops(chk, mx, target),
        "zoo": lambda: zoo(chk, mx, target, ("resnet18_v1",) if not gpus else
                           ("resnet18_v1", "mobilenetv2_1.0"), 32 if not gpus else 224),
        "launch": lambda: launch(chk, gpus, tmp),
        "bench": lambda: bench(chk, mx, target, not gpus),
    }
    for name, section in sections.items():
        if args.only and name not in args.only:
            continue
        t = time.perf_counter()
        try:
            section()
        except Exception as exc:  # noqa: BLE001 - a section that breaks is one failed line, the rest still run
            chk.record(name, "section", False, f"{type(exc).__name__}: {exc}")
        chk.env[f"{name} seconds"] = f"{time.perf_counter() - t:.0f}"
        chk.write()
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()
    chk.write()
    failed = [r for r in chk.results if r[2] == "FAIL"]
    print(f"gpu-check: {len(chk.results)} checks, {len(failed)} failed; report in {args.out}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
