"""Convolution lowerings per shape on XLA:CPU: XLA's convolution vs im2col + dot_general vs shifted taps.

    python bench/conv_lowering.py [--quick] [--grad] [--layout NCHW|NHWC|both]
    python bench/conv_lowering.py --models [--quick] [--no-mxnet]

Each case is one convolution of the model zoo's ResNet-18 v1 / MobileNet 0.25 / MobileNet v2 0.25 (at a
224x224 and a 64x64 input, batch 1, some at batch 16) plus a few off-network shapes; every candidate
lowering of ``ast_hybrid.ops.conv_lowering`` runs under ``jax.jit``, candidates interleaved round by round,
median of the rounds, in ms per call.  Printed per case: each candidate's time, its ratio to XLA's
convolution, the fastest, what ``choose`` (the rule in use) picks and the pick's time over the fastest's.
``--grad`` times forward + backward (``jax.grad`` of the sum) instead of the forward alone.

``--models``: whole networks, MXNet 1.9.1's own model_zoo source (resnet18_v1, mobilenet0.25,
mobilenetv2_0.25) run on our front and hybridized, at batch 1 and 224x224 / 64x64, three contenders
interleaved round by round: ours with the rule ("rule"), ours with XLA's convolution everywhere
(``AST_HYBRID_CONV_LOWERING=xla``, i.e. before the rule), each in a worker process of its own (a
lowering is fixed when a block is first traced), and MXNet ``hybridize(static_alloc=True,
static_shape=True)`` with its threaded engine.  Medians of 5 rounds, ms per call; and each worker's first
call (initialize's deferred shapes, trace, compile), in seconds.
Importable: ``main(argv)`` runs it and returns the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.ops.conv_lowering import ENV, LOWERINGS, choose

# (label, batch, cin, size, cout, kernel, stride, groups); pad = kernel // 2 as in the model zoo
CASES = [
    # ResNet-18 v1 at 224: stem, stages (3x3), downsample 1x1 stride 2
    ("r18 stem 224", 1, 3, 224, 64, 7, 2, 1),
    ("r18 s1 3x3 56", 1, 64, 56, 64, 3, 1, 1),
    ("r18 s2 3x3 28", 1, 128, 28, 128, 3, 1, 1),
    ("r18 s3 3x3 14", 1, 256, 14, 256, 3, 1, 1),
    ("r18 s4 3x3 7", 1, 512, 7, 512, 3, 1, 1),
    ("r18 s4 3x3/2 14->7", 1, 256, 14, 512, 3, 2, 1),
    ("r18 ds 1x1/2 14->7", 1, 256, 14, 512, 1, 2, 1),
    # ResNet-18 v1 at 64
    ("r18 stem 64", 1, 3, 64, 64, 7, 2, 1),
    ("r18 s1 3x3 16", 1, 64, 16, 64, 3, 1, 1),
    ("r18 s2 3x3 8", 1, 128, 8, 128, 3, 1, 1),
    ("r18 s3 3x3 4", 1, 256, 4, 256, 3, 1, 1),
    ("r18 s4 3x3 2", 1, 512, 2, 512, 3, 1, 1),
    # MobileNet 0.25 (pointwise 1x1 and depthwise 3x3) at 224 and 64
    ("mb pw 112", 1, 8, 112, 16, 1, 1, 1),
    ("mb pw 56", 1, 32, 56, 32, 1, 1, 1),
    ("mb pw 28", 1, 64, 28, 64, 1, 1, 1),
    ("mb pw 14", 1, 128, 14, 128, 1, 1, 1),
    ("mb pw 7", 1, 256, 7, 256, 1, 1, 1),
    ("mb pw 32", 1, 16, 32, 32, 1, 1, 1),
    ("mb pw 4", 1, 128, 4, 128, 1, 1, 1),
    ("mb dw 112", 1, 8, 112, 8, 3, 1, 8),
    ("mb dw 56", 1, 32, 56, 32, 3, 1, 32),
    ("mb dw 28/2", 1, 64, 28, 64, 3, 2, 64),
    ("mb dw 14", 1, 128, 14, 128, 3, 1, 128),
    ("mb dw 7", 1, 256, 7, 256, 3, 1, 256),
    ("mb dw 4", 1, 128, 4, 128, 3, 1, 128),
    # MobileNet v2 0.25: expansion x6 before the depthwise
    ("mv2 dw 112 x6", 1, 48, 112, 48, 3, 2, 48),
    ("mv2 pw 56 exp", 1, 8, 56, 48, 1, 1, 1),
    ("mv2 pw 14 exp", 1, 16, 14, 96, 1, 1, 1),
    ("mv2 pw 7 proj", 1, 480, 7, 80, 1, 1, 1),
    ("mv2 last 1x1 7", 1, 80, 7, 1280, 1, 1, 1),
    # off the networks: depthwise with a channel multiplier, a few groups, batch 16
    ("dw x2 28", 1, 32, 28, 64, 3, 1, 32),
    ("grouped g4 28", 1, 64, 28, 64, 3, 1, 4),
    ("b16 r18 s1 3x3 56", 16, 64, 56, 64, 3, 1, 1),
    ("b16 r18 s4 3x3 7", 16, 512, 7, 512, 3, 1, 1),
    ("b16 r18 s3 3x3 14", 16, 256, 14, 256, 3, 1, 1),
    ("b16 mb dw 56", 16, 32, 56, 32, 3, 1, 32),
    ("b16 mb pw 7", 16, 256, 7, 256, 1, 1, 1),
]
QUICK = {"r18 s1 3x3 56", "r18 s3 3x3 14", "r18 s4 3x3 7", "r18 s4 3x3 2", "r18 stem 224", "mb pw 56",
         "mb pw 7", "mb dw 56", "mb dw 7", "dw x2 28"}


def candidates(groups, cin):
    if groups == 1:
        return ["xla", "im2col"]
    return ["xla", "taps"] if groups == cin else ["xla"]


def _program(name, stride, pad, groups, cf, grad):
    def fwd(x, w):
        return LOWERINGS[name](x, w, stride, (1, 1), pad, groups, cf)
    if not grad:
        return jax.jit(fwd)
    return jax.jit(jax.grad(lambda x, w: jnp.sum(fwd(x, w)), argnums=(0, 1)))


def _time(f, args, budget_s=0.03):
    jax.block_until_ready(f(*args))
    t = time.perf_counter()
    jax.block_until_ready(f(*args))
    once = time.perf_counter() - t
    n = max(1, min(200, int(budget_s / max(once, 1e-6))))
    t = time.perf_counter()
    for _ in range(n):
        out = f(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t) / n * 1e3


def measure(case, cf=True, grad=False, rounds=5):
    """ms per call of each candidate lowering (dict), candidates interleaved over ``rounds``."""
    _, b, cin, size, cout, k, s, g = case
    rng = np.random.default_rng(0)
    xs = (b, cin, size, size) if cf else (b, size, size, cin)
    ws = (cout, cin // g, k, k) if cf else (cout, k, k, cin // g)
    x = jnp.asarray(rng.standard_normal(xs, dtype=np.float32))
    w = jnp.asarray(rng.standard_normal(ws, dtype=np.float32))
    stride, pad = (s, s), ((k // 2, k // 2),) * 2
    progs = {n: _program(n, stride, pad, g, cf, grad) for n in candidates(g, cin)}
    times = {n: [] for n in progs}
    for _ in range(rounds):
        for n, f in progs.items():
            times[n].append(_time(f, (x, w)))
    pick = choose(xs, ws, stride, (1, 1), pad, g, cf)
    return {n: statistics.median(v) for n, v in times.items()}, pick


MODELS = [("resnet18_v1", 224), ("resnet18_v1", 64), ("mobilenet0.25", 224), ("mobilenet0.25", 64),
          ("mobilenetv2_0.25", 224), ("mobilenetv2_0.25", 64)]

MX_MODEL = """
import sys, time, types
from mxnet.gluon.model_zoo import vision
cache = sys.modules.setdefault('_conv_lowering_bench', types.ModuleType('_conv_lowering_bench')).__dict__
key = (str(inp['name']), int(inp['size']))
if key not in cache:
    net = vision.get_model(key[0])
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.array(np.random.RandomState(0).standard_normal((1, 3, key[1], key[1])).astype('float32'))
    for _ in range(3):
        net(x)
    nd.waitall()
    cache[key] = (net, x)
