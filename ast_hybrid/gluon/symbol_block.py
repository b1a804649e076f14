"""``SymbolBlock``: a block made of a symbolic graph, or of a program written by ``HybridBlock.export``.

    SymbolBlock(outputs, inputs, params=None)          # a graph (symbol/graph.py), as GluonCV's
                                                       # FeatureExtractor/FeatureExpander build them
    SymbolBlock.imports('my_mlp-symbol.json', ['data'], 'my_mlp-0000.params')

A graph: as MXNet's, the block's parameters are the graph's arguments and auxiliary states other than its
inputs, in the graph's order, taken from ``params`` by name where it has them (a network's
``collect_params()``) and made otherwise (shapes found at the first call, as deferred parameters'); they are
registered under their names less the prefix they all share.  The forward replays the graph (``evaluate``),
hybridized into one program like any block; BatchNorm nodes the graph made (``mx.sym.BatchNorm``) move their
running statistics in training as the layer's do.

An exported program is deserialised with ``jax.export`` and called with the parameters (loaded from the
MXNet-format file, ``arg:``/``aux:`` names) as its first argument, in the manifest's order.  Parameters can
be reloaded with ``load_parameters``; ``collect_params()`` lists them under their full names.
"""

from __future__ import annotations

import json
import os

from ast_hybrid.symbol import graph as symbolic
from ast_hybrid.symbol import recorder as symbol_recorder
from ast_hybrid.gluon.block import HybridBlock
from ast_hybrid.gluon.programs import wrap_outputs
from ast_hybrid.core.ndarray import ARRAYS

__all__ = ["SymbolBlock"]


