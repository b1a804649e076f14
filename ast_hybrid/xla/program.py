"""A hybridized block's predict program, compiled channel-last: :class:`Program` traces it, lowers it through
the channel-last interpreter (``xla/channel_last.py``) and compiles it; :class:`Executable` runs it.

:class:`Program` behaves as ``jax.jit(fn)`` (called, or ``.lower(...).compile()``) and, where the program
convolves,

- first moves what the parameters alone determine out of it (``xla/hoist.py``): one small compiled program
  computes that and the transposed kernels (``channel_last.kernel_perms``) once per parameter update
  (:class:`Executable`), and a short program is also compiled as written and the faster kept;
- computes as im2col + GEMM each XLA convolution that ``conv_tuning`` measured faster so on this machine,
  and with ``AST_HYBRID_CONV_TUNE=1`` times the whole program against im2col everywhere (:func:`_fastest`);
- where its parameters do not fit the last-level cache, gives a GEMM over few rows (an im2col convolution on a
  small feature map, a Dense layer at a small batch) its weight as first operand, stored output-features-major
  (:func:`weight_first`, :data:`WEIGHT_FIRST`): XLA:CPU streams a cold weight from memory faster that way.

None of it is on the first call's path (issue 31, ``xla/tuning.py``): a convolving program's first call
compiles it as traced (XLA's own lowering: resnet18_v1 at 224, batch 1, 1.5 s where all of the above took
3.9 s) and returns a ``tuning.Tuning`` running it, whose plan (:meth:`Program._plan`) does the rest over the
next calls and swaps in the channel-last program: first with the convolution timings already on disk, then,
once the convolutions not timed yet are, the one they and the hoisting choice pick.  ``AST_HYBRID_TUNING=first``
does all of it before the first call returns, as ``lower(...).compile()`` always does.

The program cache (``xla/program_cache.py``) writes an :class:`Executable`'s compiled program, what prepares its
parameters and where each of its inputs comes from, and builds it again from them: once its tuning ended.
"""

from __future__ import annotations

import contextlib
import math
import time

import jax
import numpy as np
from jax import lax

from ast_hybrid.core import settings
from ast_hybrid.core.context import platform_of, tracing_for
from ast_hybrid.ops import conv_lowering
from ast_hybrid.xla import conv_tuning, hoist, host_memory, onednn, tuning
from ast_hybrid.xla.channel_last import channel_last, convolutions, count_convolutions, kernel_perms

__all__ = ["Program", "Executable", "enabled", "training_enabled", "differentiable", "tape_forward",
           "weight_first"]

ENV_SWITCH = "AST_HYBRID_CHANNEL_LAST"


def enabled() -> bool:
    """Whether hybridized blocks' predict programs run channel-last (``AST_HYBRID_CHANNEL_LAST=0`` turns it off)."""
    return bool(settings.get(ENV_SWITCH))


def training_enabled() -> bool:
    """Whether the forward (and so the backward) of a recorded hybridized call runs channel-last
    (``AST_HYBRID_CHANNEL_LAST=predict`` or ``0`` turn it off)."""
    return settings.get(ENV_SWITCH) is True


def tape_forward(fn, *args):
    """A recorded tape's replayed forward (``core/tape_program.py``) to differentiate: :func:`differentiable`
    where training programs run channel-last, else ``fn``."""
    return differentiable(fn, *args) if training_enabled() else fn


def differentiable(fn, *args):
    """``fn(*args)`` (a recorded call's forward: its outputs a pytree) as a function of the same arguments, to be
    differentiated: ``fn`` is traced once, here (its Python side effects happen once), and the trace run
    channel-last (``channel_last(..., differentiable=True)``) where it convolves, as it is where it does not; on
    one CPU device its convolutions go through oneDNN where it is built (``xla/onednn.py``, ``AST_HYBRID_ONEDNN``)."""
    closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
    out_tree, convolves = jax.tree_util.tree_structure(shape), count_convolutions(closed.jaxpr) > 0
    # oneDNN's kernels on one CPU device: a custom call has no sharding rule (XLA would gather a batch split
    # over several devices into each)
    native = convolves and jax.default_backend() == "cpu" and jax.local_device_count() == 1 and onednn.enabled()

    def run(*a):
        leaves = jax.tree_util.tree_leaves(a)
        outs = (channel_last(closed, leaves, differentiable=True, native=native) if convolves
                else jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *leaves))
        return jax.tree_util.tree_unflatten(out_tree, outs)
    return run


