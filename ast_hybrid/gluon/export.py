"""``HybridBlock.export``: the predict-mode program as StableHLO plus MXNet-format parameters.

Files written for ``export('my_mlp', epoch=0)``:

- ``my_mlp-symbol.stablehlo``: ``jax.export`` serialisation of
  ``program(leaves, *inputs)`` (batch dimension symbolic where the program allows);
- ``my_mlp-symbol.json``: the manifest (format tag, parameter names in leaf order,
  their ``arg``/``aux`` kind, the inputs' shapes and dtypes);
- ``my_mlp-0000.params``: the parameters in MXNet's format, ``arg:NAME`` / ``aux:NAME``.

``SymbolBlock.imports('my_mlp-symbol.json', ['data'], 'my_mlp-0000.params')`` runs it
without the model's source.
"""

from __future__ import annotations

import json

FORMAT = "ast-hybrid-stablehlo-1"

__all__ = ["FORMAT", "export_block", "param_kind"]


def param_kind(p) -> str:
    """``aux`` for running statistics (never trained, updated by the forward), else ``arg``."""
    return "aux" if p.name.endswith(("running_mean", "running_var", "moving_mean", "moving_var")) else "arg"


def export_block(block, path, epoch=0):
    import jax
    from jax import export as jexport

    from ast_hybrid.io import params_file as params_io

    c = block._compiled
    if c is None:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this block at "
                           "least once before calling export.")
    from ast_hybrid.gluon.programs import strip

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
                    "dtype": str(s.dtype)} for s in c.input_specs],
        "program": f"{path.rsplit('/', 1)[-1]}-symbol.stablehlo",
    }
    with open(f"{path}-symbol.json", "w") as f:
        json.dump(manifest, f, indent=1)
    params_io.save(f"{path}-{epoch:04d}.params",
                   {f"{param_kind(p)}:{p.name}": v for p, v in zip(c.params, c.leaves)})
    return f"{path}-symbol.json", f"{path}-{epoch:04d}.params"
