"""What a module defines, as far as the linter needs it (stdlib :mod:`ast`, no execution).

:class:`ModuleFacts` answers, for one parsed file:

- which names the module imports, and as what (``nd`` -> ``mxnet.nd``,
  ``np`` -> ``numpy``), from every ``import`` anywhere in the file, and through
  ``from module import *`` of a module of the project the names that module
  imports (:func:`star_imports`: its source read, never imported);
- its module-level functions and its classes (with their methods), so a call
  ``helper(F, x)`` or ``self.helper(F, x)`` can be followed into the callee;
- which classes are hybridized: a class defining ``hybrid_forward`` (that
  method only exists on ``HybridBlock``), or one whose bases are named
  ``HybridBlock`` / ``gluon.HybridBlock`` / ``nn.HybridBlock`` (any dotted
  name ending in ``HybridBlock``), or a class of this file that derives,
  transitively, from such a class.  A plain ``Block``'s ``forward`` is not
  hybridized and not linted;
- the entry points: every ``hybrid_forward`` (MXNet 1.x style, an ``F``
  argument) and the ``forward`` of hybridized classes (MXNet 2 style, no
  ``F``) that have no ``hybrid_forward`` of their own or inherited in this file
  (beside one, ``forward`` is MXNet 1.x's imperative wrapper, never traced);
- which classes are MXNet ``autograd.Function``s (custom gradients, HY014).

:func:`module_of` and :func:`module_family` say where a dotted name of the file comes from, through its
imports (``nd.relu`` -> ``mxnet.nd.relu``, of the ``nd`` family).

>>> import ast
>>> facts = ModuleFacts(ast.parse('''
... from mxnet import gluon, nd
... class A(gluon.HybridBlock):
...     def forward(self, x): return x
... class B(A):
...     def forward(self, x): return x
... class C(gluon.Block):
...     def forward(self, x): return x
... '''))
>>> [(c.name, f.name, style) for c, f, style in facts.entries()]
[('A', 'forward', 'forward'), ('B', 'forward', 'forward')]
>>> facts.imports["nd"]
'mxnet.nd'
"""

from __future__ import annotations

import ast
import os

__all__ = ["ModuleFacts", "ClassFacts", "dotted_name", "module_of", "module_family"]


def dotted_name(node) -> str | None:
    """``a.b.c`` for a chain of Name/Attribute nodes (stdlib or gast), else None."""
    parts = []
    while type(node).__name__ == "Attribute":
        parts.append(node.attr)
        node = node.value
    if type(node).__name__ != "Name":
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def module_of(facts: ModuleFacts, dotted: str | None) -> str | None:
    """Absolute dotted path of a global ``a.b.c`` through the file's imports."""
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    mod = facts.imports.get(head)
    if mod is None:
        return None
    if mod.startswith("."):
        mod = "mxnet." + mod.lstrip(".")
    full = f"{mod}.{rest}" if rest else mod
    for old, new in (("mxnet.contrib.ndarray", "mxnet.nd.contrib"), ("mxnet.contrib.symbol", "mxnet.sym.contrib"),
                     ("mxnet.ndarray", "mxnet.nd"), ("mxnet.symbol", "mxnet.sym"),
                     ("mxnet.numpy_extension", "mxnet.npx"), ("mxnet.numpy", "mxnet.np")):
        if full == old or full.startswith(old + "."):
            full = new + full[len(old):]
    return full


def module_family(full: str | None) -> str | None:
    """``nd``, ``sym``, ``numpy`` or ``mxnp`` for an op path, else None."""
    if not full:
        return None
    for prefix, fam in (("mxnet.nd.", "nd"), ("mxnet.sym.", "sym"), ("numpy.", "numpy"),
                        ("mxnet.np.", "mxnp"), ("mxnet.npx.", "mxnp")):
        if full.startswith(prefix):
            return fam
    return None


class ClassFacts:
    """One class statement: its name, base names and methods (by name)."""

    def __init__(self, node: ast.ClassDef):
        self.node = node
        self.name = node.name
        self.bases = [dotted_name(b) or "" for b in node.bases]
        self.methods: dict[str, ast.FunctionDef] = {}
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.methods[stmt.name] = stmt
        self._stores: dict | None = None
        #: decorated ``@use_np`` (``@mx.util.use_np``, ``@use_np_array``): its forward runs on MXNet's numpy
        #: arrays and symbols, which take basic indexing (``x[:, 0]``, ``x[i]``) even hybridized
        self.numpy_mode = _uses_np(node)

    def stores(self) -> dict:
        """``{attr: [value, ...]}`` for every ``self.attr = value`` of ``__init__``; an attribute
        another method stores too maps to None (its value is not the constructor's alone)."""
        if self._stores is None:
            out: dict = {}
            for name, fn in self.methods.items():
                if not fn.args.args:
                    continue
                me = fn.args.args[0].arg
                for stmt in _statements(fn.body):
                    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
                        continue
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    for tgt in targets:
                        if (isinstance(tgt, ast.Attribute) and isinstance(tgt.value, ast.Name)
                                and tgt.value.id == me):
                            if name != "__init__" or len(targets) > 1:
                                out[tgt.attr] = None
                            elif out.get(tgt.attr, []) is not None:
                                out.setdefault(tgt.attr, []).append(stmt.value)
            self._stores = out
        return self._stores


