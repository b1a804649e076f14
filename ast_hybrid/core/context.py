"""Devices, MXNet-style: ``Context``, ``cpu(i)``, ``gpu(i)`` and the current context, per thread.

``with mx.gpu(1):`` makes ``gpu(1)`` the current context of the thread that entered it (MXNet keeps its
default context in a ``threading.local`` too); another thread still sees ``cpu(0)``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "context_of",
           "set_default_context", "place", "accelerated", "cpu_by_default", "platform_of", "trace_platform",
           "tracing_for"]


class _Stack(threading.local):
    """The contexts entered with ``with ctx:`` in this thread (innermost last)."""

    def __init__(self):
        self.entered = []
        self.default = None     # set_default_context(): the context outside every `with` (cpu(0) if None)


_ENTERED = _Stack()


class _DefaultContext:
    """``Context.default_ctx``: this thread's default context (MXNet's class property)."""

    def __get__(self, obj, owner):
        return _ENTERED.default or Context("cpu", 0)

    def __set__(self, obj, value):
        raise AttributeError("set the default with mx.test_utils.set_default_context(ctx)")


class Context:
    """A device, MXNet-style: ``cpu(0)``, ``gpu(0)``."""

    __slots__ = ("device_type", "device_id")
    default_ctx = _DefaultContext()

    def __init__(self, device_type="cpu", device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif isinstance(device_type, str) and device_type.endswith(")") and "(" in device_type:
            # "gpu(1)": the string form MXNet's operators take for ctx
            device_type, _, rest = device_type.partition("(")
            device_id = rest[:-1]
        if device_type not in ("cpu", "gpu", "cpu_pinned", "cpu_shared"):
            raise ValueError(f"Context: unknown device_type {device_type!r} (expected 'cpu' or 'gpu')")
        self.device_type, self.device_id = device_type, int(device_id)

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, Context) and (self.device_type, self.device_id) == (
            other.device_type, other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __enter__(self):
        _ENTERED.entered.append(self)
        return self

    def __exit__(self, *exc):
        _ENTERED.entered.pop()

    def jax_device(self, strict=False):
        """The jax device this context names: ``cpu(i)``/``gpu(i)`` is this process's i-th local device of
        that kind (as MXNet numbers a machine's devices; with several processes, each has its own).  With one
        CPU device, any ``cpu(i)`` is it, as every CPU context is the same memory in MXNet (``strict``: an
        error instead, where several contexts must be several devices)."""
        import jax

        kind = "gpu" if self.device_type == "gpu" else "cpu"
        try:
            devices = jax.local_devices(backend=kind)
        except RuntimeError:
            raise RuntimeError(f"{self!r}: jax has no {kind} device here (jax.devices(): {jax.devices()})") from None
        if kind == "cpu" and len(devices) == 1 and self.device_id >= 0 and not strict:
            return devices[0]
        if not 0 <= self.device_id < len(devices):
            if kind == "gpu":       # MXNet's words for a device ordinal the machine lacks
                raise RuntimeError(f"{self!r}: CUDA: invalid device ordinal: this machine has "
                                   f"{len(devices)} GPU(s), gpu(0) to gpu({len(devices) - 1})" if devices else
                                   f"{self!r}: no GPU here (jax.devices(): {jax.devices()})")
            more = (" (to simulate more CPU devices, set XLA_FLAGS=--xla_force_host_platform_device_count=N "
                    "before jax starts, or use `ast-hybrid launch --devices-per-process N`)" if kind == "cpu" else "")
            raise RuntimeError(f"{self!r}: only {len(devices)} {kind} device(s) available, numbered from 0{more}")
        return devices[self.device_id]


def cpu(device_id=0):
    return Context("cpu", device_id)


def gpu(device_id=0):
    return Context("gpu", device_id)


def cpu_pinned(device_id=0):
    return Context("cpu_pinned", device_id)


def num_gpus():
    """How many GPUs jax sees (0 without a GPU backend)."""
    import jax

    try:
        return len(jax.devices("gpu"))
    except RuntimeError:
        return 0


def current_context():
    """The context this thread entered last (``with ctx:``), else its default (``cpu(0)`` unless set)."""
    entered = _ENTERED.entered
    return entered[-1] if entered else _ENTERED.default or Context("cpu", 0)


def set_default_context(ctx):
    """This thread's context outside every ``with ctx:`` (MXNet's ``Context._default_ctx``, per thread)."""
    _ENTERED.default = Context(ctx)


def context_of(arr):
    """The context of the first (lowest-numbered) device holding ``arr``; a tracer's is the current one."""
    devices = getattr(arr, "devices", None)
    if devices is None:
        return current_context()
    try:
        dev = min(devices(), key=lambda d: d.id)
    except Exception:      # a tracer: no device yet
        return current_context()
    import jax

    kind = "gpu" if dev.platform in ("gpu", "cuda", "rocm") else "cpu"
    local = jax.local_devices(backend=dev.platform)
    return Context(kind, local.index(dev) if dev in local else 0)


