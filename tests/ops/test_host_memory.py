"""ast_hybrid/xla/host_memory.py: a compiled program's large temporaries are reused from call to call.

Measured in fresh processes (the setting holds for threads that have not allocated yet): a program with
~100 MB of temporaries on XLA's worker threads faults their pages in at every call with malloc as it is,
and not (or far less) once the front is imported first.  ``import ast_hybrid`` alone (and linting) leaves
malloc as it is: the setting is applied when jax creates its CPU client, before the first program."""

import json
import os
import subprocess
import sys

import pytest

from ast_hybrid.xla import host_memory

pytestmark = pytest.mark.processes     # each test starts Python processes: not in the quick tier

PROBE = r"""
import json, resource
import ast_hybrid.gluon  # first: malloc is configured when jax makes its CPU client
import jax, jax.numpy as jnp
from jax import lax

def f(x, w):            # SqueezeNet's stem at batch 16: ~100 MB of temporaries on XLA's worker threads
    h = lax.conv_general_dilated(x, w, (2, 2), ((0, 1), (0, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return lax.reduce_window(jnp.maximum(h, 0.0), -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "VALID").sum((2, 3))

f = jax.jit(f)
x, w = jnp.ones((16, 3, 224, 224), jnp.float32), jnp.ones((64, 3, 3, 3), jnp.float32)
for _ in range(3):
    f(x, w).block_until_ready()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(4):
    f(x, w).block_until_ready()
print(json.dumps((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 4))
"""


def _faults(**env):
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
                         env={**os.environ, **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_large_temporaries_are_not_faulted_in_at_every_call():
    mapped = _faults(**{host_memory.ENV: "0"})
    assert mapped > 20_000          # ~25,700 here: the cost it removes, as glibc has it
    # kept: ~0 in one process of two or three, 6,000-25,000 in the others (host_memory's docstring; 2 of 6
    # with the suite's load beside it): a broken setting faults ~25,700 in every one.  Up to 16 processes:
    # 8 missed once in a full suite run (a chance of (2/3)^8, 4%; (2/3)^16 is 0.15%)
    kept = []
    while len(kept) < 16 and not (kept and kept[-1] < 0.1 * mapped):
        kept.append(_faults())
    assert kept[-1] < 0.1 * mapped, (kept, mapped)


def test_the_switch_and_the_platform_leave_malloc_alone(monkeypatch):
    monkeypatch.setenv(host_memory.ENV, "0")
    assert host_memory.configure() is False
    monkeypatch.delenv(host_memory.ENV)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert host_memory.configure() is False
    monkeypatch.setattr(sys, "platform", "linux")
    assert host_memory.configure() is True          # glibc here: every parameter accepted


ARENAS = r"""
import ctypes, sys, threading
what = sys.argv[1]
if what == "lint":          # the package and its linter: malloc as glibc has it
    import ast_hybrid
    ast_hybrid.lint("def hybrid_forward(self, F, x):\n    x += 1\n    return x\n")
elif what == "front":       # the front imported, jax's CPU client made: one arena
    import ast_hybrid.gluon
    import jax.numpy as jnp
    jnp.ones(3).block_until_ready()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.open_memstream.restype = ctypes.c_void_p
both = threading.Barrier(5)

def allocate():
    libc.malloc(1 << 20)
    both.wait()
    both.wait()

threads = [threading.Thread(target=allocate) for _ in range(4)]
for t in threads:
    t.start()
both.wait()
text, size = ctypes.c_char_p(), ctypes.c_size_t()
stream = ctypes.c_void_p(libc.open_memstream(ctypes.byref(text), ctypes.byref(size)))
libc.malloc_info(0, stream)
libc.fclose(stream)
both.wait()
for t in threads:
    t.join()
print(text.value.decode().count("<heap nr="))
"""


def _arenas(what):
    out = subprocess.run([sys.executable, "-c", ARENAS, what], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def test_malloc_is_set_when_jax_starts_not_when_the_package_is_imported():
    """Four threads that allocate get arenas of their own as glibc has it; with the setting, one arena."""
    assert _arenas("lint") == _arenas("none") > 1
    assert _arenas("front") == 1


def test_a_predict_programs_temporaries_raise_the_mmap_threshold_up_to_a_bound(monkeypatch):
    """mobilenetv2_1.0 at batch 16 keeps one 150 MB block of temporaries: above the 128 MB threshold it was
    mapped at every call (193 ms against 110-148 ms a call); each channel-last program raises the threshold
    above its block, up to KEEP_AT_MOST, never lowers it."""
    class Libc:
        calls = []

        def mallopt(self, param, value):
            self.calls.append((param, value))
            return 1

    class Compiled:
        def __init__(self, mb):
            self.temp = int(mb * 2**20)

        def memory_analysis(self):
            return type("Stats", (), {"temp_size_in_bytes": self.temp})()

    state = host_memory._Malloc()
    state.libc = Libc()
    monkeypatch.setattr(host_memory, "_MALLOC", state)
    assert not host_memory.keep_temporaries(Compiled(97))          # under 128 MB: in the heap already
    assert host_memory.keep_temporaries(Compiled(149.6))
    assert state.mmap_at >= int(149.6 * 2**20) and state.libc.calls == [(-3, state.mmap_at)]
    assert not host_memory.keep_temporaries(Compiled(140))         # never lowered
    assert not host_memory.keep_temporaries(Compiled(600))         # past the bound: mapped as before
    assert host_memory.keep_temporaries(Compiled(300)) and state.mmap_at > 300 * 2**20
    state.libc = None                                              # AST_HYBRID_MALLOC=0, not glibc
    assert not host_memory.keep_temporaries(Compiled(400))


def test_a_compiled_channel_last_program_reports_its_temporaries():
    """What keep_temporaries reads exists on this jax: a compiled program's temporaries."""
    import numpy as np

    from ast_hybrid import nd
    from ast_hybrid.gluon import finish_tuning, nn

    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.Conv2D(8, 3, padding=1))
    net.initialize()
    x = nd.array(np.ones((2, 3, 32, 32), "float32"))
    net.hybridize()
    net(x)
    finish_tuning(net)      # the channel-last program the first call's tuning builds (xla/tuning.py)
    c = net._compiled
    exe = c.predict.table[next(iter(c.predict.table))] if hasattr(c.predict, "table") else None
    compiled = getattr(exe, "current", exe)
    compiled = getattr(compiled, "compiled", compiled)
    assert compiled.memory_analysis().temp_size_in_bytes > 8 * 32 * 32 * 4
