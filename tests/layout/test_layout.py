"""The house's rooms and which way their imports go (each room's ``__init__`` docstring says it in words).

Read statically: every ``import`` and ``from ... import`` of every module of ``ast_hybrid/`` and ``passes/``,
function-level (lazy) imports included, relative ones resolved.  A room is a module prefix: a folder
(``ast_hybrid/gluon``), a sub-folder with rules of its own (``ast_hybrid/transpiler/runtime``), or one of the
MXNet twins at the package root (``ast_hybrid/nd.py``: MXNet's ``mx.nd``).  :data:`LAYERS` says which rooms
each room may import; the test holds the code to it, and holds the declaration itself to one direction: no
room reaches, through any chain, back to itself.  Beside it: ``jax._src`` only in the XLA rewrites' room,
the environment read in one module, no module over 600 lines without its reason written at its top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
A = "ast_hybrid."

# room -> the rooms of ours it may import (besides its own modules).  Read bottom-up: the toolchain (linter,
# transpiler, passes) over ``common``; the front over ``core``, the operators over it, then the XLA rewrites,
# MXNet's API rooms, Gluon, and ``mxnet`` (the import door); the tools on top.
_TOOLCHAIN = {
    "common": set(),
    "linter": {"common"},
    "transpiler.ast_tools": {"common"},
    "transpiler.sites": {"common", "transpiler.ast_tools"},
    "transpiler.runtime": {"common", "transpiler.ast_tools"},
    "passes": {"common", "transpiler.ast_tools", "transpiler.sites"},
    "transpiler": {"common", "linter", "passes", "transpiler.ast_tools", "transpiler.sites", "transpiler.runtime"},
    "lsp": {"common", "linter"},                # the language server: the linter for editors
}
_FRONT = {
    "core": set(),
    "ops": {"core", "common"},
    "ndarray": {"core", "ops"},                 # the MXNet twins at the root: doors onto the rooms
    "autograd": {"core", "ops"},
    "operator": {"core", "ops"},
    "xla": {"core", "ops"},
    "io": {"core", "ops"},
    "parallel": {"core"},
    "distributed": {"parallel"},
    "mxnp": {"core", "ops", "io"},              # mx.np / mx.npx
    "nd": {"core", "ops", "io", "xla", "mxnp"},
    "init": {"core", "ops", "nd"},
    "symbol": {"core", "ops", "nd", "common"},
    "sym": {"core", "ops", "symbol"},
    "optimizer": {"core", "ops", "nd"},
    "metric": {"core", "nd"},
    "gluon": {"core", "ops", "xla", "io", "parallel", "nd", "init", "symbol", "optimizer", "common",
              "transpiler", "onnx"},            # transpiler: its api converts a hybrid_forward with control flow
    "image": {"core", "ops", "nd", "io", "gluon"},
    "module": {"core", "ops", "nd", "io", "init", "symbol", "sym", "optimizer", "metric", "gluon"},   # mx.mod, mx.rnn
    "onnx": {"core", "nd", "symbol", "sym"},    # mx.onnx: graphs to ONNX and back (sym builds the imported)
}
_FRONT["mxnet"] = set(_FRONT) - {"mxnet"}       # the import door: any room of the front
_TOOLS = {
    "cli": set(_TOOLCHAIN) | set(_FRONT),
    "run": {"cli"},
    "__main__": {"cli"},
    "testing": set(_TOOLCHAIN) | set(_FRONT),
    "conformance": set(_TOOLCHAIN) | set(_FRONT) | {"testing"},
}
LAYERS = {(r if r == "passes" else A + r): {d if d == "passes" else A + d for d in deps}
          for r, deps in {**_TOOLCHAIN, **_FRONT, **_TOOLS}.items()}

NUMERICAL = ("jax", "jaxlib", "numpy")
# lint (and its language server) must start without them
NO_NUMERICAL = (A + "common", A + "linter", A + "lsp", A + "transpiler.ast_tools", "passes")
PRIVATE_JAX_ROOM = A + "xla"
# the one module that reads the environment, and the modules that pass it on or are MXNet's API for it
ENVIRONMENT = A + "core.settings"
ENVIRONMENT_WRITERS = {A + "cli.launch": "sets the environment of the processes it starts",
                       A + "mxnet.util": "MXNet's getenv/setenv, API for the user's own variables",
                       A + "mxnet.test_utils": "MXNet's environment()/is_cd_run, API for the user's own variables",
                       A + "testing": "starts MXNet's and our processes with their environment",
                       A + "conformance": "starts MXNet's and our processes with their environment"}
LONG = 600
LONG_REASON = "Over 600 lines:"

# the folders whose __init__ says what the room is and what it may import
ROOMS = sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "ast_hybrid").rglob("__init__.py")
               if "__pycache__" not in p.parts and p.parent.relative_to(ROOT / "ast_hybrid").parts
               and A + ".".join(p.parent.relative_to(ROOT / "ast_hybrid").parts) in LAYERS) + ["passes"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, text: str | None = None):
    """(absolute module name, line) of every import in ``path``; ``from a import b`` gives ``a.b`` too."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            yield module, node.lineno
            for alias in node.names:           # `from ast_hybrid import nd` imports the module ast_hybrid.nd
                yield f"{module}.{alias.name}", node.lineno


