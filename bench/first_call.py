"""A model-zoo network's first call as a user makes it: built, ``initialize()``d (deferred shapes), hybridized.

    python -m bench.first_call [--models NAME ...] [--side 224] [--against PATH ...] [--plain]

Each case runs in a fresh process on an empty compile cache of its own: ``net = vision.get_model(name);
net.initialize(); net.hybridize(); net(x)`` (``--plain``: without ``hybridize()``), timing the first call
and splitting it into the deferred-shape pass (everything before the hybridized program is built) and the
build (trace, lowering, XLA compile, first run), then the median of 3 later calls.  ``--against PATH``
runs the same cases with another copy of the package first on ``sys.path`` (e.g. ``git archive HEAD`` of an
older commit unpacked there), interleaved with this one, so a before/after comparison comes from one run
on this noisy machine.  Prints one JSON line per case and a Markdown table.
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


def _use_package(root):
    """Import ``ast_hybrid`` (and ``passes``) from ``root`` instead of the installed (editable) copy, whose
    finder would otherwise come first."""
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                        and "editable" not in getattr(f, "__name__", "").lower()]
    sys.path.insert(0, root)


def _child(name, side, hybridize):
    if os.environ.get("AH_FIRST_CALL_PACKAGE"):
        _use_package(os.environ["AH_FIRST_CALL_PACKAGE"])
    import numpy as np

    from ast_hybrid import nd
    from ast_hybrid.gluon import block
    from bench.zoo import vision

    marks = {}
    built = block._Compiled

    class Timed(built):
        def __init__(self, block, *a, **k):
            if block is net:        # the network's own program (an older pass built one per nested block)
                marks.setdefault("build", time.perf_counter())
            super().__init__(block, *a, **k)

    block._Compiled = Timed
    net = vision().get_model(name, classes=1000)
    net.initialize()
    if hybridize:
        net.hybridize()
    x = nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 3, side, side)).astype("float32"))
    t = time.perf_counter()
    net(x).wait_to_read()
    end = time.perf_counter()
    first = end - t
    deferred = marks.get("build", end) - t
    steady = []
    for _ in range(3):
        s = time.perf_counter()
        net(x).wait_to_read()
        steady.append(time.perf_counter() - s)
    print(json.dumps({"first_s": first, "deferred_s": deferred, "build_s": first - deferred,
                      "steady_s": sorted(steady)[1], "package": str(Path(block.__file__).parents[2])}))


def run_case(name, side, hybridize, path=None):
    env = dict(os.environ)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--side", type=int, default=224)
    ap.add_argument("--against", nargs="*", default=[], help="other copies of the package (their root folders)")
    ap.add_argument("--plain", action="store_true", help="without hybridize()")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child[0], int(args.child[1]), bool(int(args.child[2])))
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
