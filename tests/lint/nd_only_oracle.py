"""The names ``F`` has under ``mx.nd`` but not under ``mx.sym`` in MXNet 1.9.1, read from MXNet itself.

In MXNet 1.x ``F`` is ``mx.nd`` when a block runs imperatively and ``mx.sym`` once it is hybridized:
a name only ``mx.nd`` has (``F.array``, ``F.add``, ``F.contrib.isnan``, ``F.NDArray``) works until
``hybridize()``, which then fails with ``AttributeError: module 'mxnet.symbol' has no attribute ...``.

:data:`GENERATOR` runs inside the oracle (:class:`ast_hybrid.testing.oracle.Oracle`): for ``mx.nd``
and every namespace module it shares with ``mx.sym`` (``contrib``, ``linalg``, ``random``, ``image``,
``sparse``, ``np``, ``npx``, ... and theirs, two levels down; not the generated ``gen_*`` modules), the
public functions and classes of MXNet's own (``__module__`` in ``mxnet``: not what a module merely
imports, such as ``ctypes`` or numpy) that the ``mx.sym`` namespace of the same path lacks.

``python tests/lint/nd_only_oracle.py`` rewrites :mod:`ast_hybrid.linter.nd_only` from it (the linter
never imports MXNet); ``tests/lint/test_nd_only.py`` checks the shipped table against the oracle.
"""

from __future__ import annotations

import sys
from pathlib import Path

GENERATOR = r'''
import inspect, types, warnings
warnings.filterwarnings("ignore")

def public(mod):
    return {n for n in dir(mod) if not n.startswith("_")}

def walk(nd_mod, sym_mod, prefix, depth, table):
    for name in sorted(public(nd_mod)):
        value = getattr(nd_mod, name)
        if isinstance(value, types.ModuleType):
            other = getattr(sym_mod, name, None)
            if depth < 2 and isinstance(other, types.ModuleType) and not name.startswith("gen_"):
                walk(value, other, prefix + name + ".", depth + 1, table)
            continue
        if name in public(sym_mod) or not callable(value):
            continue
        if not (getattr(value, "__module__", None) or "").startswith("mxnet"):
            continue
        table[prefix + name] = "class" if inspect.isclass(value) else "function"

table = {}
walk(mx.nd, mx.sym, "", 0, table)
meta["table"] = table
'''


def from_oracle(oracle) -> dict:
    """``{name below F: "function" or "class"}``, as :mod:`ast_hybrid.linter.nd_only` holds it."""
    return dict(sorted(oracle.run(GENERATOR)["meta"]["table"].items()))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from ast_hybrid.testing.oracle import Oracle
    from op_outputs_oracle import write

    with Oracle() as mx:
        found = from_oracle(mx)
    write(found, Path(__file__).resolve().parents[2] / "ast_hybrid" / "linter" / "nd_only.py", "ND_ONLY")
    print(f"{len(found)} names under mx.nd that mx.sym lacks -> ast_hybrid/linter/nd_only.py")
