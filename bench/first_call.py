"""A model-zoo network's first call as a user makes it: built, ``initialize()``d (deferred shapes), hybridized.

    python -m bench.first_call [--models NAME ...] [--side 224] [--against PATH ...] [--plain]

Each case runs in a fresh process on an empty compile cache of its own: ``net = vision.get_model(name);
net.initialize(); net.hybridize(); net(x)`` (``--plain``: without ``hybridize()``), timing the first call
and splitting it into the deferred-shape pass (everything before the hybridized program is built) and the
build (trace, lowering, XLA compile, first run), then the median of 3 later calls.  ``--against PATH``
runs the same cases with another copy of the package first on ``sys.path`` (e.g. ``git archive HEAD`` of an
older commit unpacked there), interleaved with this one, so a before/after comparison comes from one run
on this noisy machine.  Prints one JSON line per case and a Markdown table.

    python -m bench.first_call --split [--models NAME ...] [--side 224]

Where the first call goes: JAX's own events (``jax.monitoring``: tracing, lowering to MLIR, XLA's compile,
summed over every program compiled on the way, the per-shape timing trials' included) and the rest (ours),
the same network next to it as one plain ``jax.jit`` program (channel-last, convolution timing, hoisting,
weight-first off), each in a fresh process on an empty cache; issue 31's target is the first call at most
1.3x the plain program's trace + lowering + compile.  "Tuned after": the calls (and their seconds) until the
tuning the first call started ends (``xla/tuning.py``: driven by the calls alone); "steady" is timed after it.

    python -m bench.first_call --second-process [--models resnet50_v1:224 resnet18_v1:64] [--runs 3]

The first call in a second process, parameters loaded (``xla/program_cache.py``, target <= 3x a steady
call): per model, a process on an empty cache folder initialises the network, saves its parameters and runs
it hybridized (filling JAX's compile cache and the program cache), and a second one loads them and does the
same (the program keyed by loaded parameters); then, ``--runs`` times, interleaved, a new process per model
and setting loads the parameters, hybridizes and times its first call and the median of 5 later calls: with
the program cache, and with ``AST_HYBRID_PROGRAM_CACHE=0`` (JAX's compile cache only: tracing and lowering
again).  Each row has the load average when it ran and, with the cache, where the first call went (the key,
reading and loading the executable, the rest: the call itself and dispatch).  ``--package PATH`` runs the
children on another copy of the package (e.g. a ``git archive`` of this tree: the program cache keys
ast-hybrid's source, which other work on this checkout may change between two processes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("resnet18_v1", "resnet50_v1", "mobilenet1.0")
SECOND = ("resnet50_v1:224", "resnet18_v1:64")     # --second-process: issue 15's case, and a small one


def _use_package(root):
    """Import ``ast_hybrid`` (and ``passes``) from ``root`` instead of the installed (editable) copy, whose
    finder would otherwise come first."""
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                        and "editable" not in getattr(f, "__name__", "").lower()]
    sys.path.insert(0, root)


def _pending(net):
    """Whether a program of ``net`` is still being tuned (xla/tuning.py; False on a tree without it)."""
    c = getattr(net, "_compiled", None)
    seen, todo = 0, [getattr(c, "predict", None)]
    while todo:
        p = todo.pop()
        if p is None or seen > 100:
            continue
        seen += 1
        if getattr(p, "pending", False):
            return True
        todo.extend(getattr(p, "table", {}).values())
        todo.append(getattr(p, "jitted", None))
    return False


def until_tuned(net, x, limit_s=300.0):
    """Call ``net(x)`` until its programs' tuning ends (the calls alone drive it): (calls, seconds)."""
    t, calls = time.perf_counter(), 0
    while _pending(net) and time.perf_counter() - t < limit_s:
        net(x).wait_to_read()
        calls += 1
    return calls, time.perf_counter() - t


