"""Where the convolution time goes against ONNX Runtime and MXNet: one convolution at a time.

    python -m bench.conv_ceiling [--quick] [--rounds 5]
    python -m bench.conv_ceiling --rule       # the lowering rule's picks under the channel-last layout

Every convolution of ResNet-18 v1 and ResNet-50 v1 at 224x224, batch 1, or with ``--net NAME [--side S] [--batch
B]`` of any model-zoo network (traced: its ungrouped convolutions) (each shape once, with how many
times the network runs it), timed alone, ms per call, median of interleaved rounds:

- **ours**: what a hybridized block runs for it, channel-last (``xla/channel_last.py``): the lowering
  ``conv_lowering.choose`` picks (XLA's convolution or im2col + GEMM) on an NHWC input with a kernel stored
  ``*spatial, I, O``, its output left NHWC, under ``jax.jit``; and the other lowering, for the best of the
  two (**best**);
- **ORT**: ONNX Runtime 1.19.2 running a one-node ONNX model (``Conv``, no bias) with its defaults (MLAS,
  its NCHWc layout transformer), in the oracle's process;
- **MXNet**: MXNet 1.9.1's ``nd.Convolution`` (oneDNN), ``no_bias``, in the same process.

The last line weights each shape by its count: the network's convolutions alone, per contender.  What it
locates: whether the gap to ONNX Runtime on whole networks is in the convolution kernels themselves (then
nothing in how the program is arranged around them closes it) or elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.xla import channel_last as CL
from ast_hybrid.xla import conv_tuning
from ast_hybrid.xla import program
from ast_hybrid.ops.conv_lowering import choose

NCHW = ("NCHW", "OIHW", "NCHW")

# (label, count in resnet18_v1, count in resnet50_v1, cin, size, cout, kernel, stride)
CASES = [
    ("stem 7x7/2 3->64 @224", 1, 1, 3, 224, 64, 7, 2),
    ("3x3 64 @56", 4, 3, 64, 56, 64, 3, 1),
    ("3x3/2 64->128 @56", 1, 0, 64, 56, 128, 3, 2),
    ("1x1/2 64->128 @56", 1, 0, 64, 56, 128, 1, 2),
    ("3x3 128 @28", 3, 4, 128, 28, 128, 3, 1),
    ("3x3/2 128->256 @28", 1, 0, 128, 28, 256, 3, 2),
    ("1x1/2 128->256 @28", 1, 0, 128, 28, 256, 1, 2),
    ("3x3 256 @14", 3, 6, 256, 14, 256, 3, 1),
    ("3x3/2 256->512 @14", 1, 0, 256, 14, 512, 3, 2),
    ("1x1/2 256->512 @14", 1, 0, 256, 14, 512, 1, 2),
    ("3x3 512 @7", 3, 3, 512, 7, 512, 3, 1),
    # ResNet-50's bottlenecks (v1: the stride on the first 1x1)
    ("1x1 64->64 @56", 0, 1, 64, 56, 64, 1, 1),
    ("1x1 64->256 @56", 0, 4, 64, 56, 256, 1, 1),
    ("1x1 256->64 @56", 0, 2, 256, 56, 64, 1, 1),
    ("1x1/2 256->128 @56", 0, 1, 256, 56, 128, 1, 2),
    ("1x1/2 256->512 @56", 0, 1, 256, 56, 512, 1, 2),
    ("1x1 128->512 @28", 0, 4, 128, 28, 512, 1, 1),
    ("1x1 512->128 @28", 0, 3, 512, 28, 128, 1, 1),
    ("1x1/2 512->256 @28", 0, 1, 512, 28, 256, 1, 2),
    ("1x1/2 512->1024 @28", 0, 1, 512, 28, 1024, 1, 2),
    ("1x1 256->1024 @14", 0, 6, 256, 14, 1024, 1, 1),
    ("1x1 1024->256 @14", 0, 5, 1024, 14, 256, 1, 1),
    ("1x1/2 1024->512 @14", 0, 1, 1024, 14, 512, 1, 2),
    ("1x1/2 1024->2048 @14", 0, 1, 1024, 14, 2048, 1, 2),
    ("1x1 512->2048 @7", 0, 3, 512, 7, 2048, 1, 1),
    ("1x1 2048->512 @7", 0, 2, 2048, 7, 512, 1, 1),
]
# --rule: the lowering rule under the channel-last layout, at batch 1 and 16 (label, cin, size, cout, k, stride)
RULE_CASES = [
    ("incv3 3x3 32 @149", 32, 149, 32, 3, 1), ("incv3 3x3 32->64 @147", 32, 147, 64, 3, 1),
    ("incv3 3x3 80->192 @73", 80, 73, 192, 3, 1), ("incv3 3x3/2 288->384 @35", 288, 35, 384, 3, 2),
    ("incv3 3x3 64->96 @35", 64, 35, 96, 3, 1), ("incv3 3x3 96 @35", 96, 35, 96, 3, 1),
    ("incv3 3x3 448->384 @8", 448, 8, 384, 3, 1), ("sq 3x3 16->64 @55", 16, 55, 64, 3, 1),
    ("sq 3x3 32->128 @27", 32, 27, 128, 3, 1), ("sq 3x3 48->192 @13", 48, 13, 192, 3, 1),
    ("sq 3x3 64->256 @13", 64, 13, 256, 3, 1), ("r18 3x3 64 @56", 64, 56, 64, 3, 1),
    ("r18 3x3 128 @28", 128, 28, 128, 3, 1), ("r18 3x3 256 @14", 256, 14, 256, 3, 1),
    ("r18 3x3 512 @7", 512, 7, 512, 3, 1), ("stem 7x7/2 3->64 @224", 3, 224, 64, 7, 2),
]
QUICK = ["stem 7x7/2 3->64 @224", "3x3 64 @56", "3x3 256 @14", "1x1 256->1024 @14", "3x3 512 @7"]

ORACLE_SETUP = """
import sys, time
if inp_folder not in sys.path:
    sys.path.insert(0, inp_folder)
