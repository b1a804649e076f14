"""``Block.summary`` (MXNet 1.9.1's): the network run once, each layer's output shape and parameter count
printed as MXNet prints them.

May import: what ``gluon/block.py`` may.
"""

from __future__ import annotations

from collections import OrderedDict

from ast_hybrid.gluon.block import HybridBlock

__all__ = ["summary"]


def summary(net, *inputs):
    """MXNet's summary: the network run once on ``inputs`` (initialised, not hybridized), each layer's
    output shape and parameter count printed as MXNet prints them."""
    from ast_hybrid.gluon.nn.basic_layers import HybridSequential, Sequential

    summary, seen, hooks = OrderedDict(), set(), []

    def shape_str(args):
        def shapes(a):
            if isinstance(a, (list, tuple)):
                return [shapes(v) for v in a]
            return a.shape if hasattr(a, "shape") and hasattr(a, "dtype") else a
        got = shapes(args)
        return (str(got)[1:-1] if isinstance(got, list) else str(got)).replace("L", "")

    def register(block):
        assert not isinstance(block, HybridBlock) or not block._active, \
            f'"{block.name}" must not be hybridized to print summary.'

        def hook(block, _, outputs):
            key = f"{type(block).__name__}-{len(summary)}"
            row = summary[key] = OrderedDict(output_shape=shape_str(outputs), trainable=0, shared=0)
            count = 0
            for p in block.params.values():
                size = p.data().size
                count += size
                row["trainable"] += 0 if p.grad_req == "null" else size
                if p in seen:
                    row["shared"] += size
                else:
                    seen.add(p)
            row["n_params"] = count

        if not isinstance(block, (Sequential, HybridSequential)):
            hooks.append(block.register_forward_hook(hook))

    summary["Input"] = OrderedDict(output_shape=shape_str(list(inputs)), n_params=0, trainable=0, shared=0)
    try:
        net.apply(register)
        net(*inputs)
        line = "{:>20}  {:>42} {:>15}"
        print("-" * 80)
        print(line.format("Layer (type)", "Output Shape", "Param #"))
        print("=" * 80)
        total = trainable = shared = 0
        for name, row in summary.items():
            print(line.format(name, str(row["output_shape"]), row["n_params"]))
            total += row["n_params"]
            trainable += row["trainable"]
            shared += row["shared"]
        print("=" * 80)
        print("Parameters in forward computation graph, duplicate included")
        print("   Total params: " + str(total))
        print("   Trainable params: " + str(trainable))
        print("   Non-trainable params: " + str(total - trainable))
        print("Shared params in forward computation graph: " + str(shared))
        print("Unique parameters in model: " + str(total - shared))
        print("-" * 80)
    finally:
        for h in hooks:
            h.detach()
