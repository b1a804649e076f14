"""oneDNN's convolutions inside XLA programs: optional, built at first use, XLA's own kernels where it is absent.

XLA:CPU's convolutions take 1.5-10x the time of oneDNN's (the library MXNet's CPU build runs) on the shapes of
small training networks, forward and both gradients (bench/HISTORY.md, session 54).  Where oneDNN is installed
(``pip install ast-hybrid[onednn]``: the ``onednn-devel-cpu-gomp`` package, headers and library) and a C++
compiler is present, :func:`library` compiles ``onednn_conv.cc`` (three XLA FFI handlers) against it and JAX's
FFI headers once per machine, into the cache folder, loads it and registers the handlers; every failure on the
way (no package, no compiler, a compile or load error) leaves XLA's kernels in place, and :func:`status` says
why.  ``AST_HYBRID_ONEDNN``: ``auto`` (default: oneDNN where it builds), ``on`` (an error naming the reason where
it does not), ``off``.

A convolution through oneDNN is one of three primitives of this module (forward, input gradient, weight
gradient), each bilinear in its two operands, whose derivatives are the other two (as ``lax.conv_general_dilated``'s
are XLA's transposed convolutions): JAX differentiates them in either mode, to any order.  They take
channel-last arrays (``N, H, W, C``; kernels ``H, W, I, O``), float32, and run on CPU only.  The channel-last
interpreter (``xla/channel_last.py``) puts them in place of the convolutions of training programs where
:func:`prepare` finds that oneDNN computes them (2-D, float32, no input dilation, padding not negative, and a
primitive oneDNN creates for this shape, other than its reference kernel).

May import: ``ast_hybrid.core`` (settings), ``ast_hybrid.xla.compile_cache`` (the cache folder), jax, numpy, the
standard library.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ast_hybrid.core import settings

__all__ = ["ENV", "Geometry", "library", "enabled", "status", "geometry", "prepare", "conv", "conv_data",
           "conv_weights"]

ENV = "AST_HYBRID_ONEDNN"
SOURCE = Path(__file__).with_name("onednn_conv.cc")
_TARGETS = ("forward", "data", "weights")
_LOCK = threading.Lock()
#: a convolution of at most this many multiply-adds runs on one thread: XLA runs the program's other work beside it,
#: and OpenMP's team costs more than it gives (LeNet b64's step 4.2 -> 3.5 ms; steps of larger convolutions
#: unchanged: bench/HISTORY.md, session 54)
ONE_THREAD_MACS = 20_000_000


class Geometry(NamedTuple):
    """One convolution's options and the shapes its gradients need: the input's and the kernel's spatial
    sizes, strides, dilation (1 = dense), padding before and after, feature groups; and the threads oneDNN runs
    it with (0: OpenMP's own number, ``OMP_NUM_THREADS`` or one per core)."""

    in_hw: tuple
    kernel_hw: tuple
    strides: tuple
    dilation: tuple
    pad_lo: tuple
    pad_hi: tuple
    groups: int
    threads: int = 0


class _Library(NamedTuple):
    dll: ctypes.CDLL
    path: Path
    version: str


class _Missing(NamedTuple):
    reason: str


def enabled() -> bool:
    """Whether training programs put oneDNN's convolutions in (``AST_HYBRID_ONEDNN`` not off and the library
    built); ``on`` and no library is an error saying why."""
    mode = settings.get(ENV)
    if mode == "off":
        return False
    lib = library()
    if isinstance(lib, _Missing):
        if mode == "on":
            raise RuntimeError(f"{ENV}=on, but oneDNN's convolutions are not available: {lib.reason}")
        return False
    return True


def status() -> str:
    """One line: the oneDNN in use (its version and the built file), or why XLA's kernels are."""
    if settings.get(ENV) == "off":
        return f"off ({ENV}=off): XLA's convolutions"
    lib = library()
    if isinstance(lib, _Missing):
        return f"not available: {lib.reason}; XLA's convolutions"
    return f"oneDNN {lib.version} ({lib.path})"


def library():
    """The built and registered kernels (``_Library``), or ``_Missing`` with the reason; built once per process
    (and compiled once per machine and version)."""
    with _LOCK:
        return _load()


@functools.cache
def _load():
    if sys.platform != "linux":
        return _Missing("the oneDNN kernels are built on Linux only")
    found = _find_onednn()
    if isinstance(found, _Missing):
        return found
    include, libdir = found
    cxx = shutil.which(settings.environ("CXX") or "c++") or shutil.which("g++")
    if cxx is None:
        return _Missing("no C++ compiler (c++, g++ or $CXX) to build them with")
    import jax
    import jax.ffi

    key = hashlib.sha256()
    version = include / "oneapi" / "dnnl" / "dnnl_version.h"      # another oneDNN installed at the same place
    for part in (SOURCE.read_bytes(), jax.__version__.encode(), str(include).encode(), str(libdir).encode(),
                 cxx.encode(), version.read_bytes() if version.exists() else b""):
        key.update(part)
    from ast_hybrid.xla.compile_cache import cache_root

    target = cache_root() / "native" / f"onednn-{key.hexdigest()[:20]}.so"
    if not target.exists():
        built = _build(cxx, include, libdir, jax.ffi.include_dir(), target)
        if isinstance(built, _Missing):
            return built
    try:
        dll = ctypes.CDLL(str(target))
    except OSError as err:
        return _Missing(f"{target} does not load: {err}")
    for name in _TARGETS:
        jax.ffi.register_ffi_target(f"ah_onednn_conv_{name}", jax.ffi.pycapsule(getattr(dll, f"ah_onednn_conv_{name}")),
                                    platform="cpu")
    dll.ah_onednn_prepare.restype = ctypes.c_int
    dll.ah_onednn_prepare.argtypes = [ctypes.c_int64] + [ctypes.POINTER(ctypes.c_int64)] * 3 + [ctypes.c_int64] + \
        [ctypes.POINTER(ctypes.c_int64)] * 4 + [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int64]
    buf = ctypes.create_string_buffer(64)
    dll.ah_onednn_version(buf, ctypes.c_int64(64))
    return _Library(dll, target, buf.value.decode())


def _find_onednn():
    """(include folder, library folder) of an installed oneDNN: the ``onednn-devel-cpu-*`` wheels put them under
    the environment's prefix; a system install under /usr/local or /usr."""
    roots = dict.fromkeys([sys.prefix, sysconfig.get_path("data"), getattr(sys, "base_prefix", sys.prefix),
                           os.path.expanduser("~/.local"), "/usr/local", "/usr"])
    for root in roots:
        include = Path(root) / "include"
        if not (include / "oneapi" / "dnnl" / "dnnl.hpp").exists():
            continue
        for libdir in (Path(root) / "lib", Path(root) / "lib64", Path(root) / "lib" / "x86_64-linux-gnu"):
            if (libdir / "libdnnl.so.3").exists():
                return include, libdir
    return _Missing("oneDNN is not installed (pip install ast-hybrid[onednn], or onednn-devel-cpu-gomp)")


def _build(cxx, include, libdir, ffi_include, target):
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-fopenmp", "-w", "-I", str(ffi_include), "-I", str(include),
           str(SOURCE), "-o", str(tmp), "-L", str(libdir), "-l:libdnnl.so.3", f"-Wl,-rpath,{libdir}"]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as err:
        return _Missing(f"building them failed: {err}")
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        return _Missing(f"building them failed ({' '.join(cmd[:2])} ... exit {done.returncode}): {tail}")
    try:
        os.replace(tmp, target)
    except OSError as err:
        return _Missing(f"cannot write {target}: {err}")
    return target


