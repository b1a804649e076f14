"""``HybridBlock.export``: MXNet's files, as MXNet 1.9.1 writes them, or the predict program as StableHLO.

Files written for ``export('my_mlp', epoch=0)`` (:func:`export_block`):

- ``my_mlp-symbol.json``: MXNet's graph JSON of the block called on placeholders named as MXNet names them
  (``data``, or ``data0``, ``data1``...), each node under MXNet's registered op name: MXNet 1.9.1 loads it,
  ``mx.onnx.export_model`` (MXNet's and ours) writes it as ONNX;
- ``my_mlp-0000.params``: the parameters in MXNet's format, ``arg:NAME`` / ``aux:NAME`` as the graph lists them.

A block that cannot be written so (its forward does not run on Symbols, its inputs are nested lists, an
op MXNet's graph cannot hold) gets ast-hybrid's own files instead: ``my_mlp-symbol.stablehlo`` (``jax.export``
of ``program(leaves, *inputs)``, the batch dimension symbolic where the program allows) and, as
``my_mlp-symbol.json``, its manifest (format tag, parameter names in leaf order, their ``arg``/``aux`` kind, the
inputs' shapes and dtypes).

``SymbolBlock.imports('my_mlp-symbol.json', ['data'], 'my_mlp-0000.params')`` runs either without the model's
source.  ``export('my_mlp', format='onnx')`` writes ``my_mlp.onnx`` (:func:`export_onnx`, through
``mx.onnx.export_model``).
"""

from __future__ import annotations

import json

FORMAT = "ast-hybrid-stablehlo-1"

__all__ = ["FORMAT", "export_block", "export_onnx", "param_kind"]


def param_kind(p) -> str:
    """``aux`` for running statistics (never trained, updated by the forward), else ``arg``."""
    return "aux" if p.name.endswith(("running_mean", "running_var", "moving_mean", "moving_var")) else "arg"


def _compiled(block):
    c = block._compiled
    if c is None:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this block at "
                           "least once before calling export.")
    return c


def graph(block):
    """``(Symbol, input names)``: the block called on MXNet's placeholders for the inputs of its last call;
    None for a block whose inputs are not arrays or whose forward does not run on Symbols."""
    import jax

    from ast_hybrid.symbol.graph import group, variable

    specs = _compiled(block).input_specs
    if not all(isinstance(s, jax.ShapeDtypeStruct) for s in specs):
        return None
    names = ["data"] if len(specs) == 1 else [f"data{i}" for i in range(len(specs))]
    try:
        out = block(*[variable(n) for n in names])
        out = group(list(out)) if isinstance(out, (list, tuple)) else out
        out.tojson()                    # an op MXNet's graph cannot hold raises here
    except Exception:   # noqa: BLE001 - any forward that does not build a graph: the program is exported
        return None
    return out, names


def export_block(block, path, epoch=0):
    from ast_hybrid.io import params_file as params_io

    c = _compiled(block)
    found = graph(block)
    if found is not None:
        out, _ = found
        with open(f"{path}-symbol.json", "w") as f:
            f.write(out.tojson())
        kinds = {**{k: "arg" for k in out.list_arguments()}, **{k: "aux" for k in out.list_auxiliary_states()}}
        params_io.save(f"{path}-{epoch:04d}.params", {f"{kinds[p.name]}:{p.name}": v
                                                      for p, v in zip(c.params, c.leaves) if p.name in kinds})
        return f"{path}-symbol.json", f"{path}-{epoch:04d}.params"
    return _export_program(block, c, path, epoch)


def _export_program(block, c, path, epoch):
    import jax
    from jax import export as jexport

    from ast_hybrid.gluon.programs import strip
    from ast_hybrid.io import params_file as params_io

    def program(leaves, *xs):   # outputs as plain arrays: the file must not depend on our classes
        out = strip(c.predict_raw(leaves, *xs))
        return tuple(out) if isinstance(out, list) else out

    fn = jax.jit(program)
    leaves_spec = tuple(jax.ShapeDtypeStruct(v.shape, v.dtype) for v in c.leaves)
    exported = None
    try:
        (b,) = jexport.symbolic_shape("batch")
        poly = [jax.ShapeDtypeStruct((b, *s.shape[1:]), s.dtype) if s.shape else s for s in c.input_specs]
        exported = jexport.export(fn)(leaves_spec, *poly)
        polymorphic = True
    except Exception:   # noqa: BLE001 - some programs need a concrete batch: export the shapes seen
        exported = jexport.export(fn)(leaves_spec, *c.input_specs)
        polymorphic = False
    with open(f"{path}-symbol.stablehlo", "wb") as f:
        f.write(exported.serialize())
    manifest = {
        "format": FORMAT,
        "params": [{"name": p.name, "kind": param_kind(p), "shape": list(p.shape), "dtype": p.dtype}
                   for p in c.params],
        "inputs": [{"shape": [None if polymorphic and i == 0 else d for i, d in enumerate(s.shape)],
                    "dtype": str(s.dtype)} for s in jax.tree_util.tree_leaves(c.input_specs)],
        "program": f"{path.rsplit('/', 1)[-1]}-symbol.stablehlo",
    }
    with open(f"{path}-symbol.json", "w") as f:
        json.dump(manifest, f, indent=1)
    params_io.save(f"{path}-{epoch:04d}.params",
                   {f"{param_kind(p)}:{p.name}": v for p, v in zip(c.params, c.leaves)})
    return f"{path}-symbol.json", f"{path}-{epoch:04d}.params"


def export_onnx(block, path):
    """``path.onnx``: the block's graph on placeholders, its parameters, the input shapes of its last call."""
    from ast_hybrid.onnx import export_model

    found = graph(block)
    if found is None:
        raise ValueError("export(format='onnx'): the block's forward does not build an MXNet graph (its inputs "
                         "are lists, or its forward does not run on Symbols); nothing to write as ONNX")
    out, _ = found
    specs = block._compiled.input_specs
    params = {p.name: p.data() for p in block.collect_params().values()}
    return export_model(out, params, [s.shape for s in specs], [s.dtype for s in specs], f"{path}.onnx")
