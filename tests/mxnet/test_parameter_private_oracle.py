"""MXNet's private ``Parameter._data`` (a list of NDArrays, one per context), as MXNet 1.9.1's own unit test
(test_gluon::test_parameter_row_sparse_data: ``x._data[0].copy()``) and subclasses copying it (GluonNLP's
WeightDropParameter: ``self._data = p._data``, then ``self._check_and_get(self._data, ctx)``) read it."""

CODE = """
p = gluon.Parameter('w', shape=(4, 2))
meta['before'] = p._data is None
p.initialize(init=mx.init.Constant(0.5), ctx=[mx.cpu(0), mx.cpu(1)])
meta['n'] = len(p._data)
meta['types'] = sorted({type(a).__name__ for a in p._data})
out['first'] = p._data[0]
s = gluon.Parameter('s', shape=(4, 2), stype='row_sparse')
s.initialize(init=mx.init.Constant(2.0))
meta['stype'] = s._data[0].copy().stype
out['sparse'] = s._data[0].copy().tostype('default')


class Copy(gluon.Parameter):
    # GluonNLP's WeightDropParameter builds itself from another parameter's private fields
    def __init__(self, other):
        super().__init__(other.name, shape=other.shape, dtype=other.dtype)
        self._data, self._grad, self._ctx_list = other._data, other._grad, other._ctx_list
        self._deferred_init = other._deferred_init

    def data(self, ctx=None):
        return self._check_and_get(self._data, ctx) * 3


q = gluon.Parameter('q', shape=(3,))
q.initialize(init=mx.init.Constant(1.5))
c = Copy(q)
with mx.autograd.record():
    y = (c.data() * c.data()).sum()
y.backward()
out['copy'] = c.data()
out['grad'] = q.grad()
"""


def test_private_data_is_a_list_per_context(both):
    ours, _ = both(CODE)
    assert ours["meta"] == {"before": True, "n": 2, "types": ["NDArray"], "stype": "row_sparse"}
