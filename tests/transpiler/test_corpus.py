"""The transpiler on real code nobody here wrote: every function of MXNet 1.9.1's ``mxnet/gluon`` tree.

Conversion is a function of the source, so each function is converted
statically (as ``ast-hybrid convert`` does, nothing imported) and compiled:
no internal error, and code that Python accepts.  MXNet's hybrid_forwards
test no tensor value; their Python ``if``s must stay Python ``if``s at run
time, which the runtime decides; here we check that conversion handles every
construct they use.
"""

from __future__ import annotations

import pytest

from ast_hybrid.cli.convert import functions
from ast_hybrid.transpiler.converter import compile_tree, transform_function
from ast_hybrid.common.source import read_file

pytestmark = pytest.mark.corpus


def test_every_function_of_the_gluon_tree_converts_and_compiles(gluon_tree):
    converted, entries = 0, 0
    for path in sorted(gluon_tree.rglob("*.py")):
        source = read_file(path)
        for qualname, fn, cls in list(functions(source.parse())):
            fn.decorator_list = []
            tree, _ = transform_function(fn, source, cls)
            compile_tree(tree, source)
            converted += 1
            entries += fn.name == "hybrid_forward"
    assert (converted, entries) == (768, 90)     # every function of the tree, none skipped
