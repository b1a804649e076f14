"""Our side of ``test_training_x64_oracle.py``: one recorded training step of an MXNet model_zoo network in
float64, in a process of its own (jax's 64-bit mode must be on before jax starts: ``JAX_ENABLE_X64=1``).

    JAX_ENABLE_X64=1 python train_step_x64.py REQUEST.npz RESULT.npz

REQUEST holds ``name`` (the model), ``params`` (the path of MXNet's float64 parameters), ``modes`` (some of
'imperative', 'hybridized'), ``x`` and ``w``; RESULT gets ``<mode>/<key>`` for every array the step gives
(``test_training_oracle.STEP``) and ``<mode>/seconds``.  The network is built from MXNet's own source files,
laid over ``ast_hybrid.mxnet`` as the ``mxnet_source`` fixture does.
"""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))


def mxnet_with_its_files(root):
    """``import mxnet`` = ast_hybrid.mxnet with MXNet's model_zoo (and the other files of conftest) in it."""
    from conftest import MXNET_FILES, MXNET_MODULES, MXNetFiles

    from ast_hybrid import mxnet as compat
    from ast_hybrid.testing.corpus import gluon_tree

    for rel in MXNET_FILES:
        src, dest = Path(gluon_tree()) / rel, Path(root) / "mxnet" / "gluon" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, dest)
    compat.install()
    sys.meta_path.insert(0, MXNetFiles(Path(root)))
    import importlib
    for name in MXNET_MODULES:
        importlib.import_module(name)


def main(request, result):
    assert os.environ.get("JAX_ENABLE_X64") == "1", "run with JAX_ENABLE_X64=1"
    import jax
    assert jax.config.jax_enable_x64
    from test_training_oracle import BUILD, STEP

    req = dict(np.load(request, allow_pickle=False))
    with tempfile.TemporaryDirectory() as root:
        mxnet_with_its_files(root)
        from mxnet.gluon.model_zoo import vision

        from ast_hybrid import autograd, nd

        out = {}
        for mode in [str(m) for m in req["modes"]]:
            env = {"vision": vision, "autograd": autograd, "x": nd.array(req["x"], dtype="float64"),
                   "w": nd.array(req["w"], dtype="float64")}
            exec(BUILD.replace("{name!r}", repr(str(req["name"]))), env)
            net = env["net"]
            net.cast("float64")
            net.load_parameters(str(req["params"]))
            if mode == "hybridized":
                net.hybridize()
            start = time.perf_counter()
            exec(STEP, env)
            for k, v in env["res"].items():
                out[f"{mode}/{k}"] = v.asnumpy()
            out[f"{mode}/seconds"] = np.array(time.perf_counter() - start)
        np.savez(result, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
