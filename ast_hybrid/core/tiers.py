"""A program compiled twice, as a JIT compiles hot code: quickly for its first calls, then optimised in the
background and swapped in (two tiers); on request (``AST_HYBRID_TIERS=two``), not by default.

XLA:CPU spends most of a large program's compile in LLVM's optimisation passes and its fusion emitters.
With :data:`QUICK_OPTIONS` (LLVM at -O0, XLA's older loop emitter) the same program compiles in a fraction
of the time and runs slower: op-by-op training of mobilenetv2_0.25 (GluonCV's ImageNet script, batch 16 at
64x64) compiles its recorded backward in 2.5 s instead of 9.2 s and its optimizer step over every parameter
in 0.64 s instead of 4.2 s, and the backward then runs 2-3.5x slower, the step 2x.  :class:`Tiered`
compiles a program's first signature that way, and from its :data:`AFTER`-th call (a program met again: a
training loop's) compiles it as one tier would (:func:`loop_options`, LLVM optimising) in a thread of its
own (``ast-hybrid tier-up``, one compile at a time); the calls go on with the quick program and take the
optimised one as soon as it is there.  Both are compiled from one lowering (traced once, on the calling
thread): the same computation, whose values differ in their last bits (optimised code rounds some operations
differently: ``tests/core/test_tiers.py``), so which calls run which, a matter of timing, shows in those
bits.

Measured on this project's 2-core machine it does not pay (bench/HISTORY.md, session 49): on that script the
background compiles take the cores the training needs, and the first epoch took 25.0 s with two tiers
against 23.6 s with one, the next four 1.6-4.3 s against 1.2-1.5 s.  So :func:`compiled` gives a plain
``jax.jit`` unless ``AST_HYBRID_TIERS=two`` asks for tiers (a machine with cores to spare; a run of few
steps, where the quick program never needs replacing), compiled with :func:`loop_options`.  Off the CPU
there is one tier whatever is asked.

A :class:`Tiered` call is keyed by its arguments' signature (each array's shape, dtype, weak type and
sharding; the type of a Python scalar): a new signature is lowered and compiled quick again.  A failed
optimised compile leaves the quick program running (logged at debug level).  :func:`finish` waits for the
optimised compiles under way (what a benchmark calls before it times steady calls); at exit they are waited
for (at most :data:`EXIT_WAIT` seconds: a thread compiling while the interpreter shuts down can crash it).

May import: the standard library, jax (inside functions), ``core.settings``.
"""

from __future__ import annotations

import atexit
import logging
import threading

from ast_hybrid.core import settings

__all__ = ["QUICK_OPTIONS", "LOOP_OPTIONS", "AFTER", "Tiered", "compiled", "loop_options", "quick_options", "finish",
           "signature", "background_priority"]

#: XLA's compile options for a program that must answer soon (on CPU): LLVM at -O0, no fusion emitters
QUICK_OPTIONS = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}
#: XLA's options for programs of one op, of a recorded backward, of an optimizer step (on CPU)
LOOP_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
AFTER = 2              # the call of a signature from which its optimised program is compiled
ENV = "AST_HYBRID_TIERS"
EXIT_WAIT = 60.0
THREAD_NAME = "ast-hybrid tier-up"
_LOG = logging.getLogger(__name__)
_ONE_AT_A_TIME = threading.Lock()      # the background compiles, one after another (XLA uses the cores)


def compiled(fn):
    """``fn`` (a pure function of arrays, pytrees of them and scalars) as the program of a recorded backward or
    an optimizer step: ``jax.jit`` with :func:`loop_options`, or a :class:`Tiered` where
    ``AST_HYBRID_TIERS=two`` (read now)."""
    if settings.get(ENV) == "two":
        return Tiered(fn)
    import jax

    return jax.jit(fn, compiler_options=loop_options(jax.default_backend()))


def loop_options(platform: str) -> dict | None:
    """XLA's options for an op's own program, a recorded backward and an optimizer step (on CPU): XLA's older
    loop emitter instead of its fusion emitters.  A one-op program compiles in about two thirds of the time
    and runs as fast; mobilenetv2_0.25's recorded backward (GluonCV's ImageNet script, batch 16 at 64x64)
    compiles in 6.3-6.6 s instead of 9.8-10.1 s and its optimizer step in 1.5-1.9 s instead of 4.5 s, and
    the epochs after the first take 0.94-1.47 s instead of 1.26-1.77 s.  A hybridized network's program
    keeps the fusion emitters (they ran resnet18_v1's predict program up to 20% faster)."""
    return dict(LOOP_OPTIONS) if platform == "cpu" else None


BACKGROUND_NICE = 10


