"""MXNet's executor monitor (``Executor.set_monitor_callback``): the names MXNet's engine gives each op's inputs
and outputs as it runs the graph, told to the user's callback with the values.

An op's output is ``<node>_output`` (``<node>_output<i>`` for several); with ``monitor_all`` each input comes
first: a variable by its name, then every input by the op's name for it: its parameter's (``conv_data``,
``conv_weight``), ``input<i>`` for the ops MXNet gives no input names (``act_input0``), ``arg<i>`` for the ops
of a variable number of inputs (``concat_arg1``).
"""

from __future__ import annotations

import inspect

from ast_hybrid.symbol.graph import _output_name
from ast_hybrid.symbol.recorder import _signature

__all__ = ["monitor"]

# MXNet's input names where they are not the operator's parameter names
_UNNAMED = {"Activation": "input", "SoftmaxActivation": "input", "UpSampling": "arg", "Concat": "arg",
            "concat": "arg", "add_n": "arg", "ElementWiseSum": "arg", "stack": "arg"}


def _inputs(node):
    """``[(MXNet's name for the input, (source node, output index))]`` of an op node, in its inputs' order."""
    from ast_hybrid.symbol.graph import Symbol

    sig = _signature(node.fn)
    bound = sig.bind_partial(*node.args, **node.kwargs).arguments if sig is not None else {}
    prefix, found = _UNNAMED.get(node.op), []
    for name, value in bound.items():
        many = sig.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL or isinstance(value, (list, tuple))
        for v in (value if many and isinstance(value, (list, tuple)) else [value]):
            if isinstance(v, Symbol):
                found.append((name if not (many or prefix) else None, v._entries[0]))
    return [(f"{prefix or 'arg'}{k}" if name is None else name, entry) for k, (name, entry) in enumerate(found)]


def monitor(callback, monitor_all):
    """The ``monitor(node, values)`` that ``graph.evaluate`` calls after each op node."""
    def told(node, values):
        if monitor_all:
            for name, (src, i) in _inputs(node):
                value = values[id(src)][i]
                if src.kind == "var":       # (an op's output was told as that op's)
                    callback(src.name, value)
                callback(f"{node.name}_{name}", value)
        for i, value in enumerate(values[id(node)]):
            callback(_output_name(node, i), value)

    return told
