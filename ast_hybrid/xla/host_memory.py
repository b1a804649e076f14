"""Host memory for compiled programs: large temporaries kept from one call to the next, not mapped anew.

XLA:CPU runs a program on its worker threads, and glibc's malloc serves each thread from an arena of its own whose
heaps hold at most 64 MB: a program's temporaries beyond that (SqueezeNet 1.1 at batch 16 keeps one 97 MB block)
are mapped with ``mmap`` at every call and unmapped after it, so every call faults each of their pages in again
(25,000 faults per call there).  :func:`configure` asks glibc for one arena, to serve blocks up to 128 MB from the
heap (its mmap threshold) and to keep freed memory up to 1 GB (its trim threshold): the block is then reused.
Blocks above 128 MB are mapped and unmapped as glibc does by default: with the mmap threshold at 1 GB, MXNet's
unit test ``test_slice_pooling2d_slice_pooling2d`` (a 537 MB input, its copy and their gradients, 16 networks in
turn) left the heap fragmented at 6.7 GB resident between networks (7.6 GB peak; MXNet 4.8 GB); at 128 MB, 2.9 GB
(5.8 GB peak); without these settings 1.5 GB (4.9 GB).  Measured here (separate processes, steady calls):
squeezenet1.1 b16 139 -> 102-113 ms, resnet50_v1 b16 876-906 -> 801-816 ms; batch-1 programs, whose temporaries
fit, no different within the machine's noise (bench/HISTORY.md).  Not every process keeps every page: in a small
probe (~100 MB of temporaries, tests/ops/test_host_memory.py) about a third of the processes still fault a quarter
to three quarters of them in per call, after the heap's top is lowered and raised again (seen with strace; what
lowers it, with the trim threshold at 1 GB, is not located).

A compiled program's temporaries are one block (XLA's buffer assignment packs them): 150 MB for
mobilenetv2_1.0 at batch 16, 216 MB for resnet50_v1, 129 MB for densenet121 and inceptionv3.  Above 128 MB
that block was mapped again at every call (mobilenetv2_1.0 b16: 193 ms a call against 122-148 ms with the
threshold above its block).  :func:`keep_temporaries` raises the mmap threshold above the temporaries of each
channel-last predict program compiled or loaded (``xla/program.py``'s ``Executable``), up to
:data:`KEEP_AT_MOST` (512 MB): a program called again and again reuses its block; other large blocks (a
537 MB input) are still mapped.  Training programs (``jax.jit``) are left at 128 MB.

:func:`last_level_cache` reads the size of the CPU's last-level cache (Linux's sysfs), for programs that
choose a GEMM's operand order by whether their weights stay in it (``xla/program.py``).

It holds for threads that have not allocated yet, so it must run before XLA's threads exist: :func:`install`
(run when the front is imported: ``ast_hybrid.xla``, which Gluon, ``nd`` and ``import mxnet`` import) makes
jax run it when it creates its CPU client, that is before the first program is compiled; at once if jax has
its client already.  Importing ``ast_hybrid`` alone, linting, or converting source leaves malloc as it is.
Freed memory up to 1 GB then stays with the process.  ``AST_HYBRID_MALLOC=0`` leaves malloc as it is.  glibc
only: elsewhere (macOS, Windows, musl) nothing is changed.
"""

from __future__ import annotations

import functools
import os
import sys
import threading

from ast_hybrid.core import settings

ENV = "AST_HYBRID_MALLOC"
KEEP = 1 << 30                  # bytes: the trim threshold
MMAP_AT = 128 << 20             # bytes: the mmap threshold
KEEP_AT_MOST = 512 << 20       # bytes: keep_temporaries raises the mmap threshold up to this
# mallopt's parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8


_LOCK = threading.Lock()


class _Malloc:
    """glibc's settings as this module left them: process state, as malloc's own (read and written under
    ``_LOCK``)."""

    def __init__(self):
        self.libc = None            # set by configure() where it applied the settings
        self.mmap_at = MMAP_AT


_MALLOC = _Malloc()


def install() -> None:
    """Run :func:`configure` when jax creates its CPU client, or now if it exists (see the module doc).  Wraps
    the CPU backend's factory in jax's registry once; where this jax has no such registry, configures now."""
    with _LOCK:
        try:
            from jax._src import xla_bridge
        except ImportError:         # another jax layout: as before the hook, at once
            configure()
            return
        registration = getattr(xla_bridge, "_backend_factories", {}).get("cpu")
        if registration is None or getattr(xla_bridge, "_backends", None) or not hasattr(registration, "factory"):
            configure()             # the client exists already (or cannot be hooked): now
            return
        make = registration.factory
        if getattr(make, "_ast_hybrid_malloc", False):
            return

        def factory(*args, **kwargs):
            configure()
            return make(*args, **kwargs)

        factory._ast_hybrid_malloc = True
        registration.factory = factory


def configure() -> bool:
    """Set glibc's malloc as described above; whether it was set."""
    if not settings.get(ENV) or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):       # not glibc
            return False
        params = ((_M_ARENA_MAX, 1), (_M_MMAP_THRESHOLD, MMAP_AT), (_M_TRIM_THRESHOLD, KEEP))
        if all(libc.mallopt(p, v) == 1 for p, v in params):
            _MALLOC.libc, _MALLOC.mmap_at = libc, MMAP_AT
            return True
        return False
    except (OSError, AttributeError):
        return False


def keep_temporaries(compiled) -> bool:
    """Raise glibc's mmap threshold above ``compiled``'s temporaries (a jax ``Compiled``), up to
    :data:`KEEP_AT_MOST`, so that the block is reused from one call to the next (see the module doc); whether
    it was raised.  Nothing where :func:`configure` did not apply the settings."""
    if _MALLOC.libc is None:
        return False
    try:
        need = int(compiled.memory_analysis().temp_size_in_bytes)
    except Exception:       # noqa: BLE001 - a backend without the analysis: left as it is
        return False
    want = (need + (2 << 20)) & ~((1 << 20) - 1)        # the block, its alignment, rounded up to a MB
    with _LOCK:
        if need <= _MALLOC.mmap_at or want > KEEP_AT_MOST:
            return False
        if _MALLOC.libc.mallopt(_M_MMAP_THRESHOLD, want) != 1:
            return False
        _MALLOC.mmap_at = want
        return True


@functools.lru_cache(maxsize=None)
def last_level_cache() -> int:
    """Bytes of the largest CPU cache the first CPU reports (Linux's sysfs: its last level), 0 where unknown."""
    root = "/sys/devices/system/cpu/cpu0/cache"
    sizes = [0]
    try:
        entries = os.listdir(root)
    except OSError:
        return 0
    for d in entries:
        try:
            with open(os.path.join(root, d, "size")) as fh:
                text = fh.read().strip().upper()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes)
