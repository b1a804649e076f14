"""GluonCV's ONNX deployment recipe, unmodified, under MXNet 1.9.1 and under ``ast-hybrid run``: the fidelity table
of docs/deploy.md.

    python -m ast_hybrid.conformance.onnx_deploy [NAME:SIZE ...] [--keep DIR]

:data:`SCRIPT` is the recipe as an MXNet user writes it (GluonCV 0.10.5's ``scripts/onnx/README.md``):
``gluoncv.model_zoo.get_model``, weights from a file (the first run draws and saves them: Xavier-scaled weights
drawn by numpy, BatchNorm statistics near their defaults; the other run loads the same file), ``export_block(...,
preprocess=True, layout='HWC')``, ``mxnet.contrib.onnx.export_model``, ONNX Runtime on a random image; it saves
what ONNX Runtime returns.  MXNet 1.9.1 runs it (the oracle's Python, GluonCV and onnx 1.14.1 on its path), then
ast-hybrid (``python -m ast_hybrid.run``, GluonCV linked in alone).  The reference is MXNet's own forward on
MXNet's exported files (``SymbolBlock.imports``); each row gives, against it: ONNX Runtime on our file, our graph
run here (XLA), ONNX Runtime on MXNet's file.  A number is the largest difference relative to the output's
scale; for detections that differ beyond 1e-4, the count of our boxes that are one of MXNet's (boxes of scores a
few float32 steps apart trade places between runtimes).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["SCRIPT", "MODELS", "run", "main"]

SCRIPT = '''
import os, sys
import numpy as np
import mxnet as mx
import gluoncv as gcv
from gluoncv.utils import export_block
from mxnet.contrib import onnx as onnx_mxnet
import onnxruntime

os.makedirs('params', exist_ok=True)
os.makedirs('exported_models', exist_ok=True)
for arg in sys.argv[1:]:
    name, size = arg.split(':')
    size = int(size)
    try:
        net = gcv.model_zoo.get_model(name, pretrained=False, pretrained_base=False)
    except TypeError:
        net = gcv.model_zoo.get_model(name, pretrained=False)
    weights = os.path.join('weights', name + '.params')
    if os.path.exists(weights):
        net.load_parameters(weights)
    else:
        net.initialize()
        net(mx.nd.zeros((1, 3, size, size)))
        rng = np.random.RandomState(0)
        for k, p in sorted(net.collect_params().items()):
            if k.endswith('weight') and len(p.shape) >= 2:        # Xavier's scale, drawn by numpy
                fans = p.shape[0] * np.prod(p.shape[2:]) + np.prod(p.shape[1:])
                p.set_data(mx.nd.array(rng.uniform(-1, 1, p.shape) * np.sqrt(6.0 / fans)))
            elif k.endswith(('running_var', 'moving_var', 'gamma')):
                p.set_data(mx.nd.array(rng.uniform(0.9, 1.1, p.shape)))
            elif k.endswith(('running_mean', 'moving_mean', 'beta')):
                p.set_data(mx.nd.array(rng.uniform(-0.05, 0.05, p.shape)))
        os.makedirs('weights', exist_ok=True)
        net.save_parameters(weights)
    export_block(os.path.join('params', name), net, data_shape=(size, size, 3), preprocess=True, layout='HWC')
    sym = os.path.join('params', name + '-symbol.json')
    params = os.path.join('params', name + '-0000.params')
    onnx_file = os.path.join('exported_models', name + '.onnx')
    onnx_mxnet.export_model(sym, params, [(1, size, size, 3)], np.float32, onnx_file)
    img = np.random.RandomState(1).uniform(0, 255, (1, size, size, 3)).astype('float32')
    try:
        session = onnxruntime.InferenceSession(onnx_file, None)
        result = session.run([], {session.get_inputs()[0].name: img})
        np.savez(os.path.join('exported_models', name + '.npz'), *result)
        print(name, [r.shape for r in result])
    except Exception as exc:
        print(name, 'ONNX Runtime cannot run the file:', str(exc)[:200])
'''

# the graph on the exported files, in either process: MXNet's reference, or ours run here
FORWARD = """
import sys
import numpy as np
import mxnet as mx
from mxnet import gluon
for arg in sys.argv[2:]:
    name, size = arg.split(':')
    net = gluon.SymbolBlock.imports('params/%s-symbol.json' % name, ['data'], 'params/%s-0000.params' % name)
    img = np.random.RandomState(1).uniform(0, 255, (1, int(size), int(size), 3)).astype('float32')
    got = net(mx.nd.array(img))
    np.savez(sys.argv[1] % name, *[o.asnumpy() for o in (got if isinstance(got, (list, tuple)) else [got])])
