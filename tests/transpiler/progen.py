"""Random small control-flow programs, as source text, for property tests.

A program is ``def f(x, y, n)``: ``x`` a float32 vector of length 4, ``y`` a
float32 scalar, ``n`` a small int (traced under jit).  It keeps two float
state variables, ``a`` (scalar) and ``b`` (shape (4,)), defined before any
control flow, so every variable is defined on all paths and keeps its shape
and dtype across branches and iterations.  It mixes ``if``/``elif``/``else``,
``for`` over static ranges, traced ranges (``range(n)``) and arrays (``for v
in x``, ``for row in x.reshape(2, 2)``), counter-bounded ``while`` (the counter is incremented first, so
``continue`` cannot loop forever), ``break``, ``continue``, early ``return``,
ternaries and ``and``/``or``/``not``, over traced values (``a > 0``,
``x[i] > y``, ``b.sum() > y``) and static module constants (``FLAG``,
``MODE is None``).  Updates are contractive (``a * 0.5 + ...``) so values stay
bounded; no division.

The oracle is the same source run as plain Python on numpy inputs.

>>> import random
>>> src = generate(random.Random(0))
>>> "def f(x, y, n):" in src
True
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

HEADER = "FLAG = {flag}\nMODE = {mode}\n\n\ndef f(x, y, n):\n    a = y * 0.5\n    b = x * 0.5\n"
FOOTER = "    return a + b.sum()\n"

TRACED_CONDS = ["a > 0.0", "b.sum() > y", "y < 0.25", "a < y", "b[1] > a"]
STATIC_CONDS = ["FLAG", "MODE is None", "not FLAG"]
UPDATES = [
    "a = a * 0.5 + 1.0",
    "a = a * 0.5 - y",
    "a = a * 0.25 + b.sum() * 0.125",
    "b = b * 0.5 + a",
    "b = b * 0.5 - y",
    "a = -a * 0.5",
    "b = b * -0.5 + 0.25",
    "a = (a * 0.5 + 1.0) if a > y else (a * 0.5 - 1.0)",
    "b = b * 0.5 if b.sum() > 0.0 else b * 0.5 + 1.0",
]


def _cond(r: random.Random, loop_var: str | None, depth: int = 0) -> str:
    choices = TRACED_CONDS + STATIC_CONDS
    if loop_var == "i":
        choices = choices + ["x[i] > y", "i > 1"]
    elif loop_var == "v":
        choices = choices + ["v > a", "v < 0.0"]
    c = r.choice(choices)
    if depth < 1 and r.random() < 0.3:
        op = r.choice(["and", "or"])
        c = f"({c}) {op} ({_cond(r, loop_var, depth + 1)})"
    if r.random() < 0.15:
        c = f"not ({c})"
    return c


def _update(r: random.Random, loop_var: str | None) -> str:
    if loop_var == "i" and r.random() < 0.3:
        return r.choice(["a = a * 0.5 + x[i]", "b = b * 0.5 + x[i]"])
    if loop_var == "v" and r.random() < 0.3:
        return r.choice(["a = a * 0.5 + v", "b = b * 0.5 - v"])
    return r.choice(UPDATES)


def _block(r: random.Random, ind: int, depth: int, loop_var: str | None,
           in_loop: bool, top: bool) -> list[str]:
    out: list[str] = []
    for _ in range(r.randint(1, 3)):
        out += _stmt(r, ind, depth, loop_var, in_loop, top)
    return out


def _stmt(r: random.Random, ind: int, depth: int, loop_var: str | None,
          in_loop: bool, top: bool) -> list[str]:
    sp = "    " * ind
    kinds = ["update", "update"]
    if depth < 2:
        kinds += ["if", "ifelse", "elif", "for_static", "for_traced", "for_array", "for_rows", "while"]
    if in_loop:
        kinds += ["break", "continue"]
    if top:
        kinds += ["return"]
    k = r.choice(kinds)
    if k == "update":
        return [sp + _update(r, loop_var)]
    if k in ("break", "continue"):
        return [sp + f"if {_cond(r, loop_var)}:", sp + f"    {k}"]
    if k == "return":
        return [sp + f"if {_cond(r, loop_var)}:", sp + "    return a - b.sum()"]
    if k == "if":
        return [sp + f"if {_cond(r, loop_var)}:"] + _block(r, ind + 1, depth + 1, loop_var, in_loop, False)
    if k == "ifelse":
        return ([sp + f"if {_cond(r, loop_var)}:"] + _block(r, ind + 1, depth + 1, loop_var, in_loop, False)
                + [sp + "else:"] + _block(r, ind + 1, depth + 1, loop_var, in_loop, False))
    if k == "elif":
        return ([sp + f"if {_cond(r, loop_var)}:"] + _block(r, ind + 1, depth + 1, loop_var, in_loop, False)
                + [sp + f"elif {_cond(r, loop_var)}:"] + _block(r, ind + 1, depth + 1, loop_var, in_loop, False)
                + [sp + "else:"] + _block(r, ind + 1, depth + 1, loop_var, in_loop, False))
    if k == "for_static":
        return [sp + f"for i in range({r.randint(1, 4)}):"] + _block(r, ind + 1, depth + 1, "i", True, False)
    if k == "for_traced":
        return [sp + "for i in range(n):"] + _block(r, ind + 1, depth + 1, "i", True, False)
    if k == "for_array":
        return [sp + "for v in x:"] + _block(r, ind + 1, depth + 1, "v", True, False)
    if k == "for_rows":
        return [sp + "for row in x.reshape(2, 2):",
                sp + "    " + r.choice(["a = a * 0.5 + row.sum()", "b = b * 0.5 + row[0]"])
                ] + _block(r, ind + 1, depth + 1, None, True, False)
    # while: counter named by depth so nested loops do not share it
    c = f"k{depth}"
    bound = r.choice(["3", "n + 1"])
    cond = "" if r.random() < 0.5 else f" and ({_cond(r, None)})"
    return ([sp + f"{c} = 0", sp + f"while {c} < {bound}{cond}:", sp + f"    {c} = {c} + 1"]
            + _block(r, ind + 1, depth + 1, None, True, False))


def generate(r: random.Random) -> str:
    """One program's module source."""
    head = HEADER.format(flag=r.choice(["True", "False"]), mode=r.choice(["None", "1"]))
    body = _block(r, 1, 0, None, False, True)
    return head + "\n".join(body) + "\n" + FOOTER


_counter = itertools.count()
# the generated modules' files, removed when the process ends (the directory's finalizer)
_tmpdir = tempfile.TemporaryDirectory(prefix="ast_hybrid_progen_")


def load(source: str, name: str = "f"):
    """Write ``source`` to a real module file, import it, return ``name`` from it."""
    modname = f"_progen_{next(_counter)}"
    path = Path(_tmpdir.name) / f"{modname}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def inputs(r: random.Random):
    """Concrete numpy inputs ``(x, y, n)``."""
    x = np.asarray([r.uniform(-2, 2) for _ in range(4)], dtype=np.float32)
    y = np.float32(r.uniform(-2, 2))
    n = r.randint(0, 3)
    return x, y, n
