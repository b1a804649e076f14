"""Run one notebook's cells, Jupyter's way, logging each cell's output (issue 30 item 2; ``d2l.py`` drives it).

    python _ah_notebook.py CELLS_DIR LOG SEED            (MXNet's side)
    ast-hybrid run _ah_notebook.py CELLS_DIR LOG SEED    (ours)

``CELLS_DIR`` holds ``cell_000.py``, ``cell_001.py``, ...: each is compiled under its own file name (so that
``inspect.getsource`` finds a class a cell defines, as ``hybridize()`` needs) and run in one shared namespace,
as a notebook's kernel does; a cell ending in an expression shows its ``repr`` as Jupyter does.  Each cell's
record (its output, or the error that stopped the notebook) is appended to the JSON-lines ``LOG`` when known.

Before the first cell, what a notebook would find on the user's machine is set up the same on both sides:
matplotlib draws off screen, Python's, NumPy's and MXNet's generators are seeded with ``SEED``, and
``requests.get`` serves the files of ``$AH_D2L_FIXTURES`` by their name in place of the network (the d2l
library downloads through it; a file not there is a ConnectionError).  MXNet's Fashion-MNIST reader is told the
small local files are its own (MXNet would download the real ones on a sha1 mismatch; ours reads them).
Only the standard library and the notebook's own imports: it runs in MXNet's Python as in ours.
"""

import ast
import io
import json
import os
import random
import sys
import time
import traceback

os.environ.setdefault("MPLBACKEND", "Agg")


class _Response:
    status_code = 200

    def __init__(self, content, url):
        self.content, self.url, self.headers = content, url, {"content-length": str(len(content))}

    def iter_content(self, chunk_size=1024):
        for i in range(0, len(self.content), chunk_size):
            yield self.content[i:i + chunk_size]

    def raise_for_status(self):
        return None


def _serve(url, *args, **kwargs):
    path = os.path.join(os.environ.get("AH_D2L_FIXTURES", ""), url.rsplit("/", 1)[-1])
    if not os.path.isfile(path):
        import requests
        raise requests.ConnectionError(f"no network here, and no local stand-in for {url}")
    with open(path, "rb") as f:
        return _Response(f.read(), url)


def _watch_d2l(used):
    """Record in ``used`` each function and class of the d2l library that runs (MXNet's side only: the
    library's coverage is the notebooks', whichever side runs them)."""
    import functools
    import inspect

    try:
        from d2l import mxnet as d2l
    except ImportError:
        return
    for name, value in list(vars(d2l).items()):
        if getattr(value, "__module__", None) != d2l.__name__:
            continue
        if inspect.isfunction(value):
            def wrapper(*args, _f=value, _name=name, **kwargs):
                used.add(_name)
                return _f(*args, **kwargs)
            setattr(d2l, name, functools.wraps(value)(wrapper))
        elif inspect.isclass(value):
            init = value.__dict__.get("__init__")
            if init is None:
                continue

            def __init__(self, *args, _f=init, _name=name, **kwargs):
                used.add(_name)
                return _f(self, *args, **kwargs)
            value.__init__ = functools.wraps(init)(__init__)


def _prepare(seed):
    random.seed(seed)
    import numpy
    numpy.random.seed(seed)
    try:
        import requests
        requests.get = _serve
    except ImportError:
        pass
    import mxnet
    mxnet.random.seed(seed)
    if os.environ.get("AH_SIDE") == "mxnet":
        from mxnet.gluon import utils
        utils.check_sha1 = lambda filename, sha1_hash: True


class _Tee(io.StringIO):
    def __init__(self, echo):
        super().__init__()
        self._echo = echo

    def write(self, s):
        self._echo.write(s)
        return super().write(s)


def _compile(path):
    with open(path) as f:
        source = f.read()
    tree = ast.parse(source, path)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        call = ast.Call(func=ast.Name("__ah_display__", ast.Load()), args=[last.value], keywords=[])
        tree.body[-1] = ast.copy_location(ast.Expr(call), last)
        ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


def _display(value):
    if value is not None and type(value).__module__.split(".")[0] != "matplotlib":
        print(repr(value))


def main(cells_dir, log, seed):
    _prepare(int(seed))
    used = set()
    if os.environ.get("AH_SIDE") == "mxnet":
        _watch_d2l(used)
    names = sorted(n for n in os.listdir(cells_dir) if n.startswith("cell_") and n.endswith(".py"))
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "__ah_display__": _display}
    echo = sys.stdout
    for name in names:
        record = {"cell": name, "error": None}
        out = _Tee(echo)
        sys.stdout = out
        start = time.perf_counter()
        try:
            exec(_compile(os.path.join(cells_dir, name)), namespace)
        except BaseException as exc:           # the notebook stops at its first error, as "Run all" does
            record["error"] = f"{type(exc).__name__}: {exc}"[:2000]
            record["traceback"] = traceback.format_exc()[-4000:]
        finally:
            sys.stdout = echo
        record["output"] = out.getvalue()[-20000:]
        record["seconds"] = round(time.perf_counter() - start, 3)
        record["d2l_used"] = sorted(used)
        with open(log, "a") as f:
            f.write(json.dumps(record) + "\n")
        if record["error"]:
            return 1
        try:
            import matplotlib.pyplot as plt
            plt.close("all")
        except ImportError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
