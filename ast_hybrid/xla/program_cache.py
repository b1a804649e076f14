"""A hybridized block's compiled predict program, kept on disk: a second process skips conversion, tracing,
lowering and compiling.

JAX's persistent compilation cache (``compile_cache.py``) saves XLA's compile in a second process, but the
block is still converted, traced on tracers and lowered to StableHLO to find the cache entry.  Here the
program itself is kept: the first call of a hybridized block in predict mode (not recording, not training)
compiles it (``jax.jit(...).lower(...).compile()``: what ``jax.jit`` would do) and writes the executable
(``jax.experimental.serialize_executable``) with its input/output tree to
``compile_cache.cache_dir()/programs``, under a key of everything the trace depends on:

- ast-hybrid's version and a hash of its source files (``ast_hybrid/``, ``passes/``), the versions of Python,
  jax, jaxlib and numpy, the backend (platform, its version, device kind and count), the machine (architecture,
  CPU flags, last-level cache's size), ``XLA_FLAGS``, the ``AST_HYBRID_*`` environment variables (e.g. the
  convolution lowering) and jax's configuration (``jax_enable_x64``, matmul precision, ...; not its cache or
  logging settings);
- every block of the tree, in order: its class (qualified name, and for a class outside ast-hybrid/jax/numpy/
  the standard library, the content of its module's file and of its bases' files, the code of its methods and
  what they read as globals: plain values, other modules' files, functions followed the same way), every
  attribute that is not a child block or a parameter (only plain values: None/bool/int/float/str/bytes,
  tuples/lists/dicts/sets of them, numpy dtypes and scalars, jax/numpy types), its parameters' names;
- every parameter's name, shape, dtype and grad_req and its array's shape/dtype; the inputs' shapes, dtypes
  and weak types; the mode (predict, not recording).

Anything else makes the block uncacheable and it is traced as before, never guessed: an attribute that is
not a plain value (an array, an object, a block not registered as a child), a global that is an object, a
source file missing or changed since this process started (the code running may not be the file's), an input
that is not an array (a list, a Python scalar, a tracer), parameters on several devices, a program with host
callbacks or effects (``print``, ``asnumpy`` in a custom op), ``jax_disable_jit``.  A recorded or training
call never comes here (``gluon.programs.Compiled``'s other programs).  An entry that cannot be read (truncated,
another format, a checksum that does not match, an executable XLA refuses) is ignored, the block traced and
the entry written again, as is a loaded program whose first run fails.  The program written is compiled
bypassing JAX's cache (XLA:CPU serializes an executable JAX's cache loaded without its code).

Not in the key, so not to be relied on in a cached block: what ``hybrid_forward`` reads from outside Python's
objects while it is traced (an environment variable other than ``AST_HYBRID_*``/``XLA_FLAGS``, a file, the
clock, a random number generator's state) is baked into the program, as under ``jax.jit``, and a second
process gets the first one's.  A forward whose trace changes what the key reads (sets an attribute of a
block, ``self.calls += 1``, rebinds a global it reads) is not written: the key is taken again after the trace
and must be the same.  Other Python side effects that run while tracing (once per input signature without
this cache: a ``print`` of a static value, appending to a list held elsewhere) do not run at all on a hit.

Turned off with the compile cache (``AST_HYBRID_COMPILE_CACHE=0``, ``compile_cache.configure(enabled=False)``),
or alone with ``AST_HYBRID_PROGRAM_CACHE=0``; moved with it (``AST_HYBRID_COMPILE_CACHE_DIR``).  An entry is an
executable that is loaded and run: the folder must be trusted.  Entries are never pruned.  A channel-last
program is written once its tuning ends (``xla/tuning.py``).
Per call, the program of the last signature is called at once: XLA's executable checks the inputs' shapes and
dtypes itself (a ``TypeError`` before it runs) and only another signature goes through the table (a weak-typed
input runs its strong twin's program there: MXNet's arrays have no weak types).
``STATS`` counts hits, misses, writes and uncacheable programs in this process; ``LAST`` says why the last
program was not cached.

Over 600 lines: the key (everything a trace depends on, down to the code of the functions a forward reads),
the entries on disk and the call table are one contract (what is written is exactly what the key promises);
split, each half would have to restate the other's rules.

May import: jax, numpy, the standard library, ``ast_hybrid.core`` and this room (the block tree's description
reaches it as an argument: ``gluon.programs.program_tree``).
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import hashlib
import json
import logging
import os
import pickle
import platform
import sys
import time
import types
from pathlib import Path

import numpy as np

from ast_hybrid.core import autograd, settings
from ast_hybrid.xla import compile_cache, host_memory, tuning
from ast_hybrid.xla.disk import write_quietly

ENV_SWITCH = "AST_HYBRID_PROGRAM_CACHE"
FORMAT = 3         # 3: a channel-last program with the program preparing its parameters
MAGIC = b"ast-hybrid program\n"
STATS = {"hits": 0, "misses": 0, "writes": 0, "uncacheable": 0, "unreadable": 0}
LAST: dict = {"reason": None}
_LOG = logging.getLogger(__name__)
_HERE = Path(os.path.abspath(__file__))
_PACKAGES = (str(_HERE.parents[1]), str(_HERE.parents[2] / "passes"))      # ast_hybrid/ and passes/
_VERSIONED = {"ast_hybrid", "passes", "jax", "jaxlib", "numpy", "ml_dtypes", "builtins"}
_SKIPPED_CONFIG = ("cache", "log", "explain", "pprint", "traceback", "dump")
_MEMO: dict = {}


class Uncacheable(Exception):
    """The program depends on something the key cannot hold: traced as before."""


def directory() -> Path:
    return compile_cache.cache_dir() / "programs"


def enabled() -> bool:
    """The compile cache's setting (``compile_cache.enabled()``), unless ``AST_HYBRID_PROGRAM_CACHE`` is off."""
    return compile_cache.enabled() and settings.get(ENV_SWITCH)


