"""``ast-hybrid run SCRIPT [ARGS...]``: run an MXNet script unchanged, ``import mxnet`` being ast-hybrid.

As ``python SCRIPT ARGS...`` would: the script runs as ``__main__`` (``runpy``), ``sys.argv`` is
``[SCRIPT, *ARGS]`` and ``sys.path[0]`` the script's folder; its exit status is the command's.  Before it
starts, ``ast_hybrid.mxnet.install()`` makes ``mxnet`` the compatibility package (refused, exit 2, when a
real MXNet is importable, unless ``--force``) and numpy's removed aliases (``np.float``, ``np.int``...)
are restored with a one-time warning each, and jax's x64 mode is turned on (unless ``JAX_ENABLE_X64`` is set):
MXNet computes in float64/int64 where a script asks for them; JAX's persistent compilation cache is turned on
(``xla.compile_cache.ensure``: the programs of ops run one by one are kept for the next run, as a
hybridized block's are).  ``--hybridize`` hybridizes every block the
script calls, HybridBlock or Block (``gluon/whole.py``; ``AST_HYBRID_HYBRIDIZE=all``).  ``python -m
ast_hybrid.run SCRIPT`` is the same command.
"""

from __future__ import annotations

import os
import runpy
import sys

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, err

__all__ = ["run"]


def run(args) -> int:
    from ast_hybrid.core.npmode import mxnet_dtypes

    mxnet_dtypes()
    from ast_hybrid.mxnet import install
    from ast_hybrid.mxnet._activate import RealMXNetInstalled, restore_numpy_aliases

    script = args.script
    if not os.path.isfile(script):
        err(f"{script}: no such file")
        return EXIT_ERROR
    try:
        install(force=args.force)
    except RealMXNetInstalled as exc:
        err(str(exc))
        return EXIT_ERROR
    restore_numpy_aliases()
    from ast_hybrid.xla import compile_cache

    compile_cache.ensure()
    if getattr(args, "hybridize", False):       # every block the script calls (gluon/whole.py)
        from ast_hybrid.core import settings

        settings.put("AST_HYBRID_HYBRIDIZE", "all")
    sys.argv = [script, *args.args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return EXIT_CLEAN
