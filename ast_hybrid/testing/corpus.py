"""Real Gluon code nobody here wrote: the ``mxnet/gluon`` tree of MXNet 1.9.1, GluonCV, GluonNLP.

:func:`gluon_tree` returns a directory holding that tree, to be *read*
(linted, converted from source), never imported.  It is taken from the
oracle's virtualenv when that exists, else from the wheel, downloaded once
with ``pip download --no-deps mxnet==1.9.1`` into ``.cache/`` and unpacked.
:func:`package_tree` does the same for the packages of :data:`PACKAGES`
(GluonCV 0.10.5's wheel, GluonNLP 0.10.0's sdist, GluonTS 0.8.1's, gluoncv2 0.0.64's and sockeye 2.3.17's wheels,
gluonfr 1.0.2's sdist, autogluon 0.0.15's wheel, deeprenewal 0.3.3's and xfer-ml 1.1.0's sdists, cnstd 0.1.1's
wheel): their Python sources,
downloaded once with ``pip download --no-deps`` and unpacked under ``.cache/``.
:func:`f_op_sites` finds, statically, every ``F.<op>`` a tree of Gluon code
uses (for the op-coverage test and ``bench/op_coverage.py``).
Test and benchmark infrastructure; the runtime never imports it.
"""

from __future__ import annotations

import ast
import collections
import glob
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from .oracle import DEFAULT_VENV, ROOT

__all__ = ["CACHE", "CorpusUnavailable", "gluon_tree", "PACKAGES", "package_tree", "f_op_sites", "gluon_files", "resolve_op", "GLUON_SCOPE",
           "NUMPY_BRANCH"]

CACHE = ROOT / ".cache"
WHEEL_SPEC = "mxnet==1.9.1"


class CorpusUnavailable(RuntimeError):
    """The MXNet wheel could not be had (no network to the package index?)."""


def _from_venv(venv_dir: Path) -> Path | None:
    hits = glob.glob(str(venv_dir / "lib" / "python3*" / "site-packages" / "mxnet" / "gluon"))
    return Path(hits[0]) if hits else None


def gluon_tree(cache: Path = CACHE, *, venv_dir: Path = DEFAULT_VENV) -> Path:
    """Path of an unpacked ``mxnet/gluon`` directory of MXNet 1.9.1."""
    found = _from_venv(Path(venv_dir))
    if found is not None:
        return found
    unpacked = Path(cache) / "mxnet-1.9.1" / "mxnet" / "gluon"
    if (unpacked / "block.py").exists():
        return unpacked
    wheels = sorted(Path(cache).glob("mxnet-1.9.1-*.whl"))
    if not wheels:
        Path(cache).mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                               "--disable-pip-version-check", "-d", str(cache), WHEEL_SPEC],
                              capture_output=True, text=True)
        wheels = sorted(Path(cache).glob("mxnet-1.9.1-*.whl"))
        if done.returncode != 0 or not wheels:
            raise CorpusUnavailable(f"could not download {WHEEL_SPEC}: {done.stderr[-1000:]}")
    with zipfile.ZipFile(wheels[0]) as zf:
        members = [n for n in zf.namelist() if n.startswith("mxnet/gluon/")]
        zf.extractall(unpacked.parent.parent, members)
    return unpacked


#: Gluon code of the package index: name -> (pip requirement, the package's folder inside the
#: downloaded archive).  An sdist (``.tar.gz``) is downloaded as one (``--no-binary NAME``) and
#: never built: only its Python sources are read.
PACKAGES = {
    "gluoncv": ("gluoncv==0.10.5", "gluoncv"),
    "gluonnlp": ("gluonnlp==0.10.0", "gluonnlp-0.10.0/src/gluonnlp"),
    "gluonts": ("gluonts==0.8.1", "gluonts"),
    "gluoncv2": ("gluoncv2==0.0.64", "gluoncv2"),
    "sockeye": ("sockeye==2.3.17", "sockeye"),
    "gluonfr": ("gluonfr==1.0.2", "gluonfr-1.0.2/gluonfr"),
    "autogluon": ("autogluon==0.0.15", "autogluon"),
    "deeprenewal": ("deeprenewal==0.3.3", "deeprenewal-0.3.3/deeprenewal"),
    "xfer": ("xfer-ml==1.1.0", "xfer-ml-1.1.0/xfer"),
    "cnstd": ("cnstd==0.1.1", "cnstd"),
}
_SDISTS = ("gluonnlp", "gluonfr", "deeprenewal", "xfer")


