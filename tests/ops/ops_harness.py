"""Differential testing of ops: the SAME code text runs in MXNet 1.9.1 (the oracle) and here.

A case is ``(id, code)``: an expression, or statements that set ``res``.  It
sees ``nd``, ``autograd``, ``np`` and the input arrays as NDArrays (their
dtype kept).  All cases of a module go to the oracle in ONE ``oracle.run``
(a subprocess round trip each); :func:`check` then runs a case here and
compares: MXNet raised -> we must raise; else the same number of outputs,
shapes, dtypes and values (exact for integers, a tolerance per float dtype).
"""

from __future__ import annotations

import numpy as np

from ast_hybrid import autograd, nd

RUNNER = r'''
import os, pickle
from mxnet import autograd
env0 = {"nd": nd, "mx": mx, "np": np, "autograd": autograd}
arrays = {k: v for k, v in inp.items() if not k.startswith("case:")}
def _norm(v):
    if isinstance(v, (list, tuple)):
        return [_norm(x)[0] for x in v]
    if hasattr(v, "asnumpy"):
        return [v.asnumpy()]
    return [np.asarray(v)]
def _one(code, cid):
    env = dict(env0)    # fresh NDArrays per case: some MXNet ops write into their inputs
    env.update({k: nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    try:
        try:
            res = eval(compile(code, cid, "eval"), env)
        except SyntaxError:
            exec(compile(code, cid, "exec"), env)
            res = env["res"]
        return ["ok", _norm(res)]
    except Exception as exc:
        return ["error", type(exc).__name__ + ": " + str(exc).split("\n")[0][:300]]
for key in sorted(k for k in inp if k.startswith("case:")):
    cid = key[5:]
    # each case in a forked child: MXNet's error paths can corrupt its heap, which must not reach other cases
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        data = pickle.dumps(_one(str(inp[key]), cid))
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    status, value = pickle.loads(data) if data else ["crash", "MXNet's process died running this case"]
    if status == "ok":
        meta[cid] = ["ok", [str(o.dtype) for o in value]]
        for i, o in enumerate(value):
            out[cid + "/" + str(i)] = o
    else:
        meta[cid] = [status, value]
'''

TOL = {"float16": (2e-2, 2e-3), "float32": (2e-5, 2e-6), "float64": (1e-7, 1e-9)}


def mx_results(oracle, cases, arrays):
    """Run every case in MXNet at once: {id: ("ok", [numpy outputs]) or ("error", message)}.

    The cases run in a fresh MXNet process (``oracle`` only proves one can be had), each case in a forked
    child of it: some of MXNet's error paths corrupt its heap, and that must not reach other cases.  A case
    whose child dies gets ``("crash", ...)``, which fails its test (such a case must leave the list).  Should
    the process itself die, the cases are split in halves, each in a new process."""
    import threading

    box = {}

    def run():
        try:
            box["ok"] = _run_fresh(cases, arrays)
        except EOFError as exc:
            box["eof"] = exc

    worker = threading.Thread(target=run)     # MXNet works in its own process meanwhile
    worker.start()
    for cid, _ in cases:                      # ... while our side of every case runs here (and is cached)
        try:
            cached(cid, arrays)
        except Exception:    # noqa: BLE001 - replayed by check()
            pass
    worker.join()
    if "ok" in box:
        return box["ok"]
    try:
        return _run_fresh(cases, arrays)
    except EOFError:
        if len(cases) == 1:
            return {cases[0][0]: ("crash", "MXNet's process died running this case alone")}
        half = len(cases) // 2
        return {**mx_results(oracle, cases[:half], arrays), **mx_results(oracle, cases[half:], arrays)}


def _run_fresh(cases, arrays):
    from ast_hybrid.testing.oracle import Oracle

    inputs = dict(arrays)
    inputs.update({f"case:{cid}": np.array(code) for cid, code in cases})
    with Oracle() as fresh:
        raw = fresh.run(RUNNER, **inputs)
    meta = raw.get("meta", {})
    results = {}
    for cid, _ in cases:
        status, info = meta[cid]
        if status == "ok":
            results[cid] = ("ok", [raw[f"{cid}/{i}"] for i in range(len(info))])
        else:
            results[cid] = (status, info)
    return results


def _ours(code, arrays, env=None):
    """Run a case here; ``env`` gives the inputs as NDArrays already (e.g. tracers)."""
    env = dict(env or {}, nd=nd, np=np, autograd=autograd)
    env.update({k: nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    try:
        return eval(compile(code, "<case>", "eval"), env)
    except SyntaxError:
        exec(compile(code, "<case>", "exec"), env)
        return env["res"]


_CACHE: dict = {}


def cached(code, arrays):
    """``_norm(_ours(code, arrays))``, remembered for the session (the traced test reuses the oracle tests' runs)."""
    key = (code, id(arrays))
    if key not in _CACHE:
        try:
            _CACHE[key] = ("ok", _norm(_ours(code, arrays)))
        except Exception as exc:    # noqa: BLE001 - replayed to every caller
            _CACHE[key] = ("raised", exc)
    status, value = _CACHE[key]
    if status == "raised":
        raise value
    return value


def _norm(v):
    if isinstance(v, (list, tuple)):
        return [_norm(x)[0] for x in v]
    if isinstance(v, nd.NDArray):
        return [v.asnumpy()]
    return [np.asarray(v)]


def check(ref, code, arrays, tol=None):
    """Run ``code`` here and compare with MXNet's ``ref`` (see the module doc)."""
    status, value = ref
    assert status != "crash", f"{value}; remove the case: {code}"
    if status == "error":
        try:
            got = cached(code, arrays)
        except Exception:
            return
        raise AssertionError(f"MXNet raises ({value}) but we returned {got}\n  code: {code}")
    outs = cached(code, arrays)
    assert len(outs) == len(value), f"{len(outs)} outputs, MXNet {len(value)}\n  code: {code}"
    for i, (o, r) in enumerate(zip(outs, value)):
        where = f"output {i} of: {code}"
        assert o.shape == r.shape, f"shape {o.shape}, MXNet {r.shape}; {where}"
        assert o.dtype == r.dtype, f"dtype {o.dtype}, MXNet {r.dtype}; {where}"
        if r.dtype.kind in "iubUS":
            np.testing.assert_array_equal(o, r, err_msg=where)
        else:
            rtol, atol = tol or TOL.get(r.dtype.name, (1e-5, 1e-6))
            np.testing.assert_allclose(o, r, rtol=rtol, atol=atol, err_msg=where)


def inputs(seed=0, **specs):
    """Random arrays: ``name=(shape, dtype)`` or ``name=(shape, dtype, low, high)``."""
    g = np.random.default_rng(seed)
    out = {}
    for name, spec in specs.items():
        shape, dtype = spec[0], np.dtype(spec[1])
        low, high = (spec[2], spec[3]) if len(spec) > 2 else ((-5, 6) if dtype.kind in "iu" else (-2.0, 2.0))
        if dtype.kind in "iu":
            out[name] = g.integers(low, high, shape).astype(dtype)
        else:
            out[name] = g.uniform(low, high, shape).astype(dtype)
    return out