class ModuleFacts:
    def __init__(self, tree: ast.Module, path: str | None = None):
        self.tree = tree
        self.imports: dict[str, str] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, ClassFacts] = {}
        self.class_list: list[ClassFacts] = []
        self._parents: dict[str, list[ClassFacts]] = {}
        #: (class name, attribute path) -> whether a later call reads it back (:mod:`.state`)
        self.read_back: dict = {}
        #: (class name, attribute) -> what its constructor stores there (:mod:`.kinds`)
        self.constructed: dict = {}
        self._function_classes: frozenset | None = None
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
        for node in _statements(tree.body):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.imports[top] = top
            elif isinstance(node, ast.ImportFrom):
                mod = ("." * node.level) + (node.module or "")
                for a in node.names:
                    if a.name == "*":
                        for name, target in star_imports(path, node.module, node.level).items():
                            self.imports.setdefault(name, target)
                        continue
                    # `from .._mxnet import mxnet as _mx`: a package's own door to MXNet (turicreate's) is it
                    self.imports[a.asname or a.name] = "mxnet" if a.name == "mxnet" else (
                        f"{mod}.{a.name}" if mod else a.name)
            elif isinstance(node, ast.ClassDef):
                facts = ClassFacts(node)
                self.class_list.append(facts)
                self.classes.setdefault(node.name, facts)
        # numpy mode for every block: `npx.set_np()` at the module's top level; for the blocks a function
        # decorated `@use_np` defines (MXNet's own tests: the test function is decorated, its blocks inside it)
        if any(_sets_np(stmt) for stmt in tree.body):
            for facts in self.class_list:
                facts.numpy_mode = True
        for node in _statements(tree.body):        # statements only: a walk of every expression costs 15% of lint
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list and _uses_np(node):
                inner = {id(c) for c in _statements(node.body) if isinstance(c, ast.ClassDef)}
                for facts in self.class_list:
                    if id(facts.node) in inner:
                        facts.numpy_mode = True

    # -- classes -----------------------------------------------------------
    def is_hybrid(self, cls: ClassFacts, _seen=None) -> bool:
        """Whether instances of ``cls`` are hybridized blocks (see the module docstring)."""
        if "hybrid_forward" in cls.methods:
            return True
        seen = _seen or set()
        if cls.name in seen:
            return False
        seen.add(cls.name)
        for base in cls.bases:
            last = base.rsplit(".", 1)[-1]
            if last == "HybridBlock" or last == "SymbolBlock":
                return True
            parent = self.classes.get(last) if base == last else None
            if parent is not None and parent is not cls and self.is_hybrid(parent, seen):
                return True
        return False

    def parent_classes(self, cls: ClassFacts) -> list[ClassFacts]:
        """The in-file base classes of ``cls``, nearest first (method resolution, simplified)."""
        found = self._parents.get(cls.name)
        if found is None:
            found = self._parents[cls.name] = self._parent_classes(cls)
        return found

    def _parent_classes(self, cls: ClassFacts) -> list[ClassFacts]:
        out, todo, seen = [], list(cls.bases), {cls.name}
        while todo:
            base = todo.pop(0)
            parent = self.classes.get(base) if "." not in base else None
            if parent is None or parent.name in seen:
                continue
            seen.add(parent.name)
            out.append(parent)
            todo.extend(parent.bases)
        return out

    def find_method(self, cls: ClassFacts, name: str, *, skip_self: bool = False):
        """``(class, FunctionDef)`` defining ``name`` for ``cls`` in this file, else None."""
        chain = ([] if skip_self else [cls]) + self.parent_classes(cls)
        for c in chain:
            if name in c.methods:
                return c, c.methods[name]
        return None

    def init_values(self, cls: ClassFacts, attr: str):
        """What the constructor stores in ``self.<attr>`` (:meth:`ClassFacts.stores`), looking in
        ``cls`` and then its in-file bases; None when unknown (not stored there, or stored
        by another method too)."""
        for c in [cls, *self.parent_classes(cls)]:
            stores = c.stores()
            if attr in stores:
                return stores[attr]
        return None

    def registers_custom(self, op_type: str) -> bool:
        """Whether a class of this file is registered as the custom operator ``op_type``."""
        return any(any(isinstance(d, ast.Call) and (dotted_name(d.func) or "").endswith("register")
                       and d.args and isinstance(d.args[0], ast.Constant) and d.args[0].value == op_type
                       for d in cls.node.decorator_list) for cls in self.class_list)

    def custom_outputs(self, op_type: str) -> int | None:
        """How many outputs the ``CustomOpProp`` registered in this file as ``op_type``
        (``@mx.operator.register("op_type")``) lists: its ``list_outputs`` returning a list
        display, or 1 without one (MXNet's default ``['output']``); 1 too when no class of this
        file is registered so (a prop defined elsewhere: most have one output); None when the
        file's prop computes its list."""
        for cls in self.class_list:
            if not any(isinstance(d, ast.Call) and (dotted_name(d.func) or "").endswith("register")
                       and d.args and isinstance(d.args[0], ast.Constant) and d.args[0].value == op_type
                       for d in cls.node.decorator_list):
                continue
            found = self.find_method(cls, "list_outputs")
            if found is None:
                return 1
            returns = [n for n in ast.walk(found[1]) if isinstance(n, ast.Return)]
            counts = {len(r.value.elts) for r in returns if isinstance(r.value, (ast.List, ast.Tuple))}
            return counts.pop() if len(counts) == 1 and len(returns) == 1 else None
        return 1

    def function_classes(self) -> frozenset:
        """The names of this file's classes that are MXNet ``autograd.Function``s: a base that the imports
        make ``mxnet.autograd.Function`` (``mx.autograd.Function``, ``autograd.Function`` after ``from
        mxnet import autograd``, ``Function`` after ``from mxnet.autograd import Function``, a relative
        import inside MXNet), or a class of this file that is one."""
        if self._function_classes is None:
            found: set = set()
            grew = True
            while grew:
                grew = False
                for cls in self.class_list:
                    if cls.name not in found and any(b in found or self._is_function(b) for b in cls.bases):
                        found.add(cls.name)
                        grew = True
            self._function_classes = frozenset(found)
        return self._function_classes

    def _is_function(self, base: str) -> bool:
        head, _, rest = base.partition(".")
        mod = self.imports.get(head)
        if mod is None:
            return False
        full = f"{mod}.{rest}" if rest else mod
        if full.startswith("."):
            return full.lstrip(".") == "autograd.Function"
        return full in ("mxnet.autograd.Function", "ast_hybrid.autograd.Function",
                        "ast_hybrid.mxnet.autograd.Function")

    def has_method(self, cls: ClassFacts, name: str) -> bool:
        return self.find_method(cls, name) is not None

    # -- entry points ------------------------------------------------------
    def entries(self):
        """``(class, method, style)`` for every forward to lint; style is "F" or "forward"."""
        for cls in self.class_list:
            hf = cls.methods.get("hybrid_forward")
            if hf is not None:
                yield cls, hf, "F"
            fw = cls.methods.get("forward")
            # a `forward` beside an inherited `hybrid_forward` is MXNet 1.x's imperative wrapper around it
            # (gluon-nlp's GNMTDecoder: it splits the steps, calls `super().forward` per step, and stacks with
            # `mx.nd`): MXNet 1.x never hybridizes an overridden `forward`; only the hybrid_forward is traced
            if fw is not None and hf is None and self.is_hybrid(cls) and not self.has_method(cls, "hybrid_forward"):
                yield cls, fw, "forward"


