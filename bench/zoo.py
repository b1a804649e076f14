"""The vision model zoo: ours hybridized vs MXNet 1.9.1 static_alloc, per model and batch; first-call costs.

    python -m bench.zoo [--quick] [--models NAME ...] [--no-mxnet]     (python -m bench runs it with the rest)

Both run the same file, MXNet 1.9.1's own ``gluon/model_zoo`` source (``vision.get_model(name)``): in MXNet
in its oracle process, here over ``ast_hybrid.mxnet`` (the compatibility package).  MXNet initialises the
network and saves its parameters, we load them (so neither side pays a deferred-shape pass and both compute
the same numbers); MXNet runs ``hybridize(static_alloc=True, static_shape=True)`` as a user runs it (its
threaded engine, OpenMP on every core) and times itself in its process, in rounds interleaved with ours
(``bench/harness.py``).  Milliseconds per call, medians.

First calls: ours is timed on a cache this run made empty (trace + XLA compile); then, for one model, a
second process runs it again on that cache and the ratio of its first call to a steady-state call is reported
(target <= 3x): it reads the program this run wrote (``xla/program_cache.py``: no conversion, trace,
lowering or compile), or, where the program is not cached, JAX's compiled program (``xla/compile_cache.py``).
``python -m bench.first_call --second-process`` measures that case on its own, with and without the program
cache, in interleaved runs.

ONNX Runtime (``onnxruntime`` column): what a user leaving MXNet would otherwise pick for CPU inference.  In
the oracle's process, MXNet 1.9.1 exports its hybridized network (``net.export``) and converts it with its own
``mx.onnx.export_model`` (onnx 1.14.1, protobuf 3; ``oracle.ensure_onnx_pkgs()`` installs them and ONNX
Runtime 1.19.2 into ``.venv-mxnet/onnx-pkgs``); the initialisers are taken out of the graph's inputs (what
ONNX Runtime's ``remove_initializer_from_input`` tool does, so it may fold constants) and ONNX Runtime runs
it with its defaults (``CPUExecutionProvider``, every core, all graph optimisations), timed in that process
in the same interleaved rounds.  Its output is checked against MXNet's before it is timed.  ``--no-onnx``
leaves it out; a model the exporter cannot convert is reported as not run, with MXNet's error.
"""

from __future__ import annotations

import atexit
import argparse
import importlib.abc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench import harness
from bench.first_call import until_tuned

ROOT = Path(__file__).resolve().parents[1]
# name -> input side (the networks whose last pooling has a fixed window need 224, inceptionv3 299)
FULL = {"resnet18_v1": 224, "resnet18_v2": 224, "resnet50_v1": 224, "mobilenet1.0": 224, "mobilenetv2_1.0": 224,
        "densenet121": 224, "squeezenet1.1": 224, "inceptionv3": 299, "vgg11": 224, "alexnet": 224}
QUICK = {"resnet18_v1": 64, "mobilenet1.0": 64}
# and at batch 1 on a small input, the networks that take one (the others' last pooling or Dense fixes the size)
SMALL = {"resnet18_v1": 64, "resnet18_v2": 64, "resnet50_v1": 64, "mobilenet1.0": 64, "mobilenetv2_1.0": 64}
SECOND_PROCESS = {False: "resnet50_v1", True: "resnet18_v1"}     # --quick: the small one

MX_SETUP = """
import time
from mxnet.gluon.model_zoo import vision
net = vision.get_model(inp_name, classes=1000)
net.initialize(mx.init.Xavier())
x = nd.array(inp['x'])
net(x)
net.save_parameters(inp_path)
net.hybridize(static_alloc=True, static_shape=True)
t = time.perf_counter()
net(x).wait_to_read()
meta['first_s'] = time.perf_counter() - t
mx._bench = net, x
"""