class Program:
    """``fn(leaves, *xs)`` (a predict program: ``leaves`` the parameters) compiled channel-last when it
    convolves, else exactly as ``jax.jit(fn)``.  Behaves as a jitted function: called, or ``.lower(leaves,
    *xs).compile()``; its executables take the parameters as they are and keep their kernels transposed
    (``*spatial, I, O``) while the same ``leaves`` tuple comes back, so a kernel is transposed once per
    parameter update, not per call."""

    def __init__(self, fn):
        self.fn = fn
        self.plain = jax.jit(fn)
        self.table = {}

    def __call__(self, leaves, *xs):
        # keyed by the inputs only, as the program cache keys it: the parameters' shapes cannot change under
        # one program (the block builds a new one), and walking them would cost every call
        flat, tree = jax.tree_util.tree_flatten(xs)     # the structure too: a None argument is no leaf
        sig = [tree]
        for a in flat:
            if isinstance(a, jax.core.Tracer) or not hasattr(a, "shape"):
                return self.plain(leaves, *xs)        # inside another trace, or Python values: jax.jit's path
            sig.append((a.shape, a.dtype, getattr(a, "weak_type", False)))
        sig = tuple(sig)
        exe = self.table.get(sig)
        if exe is None:
            exe = self.table[sig] = self.start(leaves, *xs)
        return exe(leaves, *xs)

    def lower(self, leaves, *xs):
        """As ``jax.jit(fn).lower``: its ``compile()`` does all the tuning now and gives the program kept."""
        plat = _platform(leaves, xs)
        with tracing_for(plat):
            closed, out_tree = self._trace(leaves, xs)
            if _as_written(closed):
                return _as_traced(closed, out_tree, leaves, xs)
            return self._lowered(closed, out_tree, leaves, xs, plat == "cpu")

    def start(self, leaves, *xs, compiling=None):
        """The program for these inputs, ready soonest (issue 31): where it convolves, the program as traced
        (XLA's own lowering) compiled now and returned as a ``tuning.Tuning`` whose plan (:meth:`_plan`)
        builds, times and swaps in the channel-last one over the next calls; else the program, compiled
        inside ``compiling()`` (the program cache's context for a program it writes).  With
        ``AST_HYBRID_TUNING=first``, ``lower(...).compile()`` inside ``compiling()``: the tuned program."""
        use = compiling if compiling is not None else contextlib.nullcontext
        plat = _platform(leaves, xs)
        with tracing_for(plat):
            closed, out_tree = self._trace(leaves, xs)
            if _as_written(closed):
                with use():
                    return _as_traced(closed, out_tree, leaves, xs).compile()
            if not tuning.deferred():
                with use():
                    return self._lowered(closed, out_tree, leaves, xs, plat == "cpu").compile()
            quick = _as_traced(closed, out_tree, leaves, xs).compile(QUICK_OPTIONS if plat == "cpu" else None)
            host_memory.keep_temporaries(quick)
            return tuning.Tuning(quick, self._plan(closed, out_tree, leaves, xs, plat == "cpu"),
                                 compiling=compiling)

    def _lowered(self, closed, out_tree, leaves, xs, on_cpu):
        """A convolving program's candidates lowered now, the convolutions timed now (``_Lowered``)."""
        n, mode, timed, first, whole = _choices(leaves, xs, on_cpu)
        mode, flat, cut = _cut(closed, n, mode)
        convs = convolutions(cut.main.jaxpr)
        picks = conv_tuning.im2col_picks(convs) if timed else set()
        makes, alternative = _options(cut, flat, mode, n, out_tree, leaves, xs, picks, first, whole)
        return _Lowered([make() for make in makes], leaves, xs, alternative)

    def _plan(self, closed, out_tree, leaves, xs, on_cpu):
        """``start``'s plan (``tuning``): the hoisting split (a job), the channel-last program with the
        convolution timings already on disk (a job, then swapped in), the convolutions not yet timed
        (``conv_tuning.picks``), and ``_Lowered``'s choice among the programs that leaves (:func:`_choose`;
        the one swapped in among them where the timings changed nothing).  The settings are read before
        its first step, i.e. at the first call."""
        n, asked, timed, first, whole = _choices(leaves, xs, on_cpu)
        mode, flat, cut = yield tuning.Job(lambda: _cut(closed, n, asked))
        convs = list(convolutions(cut.main.jaxpr))
        known = (yield from conv_tuning.picks(convs, measure=False)) if timed else set()
        rule = yield tuning.Job(lambda: _compiled(_candidate(cut, out_tree, xs, known, first), leaves))
        yield tuning.Swap(rule)
        picks = (yield from conv_tuning.picks(convs)) if timed else set()
        makes, alternative = _options(cut, flat, mode, n, out_tree, leaves, xs, picks, first, whole)
        kept = [rule] if picks == known else []
        return (yield from _choose(kept, makes[len(kept):], leaves, xs, alternative))

    def _trace(self, leaves, xs):
        flat, in_tree = jax.tree_util.tree_flatten((leaves, xs))
        closed, out_shape = jax.make_jaxpr(
            lambda *a: self.fn(*_split(jax.tree_util.tree_unflatten(in_tree, a))), return_shape=True)(*flat)
        return closed, jax.tree_util.tree_structure(out_shape)