"""

MODELS = ("resnet18_v1:224", "mobilenetv2_1.0:224", "resnet50_v1d:224", "mobilenetv3_large:224",
          "se_resnext50_32x4d:224", "resnest50:224", "squeezenet1.1:224", "densenet121:224", "inceptionv3:299",
          "ssd_300_vgg16_atrous_voc:300", "ssd_512_resnet50_v1_voc:512", "ssd_512_mobilenet1.0_voc:512",
          "yolo3_darknet53_voc:416", "yolo3_mobilenet1.0_voc:416", "center_net_resnet18_v1b_voc:512",
          "faster_rcnn_resnet50_v1b_voc:320", "fcn_resnet50_ade:480", "deeplab_resnet50_ade:480",
          "psp_resnet50_ade:480")


def _rows(arrays):
    """Detections (ids, scores, boxes; (1, N) or (1, N, k) each) as one row per box, else None."""
    arrays = [a[..., None] if a.ndim == 2 else a for a in arrays]
    if len(arrays) == 3 and all(a.ndim == 3 and a.shape[:2] == arrays[0].shape[:2] for a in arrays):
        return np.concatenate([a[0].astype(np.float64) for a in arrays], -1)
    return None


def compare(reference, other) -> str:
    """The largest difference relative to each output's scale; for detections beyond 1e-4, also how many of
    ``other``'s boxes are one of the reference's."""
    if other is None:
        return "none"
    if len(other) != len(reference) or any(a.shape != b.shape for a, b in zip(reference, other)):
        return "other outputs"
    worst = max(float(np.abs(a.astype(np.float64) - b).max()) / max(float(np.abs(a).max()), 1e-30)
                for a, b in zip(reference, other))
    text = f"{worst:.1e}"
    ref, got = _rows(reference), _rows(other)
    if worst > 1e-4 and ref is not None and got is not None:
        scale = np.abs(ref).max(0) + 1e-30
        found = sum(bool(np.any(np.all(np.abs(ref - r) <= 1e-4 * scale, axis=1))) for r in got)
        text = f"{found} of {len(got)} boxes"
    return text


def _load(path):
    if not path.exists():
        return None
    with np.load(path) as f:
        return [f[k] for k in f.files]


def run(models, folder: Path, timeout: float = 1800):
    """``[(model, ours ONNX, ours XLA, MXNet's ONNX), ...]`` for ``models`` (``NAME:SIZE``)."""
    from ast_hybrid.testing import oracle

    source = oracle.ensure_gluon_pkgs()
    onnx_pkgs = oracle.ensure_onnx_pkgs()
    pk = folder / "pk"          # GluonCV and what it imports at once, without the oracle's numpy-1.x builds
    pk.mkdir(exist_ok=True)
    for name in ("gluoncv", "tqdm", "portalocker"):
        if not (pk / name).exists():
            os.symlink(source / name, pk / name)
    (folder / "weights").mkdir(exist_ok=True)
    script, forward = folder / "deploy.py", folder / "forward.py"
    script.write_text(SCRIPT)
    forward.write_text(FORWARD)
    theirs_env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{onnx_pkgs}", OMP_NUM_THREADS="1")
    ours_env = dict(os.environ, PYTHONPATH=str(pk))
    mxnet = str(oracle.venv_python())
    ours = [sys.executable, "-m", "ast_hybrid.run"]
    rows = []
    for model in models:
        name = model.split(":")[0]
        for side, python, env in (("mxnet", [mxnet], theirs_env), ("ours", ours, ours_env)):
            cwd = folder / side
            cwd.mkdir(exist_ok=True)
            if not (cwd / "weights").exists():
                os.symlink(folder / "weights", cwd / "weights", target_is_directory=True)
            for cmd in ([*python, str(script), model], [*python, str(forward), str(cwd / "forward_%s.npz"), model]):
                subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        reference = _load(folder / "mxnet" / f"forward_{name}.npz")
        if reference is None:
            rows.append((model, "MXNet did not run it", "", ""))
            continue
        rows.append((model, compare(reference, _load(folder / "ours" / "exported_models" / f"{name}.npz")),
                     compare(reference, _load(folder / "ours" / f"forward_{name}.npz")),
                     compare(reference, _load(folder / "mxnet" / "exported_models" / f"{name}.npz"))))
        print("| " + " | ".join(rows[-1]) + " |", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="NAME:SIZE", help=f"default: {len(MODELS)} networks")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
    print("| model | ours: ONNX Runtime on our file | ours: the graph here | MXNet's file in ONNX Runtime |")
    print("|---|---|---|---|")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.models or MODELS, args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="ast_hybrid_onnx_deploy_") as d:
            run(args.models or MODELS, Path(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