MX_TIME = """
import time
net, x = mx._bench
n = int(inp['n'])
w, t = float(inp['warm']), time.perf_counter()
while True:                        # untimed calls for harness.WARM_S, as ours
    net(x).wait_to_read()
    if time.perf_counter() - t >= w: break
t = time.perf_counter()
for _ in range(n): y = net(x)
nd.waitall()
meta['s'] = (time.perf_counter() - t) / n
"""


MX_ONNX = """
import importlib, os, shutil, sys, tempfile, time
if inp_folder not in sys.path:
    sys.path.insert(0, inp_folder)
    # mxnet.onnx's converters were imported with mxnet, before onnx was importable: register them again
    from mxnet.onnx.mx2onnx._op_translations import _op_translations_opset12, _op_translations_opset13
    importlib.reload(_op_translations_opset12)
    importlib.reload(_op_translations_opset13)
import onnx, onnxruntime as ort
net, x = mx._bench
d = tempfile.mkdtemp(prefix='ast_hybrid_bench_onnx_')
net.export(os.path.join(d, 'm'))
f = mx.onnx.export_model(os.path.join(d, 'm-symbol.json'), os.path.join(d, 'm-0000.params'),
                         [x.shape], [np.float32], os.path.join(d, 'm.onnx'))
model = onnx.load(f)
inits = {i.name for i in model.graph.initializer}
keep = [i for i in model.graph.input if i.name not in inits]
del model.graph.input[:]
model.graph.input.extend(keep)
onnx.save(model, f)
opts = ort.SessionOptions()
opts.log_severity_level = 3
feed_x = x.asnumpy()
t = time.perf_counter()             # its first call: the session (graph optimisation) and one run
s = ort.InferenceSession(f, opts, providers=['CPUExecutionProvider'])
feed = {s.get_inputs()[0].name: feed_x}
y = s.run(None, feed)[0]
meta['first_s'] = time.perf_counter() - t
shutil.rmtree(d, ignore_errors=True)   # the session holds the model: ~1 GB per run left in /tmp otherwise
want = net(x).asnumpy()
meta['err'] = float(np.abs(y - want).max() / max(np.abs(want).max(), 1e-30))
mx._ort = s, feed
"""

ORT_TIME = """
import time
s, feed = mx._ort
n = int(inp['n'])
w, t = float(inp['warm']), time.perf_counter()
while True:                        # untimed calls for harness.WARM_S, as ours
    s.run(None, feed)
    if time.perf_counter() - t >= w: break
t = time.perf_counter()
for _ in range(n): s.run(None, feed)
meta['s'] = (time.perf_counter() - t) / n
"""


def onnx_folder(report, wanted: bool):
    """The folder of onnx + ONNX Runtime for the oracle's python (installed on first use), or None."""
    if not wanted:
        report.cannot("ONNX Runtime columns", "--no-onnx")
        return None
    from ast_hybrid.testing.oracle import OracleUnavailable, ensure_onnx_pkgs

    try:
        return str(ensure_onnx_pkgs())
    except OracleUnavailable as exc:
        report.cannot("ONNX Runtime columns", str(exc).splitlines()[0])
        return None


def ort_contender(report, mx, folder, case):
    """Export the oracle's current network to ONNX and time it in ONNX Runtime; None if that fails."""
    try:
        meta = mx.run(MX_ONNX.replace("inp_folder", repr(folder)))["meta"]
    except Exception as exc:        # the exporter's own refusal (an op it cannot convert), named in the report
        report.cannot(f"ONNX Runtime, {case}", f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}")
        return None, None
    if meta["err"] > 1e-3:
        report.cannot(f"ONNX Runtime, {case}", f"its output differs from MXNet's by {meta['err']:.1e} of the scale")
        return None, None
    return harness.remote(mx, ORT_TIME), meta["first_s"]


