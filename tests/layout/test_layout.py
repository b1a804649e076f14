"""The house's rooms and which way their imports may go (each folder's ``__init__`` docstring says it).

Read statically: every ``import`` and ``from ... import`` of every module,
function-level (lazy) imports included, relative ones resolved.  A rule is
(room, forbidden prefixes); a room is a module prefix.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FRONT = ("ast_hybrid.core", "ast_hybrid.nd", "ast_hybrid.ndarray", "ast_hybrid.sym", "ast_hybrid.autograd", "ast_hybrid.init",
         "ast_hybrid.operator", "ast_hybrid.gluon", "ast_hybrid.ops", "ast_hybrid.mxnet")
NUMERICAL = ("jax", "jaxlib", "numpy")
RUNTIME = "ast_hybrid.transpiler.runtime"

# room -> what it must never import (prefixes of absolute module names)
RULES = {
    # no jax, no numpy (lint starts fast and runs without them), and nothing of ours but itself
    "ast_hybrid.common": NUMERICAL + tuple(f"ast_hybrid.{room}" for room in (
        "linter", "transpiler", "cli", "testing")) + FRONT + ("passes",),
    "ast_hybrid.linter": NUMERICAL + (RUNTIME, "ast_hybrid.transpiler.converter", "ast_hybrid.transpiler.api",
                                      "ast_hybrid.cli", "ast_hybrid.testing", "passes") + FRONT,
    "ast_hybrid.transpiler.ast_tools": NUMERICAL + (RUNTIME, "passes", "ast_hybrid.linter", "ast_hybrid.cli",
                                                    "ast_hybrid.testing") + FRONT,
    "passes": NUMERICAL + (RUNTIME, "ast_hybrid.linter", "ast_hybrid.cli", "ast_hybrid.testing") + FRONT,
    RUNTIME: ("passes", "ast_hybrid.linter", "ast_hybrid.cli", "ast_hybrid.testing",
              "ast_hybrid.transpiler.pipeline", "ast_hybrid.transpiler.converter") + FRONT,
    "ast_hybrid.transpiler": ("ast_hybrid.cli", "ast_hybrid.testing") + FRONT,
    # the Gluon front and the ops: MXNet's namespace never reaches into the linter or the tools
    **{room: ("ast_hybrid.linter", "ast_hybrid.cli", "ast_hybrid.testing", "passes") for room in FRONT},
}

# the folders whose __init__ says what the folder is and what it may import
ROOMS = ("ast_hybrid/core", "ast_hybrid/common", "ast_hybrid/linter", "ast_hybrid/transpiler", "ast_hybrid/transpiler/ast_tools",
         "ast_hybrid/transpiler/runtime", "ast_hybrid/cli", "ast_hybrid/testing", "ast_hybrid/gluon",
         "ast_hybrid/ops", "ast_hybrid/mxnet", "passes")


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


def violations_of(path: Path, text: str | None = None):
    name = module_name(path)
    # the most specific room the module lives in decides (runtime before transpiler)
    rooms = [room for room in RULES if _within(name, room)]
    if not rooms:
        return
    room = max(rooms, key=len)
    for imported, line in imports(path, text):
        if any(_within(imported, p) and not _within(imported, room) for p in RULES[room]):
            yield f"{path.relative_to(ROOT)}:{line}: {room} imports {imported}"


def test_import_directions():
    assert [v for path in sources() for v in violations_of(path)] == []


def test_the_check_sees_a_lazy_violation():
    """A forbidden import inside a function, relative or absolute, is found."""
    probe = ROOT / "ast_hybrid" / "common" / "probe.py"
    text = "def f():\n    import jax.numpy\n    from ..gluon import nn\n    from . import source\n"
    assert [v.split(": ", 1)[1] for v in violations_of(probe, text)] == [
        "ast_hybrid.common imports jax.numpy", "ast_hybrid.common imports ast_hybrid.gluon",
        "ast_hybrid.common imports ast_hybrid.gluon.nn"]


@pytest.mark.parametrize("folder", ROOMS)
def test_each_room_says_what_it_is_and_may_import(folder):
    init = ROOT / folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert len(doc.split()) >= 15, f"{folder}/__init__.py: say what this folder is"
    assert "may import" in doc.lower() or "never import" in doc.lower(), \
        f"{folder}/__init__.py: say what this folder may import"


def test_root_holds_mxnets_namespace():
    """Modules at the package root are MXNet's twins (and the lazy API); our tools live in folders."""
    root_modules = {p.stem for p in (ROOT / "ast_hybrid").glob("*.py")}
    assert root_modules == {"__init__", "__main__", "nd", "ndarray", "sym", "autograd", "init", "operator",
                            "distributed"}
