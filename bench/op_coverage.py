"""Which ``F.<op>`` calls real Gluon model code makes, and which of them our ``F`` (``ast_hybrid.nd``) lacks.

    python bench/op_coverage.py                       # MXNet 1.9.1's own gluon (nn, rnn, loss, model_zoo/vision)
    python bench/op_coverage.py PATH [PATH ...]       # any trees or files, e.g. gluoncv/model_zoo gluonnlp/model

Sites are found statically (``ast``; nothing is imported): attribute chains on the name ``F`` and
``getattr(F, 'name')`` (plus the op names a file spells as ``op_name=``).  Chains through ``F.np``/``F.npx``
belong to MXNet 2's numpy mode (``is_np_array()`` branches) and are counted apart.  Prints the distinct ops
and sites, the share we cover, and the missing ops by number of sites.
"""

from __future__ import annotations

import argparse
import ast
import collections
from pathlib import Path

NUMPY_BRANCH = ("np", "npx")
GLUON_SCOPE = ("nn", "rnn", "model_zoo/vision", "loss.py")


def _chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "F":
        return list(reversed(parts))
    return None


def _op_names(tree):
    """String op names a file passes around as ``op_name`` (what ``getattr(F, self._op_name)`` reads)."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg == "op_name" and isinstance(n.value, ast.Constant):
            names.add(n.value.value)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop" \
                and len(n.args) == 2 and isinstance(n.args[0], ast.Constant) and n.args[0].value == "op_name" \
                and isinstance(n.args[1], ast.Constant):
            names.add(n.args[1].value)
    return names


def collect(files, root):
    """``(sites, numpy_sites)``: {op: ["file:line", ...]} for the legacy ops and for the numpy-mode ones."""
    sites, numpy_sites = collections.defaultdict(list), collections.defaultdict(list)
    for path in files:
        try:
            tree = ast.parse(Path(path).read_text())
        except SyntaxError:
            continue
        where = Path(path).relative_to(root).as_posix()
        inner = {id(c) for n in ast.walk(tree) if isinstance(n, ast.Attribute) for c in [n.value]}
        op_names = _op_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                chain = _chain(node)
                if chain:
                    target = numpy_sites if chain[0] in NUMPY_BRANCH else sites
                    target[".".join(chain)].append(f"{where}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "F":
                names = [node.args[1].value] if isinstance(node.args[1], ast.Constant) else sorted(op_names)
                for name in names:    # lower-case conv names are the npx spellings (numpy mode)
                    target = numpy_sites if name in ("convolution", "deconvolution") else sites
                    target[name].append(f"{where}:{node.lineno}")
    return sites, numpy_sites


def gluon_files(gluon_tree):
    root = Path(gluon_tree)
    return [p for sub in GLUON_SCOPE
            for p in ([root / sub] if sub.endswith(".py") else sorted((root / sub).rglob("*.py")))]


def resolve(name):
    """Our op for a dotted name (``contrib.box_nms``), or None."""
    from ast_hybrid import nd

    obj = nd
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def report(sites, numpy_sites, title):
    n_sites = sum(len(v) for v in sites.values())
    missing = sorted((op for op in sites if resolve(op) is None), key=lambda op: -len(sites[op]))
    covered_sites = n_sites - sum(len(sites[op]) for op in missing)
    print(f"{title}: {len(sites)} distinct F ops at {n_sites} sites; covered {len(sites) - len(missing)} ops "
          f"({covered_sites} sites, {100 * covered_sites / max(n_sites, 1):.1f}%); numpy-mode (np/npx) "
          f"{len(numpy_sites)} ops at {sum(len(v) for v in numpy_sites.values())} sites, not counted")
    for op in missing:
        print(f"  missing {op:40s} {len(sites[op]):4d} sites, e.g. {sites[op][0]}")
    return missing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", help="directories of Gluon code (default: MXNet's own gluon)")
    args = ap.parse_args(argv)
    if not args.trees:
        from ast_hybrid.corpus import gluon_tree

        root = gluon_tree()
        report(*collect(gluon_files(root), root), "mxnet/gluon (nn, rnn, loss, model_zoo/vision)")
        return
    total, total_np = collections.defaultdict(list), collections.defaultdict(list)
    for tree in args.trees:
        root = Path(tree)
        files = [root] if root.is_file() else sorted(root.rglob("*.py"))
        sites, numpy_sites = collect(files, root.parent if root.is_file() else root)
        report(sites, numpy_sites, str(root))
        for src, dst in ((sites, total), (numpy_sites, total_np)):
            for op, where in src.items():
                dst[op].extend(f"{root.name}/{w}" for w in where)
    if len(args.trees) > 1:
        report(total, total_np, "all of them")


if __name__ == "__main__":
    main()