def predict_program(block, params, jitted, describe):
    """What ``gluon.programs.Compiled.predict`` calls: ``jitted`` itself when the cache is off, else a
    :class:`Cached`.  ``describe(block)``: what of the block tree the program depends on, JSON-able
    (``gluon.programs.program_tree``, built with :func:`plain` and :func:`class_key`), or :class:`Uncacheable`."""
    return Cached(block, params, jitted, describe) if enabled() else jitted


class Cached:
    """``predict(leaves, *xs)`` of one block: per input signature, the program read from disk, or compiled
    (and written) at its first call; the jitted function for inputs that are not plain arrays."""

    def __init__(self, block, params, jitted, describe):
        self.block, self.params, self.jitted, self.describe = block, params, jitted, describe
        self.table: dict = {}
        self.last = None        # the program of the last signature, where it checks its inputs itself
        self.strict = _strict_types()

    def __call__(self, leaves, *xs):
        last = self.last
        if last is not None:        # the steady path: XLA's executable checks the inputs' shapes and dtypes
            try:
                return last(leaves, *xs)
            except TypeError:       # another signature (checked before running), or the program's own error
                if self.table.get(_signature(xs)) is last:
                    raise
        sig = _signature(xs)
        if sig is None:     # a tracer (called inside jax.jit), a list, a Python number: jax.jit's own path
            return self.jitted(leaves, *xs)
        fn = self.table.get(sig)
        if fn is None:
            return self._first(sig, leaves, xs)
        self.last = fn if isinstance(fn, self.strict) else None
        return fn(leaves, *xs)

    def _first(self, sig, leaves, xs):
        """The first call of a signature: the program from disk, else compiled (and written)."""
        if not enabled():       # turned off since the block was built
            fn = self.table[sig] = self.jitted
            return fn(leaves, *xs)
        try:
            key, summary = program_key(self.block, self.params, leaves, xs, self.describe)
        except Uncacheable as exc:
            STATS["uncacheable"] += 1
            LAST["reason"] = str(exc)
            _LOG.debug("program of %s not cached: %s", type(self.block).__name__, exc)
            fn = self.table[sig] = self.jitted
            return fn(leaves, *xs)
        path = directory() / f"{key}.program"
        loaded = _read(path, key)
        if loaded is not None:
            try:        # its first run waited for: XLA reports an executable it cannot run asynchronously
                out = _ready(loaded(leaves, *xs))
            except _RUNTIME_ERRORS as exc:     # an executable XLA loaded but cannot run: traced instead
                _unreadable(path, exc)
            else:
                STATS["hits"] += 1
                self.table[sig] = loaded
                return out
        STATS["misses"] += 1
        writable = _fresh_compiles() is not _NO_CONTEXT
        if hasattr(self.jitted, "start"):      # a channel-last Program (xla/program.py); a rng.KeyNeeded propagates
            compiled = self.jitted.start(leaves, *xs, compiling=_fresh_compiles)
        else:
            lowered = self.jitted.lower(leaves, *xs)
            with _fresh_compiles():
                compiled = lowered.compile()
        if writable and _key_unchanged(key, self.block, self.params, leaves, xs, self.describe):
            if isinstance(compiled, tuning.Tuning):     # written once tuned (xla/tuning.py)
                compiled.on_final = lambda exe: _write(path, key, exe, summary)
            else:
                _write(path, key, compiled, summary)
        self.table[sig] = compiled
        return compiled(leaves, *xs)