def geometry(e):
    """The :class:`Geometry` of a ``conv_general_dilated`` equation, or None where oneDNN's primitives do not
    apply: not 2-D, not float32 throughout, input dilation, batch groups, or negative padding.  Its threads: one
    up to :data:`ONE_THREAD_MACS` multiply-adds, else OpenMP's own number."""
    import jax.numpy as jnp

    p = e.params
    dn = p["dimension_numbers"]
    x, w = e.invars[0].aval, e.invars[1].aval
    if len(dn.lhs_spec) != 4 or any(a.dtype != jnp.float32 for a in (x, w, e.outvars[0].aval)):
        return None
    if tuple(p["lhs_dilation"]) != (1, 1) or p["batch_group_count"] != 1 or \
            p.get("preferred_element_type") not in (None, jnp.float32):
        return None
    pad = [tuple(q) for q in p["padding"]]
    if any(v < 0 for q in pad for v in q):
        return None
    y = e.outvars[0].aval
    macs = math.prod(y.shape) * math.prod(w.shape[d] for d in dn.rhs_spec[1:])
    return Geometry(tuple(x.shape[d] for d in dn.lhs_spec[2:]), tuple(w.shape[d] for d in dn.rhs_spec[2:]),
                    tuple(p["window_strides"]), tuple(p["rhs_dilation"]), tuple(q[0] for q in pad),
                    tuple(q[1] for q in pad), int(p["feature_group_count"]),
                    1 if macs <= ONE_THREAD_MACS else 0)


def prepare(geo, x_shape, w_shape, y_shape, kinds=_TARGETS):
    """Whether oneDNN computes this convolution (channel-last shapes ``x_shape``, ``w_shape``, ``y_shape``), each
    of ``kinds``, with a kernel other than its reference one; creates the primitives (kept for the calls)."""
    lib = library()
    if isinstance(lib, _Missing):
        return False
    arr = lambda v: (ctypes.c_int64 * len(v))(*[int(i) for i in v])     # noqa: E731
    buf = ctypes.create_string_buffer(256)
    for kind in kinds:
        rc = lib.dll.ah_onednn_prepare(_TARGETS.index(kind), arr(x_shape), arr(w_shape), arr(y_shape), geo.groups,
                                       arr(geo.strides), arr(geo.dilation), arr(geo.pad_lo), arr(geo.pad_hi),
                                       geo.threads, buf, 256)
        if rc != 0 or buf.value.startswith(b"ref"):
            return False
    return True


