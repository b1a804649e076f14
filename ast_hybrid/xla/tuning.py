"""A program that answers at once and is tuned afterwards: the first call of a hybridized block runs the
program ready soonest, and the work that only makes later calls faster (``conv_tuning``'s per-shape timing,
``hoist``'s split and its timing, the channel-last program's compile) is done after it.

That work is a *plan*: a generator, run on the thread that calls the program, which yields

- :class:`Job` ``(fn)``: ``fn()`` compiles or lowers (no timing, nothing that traces a block: it reads traced
  programs only) and runs off that thread, in a thread of its own (``ast-hybrid tuning``), while the calls go
  on; its result is sent back into the plan at the first call after it ends;
- :data:`SLICE`: a timing round ended.  Timing measures, so it runs on the calling thread between two calls,
  when the program's own output is ready and no job of the plan runs: each call resumes the plan for at most
  :data:`BUDGET` seconds of rounds;
- :class:`Swap` ``(exe)``: from the next call on, ``exe`` runs (a program as fast as or faster than the one
  running, computing the same values as today's choices between programs do).

and returns the program kept.  :class:`Tuning` drives a plan from the calls (``AST_HYBRID_TUNING=later``, the
default); :func:`run_now` runs one to its end at once, jobs inline (``AST_HYBRID_TUNING=first``: the whole
tuning before the first call returns, as before issue 31).  A job's exception is thrown into its plan where
the plan waits for it (``conv_tuning`` leaves a convolution it cannot time to XLA); a plan that fails leaves
the program running as it is (tuning is an optimisation; logged at debug level).  Calls from several threads
share one plan: one advances it, the others just run.  A job runs with the calling thread's JAX settings
that shape a program (``jax_enable_x64``, the default device, matmul precision, dtype and rank promotion:
JAX keeps them per thread) and its context variables (``core.context.tracing_for``'s platform).

At exit a job still running is waited for (at most :data:`EXIT_WAIT` seconds; a daemon thread compiling
while the interpreter shuts down can crash it); a plan not ended is dropped, its program not written to the
program cache (what it measured, ``conv_tuning``'s answers, is on disk already).

May import: jax, the standard library, ``ast_hybrid.core``.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import logging
import threading
import time

from ast_hybrid.core import settings
from ast_hybrid.core.tiers import background_priority

__all__ = ["Job", "Swap", "SLICE", "Tuning", "run_now", "deferred", "finish_all", "ENV"]

ENV = "AST_HYBRID_TUNING"
BUDGET = 0.05          # seconds of timing rounds a call resumes at most
EXIT_WAIT = 30.0
THREAD_NAME = "ast-hybrid tuning"
_LOG = logging.getLogger(__name__)


class Job:
    """A step of a plan run off the calling thread: ``fn()``'s result is sent back into the plan."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


class Swap:
    """A step of a plan: ``exe`` runs from the next call on."""

    __slots__ = ("exe",)

    def __init__(self, exe):
        self.exe = exe


SLICE = object()       # a step of a plan: a timing round ended


def deferred() -> bool:
    """Whether tuning happens after the first call (``AST_HYBRID_TUNING=later``, the default)."""
    return settings.get(ENV) == "later"


def run_now(plan, compiling=None, sent=None):
    """Run ``plan`` to its end on this thread (jobs inline, inside ``compiling()`` when given, swaps
    skipped), sending it ``sent`` first (what it waits for, where it is under way), and return the program
    it keeps."""
    while True:
        try:
            step = _resume(plan, sent)
        except StopIteration as stop:
            return stop.value
        sent = None
        if isinstance(step, Job):
            try:
                with compiling() if compiling is not None else contextlib.nullcontext():
                    sent = step.fn()
            except Exception as exc:        # thrown into the plan, which may go on without it
                sent = _Thrown(exc)


class _Thrown:
    """A job's exception, thrown into its plan where the plan waits for the job's result."""

    __slots__ = ("exc",)

    def __init__(self, exc):
        self.exc = exc


def _resume(plan, sent):
    return plan.throw(sent.exc) if isinstance(sent, _Thrown) else plan.send(sent)


# JAX settings kept per thread that change how a traced program lowers
_JAX_STATES = ("enable_x64", "default_device", "default_matmul_precision", "numpy_dtype_promotion",
               "numpy_rank_promotion")


def _jax_settings():
    from jax._src import config

    out = []
    for name in _JAX_STATES:
        state = getattr(config, name, None)
        if state is not None and hasattr(state, "value"):
            out.append((state, state.value))
    return out


