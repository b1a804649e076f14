"""The on-disk cache of hybridized programs (``ast_hybrid/xla/program_cache.py``).

Each case runs a tiny hybridized network (convolution, BatchNorm, activation, a helper function of another
module, dense) in fresh Python processes sharing a cache folder of the test's own, and reads back the
module's counters, the output's bytes and how many times ``hybrid_forward`` ran (a Python counter: it runs
while tracing, so a program read from disk leaves it at 0)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from ast_hybrid.xla import program_cache

pytestmark = pytest.mark.processes     # each test starts Python processes: not in the quick tier

MODEL = '''
import helpers
from ast_hybrid.gluon import nn, HybridBlock

TRACES = [0]


class Net(HybridBlock):
    def __init__(self, act="relu", units=5, extra=None, **kw):
        super().__init__(**kw)
        self.act_type = act
        if extra is not None:
            self.extra = extra
        with self.name_scope():
            self.conv = nn.Conv2D(4, 3, in_channels=3)
            self.bn = nn.BatchNorm(in_channels=4)
            self.dense = nn.Dense(units, in_units=4)

    def hybrid_forward(self, F, x):
        TRACES[0] += 1
        y = F.Activation(self.bn(self.conv(x)), act_type=self.act_type)
        return self.dense(helpers.scale(F.mean(y, axis=(2, 3))))
'''

HELPERS = '''
def scale(x):
    return x * 2.0
'''

SCRIPT = r"""
import json, os, sys
import numpy as np
cfg = json.loads(sys.argv[1])
from ast_hybrid import autograd, nd
from ast_hybrid.xla import compile_cache, program_cache
if cfg.get("python_off"):
    compile_cache.configure(enabled=False)
# ast-hybrid's own source is part of the key; other work may edit the tree while this test runs, so its hash
# is pinned here (test_the_source_hash_follows_every_file tests it on its own)
program_cache._package_hash = lambda: "pinned"
if cfg.get("lossy"):        # write whatever compile() gives, even an executable read from JAX's cache
    import contextlib
    program_cache._fresh_compiles = contextlib.nullcontext
import model
extra = {"array": np.ones(3), "object": object(), "plain": {"k": (1, 2.5, "s", None)}}.get(cfg.get("extra"))
net = model.Net(act=cfg.get("act", "relu"), units=cfg.get("units", 5), extra=extra)
net.initialize()
rng = np.random.default_rng(0)
for name, p in net.collect_params().items():
    v = rng.standard_normal(p.shape).astype("float32") * 0.5
    p.set_data(np.abs(v) + 0.5 if name.endswith("running_var") else v)
dtype = cfg.get("dtype", "float32")
if dtype != "float32":
    net.cast(dtype)
net.hybridize()
x = rng.standard_normal(cfg.get("shape", [2, 3, 8, 8])).astype(dtype)
mode = cfg.get("mode", "predict")
grads = None
if mode == "predict":
    y = net(x)
    y = net(x)      # the second call: the same program, from the block's table
    if cfg.get("until_tuned"):      # calls alone end the tuning (xla/tuning.py)
        for _ in range(10000):
            y = net(x)
            if not any(getattr(t, "pending", False) for t in net._compiled.predict.table.values()):
                break
        y = net(x)      # by the program kept (the call that ended the tuning ran the one before it)
    elif not cfg.get("untuned"):
        from ast_hybrid.gluon import finish_tuning
        finish_tuning(net)      # as a process that ran it long enough (xla/tuning.py): the program is written
        y = net(x)
elif mode == "train":
    with autograd.train_mode():
        y = net(x)
else:
    xa = nd.array(x)
    xa.attach_grad()
    with autograd.record():
        y = net(xa)
        loss = (y * y).sum()
    loss.backward()
    grads = [xa.grad.asnumpy().tobytes().hex()] + [p.grad().asnumpy().tobytes().hex()
                                                   for p in net.collect_params().values() if p.grad_req != "null"]
folder = program_cache.directory()
y = y.asnumpy()
print(json.dumps({"y": y.tobytes().hex(), "shape": list(y.shape), "dtype": str(y.dtype), "grads": grads,
                  "stats": program_cache.STATS, "reason": program_cache.LAST["reason"], "traces": model.TRACES[0],
                  "entries": sorted(os.listdir(folder)) if folder.exists() else []}))
"""


def _write(folder: Path, name: str, text: str):
    """A source file dated an hour back (a file changed after the process started is not trusted)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    old = time.time() - 3600
    os.utime(path, (old, old))


def _code(folder: Path, model=MODEL, helpers=HELPERS):
    _write(folder, "model.py", model)
    _write(folder, "helpers.py", helpers)
    return folder


