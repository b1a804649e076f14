"""``ast_hybrid/testing/memory_maps.py``: JAX's compiled programs are given back once a process holds many
memory mappings (past ``vm.max_map_count`` XLA's compiler segfaults)."""

from __future__ import annotations

import gc
import sys

import jax
import jax.numpy as jnp
import pytest

from ast_hybrid.testing import memory_maps


def _compile_some(n):
    """``n`` programs whose functions stay alive (as a test's generated modules do)."""
    kept = []
    for i in range(n):
        def f(x, i=i):
            return jnp.sin(x) * i + jnp.cos(x * (i + 1))
        kept.append(f)
        jax.jit(f)(jnp.ones(3 + i)).block_until_ready()
    return kept


def test_compiled_programs_hold_mappings_and_release_gives_them_back():
    assert sys.platform.startswith("linux")      # CI's platform; /proc/self/maps is what is counted
    jax.clear_caches()
    gc.collect()        # what earlier tests left unreachable (arrays, programs) unmapped now, not while counting
    before = memory_maps.mapping_count()
    kept = _compile_some(40)
    grown = memory_maps.mapping_count()
    assert grown > before + 40, (before, grown)         # each compiled program maps memory of its own
    assert memory_maps.release_compiled_programs(limit=before) is True
    assert memory_maps.mapping_count() < grown - 40, (before, grown, memory_maps.mapping_count())
    assert len(kept) == 40


def test_release_does_nothing_under_the_limit():
    assert memory_maps.release_compiled_programs(limit=10**9) is False