def _child(name, side, hybridize):
    if os.environ.get("AH_FIRST_CALL_PACKAGE"):
        _use_package(os.environ["AH_FIRST_CALL_PACKAGE"])
    import numpy as np

    from ast_hybrid import nd
    from ast_hybrid.gluon import block
    from bench.zoo import vision

    marks = {}
    events = {}         # JAX's own compile events, summed: (phase, event) -> [seconds, count]
    try:
        import jax.monitoring

        def listen(event, seconds, **_):
            if event.startswith("/jax/core/compile/") and "end" not in marks:    # not the tuning's after it
                got = events.setdefault(("build" if "build" in marks else "before", event.rsplit("/", 1)[-1]),
                                        [0.0, 0])
                got[0] += seconds
                got[1] += 1

        jax.monitoring.register_event_duration_secs_listener(listen)
    except (ImportError, AttributeError):      # an older JAX: the first call unsplit
        pass
    attr = "Compiled" if hasattr(block, "Compiled") else "_Compiled"    # a tree before gluon/programs.py: _Compiled
    built = getattr(block, attr)

    class Timed(built):
        def __init__(self, block, *a, **k):
            if block is net:        # the network's own program (an older pass built one per nested block)
                marks.setdefault("build", time.perf_counter())
            super().__init__(block, *a, **k)

    setattr(block, attr, Timed)
    net = vision().get_model(name, classes=1000)
    net.initialize()
    if hybridize:
        net.hybridize()
    x = nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 3, side, side)).astype("float32"))
    t = time.perf_counter()
    net(x).wait_to_read()
    end = marks["end"] = time.perf_counter()
    first = end - t
    deferred = marks.get("build", end) - t
    tuned_calls, tuned_s = until_tuned(net, x)
    steady = []
    for _ in range(5):
        s = time.perf_counter()
        net(x).wait_to_read()
        steady.append(time.perf_counter() - s)
    split = {f"{phase}_{name.replace('_duration', '')}": round(v[0], 4) for (phase, name), v in events.items()}
    split.update({f"{phase}_{name.replace('_duration', '')}_n": v[1] for (phase, name), v in events.items()})
    print(json.dumps({"first_s": first, "deferred_s": deferred, "build_s": first - deferred,
                      "tuned_calls": tuned_calls, "tuned_s": tuned_s, "steady_s": sorted(steady)[2],
                      "package": str(Path(block.__file__).parents[2]), **split}))


# --split: our rewrites and per-shape choices off, so the program is the network as one plain jax.jit
PLAIN = {"AST_HYBRID_CHANNEL_LAST": "0", "AST_HYBRID_CONV_TUNE": "off", "AST_HYBRID_HOIST": "off",
         "AST_HYBRID_WEIGHT_FIRST": "off", "AST_HYBRID_CONV_LOWERING": "xla"}


def run_case(name, side, hybridize, path=None, extra_env=None):
    env = dict(os.environ, **(extra_env or {}))
    cache = tempfile.mkdtemp(prefix="ast_hybrid_first_call_")
    env["AST_HYBRID_COMPILE_CACHE_DIR"] = cache
    if path:
        env["AH_FIRST_CALL_PACKAGE"] = str(path)
    try:
        out = subprocess.run([sys.executable, "-m", "bench.first_call", "--child", name, str(side),
                              str(int(hybridize))], cwd=ROOT, env=env, capture_output=True, text=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _second_child(name, side, params, phase):
    """``fill``: initialise, save the parameters, run hybridized; ``load``: load them, run hybridized; print
    the first call, the median of 5 later calls, the program cache's counters and where its time went."""
    if os.environ.get("AH_FIRST_CALL_PACKAGE"):
        _use_package(os.environ["AH_FIRST_CALL_PACKAGE"])
    import numpy as np

    from ast_hybrid import nd
    from ast_hybrid.xla import program_cache as pc
    from bench.zoo import vision

    spent = {"key": 0.0, "read": 0.0}

    def timed(fn, what):
        def run(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[what] += time.perf_counter() - t
        return run

    pc.program_key, pc._read = timed(pc.program_key, "key"), timed(pc._read, "read")
    net = vision().get_model(name, classes=1000)
    x = nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 3, side, side)).astype("float32"))
    t = time.perf_counter()
    if phase == "fill":
        net.initialize()
    else:
        net.load_parameters(params)
    loading = time.perf_counter() - t
    net.hybridize()
    t = time.perf_counter()
    net(x).wait_to_read()
    first = time.perf_counter() - t
    if phase == "fill":
        net.save_parameters(params)
        until_tuned(net, x)         # the program is written once tuned
    steady = []
    for _ in range(5):
        s = time.perf_counter()
        net(x).wait_to_read()
        steady.append(time.perf_counter() - s)
    print(json.dumps({"first_s": first, "steady_s": sorted(steady)[2], "params_s": loading, **pc.STATS,
                      "key_s": spent["key"], "read_s": spent["read"], "load": os.getloadavg()[0],
                      "reason": pc.LAST["reason"]}))


