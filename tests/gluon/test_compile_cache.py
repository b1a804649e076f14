"""The persistent compilation cache of hybridized blocks (``ast_hybrid/xla/compile_cache.py``).

Each case runs a small hybridized network in a fresh Python process (the cache is process-wide state of
JAX), with the cache pointed at a folder of the test's own, and reads back JAX's own events: how many
programs were asked of the cache, found in it, and written to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ast_hybrid.xla import compile_cache

pytestmark = pytest.mark.processes     # each test starts Python processes: not in the quick tier

SCRIPT = r"""
import json, os, sys
import numpy as np
from jax import monitoring
events = []
monitoring.register_event_listener(lambda name, **kw: events.append(name))
import jax
from ast_hybrid.gluon import nn
from ast_hybrid.xla import compile_cache
if len(sys.argv) > 1 and sys.argv[1] == "python-off":
    compile_cache.configure(enabled=False)
net = nn.HybridSequential()
net.add(nn.Conv2D(8, 3, in_channels=3), nn.Activation("relu"), nn.Dense(4, in_units=8 * 14 * 14))
net.initialize()
rng = np.random.default_rng(0)
for p in net.collect_params().values():
    p.set_data(rng.standard_normal(p.shape).astype("float32") * 0.1)
net.hybridize()
x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
y = np.asarray(net(x))
if len(sys.argv) > 1 and sys.argv[1] == "python-off-after":
    writes_before_off = sum(n == "/jax/compilation_cache/cache_misses" for n in events)
    compile_cache.configure(enabled=False)
    net.hybridize()
    net(np.concatenate([x, x]))     # another shape: a program compiled anew
count = lambda e: sum(n == "/jax/compilation_cache/" + e for n in events)
print(json.dumps({"requests": count("compile_requests_use_cache"), "hits": count("cache_hits"),
                  "writes": count("cache_misses"), "dir": jax.config.jax_compilation_cache_dir,
                  "min_secs": jax.config.jax_persistent_cache_min_compile_time_secs, "y": y.tolist(),
                  "writes_before_off": globals().get("writes_before_off")}))
"""


_RUNS_JAX_CACHE = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                   "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES")


def _run(tmp_path, *args, **env):
    """Run SCRIPT in a new process with ``env`` over a copy of this one's environment (``None``: unset).
    Without the program cache (``xla/program_cache.py``), which would skip JAX's cache in a second process."""
    full = {k: v for k, v in os.environ.items() if k not in _RUNS_JAX_CACHE}    # the test run's own (conftest.py)
    full.update({"JAX_PLATFORMS": "cpu", "AST_HYBRID_PROGRAM_CACHE": "0"})
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    out = subprocess.run([sys.executable, "-c", SCRIPT, *args], env=full, capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _entries(folder: Path):
    """JAX's entries in ``folder``; not ast-hybrid's own file there (xla/conv_tuning.py's answers)."""
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and p.name != "conv_tuning.json") \
        if folder.exists() else []


def test_a_second_process_loads_the_programs_instead_of_compiling(tmp_path):
    cache = tmp_path / "cache"
    # every program written, however fast it compiled: the test is about the second process, not the threshold;
    # no convolution timed (xla/conv_tuning.py: the first process would compile the timing programs, the second,
    # reading its answers, would not)
    env = dict(AST_HYBRID_COMPILE_CACHE_DIR=str(cache), AST_HYBRID_COMPILE_CACHE=None,
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", AST_HYBRID_CONV_TUNE="0")
    first = _run(tmp_path, **env)
    written = _entries(cache)
    assert first["dir"] == str(cache)
    assert first["writes"] >= 1 and first["hits"] == 0
    assert len(written) >= first["writes"]
    second = _run(tmp_path, **env)
    assert second["hits"] == first["writes"]       # every program the first process wrote is read back,
    assert second["writes"] == 0                    # and none compiled again (it would have been written)
    assert _entries(cache) == written
    assert second["y"] == first["y"]               # the loaded executable computes what the compiled one did


def test_the_default_threshold_and_a_users_own_jax_settings(tmp_path):
    cache = tmp_path / "cache"
    ours = _run(tmp_path, AST_HYBRID_COMPILE_CACHE_DIR=str(cache), AST_HYBRID_COMPILE_CACHE=None,
                JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=None, JAX_COMPILATION_CACHE_DIR=None)
    assert ours["dir"] == str(cache) and ours["min_secs"] == compile_cache.MIN_COMPILE_SECS
    theirs = tmp_path / "theirs"
    user = _run(tmp_path, AST_HYBRID_COMPILE_CACHE_DIR=str(tmp_path / "unused"), AST_HYBRID_COMPILE_CACHE=None,
                JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_COMPILATION_CACHE_DIR=str(theirs))
    assert user["dir"] == str(theirs) and user["min_secs"] == 0
    assert user["writes"] >= 1 and _entries(theirs) and not _entries(tmp_path / "unused")


@pytest.mark.parametrize("how", ["environment", "python", "python-after"])
def test_the_setting_turns_it_off(tmp_path, how):
    cache = tmp_path / "cache"
    env = dict(AST_HYBRID_COMPILE_CACHE_DIR=str(cache), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
               JAX_COMPILATION_CACHE_DIR=None, AST_HYBRID_COMPILE_CACHE="0" if how == "environment" else None)
    out = _run(tmp_path, *{"environment": [], "python": ["python-off"], "python-after": ["python-off-after"]}[how],
               **env)
    assert out["dir"] is None
    if how == "python-after":   # on for the first program, off for the one compiled after configure()
        assert out["writes"] >= 1 and len(_entries(cache)) == out["writes_before_off"] == out["writes"]
    else:
        assert out["writes"] == 0 and out["hits"] == 0 and not _entries(cache)


def test_the_folder_follows_the_platform(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.cache_root() == tmp_path / "xdg" / "ast-hybrid"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert compile_cache.cache_root() == Path.home() / ".cache" / "ast-hybrid"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert compile_cache.cache_root() == Path.home() / "Library" / "Caches" / "ast-hybrid"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert compile_cache.cache_root() == tmp_path / "local" / "ast-hybrid" / "Cache"
    monkeypatch.delenv("AST_HYBRID_COMPILE_CACHE_DIR", raising=False)
    assert compile_cache.cache_dir() == tmp_path / "local" / "ast-hybrid" / "Cache" / "jax"
    monkeypatch.setenv("AST_HYBRID_COMPILE_CACHE_DIR", "~/elsewhere")
    assert compile_cache.cache_dir() == Path.home() / "elsewhere"


def test_the_test_suite_writes_into_a_folder_of_its_own():
    """Ours and JAX's caches both live in the run's own folder (conftest.py), never the user's."""
    import jax

    folder = compile_cache.cache_dir()
    assert not folder.is_relative_to(compile_cache.cache_root())
    assert folder.parent.name.startswith("ast_hybrid_test_run_")
    assert Path(jax.config.jax_compilation_cache_dir).parent == folder.parent