net, x = cache[key]
t = time.perf_counter()
for _ in range(int(inp['n'])):
    y = net(x)
nd.waitall()
meta['s'] = (time.perf_counter() - t) / int(inp['n'])
"""


def _model_zoo():
    """MXNet 1.9.1's ``mxnet.gluon.model_zoo.vision`` (its own files) over our compatibility package."""
    import importlib.abc
    import importlib.util
    from pathlib import Path

    from ast_hybrid import mxnet as compat
    from ast_hybrid.testing.corpus import gluon_tree

    root = Path(gluon_tree()).parent.parent

    class ZooFiles(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if not fullname.startswith("mxnet.gluon.model_zoo"):
                return None
            base = root.joinpath(*fullname.split("."))
            if (base / "__init__.py").exists():
                return importlib.util.spec_from_file_location(fullname, base / "__init__.py",
                                                              submodule_search_locations=[str(base)])
            return importlib.util.spec_from_file_location(fullname, base.with_suffix(".py"))

    compat.install()
    for name in [m for m in sys.modules if m.startswith("mxnet.gluon.model_zoo")]:
        del sys.modules[name]
    sys.meta_path.insert(0, ZooFiles())
    from mxnet.gluon.model_zoo import vision
    return vision


def _worker():
    """Serve ``{"name", "size", "n"}`` lines on stdin with ``{"s": seconds per call}`` (nets built once)."""
    from ast_hybrid import nd
    from ast_hybrid.gluon import finish_tuning

    vision, nets = _model_zoo(), {}
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["name"], req["size"])
        if key not in nets:
            net = vision.get_model(key[0])
            net.initialize()
            net.hybridize()
            x = nd.array(np.random.RandomState(0).standard_normal((1, 3, key[1], key[1])).astype("float32"))
            t = time.perf_counter()
            net(x).wait_to_read()
            first = time.perf_counter() - t
            finish_tuning(net)      # steady state: the tuning the first call started, ended (xla/tuning.py)
            for _ in range(2):
                net(x).wait_to_read()
            nets[key] = (net, x, first)
        net, x, first = nets[key]
        t = time.perf_counter()
        for _ in range(req["n"]):
            y = net(x)
        y.wait_to_read()
        print(json.dumps({"s": (time.perf_counter() - t) / req["n"], "first": first}), flush=True)