def second_process(models, runs, package=None):
    """Rows of the second-process first call, with and without the program cache (``--second-process``)."""
    cache = tempfile.mkdtemp(prefix="ast_hybrid_first_call_")
    folder = tempfile.mkdtemp(prefix="ast_hybrid_first_call_params_")
    env = {**os.environ, "AST_HYBRID_COMPILE_CACHE_DIR": cache, "AST_HYBRID_COMPILE_CACHE": "1"}
    if package:
        env["AH_FIRST_CALL_PACKAGE"] = str(package)

    def child(name, side, phase, **extra):
        out = subprocess.run([sys.executable, "-m", "bench.first_call", "--second-child", name, str(side),
                              os.path.join(folder, f"{name}.params"), phase], cwd=ROOT, env={**env, **extra},
                             capture_output=True, text=True)
        if out.returncode:
            return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
        return json.loads(out.stdout.strip().splitlines()[-1])

    rows = []
    try:
        for name, side in models:
            for phase in ("fill", "load"):
                got = child(name, side, phase)
                got.update(model=f"{name} {side}x{side}", setting=phase)
                print(json.dumps(got), flush=True)
        for i in range(runs):
            for name, side in models:
                for setting, extra in (("program cache", {}), ("JAX's cache only", {"AST_HYBRID_PROGRAM_CACHE": "0"})):
                    got = child(name, side, "load", **extra)
                    got.update(model=f"{name} {side}x{side}", setting=setting, run=i)
                    print(json.dumps(got), flush=True)
                    rows.append(got)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    print("\n| model b1 | setting | run | load avg | first call | steady | first / steady | hits | key | read+load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['setting']} | {r['run']} | | error: {r['error']} | | | | | |")
            continue
        print(f"| {r['model']} | {r['setting']} | {r['run']} | {r['load']:.1f} | {r['first_s'] * 1e3:.0f} ms | "
              f"{r['steady_s'] * 1e3:.1f} ms | {r['first_s'] / r['steady_s']:.1f}x | {r['hits']} | "
              f"{r['key_s'] * 1e3:.0f} ms | {r['read_s'] * 1e3:.0f} ms |")
    return rows


def split(models, side):
    """``--split``: per model, the first call as users get it and as one plain ``jax.jit`` program (our
    rewrites and per-shape timings off, ``PLAIN``), each in a fresh process on an empty cache, with JAX's
    trace, lowering and XLA compile (summed over every program compiled, counted) and the rest (ours:
    building the program, our rewrites, timing trials, the first run); the ratio is the first call over
    the plain program's trace + lowering + compile."""
    rows = []
    for name in models:
        for setting, env in (("as built", {}), ("plain jax.jit", PLAIN)):
            got = run_case(name, side, True, extra_env=env)
            got.update(model=name, setting=setting, load=os.getloadavg()[0])
            print(json.dumps(got), flush=True)
            rows.append(got)
    print(f"\n| model b1 {side}x{side} | setting | load | first call | deferred pass | trace | lowering | "
          "XLA compile (programs) | the rest | tuned after | steady | first / plain's trace+lowering+compile |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    phases = ("jaxpr_trace", "jaxpr_to_mlir_module", "backend_compile")
    plain = {r["model"]: sum(r.get(f"build_{k}", 0.0) for k in phases) for r in rows
             if r["setting"] == "plain jax.jit" and "error" not in r}
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['setting']} | | error: {r['error']} |" + " |" * 8)
            continue
        trace, lower, comp = (r.get(f"build_{k}", 0.0) for k in phases)
        rest = r["build_s"] - trace - lower - comp
        ratio = r["first_s"] / plain[r["model"]] if plain.get(r["model"]) else float("nan")
        print(f"| {r['model']} | {r['setting']} | {r['load']:.1f} | {r['first_s']:.2f} s | {r['deferred_s']:.2f} s | "
              f"{trace:.2f} s | {lower:.2f} s | {comp:.2f} s ({r.get('build_backend_compile_n', 0)}) | "
              f"{rest:.2f} s | {r.get('tuned_calls', 0)} calls, {r.get('tuned_s', 0.0):.1f} s | "
              f"{r['steady_s'] * 1e3:.1f} ms | {ratio:.2f}x |")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--side", type=int, default=224)
    ap.add_argument("--against", nargs="*", default=[], help="other copies of the package (their root folders)")
    ap.add_argument("--plain", action="store_true", help="without hybridize()")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--second-process", action="store_true", help="the first call in a second process")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--package", help="--second-process: the children import this copy of the package")
    ap.add_argument("--second-child", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--split", action="store_true",
                    help="where the first call goes (JAX's trace, lowering, XLA compile; the rest ours), next to "
                         "the same network as one plain jax.jit program (our rewrites and timings off)")
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child[0], int(args.child[1]), bool(int(args.child[2])))
    if args.second_child:
        return _second_child(args.second_child[0], int(args.second_child[1]), *args.second_child[2:])
    if args.second_process:
        models = [(m.split(":")[0], int(m.split(":")[1]) if ":" in m else args.side)
                  for m in (args.models if args.models != list(MODELS) else SECOND)]
        return second_process(models, args.runs, args.package)
    if args.split:
        return split(args.models, args.side)
    rows = []
    for name in args.models:
        for path in [*args.against, None]:       # interleaved: each model under every version in turn
            got = run_case(name, args.side, not args.plain, path)
            got.update(model=name, version=path or "this tree")
            print(json.dumps(got), flush=True)
            rows.append(got)
    print(f"\n| model b1 {args.side}x{args.side} | version | first call | deferred pass | build | steady |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['version']} | error: {r['error']} | | | |")
        else:
            print(f"| {r['model']} | {r['version']} | {r['first_s']:.2f} s | {r['deferred_s']:.2f} s | "
                  f"{r['build_s']:.2f} s | {r['steady_s'] * 1e3:.0f} ms |")


if __name__ == "__main__":
    main()