_RUNS_JAX_CACHE = ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                   "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES")     # the test run's own (conftest.py): not here


def _run(code: Path, cache: Path, switch="1", env=(), **cfg):
    # the program chosen by rule, not by timing (xla/conv_tuning.py, xla/hoist.py): processes that each time
    # on their own may choose programs that round apart, and the cases compare output bits across them
    env = {**{k: v for k, v in os.environ.items() if k not in _RUNS_JAX_CACHE}, "JAX_PLATFORMS": "cpu",
           "AST_HYBRID_COMPILE_CACHE_DIR": str(cache), "AST_HYBRID_COMPILE_CACHE": switch,
           "AST_HYBRID_CONV_TUNE": "0", "AST_HYBRID_HOIST": "1", **dict(env)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(cfg)], env=env, capture_output=True, text=True,
                         cwd=code, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _stats(got):
    s = got["stats"]
    return s["hits"], s["misses"], s["writes"]


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    """The network's code, a cache its first process filled, and that process's result."""
    root = tmp_path_factory.mktemp("program_cache")
    code, cache = _code(root / "code"), root / "cache"
    first = _run(code, cache)
    assert _stats(first) == (0, 1, 1) and first["traces"] == 1 and len(first["entries"]) == 1
    return code, cache, first


def _copy(cache: Path, to: Path):
    shutil.copytree(cache, to)
    return to


def test_a_second_process_reads_the_program_and_computes_the_same_bits(populated, tmp_path):
    code, cache, first = populated
    second = _run(code, _copy(cache, tmp_path / "cache"))
    assert _stats(second) == (1, 0, 0)
    assert second["traces"] == 0            # hybrid_forward never ran: no conversion, no trace
    assert second["y"] == first["y"] and second["entries"] == first["entries"]
    plain = _run(code, tmp_path / "unused", switch="0")      # jax.jit's own program, no cache at all
    assert plain["y"] == first["y"] and plain["traces"] == 1 and _stats(plain) == (0, 0, 0)


@pytest.mark.parametrize("change", ["attribute", "source", "helper", "parameter shape", "input shape", "dtype"])
def test_what_the_trace_depends_on_changes_the_key(populated, tmp_path, change):
    code, cache, base = populated
    cfg = {}
    if change == "attribute":
        cfg["act"] = "tanh"
    elif change == "source":
        code = _code(tmp_path / "code", model=MODEL.replace("axis=(2, 3))", "axis=(2, 3)) + 1"))
    elif change == "helper":        # a function of another module that hybrid_forward calls
        code = _code(tmp_path / "code", helpers=HELPERS.replace("2.0", "3.0"))
    elif change == "parameter shape":
        cfg["units"] = 6
    elif change == "input shape":
        cfg["shape"] = [1, 3, 9, 9]
    else:
        cfg["dtype"] = "float16"
    got = _run(code, _copy(cache, tmp_path / "cache"), **cfg)
    assert _stats(got) == (0, 1, 1) and got["traces"] == 1, got["reason"]
    assert got["y"] != base["y"] and len(got["entries"]) == 2


@pytest.mark.parametrize("age, cached", [(0.5, True), (-30, False)])
def test_a_file_written_just_before_the_process_is_trusted_one_written_after_it_is_not(tmp_path, age, cached):
    """Half a second before the process started (``git checkout && python train.py``) is before it; a file
    dated after the start may not be the code that runs (the margin was 2 s: every program of such a run
    was traced and not written)."""
    code = _code(tmp_path / "code")
    when = time.time() - age
    os.utime(code / "model.py", (when, when))
    got = _run(code, tmp_path / "cache")
    if cached:
        assert _stats(got) == (0, 1, 1), got["reason"]
    else:
        assert _stats(got) == (0, 0, 0) and "changed after this process started" in got["reason"]


def test_a_package_module_is_judged_against_when_its_package_began_importing():
    """ast-hybrid's own files are read after ``ast_hybrid`` began importing, well after the process started:
    a file dated between the two is the code running; one dated after the import began may not be."""
    import ast_hybrid
    import passes

    def stat(t):
        return types.SimpleNamespace(st_mtime=t, st_mtime_ns=int(t * 1e9) + 1)

    for pkg in (ast_hybrid, passes):
        path = str(Path(pkg.__file__).parent / "anything.py")
        began = pkg._IMPORT_STARTED
        assert not program_cache._changed_since_start(path, stat(began - 0.05))
        assert program_cache._changed_since_start(path, stat(began + 0.05))
    whole_seconds = types.SimpleNamespace(st_mtime=float(int(began)), st_mtime_ns=int(began) * 10**9)
    assert program_cache._changed_since_start(path, whole_seconds)      # a 2 s margin there


