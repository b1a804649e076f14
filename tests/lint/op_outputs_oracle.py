"""MXNet 1.9.1's operators with several outputs, read from MXNet itself (the oracle).

:data:`GENERATOR` runs inside the oracle (:class:`ast_hybrid.testing.oracle.Oracle`): for every
operator reachable from ``F`` (``mx.sym`` and its ``contrib``, ``linalg``, ``random``, ``image``,
``sparse`` namespaces) it builds the Symbol with MXNet's own free variables for the inputs and
filler values for the required parameters, and counts ``list_outputs()``.  A parameter that changes
the count (a boolean or a choice such as ``topk``'s ``ret_typ``; an int such as ``split``'s
``num_outputs`` that *is* the count) is varied, and every combination recorded.

``python tests/lint/op_outputs_oracle.py`` rewrites :mod:`ast_hybrid.common.op_outputs` from
it; ``tests/lint/test_op_outputs.py`` checks the shipped table against the oracle.  :data:`NAMES_GENERATOR`
lists every name MXNet puts under ``F`` (the public callables of ``mx.sym`` and ``mx.nd``, ``F`` being one or
the other, and of their ``contrib``, ``linalg``, ``random``, ``image``, ``sparse``, ``np``, ``npx``,
``np.random``, ``np.linalg`` and ``npx.random`` namespaces, as ``"contrib.box_encode"``); the same run rewrites
:mod:`ast_hybrid.common.op_names` from it.
"""

from __future__ import annotations

import pprint
import sys
import textwrap
from pathlib import Path

GENERATOR = r'''
import ctypes, itertools, re, warnings
from mxnet.base import _LIB, py_str, c_str
warnings.filterwarnings("ignore")
# creating these with filler parameters crashes MXNet 1.9.1 (a segfault, not an error)
CRASH = {"reset_arrays", "dgl_csr_neighbor_non_uniform_sample"}

def op_args(name):
    h = mx.base.OpHandle()
    _LIB.NNGetOpHandle(c_str(name), ctypes.byref(h))
    rn, desc, kv, rt = (ctypes.c_char_p() for _ in range(4))
    n = mx.base.mx_uint()
    an, at, ad = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    _LIB.MXSymbolGetAtomicSymbolInfo(h, ctypes.byref(rn), ctypes.byref(desc), ctypes.byref(n), ctypes.byref(an),
                                     ctypes.byref(at), ctypes.byref(ad), ctypes.byref(kv), ctypes.byref(rt))
    return [(py_str(an[i]), py_str(at[i])) for i in range(n.value)], (py_str(kv.value) if kv.value else None)

def choices(t):
    if t.startswith("boolean"):
        return [False, True]
    m = re.match(r"\{([^}]*)\}", t)
    return [v.strip().strip("'") for v in m.group(1).split(",")] if m else None

def filler(t):
    if "Shape" in t: return (2, 2)
    if t.startswith(("int", "long")): return 2
    if t.startswith(("float", "double")): return 1.0
    c = choices(t)
    if c: return c[0]
    if t.startswith("str"): return "x"
    return None

def default(t):
    m = re.search(r"default=(.*)$", t)
    if not m: return None
    v = m.group(1).strip().strip("'")
    if t.startswith("boolean"): return v in ("1", "True", "true")
    return None if v == "None" else v

def count(fn, inputs, params):
    try:
        return len(fn(*inputs, **params).list_outputs())
    except Exception:
        return None

plist = ctypes.POINTER(ctypes.c_char_p)(); size = mx.base.mx_uint()
_LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist))
all_ops = {py_str(plist[i]) for i in range(size.value)}
spaces = {"": mx.sym, "contrib.": mx.sym.contrib, "linalg.": mx.sym.linalg, "random.": mx.sym.random,
          "image.": mx.sym.image, "sparse.": mx.sym.sparse}
table, checked = {}, 0
for prefix, mod in spaces.items():
    for attr in sorted(dir(mod)):
        fn = getattr(mod, attr)
        # operators are functions MXNet generates at import (code compiled from '<string>')
        if attr.startswith("_") or attr in CRASH or getattr(getattr(fn, "__code__", None), "co_filename", "") != "<string>":
            continue
        opname = next((c for c in (attr, "_" + prefix.rstrip(".") + "_" + attr, "_" + attr) if c in all_ops), None)
        if opname is None:
            continue
        checked += 1
        args, key_var = op_args(opname)
        data = [(n, t) for n, t in args if t.startswith(("NDArray-or-Symbol", "Symbol"))]
        params = [(n, t) for n, t in args if (n, t) not in data]
        variadic = any(t.endswith("[]") for _, t in data)
        inputs = [mx.sym.var("a"), mx.sym.var("b")] if variadic else []
        base = {n: filler(t) for n, t in params if "required" in t and filler(t) is not None}
        if variadic and key_var:
            base.setdefault(key_var, 2)
        if variadic and "num_outputs" in dict(params):
            base.setdefault("num_outputs", 2)
        c0 = count(fn, inputs, base)
        if c0 is None:
            continue
        count_param, varied = None, {}
        for n, t in params:
            if choices(t) is None and t.startswith("int") and ("required" in t or n == "num_outputs"):
                if (count(fn, inputs, {**base, n: 2}), count(fn, inputs, {**base, n: 3})) == (2, 3):
                    count_param = n
        for _ in range(2):    # twice: a choice may matter only once another is set (RNN's mode, state_outputs)
            for n, t in params:
                vals = choices(t)
                if vals is None or n in varied:
                    continue
                settings = [base] + [{**base, m: v} for m in varied for v in varied[m]]
                if any(len({count(fn, inputs, {**s, n: v}) for v in vals} - {None}) > 1 for s in settings):
                    varied[n] = vals
        if count_param is None and not varied:
            if c0 != 1:
                table[prefix + attr] = {"outputs": c0}
            continue
        names = sorted(varied)
        combos = [[list(vals), count(fn, inputs, {**base, **dict(zip(names, vals))})]
                  for vals in itertools.product(*(varied[n] for n in names))]
        types = dict(params)
        table[prefix + attr] = {
            "signature": [("*" if t.endswith("[]") else "") + n for n, t in args],
            "count_param": count_param,
            "params": names,
            "defaults": [default(types[n]) for n in names],
            "combos": combos,
        }
meta["table"] = table
meta["checked"] = checked
'''

