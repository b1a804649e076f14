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
