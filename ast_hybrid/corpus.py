"""Real Gluon code nobody here wrote: the ``mxnet/gluon`` tree of MXNet 1.9.1.

:func:`gluon_tree` returns a directory holding that tree, to be *read*
(linted, converted from source), never imported.  It is taken from the
oracle's virtualenv when that exists, else from the wheel, downloaded once
with ``pip download --no-deps mxnet==1.9.1`` into ``.cache/`` and unpacked.
Test and benchmark infrastructure; the runtime never imports it.
"""

from __future__ import annotations

import glob
import subprocess
import sys
import zipfile
from pathlib import Path

from .oracle import DEFAULT_VENV, ROOT

__all__ = ["CACHE", "CorpusUnavailable", "gluon_tree"]

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
