"""take/pick/gather_nd/scatter_nd/one_hot/Sequence*/diag/where against MXNet 1.9.1 (modes, float indices,
out-of-range indices, axis and keepdims)."""

import numpy as np
import pytest
from ops_harness import check, inputs, mx_results

pytestmark = pytest.mark.oracle

ARR = inputs(5, x=((4, 5), "float32"), t=((2, 3, 4), "float32"), i=((4, 5), "int32"), h=((4, 5), "float16"),
             seq=((5, 3, 2), "float32"), seqb=((3, 5, 2), "float32"))
ARR.update(
    idx=np.array([0, 3, 1, 3], "float32"), idx_out=np.array([-6, -1, 4, 9, 2.7], "float32"),
    idx2=np.array([[0, 2], [1, 1]], "int32"), pidx=np.array([1, 4, 0, 2], "float32"),
    pidx_out=np.array([-1, 7, 2, 5], "float32"), pidx3=np.array([[0, 3, 1, 2], [2, 2, 0, 1]], "float32"),
    gidx=np.array([[0, 1, 3], [4, 0, 2]], "int32"), gidx1=np.array([[1, 0]], "float32"),
    lens=np.array([2, 5, 0], "float32"), lens1=np.array([1, 3, 4], "int32"), oh=np.array([[0, 2], [5, -1]], "int32"),
    sval=np.array([1.0, 2.0, 3.0], "float32"), vec=np.array([1.0, -2.0, 3.0], "float32"),
    rows=np.array([1, 0, 1], "int32"), cond=np.array([[1, 0, 1, 0, 2]] * 4, "float32"),
)

CASES = [
    "nd.take(x, idx)", "nd.take(x, idx, axis=1)", "nd.take(x, idx_out)", "nd.take(x, idx_out, mode='wrap')",
    "nd.take(x, idx_out, axis=1, mode='clip')", "nd.take(x, idx2)", "nd.take(t, idx2, axis=2)",
    "nd.take(t, idx, axis=-1)", "nd.take(i, idx)", "nd.take(h, idx2, axis=1)", "nd.take(x, idx, mode='raise')",
    "nd.take(x, idx, mode='bogus')", "nd.take(x, idx, axis=2)",
    "nd.pick(x, pidx)", "nd.pick(x, pidx, keepdims=True)", "nd.pick(x, pidx_out)",
    "nd.pick(x, pidx_out, mode='wrap')",
    "nd.pick(x, nd.array([1, 0, 2, 3, 1]), axis=0)", "nd.pick(t, pidx3, axis=1)", "nd.pick(t, pidx3.T, axis=2)",
    "nd.pick(t, pidx3, axis=-2, keepdims=True)", "nd.pick(i, pidx)", "nd.pick(x, pidx[:3])",
    "nd.choose_element_0index(x, pidx)", "nd.batch_take(x, nd.array([1, 4, 0, 2], dtype='int32'))",
    "nd.gather_nd(x, gidx)", "nd.gather_nd(x, gidx1)", "nd.gather_nd(t, nd.array([[1, 0], [2, 1]]))",
    "nd.gather_nd(i, gidx)", "nd.gather_nd(x, nd.array([[-1, 0], [0, -2]], dtype='int32'))",
    "nd.gather_nd(x, nd.array([[0, 9], [0, 1]]))", "nd.gather_nd(x, nd.array([[0, 1], [-9, 1]]))",
    "nd.scatter_nd(sval, nd.array([[0, 1, 3], [4, 0, 2]], dtype='int32'), shape=(4, 5))",
    "nd.scatter_nd(nd.ones((2, 5)), nd.array([[3, 1]], dtype='int32'), shape=(4, 5))",
    "nd.one_hot(oh, 4)", "nd.one_hot(idx, 5, on_value=3, off_value=-1)", "nd.one_hot(oh, 3, dtype='int32')",
    "nd.one_hot(nd.array([1.7, 0.2]), 3)",
    "nd.SequenceMask(seq)", "nd.SequenceMask(seq, sequence_length=lens, use_sequence_length=True)",
    "nd.SequenceMask(seq, sequence_length=lens, use_sequence_length=True, value=-7)",
    "nd.SequenceMask(seqb, sequence_length=lens, use_sequence_length=True, axis=1)",
    "nd.SequenceMask(seq, sequence_length=lens1, use_sequence_length=True)",
    "nd.SequenceLast(seq)", "nd.SequenceLast(seq, sequence_length=lens1, use_sequence_length=True)",
    "nd.SequenceLast(seqb, sequence_length=lens1, use_sequence_length=True, axis=1)",
    "nd.SequenceLast(seqb, axis=1)",
    "nd.SequenceReverse(seq)", "nd.SequenceReverse(seq, sequence_length=lens1, use_sequence_length=True)",
    "nd.SequenceReverse(seq, sequence_length=nd.array([5, 1, 3]), use_sequence_length=True)",
    "nd.diag(vec)", "nd.diag(vec, k=1)", "nd.diag(vec, k=-2)", "nd.diag(x)", "nd.diag(x, k=2)", "nd.diag(x, k=-1)",
    "nd.diag(t, axis1=1, axis2=2)", "nd.diag(t, k=1, axis1=0, axis2=2)",
    "nd.where(cond, x, x * 0)", "nd.where(rows, t[0], t[1])", "nd.where(cond, x, i)",
    "nd.ravel_multi_index(nd.array([[1, 2], [0, 3]]), shape=(3, 4))",
    "nd.unravel_index(nd.array([5, 11]), shape=(3, 4))",
    "nd.unravel_index(nd.array([5, 11, 48]), shape=(-1, 4))",
    "nd.diag(nd.ones((3, 4)), k=4)", "nd.diag(nd.ones((3, 4)), k=5)", "nd.diag(nd.ones((3, 4)), k=-4)", "nd.unravel_index(nd.array([5, 11]), shape=(-1,))",
    "nd.ravel_multi_index(nd.array([[1, 2], [3, 0]]), shape=(-1, 4))",
    "nd.fill_element_0index(x, nd.array([9, 8, 7, 6]), nd.array([0, 4, 2, 1]))",
    "nd.contrib.boolean_mask(x, nd.array([1, 0, 1, 1]))",
    "nd.contrib.index_copy(x, nd.array([2, 0]), nd.ones((2, 5)))",
]
CASES = list(dict.fromkeys(CASES))


@pytest.fixture(scope="module")
def ref(oracle):
    return mx_results(oracle, [(c, c) for c in CASES], ARR)


@pytest.mark.parametrize("code", CASES)
def test_matches_mxnet(ref, code):
    check(ref[code], code, ARR)
