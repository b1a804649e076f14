"""Keep a long test process under the kernel's limit on memory mappings.

Every program XLA:CPU compiles is mapped into the process, and JAX keeps the executables of every jitted
function it has seen in its caches.  A test run compiles thousands of programs (the property tiers alone
compile one per generated program), and Linux refuses a process more than ``vm.max_map_count`` mappings
(65530 by default): past it, ``mmap`` fails inside LLVM and the process dies with a segmentation fault in
``backend_compile_and_load``.  That is how CI's pytest process died in the property tier, at the same
test each time, with the process near 65,000 mappings (a probe: 120 generated programs add about 1,900
mappings, and ``jax.clear_caches()`` gives them all back; ``gc.collect()`` alone does not).

:func:`release_compiled_programs` clears JAX's caches once the process holds more than ``limit`` mappings:
programs compile again if used again, nothing else changes.  The root ``conftest.py`` calls it after every
test and the property tiers after every generated program.

May import: the standard library (jax only if the process already imported it).
"""

from __future__ import annotations

import gc
import sys

LIMIT = 20_000


def mapping_count() -> int:
    """How many memory mappings this process holds (0 where ``/proc`` is not there)."""
    try:
        with open("/proc/self/maps", "rb") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return 0


def release_compiled_programs(limit: int = LIMIT) -> bool:
    """Clear JAX's caches (compiled executables included) when more than ``limit`` mappings are held;
    whether it did."""
    jax = sys.modules.get("jax")
    if jax is None or mapping_count() <= limit:
        return False
    jax.clear_caches()
    gc.collect()
    return True
