"""One list of NDArray's methods that give tensors, :mod:`ast_hybrid.common.fluent`, and who reads it.

The front installs exactly its ``FLUENT_OPS`` on ``NDArray``, each calling the op of its name; the linter's
table of tensor methods is the same list; and the list is MXNet 1.9.1's (the oracle).
"""

from __future__ import annotations

import pytest

from ast_hybrid.common import fluent

#: MXNet 1.9.1's fluent methods that its ``NDArray`` writes out with a body of their own (``inplace=``...)
#: instead of "Convenience fluent method for ..."
OWN_BODY = {"flatten", "expand_dims", "squeeze", "broadcast_to", "broadcast_like"}


def test_the_lists_hold_each_name_once():
    assert len(set(fluent.FLUENT_OPS)) == len(fluent.FLUENT_OPS)
    assert not set(fluent.FLUENT_OPS) & set(fluent.ARRAY_METHODS)
    assert fluent.TENSOR_METHODS == set(fluent.FLUENT_OPS) | set(fluent.ARRAY_METHODS)


def test_front_installs_exactly_the_fluent_ops():
    from ast_hybrid import ops
    from ast_hybrid.ops import array_methods

    class Bare:
        pass

    array_methods.install(Bare)
    methods = {name for name in vars(array_methods._Methods) if not name.startswith("__")}
    installed = {name for name in vars(Bare) if not name.startswith("__")}
    # the fluent ops, and the array's own methods (three of which are fluent ops taking MXNet's inplace=)
    assert installed - methods == set(fluent.FLUENT_OPS) - methods
    assert methods & set(fluent.FLUENT_OPS) == {"flatten", "expand_dims", "squeeze"}
    assert [name for name in fluent.FLUENT_OPS if not hasattr(ops, name)] == []


def test_front_fluent_method_is_the_op():
    from ast_hybrid import nd, ops
    from ast_hybrid.core.ndarray import NDArray

    x = nd.array([[1.0, -2.0], [3.0, 4.0]])
    for name in fluent.FLUENT_OPS:
        assert getattr(NDArray, name).__name__ == name
    assert (x.abs() == ops.abs(x)).asnumpy().all()
    assert x.sum(axis=1).asnumpy().tolist() == ops.sum(x, axis=1).asnumpy().tolist()
    # the array's own methods are there too (as_np_ndarray included: to mx.np)
    assert [name for name in fluent.ARRAY_METHODS if not hasattr(NDArray, name)] == []


def test_linter_reads_the_same_list():
    from ast_hybrid.linter.tags import TENSOR_METHODS

    # all of it, less what a Python list has too: on a value that may be a list, they say nothing
    assert fluent.TENSOR_METHODS - TENSOR_METHODS == {"sort", "copy"}
    assert TENSOR_METHODS <= fluent.TENSOR_METHODS


@pytest.mark.oracle
def test_the_list_is_mxnets(oracle):
    names = sorted(fluent.TENSOR_METHODS)
    meta = oracle.run(f"""
N = mx.nd.NDArray
meta['convenience'] = sorted(n for n, f in vars(N).items()
                             if 'Convenience fluent method' in (getattr(f, '__doc__', None) or ''))
meta['methods'] = sorted(n for n in {names!r} if callable(getattr(N, n, None)))
meta['ops'] = sorted(n for n in {names!r} if callable(getattr(mx.nd, n, None)))
""")["meta"]
    assert set(fluent.MXNET_FLUENT) == set(meta["convenience"]) | OWN_BODY
    assert set(meta["methods"]) == set(fluent.MXNET_FLUENT) | set(fluent.ARRAY_METHODS)   # BEYOND_MXNET not
    assert set(fluent.MXNET_FLUENT) <= set(meta["ops"])
