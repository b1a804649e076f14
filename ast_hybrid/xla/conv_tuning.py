"""Per-shape choice between XLA's convolution and im2col + GEMM, by measurement, kept on disk.

The rule in ``conv_lowering`` (derived from measurements) picks a lowering per convolution shape when the
program is traced.  Under the channel-last layout its XLA picks are not always right, and not in a way a
rule can follow: a 3x3 convolution 32 -> 128 channels on 27x27 at batch 16 takes 9.5 ms on XLA and 6.5 ms
as im2col, the same at 64 -> 64 takes 9.1 and 23.5 (``bench/HISTORY.md``).  So, for each convolution the rule
left to XLA, a hybridized block's channel-last program (``program.Program``) times that convolution both
ways, alone, in the form the program will run it (NHWC, ``*spatial, I, O`` kernel), and computes it as
im2col where that is clearly faster (at most 0.9x XLA's time).  Each shape is measured once per machine: the
answers are kept in ``conv_tuning.json`` beside JAX's compilation cache (not written when that cache is
off), keyed by what the timing depends on (jax, jaxlib, the CPU, ``XLA_FLAGS``).  A hybridized ResNet-50's
first call on a new machine measures 3 shapes, SqueezeNet's 5 (about 0.3 s each: two small compiles;
large ones, batch 16 at 224x224, are left to XLA after one run).

``AST_HYBRID_CONV_TUNE=0`` turns it off (the rule alone); ``AST_HYBRID_CONV_LOWERING`` forcing a lowering
turns it off too.  ``AST_HYBRID_CONV_TUNE=1`` also times the whole program against im2col everywhere
(``program._Lowered``).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.core import settings
from ast_hybrid.xla import compile_cache, tuning
from ast_hybrid.xla.disk import write_quietly

FORMAT = 2          # 2: samples of several calls, their minimum (1: single calls, their median)
MARGIN = 0.9        # im2col is kept where it takes at most this fraction of XLA's time
# each timed sample runs a convolution ~SAMPLE seconds' worth of calls, and the fastest sample of each lowering is
# compared: single calls, medians, swung SqueezeNet's ratios 0.83-1.34 (one shape) and 0.7-7.5 (another) from one
# process to the next, these 0.83-0.91 and 0.95-0.99 (bench/HISTORY.md); at most ~BUDGET seconds per shape
SAMPLE = 0.004
BUDGET = 0.3
# a convolution whose first run on XLA takes longer is left to XLA untimed: in the sweep of bench/HISTORY.md the
# largest one im2col won took 9.5 ms on XLA, and timing the large ones (batch 16 at 224x224) cost seconds each
LONG = 0.025
ENV = "AST_HYBRID_CONV_TUNE"
_LOG = logging.getLogger(__name__)


def enabled() -> bool:
    from ast_hybrid.ops import conv_lowering

    return settings.get(ENV) != "off" and not settings.is_set(conv_lowering.ENV)


def signature(e):
    """What the timing of convolution equation ``e`` depends on, as a string; None where im2col cannot
    compute it (grouped, dilated input, not floating point)."""
    p = e.params
    x, w = (v.aval for v in e.invars)
    if p["feature_group_count"] != 1 or p["batch_group_count"] != 1 or any(d != 1 for d in p["lhs_dilation"]) \
            or not jnp.issubdtype(e.outvars[0].aval.dtype, jnp.floating):
        return None
    dn = p["dimension_numbers"]
    return json.dumps([[x.shape[d] for d in dn.lhs_spec], [w.shape[d] for d in dn.rhs_spec], str(x.dtype),
                       list(p["window_strides"]), [list(q) for q in p["padding"]], list(p["rhs_dilation"])])


def im2col_picks(convs):
    """The signatures, among those of ``convs`` (convolution equations), measured faster as im2col: those
    not measured yet on this machine measured now (:func:`picks`)."""
    with jax.ensure_compile_time_eval():        # run now, whatever trace is active
        return tuning.run_now(picks(convs))


def picks(convs, measure=True):
    """A plan (``xla/tuning.py``) giving the signatures, among those of ``convs``, measured faster as im2col:
    each not measured yet on this machine measured (:func:`timing`; with ``measure=False`` left to the rule:
    no step at all), its answer written to disk at once."""
    table = Table()
    out = set()
    for e in convs:
        sig = signature(e)
        if sig is None:
            continue
        if sig not in table.answers:
            if not measure:
                continue
            try:
                table.answers[sig] = yield from timing(e)
            except Exception as exc:    # timing is an optimisation: a convolution it cannot time stays XLA's
                _LOG.debug("convolution %s not timed: %s: %s", sig, type(exc).__name__, exc)
                table.answers[sig] = {"pick": "xla", "xla_s": None, "im2col_s": None}
            table.dirty = True
            table.save()
        if table.answers[sig]["pick"] == "im2col":
            out.add(sig)
    return out


def timing(e):
    """A plan measuring convolution ``e`` as XLA's convolution and as im2col, channel-last, on random
    inputs: each compiled (a job), run once, then alternately in samples of ``SAMPLE`` seconds' worth of
    calls, the fastest of up to 9 each (one when the first round differs by 1.5x, fewer past ``BUDGET``;
    each round a timing slice); a convolution whose first XLA run takes over ``LONG`` stays XLA's untimed."""
    from ast_hybrid.xla import channel_last_rules as rules

    x, w = inputs(e)
    exes = [(yield tuning.Job(lambda: program(e, "xla", rules)))]
    t = time.perf_counter()
    jax.block_until_ready(exes[0](x, w))
    first = time.perf_counter() - t
    if first > LONG:        # a large convolution: XLA's, without timing im2col
        return {"pick": "xla", "xla_s": first, "im2col_s": None}
    exes.append((yield tuning.Job(lambda: program(e, "im2col", rules))))
    jax.block_until_ready(exes[1](x, w))
    t = time.perf_counter()
    jax.block_until_ready(exes[0](x, w))
    calls = max(1, int(SAMPLE / max(time.perf_counter() - t, 1e-6)))
    times = [[], []]
    spent = 0.0
    for r in range(9):
        t = time.perf_counter()
        for k in (0, 1) if r % 2 == 0 else (1, 0):
            s = time.perf_counter()
            for _ in range(calls):
                y = exes[k](x, w)
            jax.block_until_ready(y)
            times[k].append((time.perf_counter() - s) / calls)
        spent += time.perf_counter() - t
        if r == 0 and not 0.6 < times[1][0] / times[0][0] < 1.5:
            break       # clear at once
        if r >= 2 and spent > BUDGET:
            break
        yield tuning.SLICE
    xla, im2col = min(times[0]), min(times[1])
    return {"pick": "im2col" if im2col <= MARGIN * xla else "xla", "xla_s": xla, "im2col_s": im2col}