_BLOCKS = ("body", "orelse", "handlers", "finalbody", "cases")


def star_imports(path, module, level) -> dict:
    """What ``from module import *`` in the file ``path`` binds, of what the linter follows: the names that
    module imports at its top level (``from mxnet import nd``, ``import numpy as np``), read from its source
    (never imported).  The module is found beside the file (``from .utils import *``: the file's package,
    ``level`` folders up) or, for an absolute name, under the file's folder or one of its parents (a project
    run from its root: ``from tools.mx_utils import *`` in ``tools/yolo_layer.py``).  ``{}`` when it is not
    found, cannot be read or parsed, or is not a module of the project."""
    if not path or not module and not level:
        return {}
    here = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(path):
        return {}
    parts = (module or "").split(".") if module else []
    if level:
        roots = [here]
        for _ in range(level - 1):
            roots = [os.path.dirname(roots[0])]
    else:
        roots, d = [], here
        for _ in range(4):
            roots.append(d)
            d = os.path.dirname(d)
    for root in roots:
        base = os.path.join(root, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if parts and os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(path):
                return _top_imports(candidate)
    return {}


def _top_imports(filename) -> dict:
    try:
        with open(filename, "rb") as fh:
            tree = ast.parse(fh.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return {}
    names = ModuleFacts(tree).imports          # its own star imports are not followed (path None)
    public = None
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
                and isinstance(stmt.value, (ast.List, ast.Tuple))):
            public = {e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return {k: v for k, v in names.items()
            if not k.startswith("_") and not v.startswith(".") and (public is None or k in public)}


def _uses_np(node) -> bool:
    """Decorated ``@use_np`` (``@mx.util.use_np``, ``@use_np_array``)."""
    return any((d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None)) in ("use_np", "use_np_array")
               for d in node.decorator_list)


def _sets_np(stmt) -> bool:
    """``npx.set_np()`` (``mx.npx.set_np()``, ``set_np()``) as a statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) == "set_np"


def _statements(body):
    """Every statement, nested in any block (expressions are not walked: fast)."""
    todo = list(reversed(body))
    while todo:
        stmt = todo.pop()
        yield stmt
        for field in reversed(_BLOCKS):  # source order
            inner = getattr(stmt, field, None)
            if inner:
                todo.extend(reversed(inner))