def test_the_program_is_written_once_its_tuning_ends(populated, tmp_path):
    code, _, first = populated
    cache = tmp_path / "cache"
    got = _run(code, cache, untuned=True)       # two calls: the channel-last program not built yet
    assert _stats(got) == (0, 1, 0) and got["entries"] == [] and got["traces"] == 1
    got = _run(code, cache, until_tuned=True)
    assert _stats(got) == (0, 1, 1) and got["y"] == first["y"]
    got = _run(code, cache, untuned=True)
    assert _stats(got) == (1, 0, 0) and got["y"] == first["y"] and got["traces"] == 0


@pytest.mark.parametrize("extra", ["array", "object"])
def test_an_attribute_that_is_not_a_plain_value_turns_it_off_for_the_block(populated, tmp_path, extra):
    code, cache, _ = populated
    got = _run(code, tmp_path / "cache", extra=extra)
    assert got["stats"]["uncacheable"] == 1 and _stats(got) == (0, 0, 0) and got["entries"] == []
    assert "net.extra is a" in got["reason"]
    assert got["y"] == _run(code, tmp_path / "unused", switch="0", extra=extra)["y"]
    if extra == "array":        # nested plain values are keyed, and cached
        assert _stats(_run(code, tmp_path / "cache", extra="plain")) == (0, 1, 1)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign"])
def test_a_damaged_entry_is_traced_again_and_rewritten(populated, tmp_path, damage):
    code, cache, first = populated
    cache = _copy(cache, tmp_path / "cache")
    entry = cache / "programs" / first["entries"][0]
    blob = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "flipped":      # one byte of the executable
        entry.write_bytes(blob[:-100] + bytes([blob[-100] ^ 0xFF]) + blob[-99:])
    else:
        entry.write_bytes(b"something else entirely")
    got = _run(code, cache)
    assert got["stats"]["unreadable"] == 1 and _stats(got) == (0, 1, 1) and got["traces"] == 1
    assert got["y"] == first["y"] and entry.read_bytes().startswith(program_cache.MAGIC)
    if damage == "truncated":       # the rewritten entry is read back
        assert _stats(_run(code, cache)) == (1, 0, 0)


