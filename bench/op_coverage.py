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
import collections
from pathlib import Path

from ast_hybrid.testing.corpus import f_op_sites as collect, gluon_files, resolve_op as resolve


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
        from ast_hybrid.testing.corpus import gluon_tree

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