# A GEMM whose activation operand holds at most this many rows (an im2col convolution's output positions, a
# Dense layer's batch) takes its weight first, stored output-features-major, in programs whose parameters
# do not fit the last-level cache.  Streaming a cold (K, O) weight row-major to few rows is what XLA:CPU's
# GEMM does slowest: (4, 4608) x (4608, 512) with the weight out of cache 0.56 ms as (K, O) second, 0.29 as
# (O, K) first (1.9x; 16 rows: 0.85 against 0.49); with the weight in cache the order as written is the
# faster (0.12 against 0.14).  Whole programs, interleaved in one process, batch 1 at 64x64: resnet18_v1
# (47 MB of parameters against a 32 MB L3) 0.76-0.91x, resnet18_v2 0.80-0.90x, resnet50_v1 0.86-0.93x, and
# alexnet batch 16 at 224 (its Dense layers) 0.90x; but mobilenet1.0 (17 MB) 1.16x and mobilenetv2_1.0
# (14 MB) 1.14x, whose weights stay in cache: hence the cache test (bench/HISTORY.md, session 21).
WEIGHT_FIRST = 16
FIRST_SWITCH = "AST_HYBRID_WEIGHT_FIRST"


def weight_first(leaves):
    """The row bound for weight-first GEMMs in a program over parameters ``leaves``: :data:`WEIGHT_FIRST`
    where their bytes exceed the last-level cache, else 0; ``AST_HYBRID_WEIGHT_FIRST=0`` never, ``=1`` always
    (whatever the cache)."""
    chosen = settings.get(FIRST_SWITCH)
    if chosen == "off":
        return 0
    if chosen == "on":
        return WEIGHT_FIRST
    size = sum(math.prod(a.shape) * np.dtype(a.dtype).itemsize for a in jax.tree_util.tree_leaves(leaves)
               if hasattr(a, "shape") and hasattr(a, "dtype"))      # arrays or their ShapeDtypeStructs
    cache = host_memory.last_level_cache()
    return WEIGHT_FIRST if cache and size > cache else 0


TUNE_SWITCH = conv_tuning.ENV        # "1": the whole program timed too