def sources():
    for top in ("ast_hybrid", "passes"):
        yield from sorted(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def room_of(name: str) -> str | None:
    """The most specific room ``name`` lives in (``transpiler.runtime`` before ``transpiler``); None for the
    package root (its names are loaded lazily, by string) and for modules outside the house."""
    rooms = [room for room in LAYERS if _within(name, room)]
    return max(rooms, key=len) if rooms else None


def edges(files=None):
    """``{(room, imported room): [where, ...]}`` over ``files`` (``{path: text or None}``; default every source)."""
    found: dict = {}
    for path, text in (files or {p: None for p in sources()}).items():
        name = module_name(path)
        room = room_of(name)
        if room is None:
            continue
        for imported, line in imports(path, text):
            other = room_of(imported)
            if other is not None and other != room:
                found.setdefault((room, other), []).append(f"{path.relative_to(ROOT)}:{line}: {imported}")
    return found


def cycle(graph: dict) -> list | None:
    """A cycle of ``graph`` (``{node: set of nodes}``) as a list ``[a, b, ..., a]``, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def violations(files=None):
    """Imports of a room that its layer does not allow."""
    return [f"{where} ({room} may not import {other})" for (room, other), wheres in sorted(edges(files).items())
            if other not in LAYERS[room] for where in wheres]


def test_the_declared_layers_go_one_way():
    assert cycle(LAYERS) is None, f"LAYERS has a cycle: {' -> '.join(cycle(LAYERS))}"
    assert all(dep in LAYERS for deps in LAYERS.values() for dep in deps)


def test_each_room_imports_only_rooms_below_it():
    assert violations() == []


def test_no_import_cycle_between_rooms():
    graph: dict = {}
    for room, other in edges():
        graph.setdefault(room, set()).add(other)
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_a_planted_cycle_is_found():
    """ops importing Gluon lazily, inside a function, closes ops -> gluon -> ops: both checks see it."""
    probe = ROOT / "ast_hybrid" / "ops" / "probe.py"
    files = {p: None for p in sources()}
    files[probe] = "def f():\n    from ..gluon import block\n    return block\n"
    assert violations(files) == [f"ast_hybrid/ops/probe.py:2: {m} (ast_hybrid.ops may not import ast_hybrid.gluon)"
                                 for m in ("ast_hybrid.gluon", "ast_hybrid.gluon.block")]
    graph: dict = {}
    for room, other in edges(files):
        graph.setdefault(room, set()).add(other)
    found = cycle(graph)
    assert found is not None and A + "ops" in found and A + "gluon" in found


def test_the_check_sees_a_lazy_violation():
    """A forbidden import inside a function, relative or absolute, is found."""
    probe = ROOT / "ast_hybrid" / "common" / "probe.py"
    text = "def f():\n    import jax.numpy\n    from ..gluon import nn\n    from . import source\n"
    assert violations({probe: text}) == [f"ast_hybrid/common/probe.py:3: {m} (ast_hybrid.common may not import "
                                         "ast_hybrid.gluon)" for m in ("ast_hybrid.gluon", "ast_hybrid.gluon.nn")]
    assert [m for m, _ in imports(probe, text) if m.split(".")[0] in NUMERICAL] == ["jax.numpy"]


def test_lint_rooms_never_import_jax_or_numpy():
    bad = [f"{p.relative_to(ROOT)}:{line}: {m}" for p in sources() if room_of(module_name(p)) in NO_NUMERICAL
           for m, line in imports(p) if m.split(".")[0] in NUMERICAL]
    assert bad == []


def test_jax_internals_only_in_the_xla_room():
    bad = [f"{p.relative_to(ROOT)}:{line}: {m}" for p in sources() for m, line in imports(p)
           if _within(m, "jax._src") and room_of(module_name(p)) != PRIVATE_JAX_ROOM]
    assert bad == []


def _reads_environment(tree):
    """Lines where ``tree`` touches ``os.environ``/``os.getenv``/``os.putenv`` or imports them from os."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv") and \
                isinstance(node.value, ast.Name) and node.value.id == "os":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and \
                any(a.name in ("environ", "getenv", "putenv") for a in node.names):
            lines.append(node.lineno)
    return lines


def test_the_environment_is_read_in_one_module():
    bad = []
    for p in sources():
        name = module_name(p)
        if name == ENVIRONMENT or any(_within(name, w) for w in ENVIRONMENT_WRITERS):
            continue
        bad += [f"{p.relative_to(ROOT)}:{line}" for line in _reads_environment(ast.parse(p.read_text()))]
    assert bad == [], f"read the environment through {ENVIRONMENT} (core/settings.py)"


def test_long_modules_say_why():
    """A module over 600 lines starts with its reason (a docstring paragraph beginning 'Over 600 lines:')."""
    bad = []
    for p in sources():
        text = p.read_text()
        if text.count("\n") > LONG and LONG_REASON not in (ast.get_docstring(ast.parse(text)) or ""):
            bad.append(f"{p.relative_to(ROOT)}: {text.count(chr(10))} lines")
    assert bad == []


@pytest.mark.parametrize("folder", ROOMS)
def test_each_room_says_what_it_is_and_may_import(folder):
    init = ROOT / folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert len(doc.split()) >= 15, f"{folder}/__init__.py: say what this folder is"
    assert "may import" in doc.lower() or "never import" in doc.lower(), \
        f"{folder}/__init__.py: say what this folder may import"


def test_every_module_is_in_a_room():
    """A new folder or root module must be given its place in LAYERS."""
    loose = [module_name(p) for p in sources() if room_of(module_name(p)) is None and module_name(p) != "ast_hybrid"]
    assert loose == []


def test_root_holds_mxnets_namespace():
    """Modules at the package root are MXNet's twins (and the lazy API); our tools live in folders."""
    root_modules = {p.stem for p in (ROOT / "ast_hybrid").glob("*.py")}
    assert root_modules == {"__init__", "__main__", "nd", "ndarray", "sym", "autograd", "init", "operator",
                            "distributed"}