def _measure(e):
    """:func:`timing` run now, whatever trace is active."""
    with jax.ensure_compile_time_eval():
        return tuning.run_now(timing(e))


def _layouts(e):
    """The stored shapes and layouts of ``e``'s input and kernel in a channel-last program (NHWC input,
    ``*spatial, I, O`` kernel): ``[(shape, dtype, perm)] * 2``."""
    dn = e.params["dimension_numbers"]
    perms = ((dn.lhs_spec[0], *dn.lhs_spec[2:], dn.lhs_spec[1]), (*dn.rhs_spec[2:], dn.rhs_spec[1], dn.rhs_spec[0]))
    return [(tuple(v.aval.shape[d] for d in p), v.aval.dtype, p) for v, p in zip(e.invars, perms)]


def inputs(e):
    """Random ``(x, w)`` for convolution equation ``e``, stored as a channel-last program stores them."""
    rng = np.random.default_rng(0)
    return tuple(jnp.asarray(rng.standard_normal(shape).astype(dtype)) for shape, dtype, _ in _layouts(e))


def program(e, lowering, rules=None):
    """``e`` alone as a channel-last program computes it, compiled: ``lowering`` ``"xla"`` (XLA's
    convolution) or ``"im2col"``; it takes :func:`inputs`' arrays and leaves its output channel-last."""
    if rules is None:
        from ast_hybrid.xla import channel_last_rules as rules
    (xs, xd, x_perm), (ws, wd, w_perm) = _layouts(e)
    rule = {"xla": rules.conv, "im2col": rules.conv_im2col}[lowering]

    def run(x, w):
        (out,) = rule(e, [rules.Val(x, x_perm), rules.Val(w, w_perm)])
        return out.arr
    return jax.jit(run).lower(jax.ShapeDtypeStruct(xs, xd), jax.ShapeDtypeStruct(ws, wd)).compile()


def _fingerprint():
    import jaxlib

    device = jax.devices()[0]
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line for line in fh if line.startswith(("model name", "flags"))), "")
    except OSError:
        cpu = platform.processor()
    return json.dumps([FORMAT, jax.__version__, jaxlib.__version__, device.platform, device.device_kind,
                       platform.machine(), cpu.strip(), os.cpu_count(), settings.environ("XLA_FLAGS", "")])


def _on_disk():
    """Whether answers are kept on disk: as JAX's compilation cache is (``AST_HYBRID_COMPILE_CACHE=0``: each
    process measures again)."""
    return compile_cache.enabled()


class Table:
    """The measured answers for this machine: ``answers[signature] = {"pick", "xla_s", "im2col_s"}``, read
    from and written back to ``path()`` (other machines' entries kept; a file that cannot be read or
    written only costs measuring again)."""

    def __init__(self):
        self.key = _fingerprint()
        self.dirty = False
        mine = self._load().get(self.key)
        self.answers = {k: v for k, v in mine.items() if isinstance(v, dict) and v.get("pick") in ("xla", "im2col")} \
            if isinstance(mine, dict) else {}

    @staticmethod
    def path() -> Path:
        return compile_cache.cache_dir() / "conv_tuning.json"

    def _load(self):
        if not _on_disk():
            return {}
        try:
            data = json.loads(self.path().read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def save(self):
        if not self.dirty or not _on_disk():
            return
        data = self._load()         # what another process wrote meanwhile, merged
        theirs = data.get(self.key)
        data[self.key] = {**(theirs if isinstance(theirs, dict) else {}), **self.answers}
        write_quietly(self.path(), json.dumps(data, indent=0, sort_keys=True))
        self.dirty = False