_NO_CONTEXT = contextlib.nullcontext()


def _strict_types():
    """The programs that check their inputs before they run (a ``TypeError`` for another shape or dtype):
    XLA's executables (``jax.stages.Compiled``), and ours around them."""
    from jax.stages import Compiled

    from ast_hybrid.xla import program

    return Compiled, program.Executable, tuning.Tuning


def _signature(xs):
    """The inputs' shapes, dtypes and weak types; None for an input that is not a plain array (a tracer, a
    list, a Python number)."""
    sig = []
    for x in xs:
        t = type(x)
        if t is _ARRAY[0]:
            sig.append((x.shape, x.dtype, x.weak_type))
        elif t is np.ndarray:
            sig.append((x.shape, x.dtype, False))
        else:
            return None
    return tuple(sig)


def _key_unchanged(key, block, params, leaves, xs, describe):
    """Whether tracing left what the key reads as it found it.  A forward that sets an attribute while it is
    traced (``self.step += 1``, ``self._shape = x.shape``, a global it rebinds) does so once per signature
    without this cache; a second process served from disk would never do it, and code reading the attribute
    after the call would see another value.  Such a program is not written."""
    why = "the forward changed what the key reads (an attribute, a global) while it was traced"
    try:
        same = program_key(block, params, leaves, xs, describe)[0] == key
    except Uncacheable as exc:
        same, why = False, f"{why}: {exc}"
    if not same:
        STATS["uncacheable"] += 1
        LAST["reason"] = why
        _LOG.debug("program of %s not written: %s", type(block).__name__, why)
    return same


def _ready(out):
    import jax

    return jax.block_until_ready(out)


def _fresh_compiles():
    """A context where XLA compiles afresh (``compile_cache.bypassed``): an executable JAX's cache read serializes
    without its code on XLA:CPU (it loads, then fails: 'Function tanh_reduce_fusion not found').  ``_NO_CONTEXT``
    where this jax keeps its cache decision elsewhere: nothing written."""
    return compile_cache.bypassed() or _NO_CONTEXT


try:
    from jax._src.array import ArrayImpl as _ArrayImpl
    _ARRAY = (_ArrayImpl,)
except ImportError:     # another jax layout: only numpy inputs are cached
    _ARRAY = (None,)
try:
    from jax.errors import JaxRuntimeError
    _RUNTIME_ERRORS = (JaxRuntimeError,)
except ImportError:
    _RUNTIME_ERRORS = (RuntimeError,)


# -- the key ---------------------------------------------------------------------------------------------------