def _tuning(leaves, xs):
    """Whether to time the whole program against the one with im2col for every XLA convolution and keep the
    faster: with ``AST_HYBRID_CONV_TUNE=1``, no lowering forced (``AST_HYBRID_CONV_LOWERING``), concrete
    inputs.  Off by default (each convolution is timed alone instead, ``conv_tuning``): which program wins
    can change from one process to the next with the machine's load, and the two round differently (the
    program cache keeps the winner for later processes)."""
    if settings.get(TUNE_SWITCH) != "program" or settings.is_set(conv_lowering.ENV):
        return False
    return _concrete(leaves, xs)


def _concrete(leaves, xs):
    return all(isinstance(a, (jax.Array, np.ndarray)) and not isinstance(a, jax.core.Tracer)
               for a in jax.tree_util.tree_leaves((leaves, xs)))


def _candidate(cut, out_tree, xs, im2col, first=0):
    """(lowered, preparation): ``cut.main`` (a ``hoist.Split``'s program over the residuals, then the inputs)
    lowered channel-last, taking the residuals as stored (the kernels transposed to ``kernel_perms``), and
    what prepares them (:func:`_preparation`)."""
    main, n_res = cut.main, len(cut.sources)
    perms = kernel_perms(main, n_res, im2col, first)

    def inner(stored, *xs):
        args = list(stored) + jax.tree_util.tree_leaves(xs)
        return jax.tree_util.tree_unflatten(out_tree, channel_last(main, args, perms, n_res, im2col=im2col,
                                                                   weight_first=first))

    specs = [jax.ShapeDtypeStruct(tuple(v.aval.shape[d] for d in perms[i]) if i in perms else v.aval.shape,
                                  v.aval.dtype) for i, v in enumerate(main.jaxpr.invars[:n_res])]
    return jax.jit(inner).lower(specs, *xs), _preparation(cut, perms)


def _preparation(cut, perms):
    """(``sources``, ``prepare``) for :class:`Executable`: each residual of ``cut`` (a ``hoist.Split``) is a
    parameter as it is (``("param", j)``) or the ``k``-th output of ``prepare(flat parameters)``
    (``("prepared", k)``): what the parameters alone determine, and the kernels transposed to their
    ``perms``.  ``prepare`` is None where there is nothing to prepare."""
    sources, jobs = [], []
    for i, (kind, j) in enumerate(cut.sources):
        if kind == "param" and i not in perms:
            sources.append(("param", j))
        else:
            sources.append(("prepared", len(jobs)))
            jobs.append((kind, j, perms.get(i)))
    if not jobs:
        return tuple(sources), None

    def prepare(flat):
        computed = cut.prepare(flat) if any(kind == "computed" for kind, _, _ in jobs) else []
        values = [flat[j] if kind == "param" else computed[j] for kind, j, _ in jobs]
        return [v if perm is None else lax.transpose(v, perm) for v, (_, _, perm) in zip(values, jobs)]

    return tuple(sources), prepare


def _split(tree):
    leaves, xs = tree
    return (leaves, *xs)


# XLA:CPU's options for the program a first call runs while the tuned one is built (Program.start): its
# older loop emitter and no LLVM optimisation compile a network 3-4x faster and run it up to 1.9x slower
# (batch 1 at 224x224, compile / steady call: resnet18_v1 1.17 s / 33.9 ms -> 0.27 s / 42.2 ms, resnet50_v1
# 1.13 s / 59.0 ms -> 0.44 s / 86.1 ms, mobilenet1.0 0.73 s / 14.1 ms -> 0.24 s / 26.8 ms; XLA's own
# convolutions under one jax.jit: 0.54 s / 56.6 ms, 1.04 s / 105.7 ms, 0.68 s / 77.2 ms; bench/HISTORY.md)
QUICK_OPTIONS = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}