# -- the three primitives ------------------------------------------------------------------------------------


def conv(x, w, geo):
    """The convolution of ``x`` (``N, H, W, C``) by ``w`` (``KH, KW, C/groups, O``): ``N, OH, OW, O``."""
    return _prims()[0].bind(x, w, geo=geo)


def conv_data(dy, w, geo):
    """The gradient of :func:`conv` with respect to its input, for the output cotangent ``dy``."""
    return _prims()[1].bind(dy, w, geo=geo)


def conv_weights(x, dy, geo):
    """The gradient of :func:`conv` with respect to its kernel, for the output cotangent ``dy``."""
    return _prims()[2].bind(x, dy, geo=geo)


def _out_hw(geo):
    return tuple((n + lo + hi - (d * (k - 1) + 1)) // s + 1
                 for n, k, s, d, lo, hi in zip(geo.in_hw, geo.kernel_hw, geo.strides, geo.dilation, geo.pad_lo,
                                               geo.pad_hi))


@functools.cache
def _prims():
    """The primitives, made once: abstract evaluation, CPU lowering to the FFI handlers, and the bilinear
    derivative rules that express each one's transposes through the other two."""
    import jax
    import jax.numpy as jnp
    from jax._src import dispatch
    from jax.extend.core import Primitive
    from jax.interpreters import ad, batching, mlir

    lib = library()         # the handlers registered before anything lowers to them
    if isinstance(lib, _Missing):
        raise RuntimeError(f"oneDNN's convolutions are not available: {lib.reason}")

    def shapes(a, b, geo):
        return ((a.shape[0], *_out_hw(geo), b.shape[3]),                            # forward: x, w
                (a.shape[0], *geo.in_hw, b.shape[2] * geo.groups),                  # data: dy, w
                (*geo.kernel_hw, a.shape[3] // geo.groups, b.shape[3]))             # weights: x, dy

    prims = []
    for i, name in enumerate(_TARGETS):
        prim = Primitive(f"onednn_conv_{name}")
        prim.def_impl(functools.partial(dispatch.apply_primitive, prim))
        prim.def_abstract_eval(lambda a, b, *, geo, i=i: jax.core.ShapedArray(shapes(a, b, geo)[i], jnp.float32))

        def lower(ctx, a, b, *, geo, name=name):
            return jax.ffi.ffi_lowering(f"ah_onednn_conv_{name}")(
                ctx, a, b, groups=np.int64(geo.groups), strides=np.asarray(geo.strides, np.int64),
                dilation=np.asarray(geo.dilation, np.int64), pad_lo=np.asarray(geo.pad_lo, np.int64),
                pad_hi=np.asarray(geo.pad_hi, np.int64), threads=np.int64(geo.threads))
        mlir.register_lowering(prim, lower, platform="cpu")
        batching.primitive_batchers[prim] = functools.partial(_batch, prim, i)
        prims.append(prim)
    fwd, data, weights = prims
    # y = F(x, w); dx = D(dy, w); dw = W(x, dy): <F(x, w), g> = <x, D(g, w)> = <w, W(x, g)>
    ad.defbilinear(fwd, lambda g, x, w, *, geo: data.bind(g, w, geo=geo),
                   lambda g, x, w, *, geo: weights.bind(x, g, geo=geo))
    ad.defbilinear(data, lambda g, dy, w, *, geo: fwd.bind(g, w, geo=geo),
                   lambda g, dy, w, *, geo: weights.bind(g, dy, geo=geo))
    ad.defbilinear(weights, lambda g, x, dy, *, geo: data.bind(dy, g, geo=geo),
                   lambda g, x, dy, *, geo: fwd.bind(x, g, geo=geo))
    return tuple(prims)


def _batch(prim, kind, args, dims, *, geo):
    """vmap: the mapped axis folded into the batch where only the activation (or cotangent) of a forward or an
    input gradient is mapped; else one call per element (``lax.map``)."""
    import jax.numpy as jnp
    from jax import lax

    (a, b), (da, db) = args, dims
    size = a.shape[da] if da is not None else b.shape[db]
    if kind < 2 and db is None:
        a = jnp.moveaxis(a, da, 0)
        out = prim.bind(a.reshape(size * a.shape[1], *a.shape[2:]), b, geo=geo)
        return out.reshape(size, a.shape[1], *out.shape[1:]), 0
    a, b = (jnp.moveaxis(v, d, 0) if d is not None else jnp.broadcast_to(v, (size, *v.shape))
            for v, d in ((a, da), (b, db)))
    return lax.map(lambda ab: prim.bind(ab[0], ab[1], geo=geo), (a, b)), 0


if __name__ == "__main__":      # `python -m ast_hybrid.xla.onednn`: the kernels built now, and which convolutions run
    print(status())