NAMES_GENERATOR = r'''
names = set()
SUBS = ("contrib", "linalg", "random", "image", "sparse", "np", "npx", "np.random", "np.linalg", "npx.random")
for root in (mx.sym, mx.nd):
    for sub in ("",) + SUBS:
        mod = root
        for part in filter(None, sub.split(".")):
            mod = getattr(mod, part, None)
        if mod is None:
            continue
        prefix = sub + "." if sub else ""
        for attr in dir(mod):
            if not attr.startswith("_") and callable(getattr(mod, attr, None)):
                names.add(prefix + attr)
meta["names"] = sorted(names)
'''


def names_from_oracle(oracle) -> frozenset:
    """Every name under ``F``, as :mod:`ast_hybrid.common.op_names` holds them, listed by MXNet."""
    return frozenset(oracle.run(NAMES_GENERATOR)["meta"]["names"])


def write_names(names, path: Path) -> None:
    """Rewrite ``NAMES`` in ``path``, keeping the module's docstring."""
    text = path.read_text()
    body = textwrap.fill(", ".join(repr(n) for n in sorted(names)), width=116, initial_indent="    ",
                         subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
    path.write_text(text[:text.index("NAMES = ")] + "NAMES = frozenset((\n" + body + ",\n))\n")


def from_oracle(oracle) -> dict:
    """``{op: entry}`` as :mod:`ast_hybrid.common.op_outputs` holds it, computed by MXNet."""
    meta = oracle.run(GENERATOR)["meta"]
    out = {}
    for op, e in sorted(meta["table"].items()):
        if "outputs" in e:
            out[op] = e["outputs"]
            continue
        combos = {tuple(vals): n for vals, n in e["combos"] if n is not None}
        out[op] = (tuple(e["signature"]), e["count_param"], tuple(e["params"]), tuple(e["defaults"]), combos)
    return out


def write(table: dict, path: Path, name: str = "OUTPUTS") -> None:
    """Rewrite the table ``name`` in ``path``, keeping the module's docstring (what the table means)."""
    text = path.read_text()
    header = text[:text.index(f"{name} = ")]
    path.write_text(header + f"{name} = " + pprint.pformat(table, width=110, compact=True, sort_dicts=True) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from ast_hybrid.testing.oracle import Oracle

    with Oracle() as mx:
        found, names = from_oracle(mx), names_from_oracle(mx)
    common = Path(__file__).resolve().parents[2] / "ast_hybrid" / "common"
    write(found, common / "op_outputs.py")
    write_names(names, common / "op_names.py")
    print(f"{len(found)} operators with several outputs (or a count set by a parameter), {len(names)} names under F "
          f"-> {common}")