def test_an_executable_read_from_jaxs_cache_is_not_what_gets_written(populated, tmp_path):
    # XLA:CPU serializes an executable that JAX's persistent cache loaded without its code: such an entry
    # loads, then fails at its first run ('Function ... not found'); the program is compiled afresh to be
    # written, and an entry that cannot run is traced again and rewritten
    code, _, first = populated
    cache, every = tmp_path / "cache", {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"}
    _run(code, cache, env={**every, "AST_HYBRID_PROGRAM_CACHE": "0"})     # JAX's cache only
    lossy = _run(code, cache, env=every, lossy=True)
    assert _stats(lossy) == (0, 1, 1)
    got = _run(code, cache, env=every)
    assert got["stats"]["unreadable"] + got["stats"]["hits"] == 1 and got["y"] == first["y"]
    again = _run(code, cache, env=every)
    assert _stats(again) == (1, 0, 0) and again["y"] == first["y"] and again["traces"] == 0


@pytest.mark.parametrize("how", ["environment", "python"])
def test_the_compile_cache_switch_turns_it_off(populated, tmp_path, how):
    code, cache, first = populated
    cache = _copy(cache, tmp_path / "cache")
    got = _run(code, cache, switch="0") if how == "environment" else _run(code, cache, python_off=True)
    assert _stats(got) == (0, 0, 0) and got["traces"] == 1 and got["entries"] == first["entries"]
    got = _run(code, tmp_path / "empty", switch="0")
    assert got["entries"] == [] and not (tmp_path / "empty").exists()


@pytest.mark.parametrize("mode", ["train", "record"])
def test_training_and_recording_are_never_served_from_it(populated, tmp_path, mode):
    code, cache, first = populated
    got = _run(code, _copy(cache, tmp_path / "cache"), mode=mode)
    assert _stats(got) == (0, 0, 0) and got["traces"] >= 1
    plain = _run(code, tmp_path / "unused", switch="0", mode=mode)
    assert got["y"] == plain["y"] and got["grads"] == plain["grads"]
    assert got["y"] != first["y"]          # BatchNorm's batch statistics: not the predict program's output


def test_plain_values_are_described_exactly():
    d = program_cache.plain
    assert d(True, "a") != d(1, "a") and d(1.0, "a") != d(1, "a") and d((1,), "a") != d([1], "a")
    assert d(0.1, "a") != d(0.3 - 0.2, "a")       # 0.09999999999999998: repr is exact
    assert d(np.dtype("float16"), "a") != d(np.dtype("float32"), "a")
    assert d({"a": 1, "b": 2}, "a") != d({"b": 2, "a": 1}, "a")       # the order a forward iterates in
    for bad in (np.ones(2), object(), lambda: 0, Path(".")):
        with pytest.raises(program_cache.Uncacheable):
            d(bad, "a")


def test_the_source_hash_follows_every_file(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    _write(pkg / "sub", "a.py", "x = 1\n")
    _write(pkg, "b.py", "y = 2\n")
    monkeypatch.setattr(program_cache, "_PACKAGES", (str(pkg),))
    before = program_cache._package_hash()
    _write(pkg / "sub", "a.py", "x = 2\n")
    assert program_cache._package_hash() != before
    _write(pkg / "sub", "a.py", "x = 1\n")
    assert program_cache._package_hash() == before
    _write(pkg, "c.py", "")             # a new module counts too
    assert program_cache._package_hash() != before


def test_the_source_hash_is_kept_while_every_file_is_the_same(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    _write(pkg / "sub", "a.py", "x = 1\n")
    _write(pkg, "b.py", "y = 2\n")
    old = time.time() - 60
    for f in pkg.rglob("*.py"):
        os.utime(f, (old, old))
    monkeypatch.setattr(program_cache, "_PACKAGES", (str(pkg),))
    monkeypatch.setenv("AST_HYBRID_COMPILE_CACHE_DIR", str(tmp_path / "cache"))
    before = program_cache._package_hash()
    assert program_cache._source_manifest().is_file()       # every file older than 2 s: kept
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or real(self))
    assert program_cache._package_hash() == before and reads == []     # nothing read again
    _write(pkg / "sub", "a.py", "x = 10\n")
    os.utime(pkg / "sub" / "a.py", (old, old))                          # same time, another size
    assert program_cache._package_hash() != before and reads


@pytest.mark.parametrize("effect", ["self.calls = getattr(self, 'calls', 0) + 1",
                                    "self.last_shape = tuple(x.shape)"])
def test_a_forward_that_changes_an_attribute_while_traced_is_not_written(tmp_path, effect):
    """Served from disk, such a forward would never set it in a second process: it is traced there too."""
    code = _code(tmp_path / "code", model=MODEL.replace("TRACES[0] += 1", f"TRACES[0] += 1\n        {effect}"))
    cache = tmp_path / "cache"
    for _ in range(2):
        got = _run(code, cache)
        assert _stats(got) == (0, 1, 0) and got["traces"] == 1 and got["entries"] == []
        assert "changed what the key reads" in got["reason"]


def test_the_steady_path_lets_the_executable_check_the_signature(monkeypatch):
    """After a signature's first call, calls go straight to its executable, which checks the inputs itself
    (a TypeError before running for another shape or dtype): another signature still finds its own program."""
    import jax
    import jax.numpy as jnp

    jitted = jax.jit(lambda leaves, x: x * leaves[0])
    firsts = []

    def first(self, sig, leaves, xs):
        firsts.append(sig)
        fn = self.table[sig] = jitted.lower(leaves, *xs).compile()
        return fn(leaves, *xs)

    monkeypatch.setattr(program_cache.Cached, "_first", first)
    cached = program_cache.Cached(None, [], jitted, None)
    leaves = (jnp.float32(3),)
    two, three, ints = jnp.arange(2.0), jnp.arange(3.0), jnp.arange(2)
    for x in (two, two, three, two, three, ints, np.arange(2.0, dtype="float32"), two, 2.0):
        got = cached(leaves, x)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(x) * np.float32(3))
    assert len(firsts) == 3                 # (2,) float32, (3,) float32, (2,) int32; numpy is (2,) float32
    assert cached.last is cached.table[firsts[0]]


def test_the_programs_own_type_error_is_raised_once(monkeypatch):
    """A TypeError of the program itself (its signature is the table's) is not taken for another signature."""
    import jax.numpy as jnp

    class Strict:
        calls = 0

        def __call__(self, leaves, x):
            Strict.calls += 1
            raise TypeError("the program's own error")

    cached = program_cache.Cached(None, [], None, None)
    cached.strict = (Strict,)
    x = jnp.arange(2.0)
    cached.table[program_cache._signature((x,))] = Strict()
    for expected in (1, 2):
        with pytest.raises(TypeError, match="own error"):
            cached((), x)
        assert Strict.calls == expected         # the first through the table, the next through `last`
    assert isinstance(cached.last, Strict)