def program_key(block, params, leaves, xs, describe):
    """``(hex key, short summary)`` of the predict program of ``block`` for these parameters and inputs
    (``describe(block)``: the block tree's part, see :func:`predict_program`); raises :class:`Uncacheable`."""
    import jax

    if jax.config.jax_disable_jit:
        raise Uncacheable("jax_disable_jit is on")
    tree = describe(block)
    device = jax.devices()[0]
    for a in (*leaves, *xs):
        if type(a) is _ARRAY[0] and a.sharding.device_set != {device}:
            raise Uncacheable(f"an array on {sorted(map(str, a.sharding.device_set))}, not {device}")
    if len(params) != len(leaves):
        raise Uncacheable("parameters and leaves differ")
    material = {
        "format": FORMAT,
        "environment": _environment(),
        "variables": settings.key_variables(),
        "config": {k: repr(v) for k, v in sorted(jax.config.values.items())
                   if not any(s in k for s in _SKIPPED_CONFIG)},
        "mode": [bool(autograd.STATE.recording), bool(autograd.STATE.training)],
        "tree": tree,
        "params": [[p.name, plain(tuple(p.shape or ()), p.name), str(np.dtype(p.dtype)), p.grad_req, _aval(a)]
                   for p, a in zip(params, leaves)],
        "inputs": [_aval(x) for x in xs],
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"))
    summary = f"{type(block).__qualname__} on {', '.join(str(a) for a in material['inputs'])}"
    return hashlib.sha256(text.encode()).hexdigest(), summary


def _aval(x):
    return [list(x.shape), str(np.dtype(x.dtype)), bool(getattr(x, "weak_type", False))]


def _environment():
    """What a process cannot change once it runs: versions, source, backend, machine."""
    if "environment" not in _MEMO:
        import jax
        import jaxlib

        from ast_hybrid import __version__

        device = jax.devices()[0]
        _MEMO["environment"] = {
            "ast_hybrid": __version__, "source": _package_hash(), "python": sys.version,
            "jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": np.__version__,
            "backend": jax.default_backend(), "platform_version": device.client.platform_version,
            "device_kind": device.device_kind, "devices": jax.device_count(),
            "machine": platform.machine(), "cpu": _cpu_flags(), "llc": host_memory.last_level_cache()}
    return _MEMO["environment"]


def _package_hash():
    """sha256 of every .py file of ast_hybrid/ and passes/ (relative path and content); the modules already
    imported must not have changed since the process started (``_file_bytes``).  Reading ~190 files is half
    of a second process's key (~10 ms): the hash is kept beside the programs with every file's size and
    modification time, and reused while they are all the same (``_source_manifest``)."""
    imported = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
    files = []
    for root in _PACKAGES:
        found = [os.path.join(d, f) for d, _, names in os.walk(root) for f in names if f.endswith(".py")]
        files += [(root, f, os.stat(f)) for f in sorted(found)]
    for _, f, st in files:
        if f in imported and _changed_since_start(f, st):
            raise Uncacheable(f"{f} changed after this process started")
    stats = [[os.path.relpath(f, root), st.st_mtime_ns, st.st_size] for root, f, st in files]
    manifest = _source_manifest()
    try:
        kept = json.loads(manifest.read_text())
        if kept["stats"] == stats and isinstance(kept["sha256"], str):
            return kept["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    h = hashlib.sha256()
    for root, f, _ in files:
        h.update(os.path.relpath(f, root).encode() + b"\0")
        h.update(_file_bytes(f) if f in imported else Path(f).read_bytes())
    digest = h.hexdigest()
    # kept only once every file is older than the clocks' resolution (2 s): a file written again within it
    # could keep its size and time ("racily clean", as git calls it) and must be read again
    if all(st.st_mtime < time.time() - 2 for _, _, st in files):
        write_quietly(manifest, json.dumps({"sha256": digest, "stats": stats}))
    return digest


def _source_manifest():
    roots = hashlib.sha256("\0".join(_PACKAGES).encode()).hexdigest()[:16]
    return directory() / f"source-{roots}.json"


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _started():
    """When this process started, as wall-clock time: on Linux its start in clock ticks since boot
    (``/proc/self/stat``) against the boot clock now (``/proc/stat``'s boot time is whole seconds: a second
    off); elsewhere when this module was imported."""
    if "started" not in _MEMO:
        try:
            with open("/proc/self/stat") as fh:
                ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
            ago = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
            _MEMO["started"] = time.time() - ago
        except (OSError, ValueError, IndexError, AttributeError):
            _MEMO["started"] = _IMPORTED
    return _MEMO["started"]


def _changed_since_start(path, st) -> bool:
    """Whether the source file ``path`` (``os.stat`` ``st``) is dated after this process may have read it, so
    the code running may not be the file's.  A module of ``ast_hybrid/`` or ``passes/`` was read after its
    package began importing (each notes the time: ``_IMPORT_STARTED``), any other after the process started.
    The margin is the file clock's resolution: 10 ms (the kernel's coarse clock, at worst) where files have
    sub-second times, 2 s where they do not (FAT, HFS+, some network mounts) or where the process start is
    only known late (not Linux).  A 2 s margin everywhere made ``git checkout && python train.py`` (a
    package written milliseconds before the run) trace every program of that run, uncached."""
    read_after, margin = _started(), 0.01
    for root, name in zip(_PACKAGES, ("ast_hybrid", "passes")):
        if path.startswith(root + os.sep) and hasattr(sys.modules.get(name), "_IMPORT_STARTED"):
            read_after = sys.modules[name]._IMPORT_STARTED
            break
    else:
        if read_after == _IMPORTED:
            margin = 2.0
    if st.st_mtime_ns % 1_000_000_000 == 0:
        margin = 2.0
    return st.st_mtime > read_after - margin


_IMPORTED = time.time()


def _file_bytes(path):
    """A source file's content; :class:`Uncacheable` if it changed since the process started (up to the
    clocks' resolution before it: :func:`_changed_since_start`), so the code running may not be what it says."""
    st = os.stat(path)
    if _changed_since_start(path, st):
        raise Uncacheable(f"{path} changed after this process started")
    return Path(path).read_bytes()


def _module_hash(mod):
    memo = _MEMO.setdefault("files", {})
    name = getattr(mod, "__name__", "?")
    path = getattr(mod, "__file__", None)
    if not path or not os.path.isfile(path):
        raise Uncacheable(f"module {name} has no source file")
    if path not in memo:
        memo[path] = hashlib.sha256(_file_bytes(path)).hexdigest()
    return memo[path]


def _versioned(modname):
    """Whether a module's code is covered by the environment's versions and source hash."""
    if not modname:
        return False
    root = modname.split(".")[0]
    if root in _VERSIONED or root in sys.stdlib_module_names:
        return True
    path = getattr(sys.modules.get(modname), "__file__", None) or ""
    return any(path.startswith(p + os.sep) for p in _PACKAGES)


def plain(v, where):
    """A JSON-able, exact description of a plain value; :class:`Uncacheable` for anything else."""
    t = type(v)
    if v is None or t is bool or t is int or t is str:
        return [t.__name__, v]
    if t is float or t is complex:
        return [t.__name__, repr(v)]
    if t is bytes:
        return ["bytes", v.hex()]
    if t is tuple or t is list:
        return [t.__name__, [plain(i, where) for i in v]]
    if t is dict:
        return ["dict", [[plain(k, where), plain(i, where)] for k, i in v.items()]]
    if t is set or t is frozenset:
        items = [plain(i, where) for i in v]
        return [t.__name__, sorted(items, key=json.dumps)]
    if isinstance(v, np.dtype):
        return ["dtype", str(v)]
    if isinstance(v, np.generic):
        return ["scalar", str(v.dtype), repr(v.item())]
    if isinstance(v, type) and _versioned(v.__module__):
        return ["type", v.__module__, v.__qualname__]
    raise Uncacheable(f"{where} is a {t.__module__}.{t.__qualname__}, not a plain value")


def class_key(cls):
    """A block class: its name, and for each class of its MRO outside the versioned packages its module's
    file and its namespace (methods followed to the globals they read)."""
    memo = _MEMO.setdefault("classes", {})
    if cls not in memo:
        memo[cls] = _type_value(cls, set())
    return memo[cls]


def _type_value(cls, seen):
    if _versioned(cls.__module__):
        return ["type", cls.__module__, cls.__qualname__]
    parts = []
    for k in cls.__mro__:
        if k is object:
            continue
        if _versioned(k.__module__):
            parts.append(["type", k.__module__, k.__qualname__])
            continue
        where = f"{k.__module__}.{k.__qualname__}"
        space = []
        for name, v in vars(k).items():
            if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"):
                continue
            if isinstance(v, (staticmethod, classmethod)):
                v = v.__func__
            if isinstance(v, property):
                v = (v.fget, v.fset, v.fdel)
            space.append([name, _value(v, f"{where}.{name}", seen)])
        parts.append(["class", k.__module__, k.__qualname__, _module_hash(sys.modules.get(k.__module__)), space])
    return ["class", parts]


def _value(v, where, seen):
    """What a function reads, a class attribute or a default argument: plain values as they are, modules,
    functions and classes by their code; :class:`Uncacheable` for any other object."""
    if type(v) is tuple:
        return ["tuple", [_value(i, where, seen) for i in v]]
    if isinstance(v, types.ModuleType):
        if _versioned(v.__name__):
            return ["module", v.__name__]
        return ["module", v.__name__, _module_hash(v)]
    if isinstance(v, type):
        if id(v) in seen:
            return ["type-ref", v.__module__, v.__qualname__]
        seen.add(id(v))
        return _type_value(v, seen)
    if isinstance(v, types.FunctionType):
        return _function(v, where, seen)
    module = getattr(v, "__module__", None)
    if callable(v) and isinstance(module, str) and _versioned(module):     # builtins, numpy ufuncs, jax's
        return ["callable", module, getattr(v, "__qualname__", getattr(v, "__name__", repr(type(v))))]
    return plain(v, where)


def _function(fn, where, seen):
    if id(fn) in seen:
        return ["function-ref", fn.__module__, fn.__qualname__]
    seen.add(id(fn))
    if _versioned(fn.__module__):
        return ["function", fn.__module__, fn.__qualname__]
    code = fn.__code__
    mod = sys.modules.get(fn.__module__)
    reads = []
    for name in sorted(_global_names(code)):
        if name in fn.__globals__:
            reads.append([name, _value(fn.__globals__[name], f"{where}: global {name}", seen)])
        elif hasattr(builtins, name):
            reads.append([name, "builtin"])
    cells = [_value(c.cell_contents, f"{where}: closure", seen) if _filled(c) else None
             for c in fn.__closure__ or ()]
    return ["function", fn.__module__, fn.__qualname__, _module_hash(mod) if mod is not None else None,
            _code(code), _value(fn.__defaults__ or (), where, seen),
            [[k, _value(v, where, seen)] for k, v in sorted((fn.__kwdefaults__ or {}).items())], cells, reads]


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _global_names(code):
    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            names.add(ins.argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _code(code):
    """A code object's instructions, names and constants (not its file name or line numbers: the file's
    content is in the key)."""
    consts = [_code(c) if isinstance(c, types.CodeType) else _const(c) for c in code.co_consts]
    return [code.co_code.hex(), list(code.co_names), list(code.co_varnames), list(code.co_freevars),
            list(code.co_cellvars), code.co_argcount, code.co_kwonlyargcount, code.co_flags, consts]


def _const(c):
    if type(c) is frozenset:
        return ["frozenset", sorted(repr(i) for i in c)]
    if type(c) is tuple:
        return ["tuple", [_const(i) for i in c]]
    return [type(c).__name__, repr(c)]


# -- entries ---------------------------------------------------------------------------------------------------

def _unreadable(path, exc):
    STATS["unreadable"] += 1
    LAST["reason"] = f"unreadable entry {path.name}: {type(exc).__name__}: {exc}"
    _LOG.debug("%s", LAST["reason"])


def _read(path, key):
    """The program in ``path``, or None (absent, or unreadable: counted, and written again after the trace)."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        STATS["unreadable"] += 1
        return None
    try:
        from jax.experimental import serialize_executable

        if not blob.startswith(MAGIC):
            raise ValueError("not an entry of this cache")
        head_end = blob.index(b"\n", len(MAGIC))
        head = json.loads(blob[len(MAGIC):head_end])
        payload = blob[head_end + 1:]
        if head.get("format") != FORMAT or head.get("key") != key:
            raise ValueError("another format or key")
        if len(payload) != head["size"] or hashlib.sha256(payload).hexdigest() != head["sha256"]:
            raise ValueError("its checksum does not match")
        parts = pickle.loads(payload)
        loaded = serialize_executable.deserialize_and_load(*parts[0])
        if head.get("sources") is not None:     # a channel-last program and what prepares its parameters
            from ast_hybrid.xla import program

            prepare = serialize_executable.deserialize_and_load(*parts[1]) if parts[1] is not None else None
            return program.Executable(loaded, head["sources"], prepare)
        return loaded
    except Exception as exc:       # whatever a damaged entry raises: the program is traced instead
        _unreadable(path, exc)
        return None


def _write(path, key, compiled, summary):
    """Write ``compiled`` under ``key`` (atomically); a program that cannot be serialized (host callbacks,
    effects) or a folder that cannot be written leaves nothing."""
    try:
        from jax.experimental import serialize_executable

        sources = getattr(compiled, "sources", None)      # a channel-last program (xla/program.py)
        prepare = getattr(compiled, "prepare", None)
        compiled = getattr(compiled, "compiled", compiled)
        unloaded = compiled._executable._unloaded_executable
        if unloaded.host_callbacks or unloaded.keepalive or unloaded.ordered_effects or \
                unloaded.unordered_effects or getattr(unloaded, "mut", None):
            raise Uncacheable("the program has host callbacks or effects")
        parts = (serialize_executable.serialize(compiled),
                 None if prepare is None else serialize_executable.serialize(prepare))
        payload = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
        head = {"format": FORMAT, "key": key, "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest(),
                "program": summary, "sources": None if sources is None else [list(s) for s in sources]}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write(MAGIC + json.dumps(head).encode() + b"\n" + payload)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        STATS["writes"] += 1
    except Exception as exc:       # not serializable, or the disk: the program runs, it is just not kept
        STATS["uncacheable"] += isinstance(exc, Uncacheable)
        LAST["reason"] = f"not written: {type(exc).__name__}: {exc}"
        _LOG.debug("%s", LAST["reason"])
