"""Random small programs with the constructs of issue 13, as source text, for property tests.

Like :mod:`progen` (control flow over traced and static values), plus what issue 13
lists: state kept in a dict, a list and on an object (static keys) and changed inside
traced ``if``/``while``/``for``; recursion (direct and through a helper) whose depth is a
constant or an argument; the walrus (in ``if`` and ``while`` tests); ``reversed(range(n))``
and ``range(a, b, -k)`` with traced or static bounds; ``enumerate``/``zip`` over arrays;
``while ... else``; functions defined inside the body (inside loops too) and called there.

A program is ``def f(x, y, n, m)``: ``x`` a float32 vector of length 4, ``y`` a float32
scalar, ``n`` and ``m`` small ints (``0..3``) that a run traces or makes static.  Every
state slot is a float32 scalar or (4,) vector defined before any control flow, so every
program is well-defined Python; updates are contractive (values stay bounded), no
division.

Size is bounded so that every program compiles in well under a few seconds: blocks of
one to three statements, compound statements two deep at most, at most ``MAX_LOOPS``
loops per program and never a traced loop inside a traced ``while`` (loops have at most
five iterations).  :func:`generate` returns the source and the set of constructs used.

>>> import random
>>> src, used = generate(random.Random(0))
>>> "def f(x, y, n, m):" in src
True
"""

from __future__ import annotations

import random

import numpy as np

MAX_LOOPS = 3

#: module-level helpers of every program (README's construct test reuses them)
HELPERS = '''class Box:
    def __init__(self, v):
        self.v = v


def rec(v, d):
    if d <= 0:
        return v
    return rec(v * 0.5 + 1.0, d - 1)


def hop(v, d):
    if d > 0:
        return back(v * 0.5 - 0.25, d - 1)
    return v


def back(v, d):
    return hop(v + 0.125, d)


'''
HEADER = 'FLAG = {flag}\n\n\n' + HELPERS + '''def f(x, y, n, m):
    a = y * 0.5
    b = x * 0.5
    st = {{"a": a * 0.5, "b": b * 0.25}}
    lst = [a * 0.25, b * 0.5]
    box = Box(a - 0.5)
'''
FOOTER = '''    return a + b.sum() + st["a"] + st["b"].sum() * 0.5 + lst[0] + lst[1].sum() * 0.25 + box.v
'''

SCALARS = ["a", 'st["a"]', "lst[0]", "box.v"]
VECTORS = ["b", 'st["b"]', "lst[1]"]
TRACED_CONDS = ["a > 0.0", "b.sum() > y", "y < 0.25", 'st["a"] < y', "lst[1][1] > a", "box.v > 0.0",
                'st["b"].sum() < 0.5']
STATIC_CONDS = ["FLAG", "not FLAG", "m > 1", "n == 0"]