def _platform(leaves, xs):
    # the XLA:CPU rules (the convolution lowering rule and its timing, weight-first GEMMs) apply to a
    # program whose parameters live on the CPU; channel-last and hoisting everywhere (on an H100 they
    # made resnet18_v1/resnet50_v1 0.41-0.97x of the same network under one jax.jit: bench/results/gpu)
    return platform_of(jax.tree_util.tree_leaves((leaves, xs)))


def _as_written(closed):
    """Whether a traced program is compiled as traced: it does not convolve, or it has effects."""
    return not count_convolutions(closed.jaxpr) or bool(closed.effects)


def _as_traced(closed, out_tree, leaves, xs):
    """The traced program lowered as it is (XLA's own lowering; not traced again)."""
    def as_traced(leaves, *xs):
        args = jax.tree_util.tree_leaves((leaves, xs))
        return jax.tree_util.tree_unflatten(out_tree, jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args))

    return jax.jit(as_traced).lower(leaves, *xs)


def _choices(leaves, xs, on_cpu):
    """What the settings say for a program over ``leaves, xs``: (the parameter leaves' count, the hoisting
    mode, whether convolutions are timed per shape, the weight-first row bound, whether the whole program
    is timed against im2col everywhere)."""
    return (len(jax.tree_util.tree_leaves(leaves)), hoist.mode(), _timed_convolutions(on_cpu, leaves, xs),
            weight_first(leaves) if on_cpu else 0, on_cpu and _tuning(leaves, xs))


def _cut(closed, n, mode):
    """(hoisting mode, the program inlined or None, its ``hoist.Split``): what the parameters alone
    determine cut out (``xla/hoist.py``), or nothing (``"off"``)."""
    if mode == "off" or not hoist.retraceable(closed):
        return "off", None, hoist.unsplit(closed, n)
    flat = hoist.inline(closed)
    return mode, flat, hoist.split(flat, n)


def _options(cut, flat, mode, n, out_tree, leaves, xs, picks, first, whole):
    """What is compiled and timed against each other: functions giving the candidates (the program with the
    convolutions ``picks`` as im2col; where ``whole`` (``AST_HYBRID_CONV_TUNE=1``) also the same with im2col
    for every XLA convolution), and the alternative (the program as written, or None)."""
    makes = [lambda: _candidate(cut, out_tree, xs, picks, first)]
    whole = whole and count_convolutions(cut.main.jaxpr, ungrouped=True)
    if whole:
        # and the same program with im2col for XLA's convolutions: the faster is kept
        makes.append(lambda: _candidate(cut, out_tree, xs, True, first))

    def as_written():       # the program as written, timed against it where it is short (hoist.LONG)
        return _candidate(hoist.unsplit(flat, n), out_tree, xs, picks, first)
    timed = mode == "timed" and cut.hoisted and not whole and _concrete(leaves, xs)
    return makes, as_written if timed else None


def _timed_convolutions(on_cpu, leaves, xs):
    """Whether convolutions are timed per shape (``conv_tuning``)."""
    return on_cpu and conv_tuning.enabled() and _concrete(leaves, xs)


class _Lowered:
    """One candidate program, or two (the rule's lowerings, and im2col wherever it applies), each with what
    prepares its parameters; ``alternative`` (or None) lowers the program without ``xla/hoist.py``'s split.
    ``compile()`` compiles them and keeps the fastest on these parameters and inputs (:func:`_choose`)."""

    def __init__(self, candidates, leaves, xs, alternative=None):
        self.candidates, self.leaves, self.xs, self.alternative = candidates, leaves, xs, alternative

    def as_text(self):
        return self.candidates[0][0].as_text()

    def compile(self):
        ready = [lambda c=c: c for c in self.candidates]
        exe = tuning.run_now(_choose([], ready, self.leaves, self.xs, self.alternative))
        self.leaves = self.xs = self.alternative = None
        return exe


def _compiled(candidate, leaves):
    """A candidate ``(lowered, (sources, prepare))`` compiled: an :class:`Executable`."""
    lowered, (sources, prepare) = candidate
    if prepare is not None:
        # on the parameters themselves: their shardings too (replicated over several devices)
        prepare = jax.jit(prepare).lower(jax.tree_util.tree_leaves(leaves)).compile()
    return Executable(lowered.compile(), sources, prepare)


