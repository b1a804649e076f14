"""Deploy: the model zoo's CPU inference three ways, per model and batch.

    python -m bench.deploy [--quick] [--models NAME ...] [--no-mxnet]    (python -m bench runs it with the rest)

- ``ours``: the hybridized network here (XLA);
- ``ours-onnx``: our ONNX export of it (``HybridBlock.export(path, format='onnx')``) in ONNX Runtime;
- ``onnxruntime``: MXNet 1.9.1's own ONNX export (``mx.onnx.export_model`` on MXNet's ``export()`` files, in the
  oracle's process with onnx 1.14.1) in the same ONNX Runtime, here (its initialisers taken out of the graph's
  inputs, as ONNX Runtime's ``remove_initializer_from_input`` tool does, so it may fold them).

Both ONNX files run in this process's ONNX Runtime with its defaults (``CPUExecutionProvider``, every core, all
graph optimisations): the comparison is of the two files, not of two runtimes.  MXNet initialises the network
and saves its parameters, we load them: all three compute the same numbers, checked (1e-4 of the output's scale)
before anything is timed.  Milliseconds per call, medians of interleaved rounds (``bench/harness.py``); the
``ours-onnx/onnxruntime`` column is the issue's target (at most 1).  Without MXNet: ours and ours-onnx only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from bench import harness
from bench.first_call import until_tuned
from bench.zoo import FULL, QUICK, _input, onnx_folder, vision

OURS_ONNX = "ours-onnx"

MX_EXPORT = """
import importlib, sys
if inp_folder not in sys.path:
    sys.path.insert(0, inp_folder)
    # mxnet.onnx's converters were imported with mxnet, before onnx was importable: register them again
    from mxnet.onnx.mx2onnx._op_translations import _op_translations_opset12, _op_translations_opset13
    importlib.reload(_op_translations_opset12)
    importlib.reload(_op_translations_opset13)
from mxnet.gluon.model_zoo import vision
net = vision.get_model(inp_name, classes=1000)
net.initialize(mx.init.Xavier())
x = nd.array(inp['x'])
net(x)
net.save_parameters(inp_path + '.params')
net.hybridize()
out['y'] = net(x).asnumpy()
net.export(inp_path)
mx.onnx.export_model(inp_path + '-symbol.json', inp_path + '-0000.params', [x.shape], [np.float32],
                     inp_path + '-mxnet.onnx')
"""


def session(path):
    import onnx
    import onnxruntime as ort

    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    if any(i.name in inits for i in model.graph.input):
        keep = [i for i in model.graph.input if i.name not in inits]
        del model.graph.input[:]
        model.graph.input.extend(keep)
        onnx.save(model, path)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def ort_timer(s, x):
    feed = {s.get_inputs()[0].name: x}

    def time_it(n):
        import time

        t = time.perf_counter()
        while time.perf_counter() - t < harness.WARM_S:
            s.run(None, feed)
        t = time.perf_counter()
        for _ in range(n):
            s.run(None, feed)
        return (time.perf_counter() - t) / n

    return time_it, s.run(None, feed)[0]


def scenario(report, mx=None, quick=False, models=None, calls=None):
    folder = onnx_folder(report, mx is not None)
    with tempfile.TemporaryDirectory(prefix="ast_hybrid_bench_deploy_") as d:
        _models(report, mx if folder else None, folder, quick, models or (QUICK if quick else FULL), calls, Path(d))


def _models(report, mx, folder, quick, models, calls, d):
    from ast_hybrid import nd

    v = vision()
    for name, side in models.items():
        for b in (1, 4) if quick else (1, 16):
            x = _input(b, side)
            stem = str(d / f"{name}_b{b}")
            net = v.get_model(name, classes=1000)
            contenders, want = {}, None
            if mx is not None:
                try:
                    want = mx.run(MX_EXPORT.replace("inp_folder", repr(folder)).replace("inp_name", repr(name))
                                  .replace("inp_path", repr(stem)), x=x)["y"]
                    net.load_parameters(stem + ".params")
                    timer, got = ort_timer(session(stem + "-mxnet.onnx"), x)
                    if _close(got, want):
                        contenders[harness.ORT] = timer
                    else:
                        report.cannot(f"MXNet's ONNX export, {name} b{b}", "its output differs from MXNet's")
                except Exception as exc:  # noqa: BLE001 - MXNet's exporter or its file failing is a finding
                    report.cannot(f"MXNet's ONNX export, {name} b{b}", f"{type(exc).__name__}: "
                                  f"{str(exc).strip().splitlines()[-1][:200]}")
            if want is None:
                net.initialize()
            net.hybridize()
            xn = nd.array(x)
            ours = net(xn).asnumpy()
            if want is not None and not _close(ours, want):
                report.cannot(f"deploy {name} b{b}", "our output differs from MXNet's")
                continue
            timer, got = ort_timer(session(net.export(stem + "-ours", format="onnx")), x)
            if not _close(got, ours):
                report.cannot(f"our ONNX export, {name} b{b}", "ONNX Runtime's output differs from ours")
                continue
            contenders[OURS_ONNX] = timer
            until_tuned(net, xn)    # steady state: after the tuning the first call started (xla/tuning.py)
            contenders[harness.OURS] = harness.local(net, xn, warmup=1)
            n = calls or (3 if b == 1 else 1) * (1 if quick else 2)
            t = harness.interleave(contenders, n, rounds=3 if quick else 5)
            row = report.add("deploy (CPU inference)", f"{name} b{b} {side}x{side}", "ms",
                             {k: v * 1e3 for k, v in t.items()})
            if harness.ORT in t:
                row.ratios[f"{OURS_ONNX}/{harness.ORT}"] = t[OURS_ONNX] / t[harness.ORT]
                print(f"    {OURS_ONNX}/{harness.ORT} {row.ratios[f'{OURS_ONNX}/{harness.ORT}']:.2f}", flush=True)
            for f in Path(d).glob(f"{name}_b{b}*"):
                os.remove(f)


def _close(got, want):
    return got.shape == want.shape and float(np.abs(got - want).max()) <= 1e-4 * max(float(np.abs(want).max()), 1e-30)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--calls", type=int)
    ap.add_argument("--no-mxnet", action="store_true")
    args = ap.parse_args(argv)
    report = harness.Report()
    models = {m: {**FULL, **QUICK}.get(m, 224) if args.quick else FULL.get(m, 224) for m in args.models or ()}
    with harness.mxnet_oracle(not args.no_mxnet, report) as mx:
        scenario(report, mx, args.quick, models or None, args.calls)
    print(report.markdown())


if __name__ == "__main__":
    main()