import onnx, onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
n, cin, h, wd, cout, kh, kw, sh, sw, pt, pb, pl, pr, dh, dw = (int(v) for v in inp['spec'])
x = np.random.RandomState(0).standard_normal((n, cin, h, wd)).astype('float32')
w = (np.random.RandomState(1).standard_normal((cout, cin, kh, kw)) * 0.05).astype('float32')
node = helper.make_node('Conv', ['x', 'w'], ['y'], kernel_shape=[kh, kw], strides=[sh, sw], pads=[pt, pl, pb, pr],
                        dilations=[dh, dw])
graph = helper.make_graph([node], 'conv', [helper.make_tensor_value_info('x', TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
                          initializer=[numpy_helper.from_array(w, 'w')])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8
opts = ort.SessionOptions()
opts.log_severity_level = 3
sess = ort.InferenceSession(model.SerializeToString(), opts, providers=['CPUExecutionProvider'])
feed = {'x': x}
xm, wm = nd.array(x), nd.array(w)
if (pt, pl) == (pb, pr):
    def mxconv():
        return nd.Convolution(xm, wm, kernel=(kh, kw), stride=(sh, sw), pad=(pt, pl), dilate=(dh, dw),
                              num_filter=cout, no_bias=True)
else:       # asymmetric padding: MXNet's Convolution pads symmetrically, so pad first (counted)
    def mxconv():
        xp = nd.pad(xm, mode='constant', pad_width=(0, 0, 0, 0, pt, pb, pl, pr))
        return nd.Convolution(xp, wm, kernel=(kh, kw), stride=(sh, sw), dilate=(dh, dw), num_filter=cout,
                              no_bias=True)
y_ort = sess.run(None, feed)[0]
y_mx = mxconv().asnumpy()
meta['agree'] = float(np.abs(y_ort - y_mx).max() / max(np.abs(y_mx).max(), 1e-30))
mx._conv = sess, feed, mxconv
"""

ORACLE_TIME = """
import time
sess, feed, mxconv = mx._conv
n = int(inp['n'])
if int(inp['which']) == 0:
    sess.run(None, feed)
    t = time.perf_counter()
    for _ in range(n): sess.run(None, feed)
else:
    mxconv().wait_to_read()
    t = time.perf_counter()
    for _ in range(n): y = mxconv()
    nd.waitall()
meta['s'] = (time.perf_counter() - t) / n
"""


def _equation(cin, size, cout, k, s, batch=1):
    """The ``conv_general_dilated`` equation of a square NCHW convolution padded ``k // 2``."""
    p = ((k // 2, k // 2),) * 2
    x = jax.ShapeDtypeStruct((batch, cin, size, size), jnp.float32)
    w = jax.ShapeDtypeStruct((cout, cin, k, k), jnp.float32)
    closed = jax.make_jaxpr(lambda x, w: lax.conv_general_dilated(x, w, (s, s), p, dimension_numbers=NCHW))(x, w)
    return closed.jaxpr.eqns[0]


def _signature(e):
    """(x shape, w shape, strides, padding, dilation) of 2-D convolution ``e``, NCHW/OIHW."""
    x, w, _, strides, pad, dil = json.loads(conv_tuning.signature(e))
    return x, w, strides, pad, dil


def _spec(e):
    """The oracle's description of 2-D convolution ``e``: N, C, H, W, O, kh, kw, strides, pads, dilations."""
    x, w, strides, pad, dil = _signature(e)
    return [*x, w[0], *w[2:], *strides, pad[0][0], pad[0][1], pad[1][0], pad[1][1], *dil]


def _pick(e, tuned=True):
    """What a channel-last program runs for ``e``: the rule's lowering, then (``tuned``) the per-shape timing
    for XLA's."""
    x, w, strides, pad, dil = _signature(e)
    pick = choose(tuple(x), tuple(w), tuple(strides), tuple(dil), [tuple(q) for q in pad], 1, True)
    if tuned and pick == "xla" and conv_tuning.signature(e) in conv_tuning.im2col_picks([e]):
        pick = "im2col"
    return pick


def _ours(e):
    """{lowering: timer} of ``e`` as a channel-last program runs it (``xla/channel_last.py``: the input stored
    NHWC, the kernel ``*spatial, I, O``, the output left channel-last), each lowering compiled alone."""
    args = conv_tuning.inputs(e)
    timers = {}
    for name in ("xla", "im2col"):
        f = conv_tuning.program(e, name)
        f(*args).block_until_ready()

        def timer(n, f=f):
            f(*args).block_until_ready()
            t = time.perf_counter()
            for _ in range(n):
                y = f(*args)
            y.block_until_ready()
            return (time.perf_counter() - t) / n
        timers[name] = timer
    return timers


def rule(batches=(1, 16), rounds=5):
    """XLA's convolution against im2col per RULE_CASES shape, channel-last, and what the rule picks."""
    print(f"{'convolution':<26} {'b':>3} {'xla ms':>9} {'im2col':>9} {'i2c/xla':>7} {'pick':<6} {'pick/best':>9}")
    rows = []
    for label, cin, size, cout, k, s in RULE_CASES:
        for b in batches:
            e = _equation(cin, size, cout, k, s, b)
            timers, pick = _ours(e), _pick(e, tuned=False)
            n = max(1, int(0.05 / max(timers["xla"](1), 1e-5)))
            times = {name: [] for name in timers}
            for r in range(rounds):
                for name in (["xla", "im2col"] if r % 2 == 0 else ["im2col", "xla"]):
                    times[name].append(timers[name](n) * 1e3)
            ms = {name: statistics.median(v) for name, v in times.items()}
            print(f"{label:<26} {b:>3} {ms['xla']:>9.3f} {ms['im2col']:>9.3f} {ms['im2col'] / ms['xla']:>7.2f} "
                  f"{pick:<6} {ms[pick] / min(ms.values()):>9.2f}", flush=True)
            rows.append({"case": label, "batch": b, "ms": ms, "pick": pick})
    return rows


def network(name, side, batch):
    """[(label, {name: count}, equation)]: every ungrouped convolution hybridized model-zoo network ``name``
    runs on a ``batch x 3 x side x side`` input, one per shape, with how many times it runs it (its predict
    program traced with XLA's convolution everywhere, so that none is hidden as a GEMM)."""
    from collections import Counter

    from ast_hybrid import nd
    from ast_hybrid.ops import conv_lowering
    from bench.zoo import _input, vision

    traced = []
    plain = program.Program._trace

    def trace(self, leaves, xs):
        traced.append(plain(self, leaves, xs))
        return traced[-1]

    saved = {k: os.environ.get(k) for k in (conv_lowering.ENV, "AST_HYBRID_PROGRAM_CACHE")}
    os.environ.update({conv_lowering.ENV: "xla", "AST_HYBRID_PROGRAM_CACHE": "0"})
    program.Program._trace = trace
    try:
        net = vision().get_model(name, classes=1000)
        net.initialize()
        net.hybridize()
        net(nd.array(_input(batch, side)))
    finally:
        program.Program._trace = plain
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    counts, first = Counter(), {}
    for e in CL.convolutions(traced[-1][0].jaxpr):
        sig = conv_tuning.signature(e)
        if sig is not None:
            counts[sig] += 1
            first.setdefault(sig, e)
    cases = []
    for sig, e in first.items():
        n, cin, h, w, cout, kh, kw, sh, sw, *_ = _spec(e)
        cases.append((f"{kh}x{kw}{'/' + str(sh) if sh > 1 else ''} {cin}->{cout} @{h}x{w}", {name: counts[sig]}, e))
    return cases


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rule", action="store_true", help="XLA vs im2col per shape at batch 1 and 16 (no oracle)")
    ap.add_argument("--net", help="every convolution of this model-zoo network instead of ResNet-18/50's list")
    ap.add_argument("--side", type=int, default=224, help="--net: the input's side")
    ap.add_argument("--batch", type=int, default=1, help="--net: the batch")
    args = ap.parse_args(argv)
    if args.rule:
        return rule(rounds=args.rounds)
    if args.net:
        cases = network(args.net, args.side, args.batch)
    else:
        cases = [(label, {"resnet18_v1": c18, "resnet50_v1": c50}, _equation(cin, size, cout, k, s))
                 for label, c18, c50, cin, size, cout, k, s in CASES if not args.quick or label in QUICK]
    from ast_hybrid.testing.oracle import Oracle, ensure_onnx_pkgs

    folder = str(ensure_onnx_pkgs())
    mx = Oracle(as_users_run_it=True)
    nets = list(cases[0][1])
    print(f"{'convolution':<24} " + " ".join(f"{n[:8]:>8}" for n in nets) + f" {'pick':<6} {'ours ms':>8} {'best':>8} "
          f"{'ORT':>8} {'MXNet':>8} {'ours/ORT':>8} {'best/ORT':>8} {'ours/MX':>7}")
    totals = {net: {k: 0.0 for k in ("ours", "best", "ort", "mxnet")} for net in nets}
    rows = []
    try:
        for label, counts, e in cases:
            timers, pick = _ours(e), _pick(e)
            meta = mx.run(ORACLE_SETUP.replace("inp_folder", repr(folder)), spec=np.array(_spec(e)))["meta"]
            contenders = {**timers,
                          "ort": lambda n: mx.run(ORACLE_TIME, n=np.array(n), which=np.array(0))["meta"]["s"],
                          "mxnet": lambda n: mx.run(ORACLE_TIME, n=np.array(n), which=np.array(1))["meta"]["s"]}
            n = max(2, int(0.05 / max(timers[pick](1), 1e-5)))
            times = {name: [] for name in contenders}
            order = list(contenders)
            for r in range(args.rounds):
                for name in order[r % len(order):] + order[:r % len(order)]:
                    times[name].append(contenders[name](n) * 1e3)
            ms = {name: statistics.median(v) for name, v in times.items()}
            ours, best = ms[pick], min(ms["xla"], ms["im2col"])
            print(f"{label:<24} " + " ".join(f"{counts[n]:>8}" for n in nets) + f" {pick:<6} {ours:>8.3f} "
                  f"{best:>8.3f} {ms['ort']:>8.3f} {ms['mxnet']:>8.3f} {ours / ms['ort']:>8.2f} "
                  f"{best / ms['ort']:>8.2f} {ours / ms['mxnet']:>7.2f}"
                  + ("" if meta["agree"] < 1e-4 else f"  (ORT and MXNet differ by {meta['agree']:.1e})"), flush=True)
            rows.append({"case": label, "pick": pick, "ms": ms, "counts": counts})
            for net in nets:
                for key, v in (("ours", ours), ("best", best), ("ort", ms["ort"]), ("mxnet", ms["mxnet"])):
                    totals[net][key] += counts[net] * v
    finally:
        mx.close()
    for net, t in totals.items():
        if t["ort"]:
            print(f"{net}'s convolutions, weighted by count: ours {t['ours']:.1f} ms, best lowering {t['best']:.1f}, "
                  f"ORT {t['ort']:.1f}, MXNet {t['mxnet']:.1f}; ours/ORT {t['ours'] / t['ort']:.2f}, "
                  f"best/ORT {t['best'] / t['ort']:.2f}, ours/MXNet {t['ours'] / t['mxnet']:.2f}")
    return rows, totals


if __name__ == "__main__":
    main()