@contextlib.contextmanager
def _entered(states):
    with contextlib.ExitStack() as stack:
        for state, value in states:
            stack.enter_context(state(value))
        yield


class Tuning:
    """A program, ``current``, called as ``current(leaves, *xs)``, while ``plan`` (see the module's doc)
    builds a better one from the calls.  ``on_final(exe)`` (settable) is called with the program the plan
    keeps, once, on the calling thread; ``compiling()`` (or None) is a context each job runs in (the program cache's:
    JAX's own cache off while compiling a program it will write)."""

    def __init__(self, current, plan, on_final=None, compiling=None):
        self.current = current
        self._plan, self.on_final, self._compiling = plan, on_final, compiling
        self._states = _jax_settings()
        self._context = contextvars.copy_context()
        self._thread = None
        self._result = None
        self._sent = None
        self._busy = threading.Lock()      # calls from several threads: one advances the plan, the rest run

    @property
    def pending(self) -> bool:
        """Whether the plan has not ended yet."""
        return self._plan is not None

    def __call__(self, leaves, *xs):
        out = self.current(leaves, *xs)
        if self._plan is not None:
            self._advance(out)
        return out

    def as_text(self):
        return self.current.as_text()

    def finish(self):
        """End the plan now on this thread (a running job waited for, the rest inline) and return the program
        it keeps: what a benchmark calls before it times steady calls."""
        with self._busy:
            return self._finish()

    def _finish(self):
        if self._plan is not None:
            if self._thread is not None:
                self._thread.join()
                self._collect()
            try:
                self._done(run_now(self._plan, self._compiling, self._sent))
            except Exception as exc:        # an optimisation: the program running stays
                self._failed(exc)
        return self.current

    # -- the plan, step by step --------------------------------------------------------------------------

    def _advance(self, out):
        if not self._busy.acquire(blocking=False):
            return
        try:
            self._step(out)
        finally:
            self._busy.release()

    def _step(self, out):
        if self._plan is None:
            return
        if self._thread is not None:
            if self._thread.is_alive():
                return
            self._collect()
        import jax

        jax.block_until_ready(out)      # timing rounds measure nothing of the call before them
        start = time.perf_counter()
        while True:
            try:
                step = _resume(self._plan, self._sent)
            except StopIteration as stop:
                self._done(stop.value)
                return
            except Exception as exc:
                self._failed(exc)
                return
            self._sent = None
            if isinstance(step, Job):
                self._start(step)
                return
            if isinstance(step, Swap):
                self.current = step.exe
            elif time.perf_counter() - start > BUDGET:
                return

    def _start(self, job):
        def work():
            background_priority()       # the calls first: the job takes the cores they leave
            try:
                with _entered(self._states), \
                        self._compiling() if self._compiling is not None else contextlib.nullcontext():
                    self._result = (True, self._context.run(job.fn))
            except Exception as exc:   # thrown into the plan on the calling thread (_collect)
                self._result = (False, exc)

        self._result = None
        self._thread = threading.Thread(target=work, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def _collect(self):
        """Take the ended job's result (or its exception) as what the plan is sent next."""
        self._thread = None
        ok, value = self._result if self._result is not None else (False, RuntimeError("the job did not end"))
        self._result = None
        self._sent = value if ok else _Thrown(value)

    def _done(self, exe):
        self._plan = self._sent = None
        if exe is not None:
            self.current = exe
            if self.on_final is not None:
                try:
                    self.on_final(exe)
                except Exception as exc:       # writing it is an optimisation too
                    _LOG.debug("tuned program not kept: %s: %s", type(exc).__name__, exc)

    def _failed(self, exc):
        _LOG.debug("tuning stopped, the program running kept: %s: %s", type(exc).__name__, exc)
        self._plan = self._sent = None


def finish_all(programs):
    """End the tuning of every :class:`Tuning` a predict program holds: ``programs`` is a
    ``program.Program``, a ``program_cache.Cached`` or anything with a ``table`` of programs (per input
    signature) or a ``jitted`` one."""
    seen, todo = set(), [programs]
    while todo:
        p = todo.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        if isinstance(p, Tuning):
            p.finish()
            continue
        todo.extend(getattr(p, "table", {}).values())
        if getattr(p, "jitted", None) is not None:
            todo.append(p.jitted)


def _join_at_exit():
    for t in threading.enumerate():
        if t.name == THREAD_NAME and t.is_alive():
            t.join(EXIT_WAIT)


atexit.register(_join_at_exit)
