"""The two sides of one model's check, each run in its own process.

``mxnet_side`` runs in the oracle's Python (real MXNet 1.9.1; this file is run as a script there, so it imports
only ``_models`` beside it): build, initialise, randomise BatchNorm statistics, run, save the parameters, the
inputs and the outputs in the work folder.  ``our_side`` runs in ours (``import mxnet`` = ``ast_hybrid.mxnet``):
build the same constructor from the same unmodified package, load MXNet's file, run op by op and hybridized,
compare.  Each writes a JSON result; an exception becomes ``cause`` (``first_cause``).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

import numpy as np

try:
    from . import _models
except ImportError:          # run as a script by MXNet's Python
    import _models

REPEATS = 3


def first_cause(exc: BaseException, tb=None) -> str:
    """``Type: message [at file:line in function]``, the innermost frame in GluonCV/GluonNLP or ast_hybrid."""
    frames = traceback.extract_tb(tb or exc.__traceback__)
    here = os.path.dirname(os.path.abspath(__file__))
    where = ""
    for f in reversed(frames):
        path = f.filename.replace(os.sep, "/")
        if os.path.dirname(os.path.abspath(f.filename)) == here:
            continue
        for root in ("ast_hybrid/", "gluoncv/", "gluonnlp/"):
            if root in path:
                where = f" [at {root}{path.rsplit(root, 1)[1]}:{f.lineno} in {f.name}]"
                break
        if where:
            break
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message[:200]}{where}"


def _timed(fn, repeats=REPEATS):
    """Best of ``repeats`` calls after a warm one; ``repeats`` 0 (``--untimed``, the tests' runs): not timed."""
    if not repeats:
        return None
    fn()                                     # warm (compiles when hybridized)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def mxnet_side(name: str, family: str, work: str, timed: bool = True) -> dict:
    import mxnet as mx
    pkgs = {"gluoncv": None, "gluonnlp": None}
    if family == "nlp":
        import gluonnlp
        pkgs["gluonnlp"] = gluonnlp
    else:
        import gluoncv
        pkgs["gluoncv"] = gluoncv
    result, cause, served = {"side": "mxnet"}, None, []
    for shape in _models.sizes(name, family):
        for kwargs in _models.keyword_sets(name, family, shape):
            mx.random.seed(0)
            served.clear()
            try:
                if family != "nlp":
                    _models.serve_base_weights(pkgs["gluoncv"], mx, work, shape, served, create=True)
                net = _models.build(name, family, mx, pkgs, kwargs)
                _models.initialize(name, net, mx)
                arrays = _models.inputs(name, shape)
                _models.call(name, family, net, mx, arrays)
                result["batchnorm"] = _models.randomise_batchnorm(net, mx)
                _models.after_first_call(name, net, mx, arrays)
                outs = _models.flatten(_models.call(name, family, net, mx, arrays))
                if not outs:
                    raise ValueError("the model returned no array")
            except Exception as exc:           # noqa: BLE001 - the next size or keyword set, else the cause
                if cause is None and "pretrained_base" not in str(exc):
                    cause = first_cause(exc)
                continue
            if shape is not None:              # conditioning: how far MXNet's own output moves for a 1e-6 change
                moved = _models.flatten(_models.call(name, family, net, mx,
                                                     {k: v * (1 + 1e-6) for k, v in arrays.items()}))
                if family == "detection":      # measured as ours is compared: near-tied rows paired
                    moved = _models.align_near_ties(moved, outs)
                result["sensitivity"] = _error(moved, outs)
            result["finite"] = all(bool(np.isfinite(o).all()) for o in outs if o.dtype.kind == "f")
            if family == "detection":          # a meaningful reference: detections kept, their scores distinct
                result["kept"], result["distinct"] = _models.detections(outs)
            net.save_parameters(os.path.join(work, "net.params"))
            np.savez(os.path.join(work, "inputs.npz"), **arrays)
            np.savez(os.path.join(work, "outputs.npz"), *outs)
            result.update(kwargs=kwargs, shape=list(shape) if shape else None, ok=True,
                          base_served=sorted(set(served)),
                          time_plain=_timed(lambda: [o.wait_to_read() for o in _nd(net, name, family, mx, arrays)],
                                            _models.repeats(family) if timed else 0))
            net.hybridize()
            try:
                result["time_hybrid"] = _timed(lambda: [o.wait_to_read() for o in _nd(net, name, family, mx, arrays)],
                                               _models.repeats(family) if timed else 0)
            except Exception as exc:           # noqa: BLE001 - MXNet's own hybridized path fails: no ratio
                result["hybrid_cause"] = first_cause(exc)
            return result
    result.update(ok=False, cause=cause or "no input size or keyword set worked")
    return result


def _nd(net, name, family, mx, arrays):
    out, stack, found = _models.call(name, family, net, mx, arrays), [], []
    stack.append(out)
    while stack:
        o = stack.pop()
        if hasattr(o, "wait_to_read"):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
    return found


def our_side(name: str, family: str, work: str, mx_result: dict, stand_ins: bool, timed: bool = True) -> dict:
    result = {"side": "ours", "built": False, "plain": False, "hybrid": False}
    try:
        from ._import import import_packages
        pkgs, result["stand_ins"] = import_packages(family, stand_ins)
        import mxnet as mx
        if family != "nlp":
            _models.serve_base_weights(pkgs["gluoncv"], mx, work, mx_result["shape"], [], create=False)
        net = _models.build(name, family, mx, pkgs, mx_result["kwargs"])
        net.load_parameters(os.path.join(work, "net.params"))
        result["built"] = True
        with np.load(os.path.join(work, "inputs.npz")) as f:
            arrays = {k: f[k] for k in f.files}
        with np.load(os.path.join(work, "outputs.npz")) as f:
            ref = [f["arr_%d" % i] for i in range(len(f.files))]
        for mode in ("plain", "hybrid"):
            if mode == "hybrid":
                net.hybridize()
            got = _models.flatten(_models.call(name, family, net, mx, arrays))
            if family == "detection":       # near-tied scores may come in either order (align_near_ties)
                got = _models.align_near_ties(got, ref)
            result[f"error_{mode}"] = error = _error(got, ref)
            result[mode] = error <= 1e-4
            if not result[mode] and "cause" not in result:
                result["cause"] = f"{mode} output differs: {error:.2e} of its scale"
            result[f"time_{mode}"] = _timed(lambda: [o.wait_to_read() for o in _nd(net, name, family, mx, arrays)],
                                            _models.repeats(family) if timed else 0)
    except Exception as exc:                   # noqa: BLE001 - reported as the first cause
        result["cause"] = first_cause(exc)
    return result


def _error(got: list, ref: list) -> float:
    """Worst |ours - MXNet| over every output array, relative to that array's scale (inf: shapes differ)."""
    if len(got) != len(ref):
        return float("inf")
    worst = 0.0
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return float("inf")
        scale = max(float(np.abs(r.astype("float64")).max()) if r.size else 0.0, 1e-12)
        diff = np.abs(g.astype("float64") - r.astype("float64"))
        if r.size and not np.isfinite(diff).all():
            return float("inf")
        worst = max(worst, float(diff.max()) / scale if r.size else 0.0)
    return worst


def main(argv) -> int:
    side, name, family, work = argv[:4]
    timed = "--untimed" not in argv[4:]
    if side == "mxnet":
        result = mxnet_side(name, family, work, timed)
    else:
        with open(os.path.join(work, "mxnet.json")) as f:
            result = our_side(name, family, work, json.load(f), "--stand-ins" in argv[4:], timed)
    with open(os.path.join(work, f"{side}.json"), "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
