"""The oracle: real MXNet 1.9.1, in its own virtualenv, behind a subprocess.

MXNet 1.9.1 needs ``numpy<1.24``; jax needs numpy 2.  They cannot share an
environment, so this module creates ``.venv-mxnet`` at the project root
(``python -m ast_hybrid.testing.oracle setup``) and talks to a long-lived MXNet
process over a pipe.  Arrays cross as ``.npz`` bytes, a format both numpy
versions read; everything else crosses as JSON.

    with Oracle() as mx:        # (tests/ops runs this for real, through the `oracle` fixture)
        out = mx.run("out['y'] = nd.relu(nd.array(inp['x'])).asnumpy()",
                     x=np.array([-1.0, 2.0], dtype='float32'))
    out['y']                    # array([0., 2.], dtype=float32)

Inside ``code``: ``mx``, ``nd``, ``sym``, ``gluon``, ``np`` (numpy 1.23),
``inp`` (the arrays sent, as numpy), ``out`` (a dict to fill with numpy
arrays) and ``meta`` (a dict to fill with JSON values).  The namespace is fresh
for every call.

This module is test and benchmark infrastructure: nothing in the runtime
imports it.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np

__all__ = ["ROOT", "DEFAULT_VENV", "OracleUnavailable", "OracleError", "OracleCrashed", "venv_python",
           "ensure_venv", "gluon_pkgs", "ensure_gluon_pkgs", "onnx_pkgs", "ensure_onnx_pkgs", "Oracle"]

ROOT = Path(__file__).resolve().parents[2]  # the repository: ast_hybrid/testing/oracle.py
DEFAULT_VENV = ROOT / ".venv-mxnet"
REQUIREMENTS = ("mxnet==1.9.1", "numpy<1.24")
# Real model code for the tests, imported unchanged by both sides (MXNet's process, and ours through
# ``import mxnet`` = ``ast_hybrid.mxnet``): unpacked with ``--no-deps --target`` into ``gluon_pkgs()``, with
# what GluonCV/GluonNLP import at import time (scipy built for the oracle's numpy 1.x; requests, which
# GluonCV's utils/download.py imports, with its own dependencies, the versions MXNet's install brought).
GLUON_REQUIREMENTS = ("gluoncv==0.10.5", "gluonnlp==0.10.0", "tqdm==4.70.1", "portalocker==4.4.2",
                      "pyyaml==6.0.3", "pillow==13.0.0", "scipy==1.10.1", "packaging==26.3", "requests==2.34.2",
                      "urllib3==2.8.0", "idna==3.20", "charset_normalizer==3.5.3", "certifi==2026.10.19.post1")
# For the benchmarks only (issue 15's ONNX Runtime contender): MXNet 1.9.1's ``mx.onnx`` export needs onnx
# 1.14.1 with protobuf<4; ONNX Runtime runs the exported file in the oracle's process.  Kept apart in
# ``onnx_pkgs()``, on sys.path only where the bench puts it, so the tests' MXNet never sees them.
# For MXNet's own unit tests (``python -m ast_hybrid.conformance.mxnet_tests``): pytest for the oracle's python
PYTEST_REQUIREMENTS = ("pytest==9.2.0", "iniconfig==2.3.1", "pluggy==1.7.0", "packaging==26.3", "pygments==2.21.0")
ONNX_REQUIREMENTS = ("onnx==1.14.1", "protobuf==3.20.3", "onnxruntime==1.19.2", "coloredlogs==15.0.1",
                     "humanfriendly==10.0", "flatbuffers==25.12.19", "sympy==1.14.0", "mpmath==1.3.0",
                     "packaging==26.3", "typing_extensions==4.16.0")


class OracleUnavailable(RuntimeError):
    """The MXNet virtualenv is missing and could not be created."""


class OracleError(RuntimeError):
    """MXNet raised; ``.remote_traceback`` holds its traceback."""

    def __init__(self, message: str, remote_traceback: str = ""):
        super().__init__(message + ("\n--- in MXNet ---\n" + remote_traceback if remote_traceback else ""))
        self.remote_traceback = remote_traceback


class OracleCrashed(OracleError):
    """MXNet's process died while running the code (MXNet 1.9.1 can segfault on
    some errors instead of raising).  The next ``run`` starts a fresh process."""


def venv_python(venv_dir: Path | str = DEFAULT_VENV) -> Path:
    return Path(venv_dir) / "bin" / "python"


def _works(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", "import mxnet, numpy; assert mxnet.__version__ == '1.9.1'"],
                           capture_output=True, timeout=300)
    return probe.returncode == 0


def ensure_venv(venv_dir: Path | str = DEFAULT_VENV, *, quiet: bool = True) -> Path:
    """The oracle's python, creating the virtualenv first if needed."""
    venv_dir = Path(venv_dir)
    python = venv_python(venv_dir)
    if _works(python):
        return python
    try:
        venv.EnvBuilder(with_pip=True, clear=venv_dir.exists()).create(venv_dir)
        cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *REQUIREMENTS]
        if quiet:
            cmd.insert(4, "-q")
        done = subprocess.run(cmd, capture_output=quiet, text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as exc:
        raise OracleUnavailable(f"could not create the MXNet oracle virtualenv at {venv_dir}: {exc}") from exc
    if done.returncode != 0 or not _works(python):
        tail = (done.stderr or "")[-2000:] if quiet else ""
        raise OracleUnavailable(f"could not install {' '.join(REQUIREMENTS)} into {venv_dir}:\n{tail}")
    return python


def gluon_pkgs(venv_dir: Path | str = DEFAULT_VENV) -> Path:
    """The folder holding GluonCV 0.10.5 and GluonNLP 0.10.0 (``setup`` fills it), inside the oracle's
    virtualenv; ``$AST_HYBRID_GLUON_PKGS`` names another."""
    from ast_hybrid.core import settings

    chosen = settings.get("AST_HYBRID_GLUON_PKGS")
    return Path(chosen) if chosen else Path(venv_dir) / "gluon-pkgs"


def ensure_gluon_pkgs(venv_dir: Path | str = DEFAULT_VENV, *, quiet: bool = True) -> Path:
    """:func:`gluon_pkgs`, installing :data:`GLUON_REQUIREMENTS` there first if GluonCV or GluonNLP is
    missing (``pip --no-deps --target`` with the oracle's python: GluonNLP builds from its sdist)."""
    return _ensure_target(gluon_pkgs(venv_dir), ("gluoncv", "gluonnlp", "requests"), GLUON_REQUIREMENTS, venv_dir,
                          quiet)


def pytest_pkgs(venv_dir: Path | str = DEFAULT_VENV) -> Path:
    """The folder holding pytest for the oracle's python (MXNet's unit tests run under it)."""
    return Path(venv_dir) / "pytest-pkgs"


def ensure_pytest_pkgs(venv_dir: Path | str = DEFAULT_VENV, *, quiet: bool = True) -> Path:
    """:func:`pytest_pkgs`, installing :data:`PYTEST_REQUIREMENTS` there first if missing."""
    return _ensure_target(pytest_pkgs(venv_dir), ("_pytest", "pluggy"), PYTEST_REQUIREMENTS, venv_dir, quiet)


def onnx_pkgs(venv_dir: Path | str = DEFAULT_VENV) -> Path:
    """The folder holding onnx 1.14.1 and ONNX Runtime for the oracle's python (benchmarks only)."""
    return Path(venv_dir) / "onnx-pkgs"


def ensure_onnx_pkgs(venv_dir: Path | str = DEFAULT_VENV, *, quiet: bool = True) -> Path:
    """:func:`onnx_pkgs`, installing :data:`ONNX_REQUIREMENTS` there first if missing."""
    return _ensure_target(onnx_pkgs(venv_dir), ("onnx", "onnxruntime"), ONNX_REQUIREMENTS, venv_dir, quiet)


def _ensure_target(folder: Path, packages, requirements, venv_dir, quiet: bool) -> Path:
    if all((folder / name / "__init__.py").is_file() for name in packages):
        return folder
    python = ensure_venv(venv_dir, quiet=quiet)
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "--upgrade",
           "--target", str(folder), *requirements]
    if quiet:
        cmd.insert(4, "-q")
    try:
        done = subprocess.run(cmd, capture_output=quiet, text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as exc:
        raise OracleUnavailable(f"could not install {', '.join(packages)} into {folder}: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or "")[-2000:] if quiet else ""
        raise OracleUnavailable(f"could not install {' '.join(requirements)} into {folder}:\n{tail}")
    return folder


# --- wire format: 4-byte length + JSON header, 4-byte length + npz payload ---------

def _pack(header: dict, arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    head = json.dumps(header).encode()
    payload = buf.getvalue()
    return struct.pack("<I", len(head)) + head + struct.pack("<I", len(payload)) + payload


def _read_exact(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError("oracle process closed its pipe")
        data += chunk
    return data


def _unpack(stream) -> tuple[dict, dict]:
    (n,) = struct.unpack("<I", _read_exact(stream, 4))
    header = json.loads(_read_exact(stream, n))
    (n,) = struct.unpack("<I", _read_exact(stream, 4))
    with np.load(io.BytesIO(_read_exact(stream, n)), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return header, arrays


# The server runs inside the MXNet venv; it is this same file, run as a script
# there (only numpy and the stdlib are imported above, both present there).
_SERVER_MAIN = "serve"


def _serve() -> None:  # pragma: no cover - runs in the oracle's process
    import traceback

    import mxnet as mx  # noqa: F401
    from mxnet import gluon, nd, sym

    inp_stream, out_stream = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # user prints must not corrupt the pipe
    while True:
        try:
            header, arrays = _unpack(inp_stream)
        except EOFError:
            return
        out, meta = {}, {}
        ns = {"mx": mx, "nd": nd, "sym": sym, "gluon": gluon, "np": np,
              "inp": arrays, "out": out, "meta": meta}
        try:
            exec(compile(header["code"], "<oracle>", "exec"), ns)
            reply = {"ok": True, "meta": meta}
        except BaseException as exc:  # report everything, keep serving
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc()}
            out = {}
        out_stream.write(_pack(reply, out))
        out_stream.flush()


class Oracle:
    """A live MXNet 1.9.1 process.  Use as a context manager, or call ``close()``."""

    def __init__(self, venv_dir: Path | str = DEFAULT_VENV, *, create: bool = True, as_users_run_it: bool = False):
        """``as_users_run_it``: MXNet's engine and OpenMP threads as this environment sets
        them, by default its threaded engine on every core (what a user's MXNet runs: for
        benchmarks); otherwise the synchronous NaiveEngine on one thread, so that the tests'
        reference values are deterministic."""
        python = ensure_venv(venv_dir) if create else venv_python(venv_dir)
        if not python.exists():
            raise OracleUnavailable(f"no MXNet oracle at {venv_dir}; run `python -m ast_hybrid.testing.oracle setup`")
        env = dict(os.environ, PYTHONPATH="")
        if not as_users_run_it:
            env.update(MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1")
        self._argv, self._env = [str(python), "-u", __file__, _SERVER_MAIN], env
        self._proc = self._start()

    def _start(self) -> subprocess.Popen:
        return subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=self._env, cwd=str(ROOT))

    def run(self, code: str, **inputs) -> dict:
        """Run ``code`` in MXNet with ``inp`` = inputs; return ``out`` (numpy arrays).

        ``meta`` values the code set are returned under the key ``"meta"``.  If
        MXNet's process dies on the code, this raises ``OracleCrashed`` and the
        next call runs in a fresh process, so one crash does not fail every test
        after it.
        """
        if self._proc.poll() is not None:  # died earlier: start again
            self._proc = self._start()
        try:
            self._proc.stdin.write(_pack({"code": code}, inputs))
            self._proc.stdin.flush()
            header, arrays = _unpack(self._proc.stdout)
        except (EOFError, BrokenPipeError) as exc:
            try:
                status = self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                status = self._proc.wait()
            how = f"signal {-status}" if status < 0 else f"exit status {status}"
            raise OracleCrashed(f"MXNet's process died ({how}) running this code: {exc}") from None
        if not header["ok"]:
            raise OracleError(header["error"], header.get("traceback", ""))
        if header.get("meta"):
            arrays["meta"] = header["meta"]
        return arrays

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()

    def __enter__(self) -> "Oracle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [_SERVER_MAIN]:
        _serve()
        return 0
    if argv[:1] == ["setup"]:
        target = Path(argv[1]) if len(argv) > 1 else DEFAULT_VENV
        print(f"setting up the MXNet 1.9.1 oracle in {target} ...", flush=True)
        try:
            python = ensure_venv(target, quiet=False)
            print(f"GluonCV 0.10.5 and GluonNLP 0.10.0 in {ensure_gluon_pkgs(target, quiet=False)}")
        except OracleUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"oracle ready: {python}")
        return 0
    print("usage: python -m ast_hybrid.testing.oracle setup [VENV_DIR]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())


def run_both(text: str, folder, timeout: float = 600) -> tuple[list[str], list[str]]:
    """The printed (non-empty) lines of the script ``text``, run by MXNet 1.9.1 and under ``python -m
    ast_hybrid.run`` (``import mxnet`` = ast-hybrid), in ``folder``: ``(ours, theirs)``; MXNet's engine notices
    are left out.  A script failing on either side fails with its stderr."""
    def run(cmd, env=None):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(folder), env=env)
        if done.returncode:
            raise AssertionError(f"{cmd[0]} failed on the script:\n{done.stderr[-3000:]}")
        return [line for line in done.stdout.splitlines() if line.strip()]

    script = Path(folder) / "script.py"
    script.write_text(text)
    theirs = run([str(venv_python()), str(script)],
                 dict(os.environ, PYTHONPATH="", MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1"))
    ours = run([sys.executable, "-m", "ast_hybrid.run", str(script)])
    return ours, [line for line in theirs if "engine" not in line.lower() and "MKLDNN" not in line]
