"""``SymbolBlock``: run a program written by ``HybridBlock.export`` without the model's source.

    SymbolBlock.imports('my_mlp-symbol.json', ['data'], 'my_mlp-0000.params')

The program is deserialised with ``jax.export`` and called with the parameters
(loaded from the MXNet-format file, ``arg:``/``aux:`` names) as its first
argument, in the manifest's order.  Parameters can be reloaded with
``load_parameters``; ``collect_params()`` lists them under their full names.
"""

from __future__ import annotations

import json
import os

from ast_hybrid.gluon.block import HybridBlock, wrap_outputs
from ast_hybrid.ndarray import NDArray

__all__ = ["SymbolBlock"]


class SymbolBlock(HybridBlock):
    def __init__(self, outputs=None, inputs=None, params=None, prefix=None):
        super().__init__(prefix=prefix if prefix is not None else "", params=None)
        if outputs is not None and not hasattr(outputs, "call"):
            raise TypeError("SymbolBlock(outputs=...) takes a jax.export.Exported program; use "
                            "SymbolBlock.imports(...) to load one written by export()")
        self._exported = outputs
        self._input_names = list(inputs or [])
        self._order = []
        self._leaves = None

    @staticmethod
    def imports(symbol_file, input_names=None, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        from jax import export as jexport

        from ast_hybrid.gluon import export as _export
        from ast_hybrid.gluon import params_io

        symbol_file = os.fspath(symbol_file)
        try:
            with open(symbol_file) as f:
                manifest = json.load(f)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{symbol_file}: cannot read the exported manifest: {exc}") from None
        if manifest.get("format") != _export.FORMAT:
            raise ValueError(f"{symbol_file}: not an ast-hybrid export (format {manifest.get('format')!r}, "
                             f"expected {_export.FORMAT!r}); MXNet's own -symbol.json graphs cannot be run")
        program = os.path.join(os.path.dirname(symbol_file), manifest["program"])
        with open(program, "rb") as f:
            exported = jexport.deserialize(bytearray(f.read()))
        names = input_names if isinstance(input_names, (list, tuple)) else [input_names or "data"]
        block = SymbolBlock(exported, names)
        for entry in manifest["params"]:
            p = block.params.get(entry["name"], shape=tuple(entry["shape"]), dtype=entry["dtype"],
                                 grad_req="null" if entry["kind"] == "aux" else "write")
            block._reg_params[entry["name"]] = p
            p._listeners.append(block._drop_leaves)
            block._order.append(p)
        if param_file is not None:
            loaded = params_io.load(param_file)
            loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
            from ast_hybrid.gluon.parameter import assign_loaded

            assign_loaded({p.name: p for p in block._order}, loaded, os.fspath(param_file), allow_missing, ignore_extra)
        return block

    def _drop_leaves(self):
        self._leaves = None

    def _collect_params_with_prefix(self, prefix=""):
        return {p.name: p for p in self._order}

    def hybridize(self, active=True, **kwargs):
        return None   # already a compiled program

    def __call__(self, *args):
        leaves = self._leaves
        if leaves is None:
            leaves = self._leaves = tuple(p.data()._arr for p in self._order)
        out = self._exported.call(leaves, *[a._arr if a.__class__ is NDArray else a for a in args])
        return wrap_outputs(out)

    forward = __call__

    def __repr__(self):
        return f"SymbolBlock(inputs={self._input_names}, params={len(self._order)})"