def package_tree(name: str, cache: Path = CACHE) -> Path:
    """Path of the unpacked package ``name`` of :data:`PACKAGES` (read, never imported)."""
    spec, inner = PACKAGES[name]
    dist, version = spec.split("==")     # the archive is named after the distribution (xfer-ml)
    unpacked = Path(cache) / f"{name}-{version}-src"
    tree = unpacked / inner
    if (tree / "__init__.py").exists():
        return tree
    archives = sorted(Path(cache).glob(f"{dist}-{version}[.-]*"))
    archives = [a for a in archives if a.name.endswith((".whl", ".tar.gz"))]
    if not archives:
        Path(cache).mkdir(parents=True, exist_ok=True)
        binary = ["--no-binary", dist] if name in _SDISTS else []
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                               "--disable-pip-version-check", *binary, "-d", str(cache), spec],
                              capture_output=True, text=True)
        archives = [a for a in sorted(Path(cache).glob(f"{dist}-{version}[.-]*"))
                    if a.name.endswith((".whl", ".tar.gz"))]
        if done.returncode != 0 or not archives:
            raise CorpusUnavailable(f"could not download {spec}: {done.stderr[-1000:]}")
    archive = archives[0]
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(unpacked, [n for n in zf.namelist() if n.startswith(inner + "/")])
    else:
        with tarfile.open(archive) as tf:
            members = [m for m in tf.getmembers() if m.isfile() and m.name.startswith(inner + "/")
                       and m.name.endswith(".py")]
            tf.extractall(unpacked, members, filter="data")
    return tree


# -- F op sites in real code --------------------------------------------------------------------

#: chains through these belong to MXNet 2's numpy mode (``is_np_array()`` branches)
NUMPY_BRANCH = ("np", "npx")
#: what of mxnet/gluon calls F ops that a Gluon port must have
GLUON_SCOPE = ("nn", "rnn", "model_zoo/vision", "loss.py")


def _chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "F":
        return list(reversed(parts))
    return None


def _op_names(tree):
    """String op names a file passes around as ``op_name`` (what ``getattr(F, self._op_name)`` reads)."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg == "op_name" and isinstance(n.value, ast.Constant):
            names.add(n.value.value)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop" \
                and len(n.args) == 2 and isinstance(n.args[0], ast.Constant) and n.args[0].value == "op_name" \
                and isinstance(n.args[1], ast.Constant):
            names.add(n.args[1].value)
    return names


def f_op_sites(files, root):
    """``(sites, numpy_sites)``: {op: ["file:line", ...]} for the legacy ops and for the numpy-mode ones."""
    sites, numpy_sites = collections.defaultdict(list), collections.defaultdict(list)
    for path in files:
        try:
            tree = ast.parse(Path(path).read_text())
        except SyntaxError:
            continue
        where = Path(path).relative_to(root).as_posix()
        inner = {id(c) for n in ast.walk(tree) if isinstance(n, ast.Attribute) for c in [n.value]}
        op_names = _op_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                chain = _chain(node)
                if chain:
                    target = numpy_sites if chain[0] in NUMPY_BRANCH else sites
                    target[".".join(chain)].append(f"{where}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "F":
                names = [node.args[1].value] if isinstance(node.args[1], ast.Constant) else sorted(op_names)
                for name in names:    # lower-case conv names are the npx spellings (numpy mode)
                    target = numpy_sites if name in ("convolution", "deconvolution") else sites
                    target[name].append(f"{where}:{node.lineno}")
    return sites, numpy_sites


def gluon_files(tree):
    """The files of :data:`GLUON_SCOPE` in an unpacked ``mxnet/gluon`` tree."""
    root = Path(tree)
    return [p for sub in GLUON_SCOPE
            for p in ([root / sub] if sub.endswith(".py") else sorted((root / sub).rglob("*.py")))]


def resolve_op(name):
    """Our op for a dotted name (``contrib.box_nms``), or None."""
    from ast_hybrid import nd

    obj = nd
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
