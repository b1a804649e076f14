"""``ast-hybrid export``: MXNet's saved model (``PREFIX-symbol.json`` + ``PREFIX-EPOCH.params``, what
``HybridBlock.export`` writes under MXNet or ast-hybrid) as an ONNX model, without MXNet::

    ast-hybrid export resnet18-symbol.json resnet18-0000.params --input-shape 1,3,224,224 -o resnet18.onnx
    ast-hybrid export model-symbol.json model-0000.params --input-shape 1,3,224,224 --dynamic --check

``--input-shape`` once per input (in the graph's order), ``--input-type`` likewise (default float32);
``--dynamic`` leaves every input dimension free; ``--check`` runs the file in ONNX Runtime on random inputs and
compares it with the graph run here.  Exit 0 when written (and, with ``--check``, matching), 1 when the check
finds a difference, 2 for an error (a file that does not read, an operator the export cannot write).
"""

from __future__ import annotations

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, err

__all__ = ["run"]


def _shape(text):
    try:
        return tuple(int(d) for d in text.replace("x", ",").split(",") if d.strip())
    except ValueError:
        raise ValueError(f"--input-shape {text!r}: give the dimensions as 1,3,224,224") from None


def run(args) -> int:
    import os

    import numpy as np

    from ast_hybrid.core.errors import NotSupported

    out = args.output or (args.symbol[:-len("-symbol.json")] if args.symbol.endswith("-symbol.json")
                          else os.path.splitext(args.symbol)[0]) + ".onnx"
    try:
        shapes = [_shape(s) for s in args.input_shape]
        types = args.input_type or ["float32"]
        if len(types) == 1:
            types = types * len(shapes)
        types = [np.dtype(t) for t in types]
        for path in (args.symbol, args.params):
            if not os.path.isfile(path):
                raise ValueError(f"{path}: no such file")
        from ast_hybrid.onnx import export_model

        export_model(args.symbol, args.params, shapes, types, out, dynamic=args.dynamic)
    except (ValueError, TypeError, OSError, ImportError, NotSupported) as exc:
        err(str(exc))
        return EXIT_ERROR
    print(f"wrote {out}")
    if not args.check:
        return EXIT_CLEAN
    return _check(args, out, shapes, types)


def _check(args, out, shapes, types) -> int:
    import numpy as np

    try:
        import onnxruntime as ort
    except ImportError:
        err("--check runs the file in ONNX Runtime: pip install onnxruntime")
        return EXIT_ERROR
    from ast_hybrid.onnx.export import _load

    sym, params = _load(args.symbol, args.params)
    s = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    rng = np.random.RandomState(0)
    feed = {i.name: (rng.uniform(-1, 1, shape) if t.kind == "f" else rng.randint(0, 2, shape)).astype(t)
            for i, shape, t in zip(s.get_inputs(), shapes, types)}
    got = s.run(None, feed)
    want = [o.asnumpy() for o in sym.eval(**feed, **params)]
    worst = max(float(np.abs(g - w).max() / max(float(np.abs(w).max()), 1e-30)) for g, w in zip(got, want))
    print(f"ONNX Runtime against ast-hybrid on random inputs: worst difference {worst:.1e} of the output's scale")
    return EXIT_CLEAN if worst <= 1e-4 else EXIT_FINDINGS