def background_priority():
    """Lower the calling thread's scheduling priority (Linux: its nice value, +:data:`BACKGROUND_NICE`), for a
    thread that compiles or tunes while the program's own calls go on, so that the calls come first.  Only
    that thread: the worker threads XLA:CPU compiles with were started by others and keep their priority (on
    2 cores, GluonCV's ImageNet script hybridized with a one-batch validation set still ran its next training
    epochs at 1.5-2.0 s instead of 0.8 s while its validation program's tuning compiled).  Nothing where the
    platform has no per-thread priority."""
    import os

    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
    except (AttributeError, OSError):
        pass


def quick_options(platform: str) -> dict | None:
    """:data:`QUICK_OPTIONS` for a program on ``platform`` ('cpu'), None elsewhere."""
    return dict(QUICK_OPTIONS) if platform == "cpu" else None


def signature(args) -> tuple:
    """What a compiled program's call depends on: the tree of ``args`` and each leaf's shape, dtype, weak
    type and sharding (a Python or NumPy scalar: its type)."""
    import jax

    leaves, tree = jax.tree_util.tree_flatten(args)
    sig = [tree]
    for x in leaves:
        aval = getattr(x, "aval", None)
        if aval is not None:
            sig.append((aval.shape, aval.dtype, aval.weak_type, x.sharding))
        else:
            sig.append((type(x), getattr(x, "shape", None), getattr(x, "dtype", None)))
    return tuple(sig)


def _platform(args) -> str:
    import jax

    for x in jax.tree_util.tree_leaves(args):
        devices = getattr(x, "devices", None)
        if devices is not None:
            return next(iter(devices())).platform
    return jax.default_backend()


class _Entry:
    __slots__ = ("exe", "lowered", "calls", "thread", "optimised")

    def __init__(self, exe, lowered):
        self.exe, self.lowered, self.calls, self.thread, self.optimised = exe, lowered, 1, None, None


class Tiered:
    """``fn`` (a pure function of arrays, pytrees of them and scalars; no static arguments) compiled per
    signature of its arguments, quick first and optimised from its :data:`AFTER`-th call (module doc)."""

    def __init__(self, fn):
        self._fn = fn
        self._jit = None
        self._table: dict = {}
        self._lock = threading.Lock()

    def __call__(self, *args):
        sig = signature(args)
        entry = self._table.get(sig)
        if entry is None:
            entry = self._first(sig, args)
        elif entry.lowered is not None:
            self._count(entry)
        return entry.exe(*args)

    def _first(self, sig, args):
        import jax

        if self._jit is None:
            self._jit = jax.jit(self._fn)
        lowered = self._jit.lower(*args)
        options = quick_options(_platform(args))
        if options is None:
            entry = _Entry(lowered.compile(), None)
        else:
            entry = _Entry(lowered.compile(options), lowered)
        with self._lock:
            if len(self._table) >= 64:      # ever new signatures: bounded, as JAX's own caches are not
                self._table.clear()
            self._table[sig] = entry
        return entry

    def _count(self, entry):
        with self._lock:
            if entry.optimised is not None:         # the optimised program is there: from now on it runs
                entry.exe, entry.lowered, entry.thread = entry.optimised, None, None
                return
            entry.calls += 1
            if entry.calls < AFTER or entry.thread is not None:
                return
            entry.thread = threading.Thread(target=self._optimise, args=(entry,), name=THREAD_NAME, daemon=True)
            entry.thread.start()

    @staticmethod
    def _optimise(entry):
        background_priority()
        with _ONE_AT_A_TIME:
            try:
                exe = entry.lowered.compile(dict(LOOP_OPTIONS))     # the one-tier program (quick: CPU only)
            except Exception as exc:        # an optimisation: the quick program keeps running
                _LOG.debug("optimised compile failed, the quick program kept: %s: %s", type(exc).__name__, exc)
                return
        entry.optimised = exe

    def finish(self):
        """Wait for this program's optimised compiles under way and run them from the next call."""
        for entry in list(self._table.values()):
            thread = entry.thread
            if thread is not None:
                thread.join()
            with self._lock:
                if entry.optimised is not None:
                    entry.exe, entry.lowered, entry.thread = entry.optimised, None, None

    @property
    def signatures(self) -> int:
        """How many signatures have a program (each traced and compiled once)."""
        return len(self._table)

    @property
    def optimised(self) -> bool:
        """Whether every signature met runs its optimised program."""
        return all(e.lowered is None for e in self._table.values())


def finish():
    """Wait for every optimised compile under way in this process (their programs run from their next call)."""
    for t in threading.enumerate():
        if t.name == THREAD_NAME and t.is_alive():
            t.join()


def _join_at_exit():
    for t in threading.enumerate():
        if t.name == THREAD_NAME and t.is_alive():
            t.join(EXIT_WAIT)


atexit.register(_join_at_exit)
