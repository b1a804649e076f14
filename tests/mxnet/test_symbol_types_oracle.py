"""``Symbol.infer_type`` against MXNet 1.9.1: types from types alone (no shapes given, as MXNet's type inference
needs none), and the placeholders MXNet types from the operator reading them (a layer's weights take its
data's type; an Embedding's weight stays float32 beside int32 indices; a Cast stops the data's type); and
shapes inferred whatever the placeholders' types."""

SCRIPT = """
import numpy as np

def types(s, **given):
    arg, out, aux = s.infer_type(**given)
    return [[np.dtype(t).name for t in ts] for ts in (arg, out, aux)]

a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
corr = mx.sym.Correlation(data1=a, data2=b)
for dtype in ('float16', 'float32'):
    meta['corr_a_' + dtype] = types(corr, a=dtype)
    meta['corr_b_' + dtype] = types(corr, b=dtype)
data = mx.sym.Variable('data')
fc = mx.sym.FullyConnected(data=mx.sym.Cast(data=data, dtype='float32'), name='fc1', num_hidden=8)
meta['cast_fc'] = types(mx.sym.SoftmaxOutput(data=fc, name='softmax'), data=np.float16)
meta['fc16'] = types(mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3), x='float16')
meta['conv16'] = types(mx.sym.Convolution(mx.sym.var('x'), kernel=(3, 3), num_filter=2), x='float16')
meta['bn16'] = types(mx.sym.BatchNorm(mx.sym.var('x')), x='float16')
meta['embedding'] = types(mx.sym.Embedding(mx.sym.var('idx'), input_dim=5, output_dim=3), idx='int32')
meta['add'] = types(mx.sym.var('p') + mx.sym.var('q') * 2, q='float16')
meta['bn_sync'] = types(mx.sym.contrib.SyncBatchNorm(mx.sym.var('x'), key='bn'), x='float16')
# shapes need no types: a placeholder meeting a float16 constant (MXNet types it float16)
mixed = mx.sym.broadcast_mul(mx.sym.var('m'), mx.sym.ones((1, 3), dtype='float16'))
meta['mixed_shapes'] = [list(map(list, ts)) for ts in mixed.infer_shape(m=(2, 3))]
# with shapes known first
x = mx.sym.var('x')
y = mx.sym.FullyConnected(mx.sym.relu(x), num_hidden=4)
y.infer_shape(x=(2, 5))
meta['after_shapes'] = types(y, x='float16')
"""


def test_infer_type_without_shapes_matches_mxnet(both):
    both(SCRIPT)


PARTIAL = """
import json
x = mx.sym.var('data', shape=(0, 20))
cases = {
    'slice': mx.sym.slice(x, begin=(None, 3), end=(None, 10)),
    'slice_step': mx.sym.slice(x, begin=(None, None), end=(None, 10), step=(None, 2)),
    'fc': mx.sym.FullyConnected(x, num_hidden=5, name='fc'),
    'relu_sum': mx.sym.sum(mx.sym.relu(x) * 2, axis=1),
    'transpose': mx.sym.transpose(mx.sym.expand_dims(x, axis=1)),
    'axis0': mx.sym.slice_axis(mx.sym.var('d', shape=(10, 0)), axis=0, begin=0, end=5),
}
for k, s in cases.items():
    meta[k] = json.loads(json.dumps(s.infer_shape_partial()))
"""


def test_infer_shape_partial_keeps_unknown_dimensions_as_mxnet(both):
    """``infer_shape_partial``: a dimension that depends on an unknown one (0) stays 0, the others are known
    (weights included)."""
    both(PARTIAL)


NAMES = """
x = mx.sym.var('x')
made = [mx.sym.BatchNorm(x, output_mean_var=True, name='bn'), mx.sym.LayerNorm(x, output_mean_var=True, name='ln'),
        mx.sym.GroupNorm(x, output_mean_var=True, name='gn'), mx.sym.SliceChannel(x, num_outputs=2, name='sl'),
        mx.sym.RNN(x, mx.sym.var('p'), mx.sym.var('s'), mx.sym.var('c'), mode='lstm', state_size=3, num_layers=1,
                   state_outputs=True, name='lstm'),
        mx.sym.RNN(x, mx.sym.var('p'), mx.sym.var('s'), mode='gru', state_size=3, num_layers=1,
                   state_outputs=True, name='gru'), mx.sym.moments(x, axes=(0,), name='mo')]
made += [mx.sym.CTCLoss(x, mx.sym.var('l'), name='ctc'), mx.sym.sort(x, name='so'),
         mx.sym.contrib.box_nms(x, name='nms'), mx.sym.linalg.det(x, name='det'), mx.sym.relu(x, name='re')]
meta['outputs'] = [s.list_outputs() for s in made]
group = mx.sym.Group(made)
meta['internal'] = group.get_internals()['bn_mean'].list_outputs()
"""


def test_multi_output_names_are_mxnets(both):
    """The outputs of ops that name theirs (BatchNorm's ``mean``/``var``, LayerNorm's ``std``, RNN's
    ``state_output``...) are named as MXNet names them, and found so among a graph's internals; an op with
    hidden outputs (CTCLoss, sort, box_nms, det) names its one visible output ``output0``, as MXNet."""
    both(NAMES)
