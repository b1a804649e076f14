"""Where a training step's time goes, by kind of operator: XLA's program against MXNet 1.9.1's profiler.

    python -m bench.train_ops [NAME] [--steps N] [--no-mxnet] [--channel-last]
                                        (NAME: a row of bench/train.py's NETS; default issue 32's small CNN)

Ours: the network's whole step as one XLA program (``bench/train.py``'s ``one_program_step``: forward in training
mode, loss, backward, SGD with momentum; within 1.05x of the hybridized Gluon step for the small CNN), profiled
with ``jax.profiler`` (XLA:CPU's per-thunk events, a Perfetto trace).  Each thunk of the compiled program is
given a kind from the optimized HLO: the ``op_name`` metadata of its instructions (``jvp(jit(Convolution))`` is a
forward, ``transpose(jvp(...))`` a backward) and, for the thunks XLA made that have none, its name
(``transpose_copy_fusion``: a layout copy; ``reduce-window``: max pooling).  MXNet: the same step, hybridized
with ``static_alloc=True, static_shape=True`` as users run it, under ``mx.profiler`` with bulk execution off
(``MXNET_EXEC_BULK_EXEC_TRAIN=0``) so that each operator is timed alone; its operators mapped to the same kinds.

``--channel-last``: the one program's forward run channel-last for differentiation, as a recorded hybridized call's
is since session 53 (``xla/channel_last.py``, ``differentiable=True``; the interpreter's transposes, of kernels
and their gradients, count as layout copies).

Prints milliseconds per step per kind, both sides, and each side's sum.  A profiler costs time of its own: compare
kinds with each other, and the sums with ``python -m bench.train`` (the steps timed without a profiler).
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import re
import shutil
import tempfile

from bench import harness

SMALL_CNN = "small CNN b64 32x32, max-pool"

KINDS = ("conv forward", "conv backward", "BN+ReLU+bias forward", "BN+ReLU+bias backward", "pooling forward",
         "pooling backward", "Dense forward", "Dense backward", "loss", "SGD update", "layout copies", "other")

# MXNet's operators (their profiler names) -> kind
_MXNET_KINDS = {"Convolution": "conv forward", "_backward_Convolution": "conv backward",
                "BatchNorm": "BN+ReLU+bias forward", "Activation": "BN+ReLU+bias forward",
                "_backward_BatchNorm": "BN+ReLU+bias backward", "_backward_Activation": "BN+ReLU+bias backward",
                "Pooling": "pooling forward", "_backward_Pooling": "pooling backward",
                "FullyConnected": "Dense forward", "_backward_FullyConnected": "Dense backward",
                "log_softmax": "loss", "pick": "loss", "_backward_pick": "loss", "_backward_log_softmax": "loss",
                "mean": "loss", "_backward_mean": "loss", "multi_sgd_mom_update": "SGD update",
                "sgd_mom_update": "SGD update"}


def _computations(hlo: str):
    """``{name: lines}`` of the HLO module's computations, and the entry computation's name."""
    comps, cur, entry = {}, None, None
    for line in hlo.splitlines():
        m = re.match(r"^(ENTRY )?%?([\w.\-]+) .*\{\s*$", line)
        if m and not line.startswith(" "):
            cur = m.group(2)
            comps[cur] = []
            entry = cur if m.group(1) else entry
        elif line.startswith("}"):
            cur = None
        elif cur is not None:
            comps[cur].append(line)
    return comps, entry


def _op_names(comps, lines, depth=0) -> set:
    """The ``op_name`` metadata of ``lines`` and of the computations they call; ``"convolution"`` too where
    one of them is a convolution XLA made (a backward one: jax's forward convolutions keep their metadata)."""
    out = set()
    for line in lines:
        out |= set(re.findall(r'op_name="([^"]+)"', line))
        if " convolution(" in line and "op_name" not in line:
            out.add("convolution")
        # oneDNN's convolutions (xla/onednn.py): custom calls named after the primitive
        out |= {f"onednn_conv_{m}" for m in re.findall(r'custom_call_target="ah_onednn_conv_(\w+)"', line)}
        if depth < 4:
            for called in re.findall(r"calls=%([\w.\-]+)", line):
                out |= _op_names(comps, comps.get(called, ()), depth + 1)
    return out


def _kinds(comps, entry) -> dict:
    """The kind of each instruction of the entry computation (a thunk when it runs).  One XLA made without
    metadata (the iota and scatter bookkeeping of max pooling's backward) takes its first user's kind."""
    lines = {}
    for line in comps[entry]:
        m = re.match(r"^\s+(?:ROOT )?%?([\w.\-]+) = ", line)
        if m:
            lines[m.group(1)] = line
    kinds = {name: kind_of(name, _op_names(comps, [line])) for name, line in lines.items()}
    for name, kind in kinds.items():
        if kind != "other" or name.startswith(("constant", "get-tuple-element")):
            continue
        user = next((u for u, line in lines.items() if re.search(rf"%{re.escape(name)}[,)]", line.split("=", 1)[1])
                     and kinds[u] != "other"), None)
        if user is not None:
            kinds[name] = kinds[user]
    return kinds


def kind_of(thunk: str, op_names) -> str:
    """The kind of one thunk of the program, from its name and its instructions' ``op_name`` metadata."""
    text = " ".join(op_names)
    backward = "transpose(jvp" in text
    side = "backward" if backward else "forward"
    if thunk.startswith(("transpose_copy", "bitcast_copy", "copy")) or (
            op_names and all(n.rsplit("/", 1)[-1] in ("transpose", "copy") for n in op_names)):
        return "layout copies"      # XLA's, or a transpose the channel-last interpreter put in (a kernel's, say)
    if "onednn_conv_" in text:
        return "conv forward" if "onednn_conv_forward" in text and not backward else "conv backward"
    if "conv_general_dilated" in text:
        return f"conv {side}"
    if "convolution" in op_names:
        return "conv backward"
    if "select_and_scatter" in text or "reduce-window" in thunk or "Pooling" in text:
        return "pooling backward" if backward or "scatter" in thunk else "pooling forward"
    if "batch_norm" in text or "Activation" in text or "Convolution" in text:
        return f"BN+ReLU+bias {side}"
    if "FullyConnected" in text or "dot_general" in text:
        return f"Dense {side}"
    if "xent" in text or "log_softmax" in text:
        return "loss"
    if "step" in text:
        return "SGD update"
    return "other"


def ours(name: str, steps: int, channel_last: bool = False) -> dict:
    """Milliseconds per step per kind of the one-program step, from a profile of ``steps`` steps."""
    import jax

    from bench.train import data, one_program_step

    x, y = data(name)
    run = one_program_step(name, x, y, channel_last=channel_last)
    for _ in range(3):
        jax.block_until_ready(run())
    comps, entry = _computations(run.compiled().as_text())
    kinds = _kinds(comps, entry)
    folder = tempfile.mkdtemp(prefix="ah_train_ops_")
    try:
        jax.profiler.start_trace(folder, create_perfetto_trace=True)
        for _ in range(steps):
            jax.block_until_ready(run())
        jax.profiler.stop_trace()
        trace = json.load(gzip.open(glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True)[0]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    out = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("name") in kinds:
            out[kinds[e["name"]]] += e.get("dur", 0) / 1000 / steps
    return dict(out)


MX_PROFILE = """
import os
os.environ["MXNET_EXEC_BULK_EXEC_TRAIN"] = "0"
os.environ["MXNET_EXEC_BULK_EXEC_INFERENCE"] = "0"
from mxnet import autograd, profiler
from mxnet.gluon import nn
from mxnet.gluon.model_zoo import vision
{net}{setup}net.hybridize(static_alloc=True, static_shape=True)
{step}
for _ in range(3): step()
nd.waitall()
profiler.set_config(profile_all=True, aggregate_stats=True, filename=os.devnull)
profiler.set_state('run')
for _ in range(int(inp['n'])): step()
nd.waitall()
profiler.set_state('stop')
meta['table'] = profiler.dumps(reset=True)
"""


def mxnet(name: str, steps: int, oracle) -> dict:
    """Milliseconds per step per kind of MXNet's step, from its profiler's operator table."""
    import numpy as np

    from bench.train import NETS, SETUP, STEP, data

    x, y = data(name)
    code = MX_PROFILE.format(net=NETS[name][0], setup=SETUP, step=STEP)
    table = oracle.run(code, x=x, y=y, n=np.float64(steps))["meta"]["table"]
    out = collections.Counter()
    section = table.split("\noperator\n", 1)[-1]
    for line in section.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+([\d.]+)\s+", line)
        if m:
            out[_MXNET_KINDS.get(m.group(1), "other")] += float(m.group(3)) / steps
    return dict(out)


def table(name, o: dict, m: dict | None) -> str:
    rows = ["| kind | ours (one XLA program) | MXNet 1.9.1 | ours/MXNet |", "|---|---:|---:|---:|"]
    for k in KINDS:
        a, b = o.get(k, 0.0), (m or {}).get(k)
        if a < 0.005 and not b:
            continue
        ratio = f"{a / b:.2f}" if b else "-"
        rows.append(f"| {k} | {a:.2f} | {'-' if b is None else f'{b:.2f}'} | {ratio} |")
    total_m = sum((m or {}).values())
    rows.append(f"| **sum** | {sum(o.values()):.1f} | {total_m:.1f} | "
                f"{sum(o.values()) / total_m:.2f} |" if m else f"| **sum** | {sum(o.values()):.1f} | - | - |")
    return f"{name}, ms per step\n\n" + "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?", default=SMALL_CNN)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--no-mxnet", action="store_true")
    ap.add_argument("--channel-last", action="store_true")
    args = ap.parse_args(argv)
    o = ours(args.name, args.steps, args.channel_last)
    m = None
    with harness.mxnet_oracle(not args.no_mxnet, harness.Report()) as mx:
        if mx is not None:
            m = mxnet(args.name, args.steps, mx)
    print(table(args.name, o, m))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