def vision():
    """``mxnet.gluon.model_zoo.vision`` of MXNet 1.9.1's own source (the oracle's wheel), over ast-hybrid's
    compatibility package: copied into a temporary ``mxnet/`` tree found first for ``mxnet.gluon.model_zoo``."""
    from ast_hybrid import mxnet as compat
    from ast_hybrid.testing.corpus import gluon_tree

    root = Path(tempfile.mkdtemp(prefix="ast_hybrid_bench_zoo_"))
    atexit.register(shutil.rmtree, root, True)        # imported lazily: kept until the process ends
    shutil.copytree(Path(gluon_tree()) / "model_zoo", root / "mxnet" / "gluon" / "model_zoo",
                    ignore=shutil.ignore_patterns("__pycache__"))

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            base = root.joinpath(*fullname.split("."))
            if not fullname.startswith("mxnet.gluon.model_zoo"):
                return None
            if (base / "__init__.py").exists():
                return importlib.util.spec_from_file_location(fullname, base / "__init__.py",
                                                              submodule_search_locations=[str(base)])
            return importlib.util.spec_from_file_location(fullname, base.with_suffix(".py"))

    compat.install()
    sys.meta_path.insert(0, Finder())
    from mxnet.gluon.model_zoo import vision as v

    return v


def _input(batch, side):
    return np.random.default_rng(0).uniform(-1, 1, (batch, 3, side, side)).astype("float32")


def scenario(report, mx=None, quick=False, models=None, calls=None, onnx=None):
    """Every model at batch 1 and 16, and at batch 1 on a 64x64 input where it takes one (``SMALL``;
    ``--quick``: two small ones at batch 1 and 4): ours vs MXNet (and ONNX
    Runtime on MXNet's export, ``onnx``: its packages' folder), then the first call in a second process."""
    with tempfile.TemporaryDirectory(prefix="ast_hybrid_bench_params_") as folder:
        _models(report, mx, quick, models or (QUICK if quick else FULL), calls, onnx, Path(folder))


def _models(report, mx, quick, models, calls, onnx, folder):
    from ast_hybrid import nd

    batches = (1, 4) if quick else (1, 16)
    v = vision()
    params = {}
    for name, side in models.items():
        path = str(folder / f"{name}.params")
        net = None
        small = [(1, SMALL[name])] if not quick and SMALL.get(name, side) != side else []
        for b, s in [(b, side) for b in batches] + small:
            x = _input(b, s)
            contenders = {}
            first = {}
            if mx is not None:
                meta = mx.run(MX_SETUP.replace("inp_name", repr(name)).replace("inp_path", repr(path)), x=x)["meta"]
                first[harness.MXNET] = meta["first_s"] * 1e3
                contenders[harness.MXNET] = harness.remote(mx, MX_TIME)
                if onnx:
                    timer, first_s = ort_contender(report, mx, onnx, f"{name} b{b} {s}x{s}")
                    if timer:
                        contenders[harness.ORT], first[harness.ORT] = timer, first_s * 1e3
            if net is None:
                net = v.get_model(name, classes=1000)
                if os.path.exists(path):
                    net.load_parameters(path)
                else:       # no MXNet: our own initialisation (a deferred-shape pass, op by op, untimed)
                    net.initialize()
                    net(nd.array(_input(1, side)))
                    net.save_parameters(path)
                net.hybridize()
                params[name] = path, net.prefix
            xn = nd.array(x)
            first[harness.OURS] = harness.once(net, xn) * 1e3
            until_tuned(net, xn)    # steady state: after the tuning the first call started (xla/tuning.py)
            contenders[harness.OURS] = harness.local(net, xn, warmup=1)
            n = calls or (3 if b == 1 else 1) * (1 if quick else 2) * (3 if s < 150 else 1)
            t = harness.interleave(contenders, n, rounds=3 if quick else 5)
            report.add("model zoo (MXNet's source)", f"{name} b{b} {s}x{s}", "ms",
                       {k: v * 1e3 for k, v in t.items()})
            report.add("first call (trace + compile)", f"{name} b{b} {s}x{s}, empty cache", "ms", first)
    name = SECOND_PROCESS[quick]
    if name in params:
        second_process(report, name, models[name], *params[name])
    else:
        report.cannot(f"second-process first call of {name}", "the model was not in this run (--models)")