def _choose(exes, candidates, leaves, xs, alternative=None):
    """A plan (``tuning``) keeping the fastest of ``exes`` (compiled already) and ``candidates`` (each a
    function giving a candidate to lower and compile: jobs); ``alternative`` (a function giving one, or
    None) is compiled too where the first program's run is shorter than ``hoist.LONG``."""
    exes = list(exes)
    for make in candidates:
        exes.append((yield tuning.Job(lambda make=make: _compiled(make(), leaves))))
    if alternative is not None:
        jax.block_until_ready(exes[0](leaves, *xs))     # its first run: YNNPACK builds its pipelines
        t = time.perf_counter()
        jax.block_until_ready(exes[0](leaves, *xs))
        if time.perf_counter() - t < hoist.LONG:
            exes.append((yield tuning.Job(lambda: _compiled(alternative(), leaves))))
    if len(exes) > 1:
        return (yield from _fastest(exes, leaves, xs))
    return exes[0]


_CALLS = 5


def _fastest(exes, leaves, xs):
    """A plan keeping the fastest of ``exes`` on ``leaves, xs``: each run once (its first run builds YNNPACK's
    pipelines), then in turn, samples of ``conv_tuning.SAMPLE`` seconds' worth of consecutive calls, at least
    ``_CALLS``, the fastest sample of each, up to 9 rounds (each a timing slice) or ``conv_tuning.BUDGET``
    seconds (past 3 rounds); one round for programs over 0.5 s.  Consecutive calls, as a user's loop makes
    them: resnet50_v1 64x64 b1 split by xla/hoist.py took 10.1 ms a single call against 10.5 as written, but
    11.7 against 10.3 in runs of 10 calls of each (the thread pool's state after the call before)."""
    def run(exe, calls):
        t = time.perf_counter()
        for _ in range(calls):
            out = exe(leaves, *xs)
        jax.block_until_ready(out)
        return (time.perf_counter() - t) / calls

    for exe in exes:
        run(exe, 1)
    calls = max(_CALLS, int(conv_tuning.SAMPLE / max(run(exes[0], 1), 1e-6)))
    times = [[] for _ in exes]
    spent = 0.0
    for r in range(9):
        t = time.perf_counter()
        for k in range(len(exes)) if r % 2 == 0 else reversed(range(len(exes))):
            times[k].append(run(exes[k], calls))
        spent += time.perf_counter() - t
        if times[0][-1] > 0.5 or (r >= 2 and spent > conv_tuning.BUDGET):
            break
        yield tuning.SLICE
    return min(zip(exes, times), key=lambda et: min(et[1]))[0]


class Executable:
    """A compiled channel-last program called with the parameters as they are: ``prepare`` (a compiled
    program, or None) computes from them what the program reads besides them (``xla/hoist.py``, the kernels
    transposed ``*spatial, I, O``) once per ``leaves`` tuple, i.e. once per parameter update, not per call;
    ``sources`` says where each of the program's first inputs comes from (``("param", j)``: parameter leaf
    ``j``; ``("prepared", k)``: ``prepare``'s ``k``-th output).  The program cache writes all three."""

    def __init__(self, compiled, sources, prepare=None):
        self.compiled, self.prepare = compiled, prepare
        host_memory.keep_temporaries(compiled)      # its temporaries reused from call to call, not mapped anew
        self.sources = tuple((str(kind), int(i)) for kind, i in sources)
        self._src = self._stored = None

    def __call__(self, leaves, *xs):
        if leaves is not self._src:
            flat = jax.tree_util.tree_leaves(leaves)
            made = self.prepare(flat) if self.prepare is not None else ()
            self._stored = [flat[i] if kind == "param" else made[i] for kind, i in self.sources]
            self._src = leaves
        return self.compiled(self._stored, *xs)

    def as_text(self):
        return self.compiled.as_text()