class _Worker:
    def __init__(self, lowering=None):
        env = dict(os.environ)
        env.pop(ENV, None)
        if lowering:
            env[ENV] = lowering
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True)
        self.first = {}

    def __call__(self, name, size, n):
        self.proc.stdin.write(json.dumps({"name": name, "size": size, "n": n}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        self.first[(name, size)] = reply["first"]
        return reply["s"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def models(quick=False, with_mxnet=True):
    """Rows (model, size, ms per contender) of the whole-network comparison (see the module doc)."""
    contenders = {"rule": _Worker(), "xla": _Worker("xla")}
    mx = None
    if with_mxnet:
        from ast_hybrid.testing.oracle import Oracle, OracleUnavailable

        try:
            mx = Oracle(as_users_run_it=True)
            contenders["mxnet"] = lambda name, size, n: mx.run(
                MX_MODEL, name=np.array(name), size=np.array(size), n=np.array(n))["meta"]["s"]
        except OracleUnavailable as exc:
            print(f"MXNet oracle unavailable, MXNet column not measured: {exc}")
    print(f"{'model':<18} {'size':>4} " + " ".join(f"{k + ' ms':>9}" for k in contenders)
          + f" {'rule/xla':>8} {'rule/mxnet':>10} {'xla/mxnet':>9} {'1st call s rule, xla':>20}")
    rows = []
    for name, size in MODELS[:2] if quick else MODELS:
        n = 10 if size == 224 else 30
        times = {k: [] for k in contenders}
        order = list(contenders)
        for r in range(3 if quick else 5):
            for k in order[r % len(order):] + order[:r % len(order)]:
                times[k].append(contenders[k](name, size, n) * 1e3)
        ms = {k: statistics.median(v) for k, v in times.items()}
        mxn = ms.get("mxnet", float("nan"))
        print(f"{name:<18} {size:>4} " + " ".join(f"{v:>9.2f}" for v in ms.values())
              + f" {ms['rule'] / ms['xla']:>8.2f} {ms['rule'] / mxn:>10.2f} {ms['xla'] / mxn:>9.2f}"
              + f" {contenders['rule'].first[(name, size)]:>14.1f} {contenders['xla'].first[(name, size)]:>5.1f}",
              flush=True)
        rows.append({"model": name, "size": size, "ms": ms})
    for k in ("rule", "xla"):
        contenders[k].close()
    if mx:
        mx.close()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="ten representative cases (models: two), 3 rounds")
    ap.add_argument("--grad", action="store_true", help="time forward + backward")
    ap.add_argument("--layout", default="NCHW", choices=("NCHW", "NHWC", "both"))
    ap.add_argument("--models", action="store_true", help="whole networks against MXNet (see the module doc)")
    ap.add_argument("--no-mxnet", action="store_true", help="--models without the MXNet column")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return _worker()
    if args.models:
        return models(args.quick, not args.no_mxnet)
    layouts = ["NCHW", "NHWC"] if args.layout == "both" else [args.layout]
    cases = [c for c in CASES if not args.quick or c[0] in QUICK]
    print(f"{'case':<20} {'lay':<4} {'xla ms':>8} {'im2col':>8} {'taps':>8} {'alt/xla':>7} "
          f"{'best':<6} {'pick':<6} {'pick/best':>9}")
    rows = []
    for case in cases:
        for lay in layouts:
            t, pick = measure(case, lay == "NCHW", args.grad, rounds=3 if args.quick else 5)
            best = min(t, key=t.get)
            alt = [n for n in t if n != "xla"]
            ratio = t[alt[0]] / t["xla"] if alt else float("nan")
            cols = " ".join(f"{t[n]:>8.3f}" if n in t else f"{'-':>8}" for n in ("xla", "im2col", "taps"))
            print(f"{case[0]:<20} {lay:<4} {cols} {ratio:>7.2f} {best:<6} {pick:<6} {t[pick] / t[best]:>9.2f}",
                  flush=True)
            rows.append({"case": case[0], "layout": lay, "ms": t, "best": best, "pick": pick})
    return rows


if __name__ == "__main__":
    main()