class _Gen:
    def __init__(self, r: random.Random):
        self.r = r
        self.loops = 0
        self.names = 0
        self.used: set[str] = set()

    def fresh(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"

    # --- expressions -------------------------------------------------------------------

    def cond(self, loop_var: str | None, depth: int = 0) -> str:
        r = self.r
        choices = TRACED_CONDS + STATIC_CONDS
        if loop_var == "i":
            choices = choices + ["i > 1", "i % 2 == 0"]
        elif loop_var == "v":
            choices = choices + ["v > a", "v < 0.0"]
        c = r.choice(choices)
        if depth < 1 and r.random() < 0.25:
            c = f"({c}) {r.choice(['and', 'or'])} ({self.cond(loop_var, depth + 1)})"
        if r.random() < 0.1:
            c = f"not ({c})"
        return c

    def update(self, loop_var: str | None) -> str:
        r = self.r
        if r.random() < 0.5:
            t = r.choice(SCALARS)
            self.used.add("container" if t != "a" else "var")
            src = r.choice(SCALARS)
            extra = {"i": " + i * 0.125", "v": " + v * 0.25", "j": " + v * j * 0.125"}.get(loop_var, "")
            return r.choice([f"{t} = {t} * 0.5 + 1.0{extra}", f"{t} = {t} * 0.5 - y", f"{t} = -{t} * 0.5",
                             f"{t} = {t} * 0.25 + {src} * 0.25{extra}", f"{t} = {t} * 0.25 + b.sum() * 0.125",
                             f"{t} = ({t} * 0.5 + 1.0) if {src} > y else ({t} * 0.5 - 1.0)"])
        t = r.choice(VECTORS)
        self.used.add("container" if t != "b" else "var")
        src = r.choice(SCALARS)
        extra = {"i": " + i * 0.125", "v": " - v * 0.25"}.get(loop_var, "")
        return r.choice([f"{t} = {t} * 0.5 + {src} * 0.5{extra}", f"{t} = {t} * 0.5 - y",
                         f"{t} = {t} * -0.5 + 0.25", f"{t} = {t} * 0.5 + x * 0.25{extra}"])

    # --- statements ----------------------------------------------------------------------

    def block(self, ind, depth, loop_var, in_loop, top, in_traced_while=False) -> list[str]:
        out: list[str] = []
        for _ in range(self.r.randint(1, 3)):
            out += self.stmt(ind, depth, loop_var, in_loop, top, in_traced_while)
        return out

    def stmt(self, ind, depth, loop_var, in_loop, top, in_traced_while) -> list[str]:
        r, sp = self.r, "    " * ind
        kinds = ["update", "update", "update", "recursion", "walrus_if", "nested_def"]
        if depth < 2:
            kinds += ["if", "ifelse", "elif"]
            if self.loops < MAX_LOOPS:
                kinds += ["for_static", "for_traced", "for_reversed", "for_stepped", "for_array", "enumerate",
                          "zip", "while", "while_else", "while_walrus"]
        if in_loop:
            kinds += ["break", "continue"]
        if top:
            kinds += ["return"]
        k = r.choice(kinds)
        if in_traced_while and k.startswith(("for", "while", "enumerate", "zip")):
            k = "update"      # a loop inside a traced while: the slow compiles the generator avoids
        if k == "update":
            return [sp + self.update(loop_var)]
        self.used.add(k)
        if k in ("break", "continue"):
            return [sp + f"if {self.cond(loop_var)}:", sp + f"    {k}"]
        if k == "return":
            return [sp + f"if {self.cond(loop_var)}:",
                    sp + '    return a - b.sum() + st["a"] + lst[1].sum() * 0.5 + box.v']
        if k == "recursion":
            t = r.choice(SCALARS)
            depth_arg = r.choice(["m", "n"]) if r.random() < 0.25 else r.choice(["0", "1", "2", "3"])
            fn = r.choice(["rec", "hop"])
            return [sp + f"{t} = {fn}({t}, {depth_arg}) * 0.5"]
        if k == "walrus_if":
            name = self.fresh("t")
            t = r.choice(SCALARS)
            return [sp + f"if ({name} := {t} * 0.5 + 0.25) > y:", sp + f"    {t} = {name}",
                    sp + "else:", sp + f"    {t} = {name} - 0.5"]
        if k == "nested_def":
            g = self.fresh("g")
            t = r.choice(SCALARS)
            body = r.choice(["return v * 0.5 + y", "return v * 0.5 - w", "return v * 0.25 + a * 0.25"])
            return [sp + f"def {g}(v, w=0.25):", sp + f"    {body}", sp + f"{t} = {g}({t})"]
        if k == "if":
            return [sp + f"if {self.cond(loop_var)}:"] + self.block(ind + 1, depth + 1, loop_var, in_loop, False,
                                                                     in_traced_while)
        if k == "ifelse":
            return ([sp + f"if {self.cond(loop_var)}:"]
                    + self.block(ind + 1, depth + 1, loop_var, in_loop, False, in_traced_while)
                    + [sp + "else:"] + self.block(ind + 1, depth + 1, loop_var, in_loop, False, in_traced_while))
        if k == "elif":
            return ([sp + f"if {self.cond(loop_var)}:"]
                    + self.block(ind + 1, depth + 1, loop_var, in_loop, False, in_traced_while)
                    + [sp + f"elif {self.cond(loop_var)}:"]
                    + self.block(ind + 1, depth + 1, loop_var, in_loop, False, in_traced_while)
                    + [sp + "else:"] + self.block(ind + 1, depth + 1, loop_var, in_loop, False, in_traced_while))
        self.loops += 1
        if k.startswith("for") or k in ("enumerate", "zip"):
            header, var = {
                "for_static": (f"for i in range({r.randint(1, 4)}):", "i"),
                "for_traced": ("for i in range(n):", "i"),
                "for_reversed": (f"for i in reversed(range({r.choice(['n', 'm', '3'])})):", "i"),
                "for_stepped": (f"for i in range({r.choice(['n + 2', 'm', '4', 'n'])}, "
                                f"{r.choice(['0', '-1', 'm - 2'])}, -{r.randint(1, 2)}):", "i"),
                "for_array": ("for v in x:", "v"),
                "enumerate": ("for j, v in enumerate(x):", "j"),
                "zip": (f"for v, u in zip(x, {r.choice(VECTORS)}):", "v"),
            }[k]
            return [sp + header] + self.block(ind + 1, depth + 1, var, True, False, in_traced_while)
        c = f"k{depth}"
        bound = r.choice(["3", "n + 1", "m"])
        traced = bound != "3" or r.random() < 0.5
        cond = f" and ({self.cond(None)})" if traced and bound == "3" else ""
        if k == "while_walrus":
            head = [sp + f"{c} = 0", sp + f"while ({c} := {c} + 1) <= {bound}{cond}:"]
        else:
            head = [sp + f"{c} = 0", sp + f"while {c} < {bound}{cond}:", sp + f"    {c} = {c} + 1"]
        body = self.block(ind + 1, depth + 1, None, True, False, in_traced_while or traced)
        if k == "while_else":
            body += [sp + f"    if {self.cond(None)}:", sp + "        break"]
            return head + body + [sp + "else:", sp + "    " + self.update(None)]
        return head + body


def generate(r: random.Random) -> tuple[str, set[str]]:
    """One program's module source, and the constructs it uses."""
    g = _Gen(r)
    head = HEADER.format(flag=r.choice(["True", "False"]))
    body = g.block(1, 0, None, False, True)
    return head + "\n".join(body) + "\n" + FOOTER, g.used


def inputs(r: random.Random):
    """Concrete numpy inputs ``(x, y, n, m)``."""
    x = np.asarray([r.uniform(-2, 2) for _ in range(4)], dtype=np.float32)
    return x, np.float32(r.uniform(-2, 2)), r.randint(0, 3), r.randint(0, 3)