def second_process(report, name, side, params, prefix):
    """``name`` at batch 1 in a new process on this run's compile cache: its first call against a
    steady-state call."""
    # the same prefix as here: parameter names are part of the program cache's key
    out = subprocess.run([sys.executable, "-m", "bench.zoo", "--child", name, str(side), params, prefix], cwd=ROOT,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode:
        report.cannot(f"second-process first call of {name}", out.stderr.strip().splitlines()[-1])
        return
    got = json.loads(out.stdout.strip().splitlines()[-1])
    row = report.add("first call, second process (compile cache)", f"{name} b1 {side}x{side}", "ms",
                     {"first call": got["first_s"] * 1e3, "steady call": got["steady_s"] * 1e3,
                      "of which trace+lower": got["trace_s"] * 1e3, "of which compile/load": got["compile_s"] * 1e3},
                     note=f"first/steady {got['first_s'] / got['steady_s']:.1f}x (target <= 3x); programs read "
                          f"from the program cache {got['programs']}; JAX's cache: hits {got['hits']}, programs "
                          f"compiled and written {got['writes']}")
    row.ratios["first/steady"] = got["first_s"] / got["steady_s"]


def _child(name, side, params, prefix):
    """In the second process: load, hybridize, time the first call (with JAX's own account of tracing,
    lowering and compiling, and the programs read from the program cache) and the median of 5 later calls."""
    from jax import monitoring

    events, secs = [], {}
    monitoring.register_event_listener(lambda e, **kw: events.append(e))
    monitoring.register_event_duration_secs_listener(lambda e, s, **kw: secs.__setitem__(e, secs.get(e, 0) + s))
    from ast_hybrid import nd
    from ast_hybrid.xla import program_cache

    net = vision().get_model(name, classes=1000, prefix=prefix)
    net.load_parameters(params)
    net.hybridize()
    x = nd.array(_input(1, side))
    secs.clear()
    first = harness.once(net, x)
    trace = sum(v for k, v in secs.items() if k.endswith(("jaxpr_trace_duration", "jaxpr_to_mlir_module_duration")))
    steady = []
    for _ in range(5):
        steady.append(harness.once(net, x))
    count = lambda e: sum(n == "/jax/compilation_cache/" + e for n in events)      # noqa: E731
    print(json.dumps({"first_s": first, "steady_s": sorted(steady)[2], "trace_s": trace,
                      "compile_s": secs.get("/jax/core/compile/backend_compile_duration", 0.0),
                      "hits": count("cache_hits"), "writes": count("cache_misses"),
                      "programs": program_cache.STATS["hits"]}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--calls", type=int)
    ap.add_argument("--no-mxnet", action="store_true")
    ap.add_argument("--no-onnx", action="store_true", help="leave ONNX Runtime (on MXNet's export) out")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child[0], int(args.child[1]), *args.child[2:])
    fresh_compile_cache()
    report = harness.Report()
    models = {m: {**FULL, **QUICK}.get(m, 224) if args.quick else FULL.get(m, 224) for m in args.models or ()}
    with harness.mxnet_oracle(not args.no_mxnet, report) as mx:
        onnx = onnx_folder(report, mx is not None and not args.no_onnx)
        scenario(report, mx, args.quick, models or None, args.calls, onnx)


def fresh_compile_cache():
    """Point this process (and the processes it starts) at an empty compile cache, so that first calls are
    timed compiling; the folder is removed at exit."""
    import atexit

    folder = tempfile.mkdtemp(prefix="ast_hybrid_bench_cache_")
    os.environ["AST_HYBRID_COMPILE_CACHE_DIR"] = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


if __name__ == "__main__":
    main()