class SymbolBlock(HybridBlock):
    _refuses_row_sparse = True      # MXNet's SymbolBlock asserts; its Module (module/module.py) runs such graphs

    def __init__(self, outputs=None, inputs=None, params=None, prefix=None):
        super().__init__(prefix=prefix if prefix is not None else "", params=None)
        self._graph = None
        self._implicit = False      # compiled without hybridize() (_init_graph)
        if isinstance(outputs, symbolic.Symbol) or (
                isinstance(outputs, (list, tuple)) and outputs and
                all(isinstance(o, symbolic.Symbol) for o in outputs)):
            self._init_graph(outputs, inputs, params)
            return
        if outputs is not None and not hasattr(outputs, "call"):
            raise TypeError("SymbolBlock(outputs=...) takes a jax.export.Exported program; use "
                            "SymbolBlock.imports(...) to load one written by export()")
        self._exported = outputs
        self._input_names = list(inputs or [])
        self._order = []
        self._leaves = None

    # -- a graph ---------------------------------------------------------------------------------------
    def _init_graph(self, outputs, inputs, params):
        from ast_hybrid.gluon.parameter import ParameterDict

        if isinstance(inputs, symbolic.Symbol):
            inputs = list(inputs)
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        ins = list(inputs or [])
        for s in ins:
            if not isinstance(s, symbolic.Symbol) or len(s) != 1 or s._entries[0][0].kind != "var":
                raise ValueError(f"SymbolBlock: input symbols must be variables (sym.var), but {s!r} is not")
        self._input_names = [s.name for s in ins]
        if isinstance(outputs, symbolic.Symbol):
            self._out_format = len(outputs) if len(outputs) > 1 else 0
            out = outputs
        else:
            self._out_format = [len(o) if len(o) > 1 else 0 for o in outputs]
            out = symbolic.group(outputs)
        for j in out.get_internals() if self._refuses_row_sparse else ():
            assert j.attr("__storage_type__") != "1", \
                f"SymbolBlock doesn't support Parameter '{j.name}' because its storage type is 'row_sparse'."
        self._graph = out
        self._params = ParameterDict("", params)
        names = set(self._input_names)
        aux = set(out.list_auxiliary_states())
        for n in symbolic._variables(out._entries):
            if n.name in names:
                continue
            shape = n.attrs.get("__shape__") or (n.param.shape if n.param is not None else None)
            kwargs = {"allow_deferred_init": True}
            if n.name in aux:
                kwargs["grad_req"] = "null"
            if shape is not None and n.name not in self._params._params and \
                    (params is None or n.name not in params._params):
                kwargs["shape"] = shape
            self._params.get(n.name, **kwargs)
        full = list(self._params.keys())
        cut = len(_common_prefix(full))
        self._reg_params = {k[cut:]: self._params[k] for k in full}
        self._full_names = {k[cut:]: k for k in full}
        self._bn_updates = _running_updates(out, self._params)
        # MXNet runs a SymbolBlock's graph as one CachedOp whether or not it was hybridized (its forward calls
        # _call_cached_op): so here, one compiled program from the first call.  ``hybridize(False)`` runs it
        # op by op; a graph that cannot be one program (an op whose output shape depends on values) falls
        # back to op by op at its first call, as the user would have run it (_call_hybrid).
        super().hybridize()
        self._implicit = True

    def _converted(self):
        return self.hybrid_forward      # the graph's replay: nothing of the user's to convert

    def _symbolic_forward(self, *args):
        if self._graph is None:
            raise TypeError("a SymbolBlock loaded from an exported program cannot be called with Symbols")
        if len(args) != len(self._input_names):
            raise ValueError(f"SymbolBlock takes {len(self._input_names)} inputs, got {len(args)}")
        out = symbolic.compose(self._graph, dict(zip(self._input_names, args)))
        return _regroup(list(out), self._out_format)

    def hybrid_forward(self, F, *args, **params):
        if self._graph is None:
            raise NotImplementedError
        if len(args) != len(self._input_names):
            raise ValueError(f"SymbolBlock takes {len(self._input_names)} inputs ({self._input_names}), got "
                             f"{len(args)}")
        values = dict(zip(self._input_names, args))
        values.update((self._full_names[k], v) for k, v in params.items())
        updates = self._bn_updates
        out = symbolic.evaluate(self._graph._entries, lambda n: values[n.name],
                                **({"extra": updates} if updates else {}))
        return _regroup(out, self._out_format)

    @staticmethod
    def imports(symbol_file, input_names=None, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        from jax import export as jexport

        from ast_hybrid.gluon import export as _export
        from ast_hybrid.io import params_file as params_io

        symbol_file = os.fspath(symbol_file)
        try:
            with open(symbol_file) as f:
                manifest = json.load(f)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{symbol_file}: cannot read the exported manifest: {exc}") from None
        if "nodes" in manifest and "heads" in manifest:        # MXNet's own graph (its export, Symbol.save)
            return SymbolBlock._import_graph(manifest, symbol_file, input_names, param_file, allow_missing,
                                             ignore_extra)
        if manifest.get("format") != _export.FORMAT:
            raise ValueError(f"{symbol_file}: neither MXNet's graph JSON nor an ast-hybrid export (format "
                             f"{manifest.get('format')!r}, expected {_export.FORMAT!r})")
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
            loaded = params_io.load(param_file) or {}       # a block without parameters: an empty file
            loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
            from ast_hybrid.gluon.parameter import assign_loaded

            assign_loaded({p.name: p for p in block._order}, loaded, os.fspath(param_file), allow_missing, ignore_extra)
        return block

    @staticmethod
    def _import_graph(graph, symbol_file, input_names, param_file, allow_missing, ignore_extra):
        """MXNet's ``SymbolBlock.imports`` of its own graph: the graph's variables named in ``input_names`` are
        the inputs, the others parameters, given their values from ``param_file`` (``arg:``/``aux:`` names)."""
        from ast_hybrid.io import params_file as params_io
        from ast_hybrid.gluon.parameter import assign_loaded

        out = symbolic.load_json(graph, where=str(symbol_file))
        names = [input_names] if isinstance(input_names, str) else list(input_names or ["data"])
        known = set(out.list_inputs())
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"{symbol_file}: {missing} are not variables of the graph; its inputs are "
                             f"{[n for n in out.list_arguments() if not n.endswith(_PARAM_SUFFIXES)][:10]}")
        block = SymbolBlock(out, [symbolic.variable(n) for n in names])
        if param_file is not None:
            loaded = params_io.load(param_file) or {}       # a block without parameters: an empty file
            loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
            assign_loaded(dict(block._params.items()), loaded, os.fspath(param_file), allow_missing, ignore_extra)
        return block

    def _drop_leaves(self):
        self._leaves = None

    def _collect_params_with_prefix(self, prefix=""):
        if self._graph is not None:
            return super()._collect_params_with_prefix(prefix)
        return {p.name: p for p in self._order}

    def hybridize(self, active=True, **kwargs):
        if self._graph is not None:
            keep = self._implicit and active and not kwargs     # the graph's program is already the one asked
            self._implicit = False
            return None if keep else super().hybridize(active, **kwargs)
        return None   # already a compiled program

    def _call_hybrid(self, *args):
        if not (self._implicit and self._compiled is None and self._active) or symbolic.is_symbolic(args):
            return super()._call_hybrid(*args)
        try:        # the first call of a graph nobody hybridized: one program if it can be (see _init_graph)
            return super()._call_hybrid(*args)
        except Exception:       # noqa: BLE001 - op by op decides, and its error (if any) is the user's
            object.__setattr__(self, "_compiled", None)
            out = self._call_imperative(*args)
            self._implicit = self._active = False   # op by op from now on, as it ran
            return out

    def __call__(self, *args):
        if self._graph is not None:
            return super().__call__(*args)
        leaves = self._leaves
        if leaves is None:
            leaves = self._leaves = tuple(p.data()._arr for p in self._order)

        def raw(a):         # lists of arrays too: the program was exported on the inputs' structure
            return [raw(v) for v in a] if isinstance(a, list) else tuple(raw(v) for v in a) \
                if isinstance(a, tuple) else a._arr if a.__class__ in ARRAYS else a

        out = self._exported.call(leaves, *[raw(a) for a in args])
        return wrap_outputs(out)

    forward = __call__

    def __repr__(self):
        if self._graph is not None:
            return f"SymbolBlock(\n{self._graph!r} : {len(self._input_names)} -> {len(self._graph)}\n)"
        return f"SymbolBlock(inputs={self._input_names}, params={len(self._order)})"


_PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_running_mean", "_running_var", "_moving_mean",
                   "_moving_var")


def _common_prefix(names):
    """MXNet's: the longest prefix all names share."""
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _regroup(outputs, fmt):
    """MXNet's ``_regroup``: the flat outputs as the outputs were given (one, or a list per Symbol)."""
    if isinstance(fmt, int):
        return outputs[0] if fmt == 0 else list(outputs[:fmt])
    out, i = [], 0
    for f in fmt:
        n = max(f, 1)
        out.append(outputs[i] if f == 0 else list(outputs[i:i + n]))
        i += n
    return out


def _running_updates(graph, params):
    """For each BatchNorm node of the graph not made by a layer (``mx.sym.BatchNorm``): the update of its
    running statistics in training, as the layer's ``_update_running`` (ops.normalization's ``update``)."""
    found = {}
    for node in symbolic._topo(graph._entries):
        if node.kind != "op" or node.kwargs.get("update") is not None or \
                not {"moving_mean", "moving_var"} <= set(node.kwargs):
            continue
        sig = symbol_recorder._signature(node.fn)
        takes = sig is not None and ("update" in sig.parameters or any(
            p.kind is p.VAR_KEYWORD for p in sig.parameters.values()))
        if not takes:                        # a fused inference op (_sg_mkldnn_conv) updates no statistics
            continue
        mean, var = node.kwargs["moving_mean"], node.kwargs["moving_var"]
        if not all(isinstance(s, symbolic.Symbol) and s._entries[0][0].kind == "var" for s in (mean, var)):
            continue
        pm, pv = params[mean.name], params[var.name]

        def update(m, v, momentum, pm=pm, pv=pv):
            pm.update_running(m, momentum)
            pv.update_running(v, momentum)

        found[id(node)] = {"update": update}
    return found


class ModuleGraph(SymbolBlock):
    """The SymbolBlock MXNet's Module runs its Symbol as (``module/module.py``): a row_sparse variable is taken
    (as a dense array), where MXNet's SymbolBlock refuses one."""

    _refuses_row_sparse = False