def cpu_by_default():
    """MXNet's default context is ``cpu(0)``: where JAX's default backend is an accelerator, arrays made
    without a context (and every uncommitted JAX array) go to the CPU, as MXNet's do, and ``ctx=mx.gpu(i)``
    moves them.  Leaves a default device the user gave JAX (``jax.default_device``, ``JAX_DEFAULT_DEVICE``)
    alone.  Called when the front is imported; no backend is started here."""
    import jax

    if getattr(jax.config, "jax_default_device", None) is None:
        jax.config.update("jax_default_device", "cpu")


@functools.lru_cache(maxsize=None)
def accelerated() -> bool:
    """Whether JAX's default backend is an accelerator (a GPU, a TPU): a fact of the process."""
    import jax

    return jax.default_backend() != "cpu"


def place(arr, ctx):
    """``arr`` (a jax array) on ``ctx``'s device.  ``cpu(0)`` on a machine of CPU devices only leaves JAX's
    placement (uncommitted, free to join arrays of any device, as before any context is named); every other
    context commits ``arr`` to its device, so that arrays of two devices in one op are an error, as in MXNet."""
    import jax

    ctx = Context(ctx)
    if ctx.device_type != "gpu" and ctx.device_id == 0 and not accelerated():
        return arr
    return jax.device_put(arr, ctx.jax_device())


HOST_FILL = 1 << 16      # elements: a filled array up to this size is made on the host and copied


def filled(shape, value, dtype, like=None):
    """A concrete array of ``shape`` filled with ``value``: made on the host and copied where small (jax's
    ``jnp.full`` compiles a program per new shape, 20-30 ms each: the cost of eager loops over many shapes;
    above :data:`HOST_FILL` elements the copy costs more than a cached program's run); on ``like``'s device
    where that array is committed to one (a tracer ``like``: ``jnp.full``, in its trace)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    if isinstance(like, jax.core.Tracer):
        return jnp.full(shape, value, dtype)
    sharding = like.sharding if like is not None and like.committed else None
    if int(np.prod(shape)) > HOST_FILL:
        out = jnp.full(shape, value, dtype)
        return out if sharding is None else jax.device_put(out, sharding)
    return jax.device_put(np.full(shape, value, dtype), sharding)


def platform_of(arrays):
    """``"cpu"`` or ``"gpu"``: the platform of the first concrete array among ``arrays`` (an iterable), else
    :func:`trace_platform`'s answer."""
    for a in arrays:
        sharding = getattr(a, "sharding", None)
        if sharding is not None and not _is_tracer(a):
            dev = next(iter(sharding.device_set))
            return "cpu" if dev.platform == "cpu" else "gpu"
    return trace_platform()


def _is_tracer(a):
    import jax

    return isinstance(a, jax.core.Tracer)


_TRACE_PLATFORM = contextvars.ContextVar("ast_hybrid_trace_platform", default=None)


def trace_platform() -> str:
    """The platform the program being traced will run on, as its caller said (:func:`tracing_for`); where
    none said, ``"gpu"`` on a machine whose JAX default backend is an accelerator, else ``"cpu"``.  The
    XLA:CPU rewrites (the convolution lowering rule, its timing, the weight-first GEMMs) ask it."""
    chosen = _TRACE_PLATFORM.get()
    if chosen is not None:
        return chosen
    return "gpu" if accelerated() else "cpu"


@contextlib.contextmanager
def tracing_for(platform):
    """Programs traced inside run on ``platform`` (``"cpu"``/``"gpu"``)."""
    token = _TRACE_PLATFORM.set(platform)
    try:
        yield
    finally:
        _TRACE_PLATFORM.reset(token)
