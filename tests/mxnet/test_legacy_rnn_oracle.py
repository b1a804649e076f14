"""MXNet's legacy symbolic RNN cells (``mx.rnn``) against MXNet 1.9.1: the graphs they build (names, inferred
shapes), their values and gradients under a Module with the same weights, the fused weight vector unpacked per
gate and packed back, the modifier and convolutional cells, RNN checkpoints and the bucketing iterator."""

import numpy as np

RNG = np.random.default_rng(0)
T, N, I, H = 3, 2, 4, 5
X = RNG.uniform(-1, 1, (N, T, I)).astype("float32")
DY = RNG.uniform(-1, 1, (N, T, 2 * H)).astype("float32")
# a fused vector long enough for every mode below (each takes its first values)
P = RNG.uniform(-0.5, 0.5, 2000).astype("float32")
# meta crosses from MXNet's process as JSON: tuples become lists on both sides
AS_JSON = """
import json
for _k in list(meta):
    meta[_k] = json.loads(json.dumps(meta[_k]))
"""

FUSED = """
import warnings
warnings.simplefilter('ignore')
T, N, I, H = 3, 2, 4, 5

def run(cell, name, grad_req='write'):
    data = mx.sym.Variable('data')
    y, states = cell.unroll(T, data, layout='NTC', merge_outputs=True)
    mod = mx.mod.Module(y, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[('data', (N, T, I))], inputs_need_grad=True, grad_req=grad_req)
    return mod, y

def check(mode, bidirectional):
    tag = mode + ('_bi' if bidirectional else '')
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode=mode, bidirectional=bidirectional, get_next_state=True,
                                prefix='')
    mod, y = run(fused, tag)
    mod.init_params()
    size = mod.get_params()[0]['parameters'].shape[0]
    args = {'parameters': nd.array(inp['p'][:size])}
    mod.set_params(args, {})
    unpacked = fused.unpack_weights(args)
    meta[tag + '_unpacked'] = sorted((k, v.shape) for k, v in unpacked.items())
    for k in ('l0_i2h%s_weight', 'l1_h2h%s_bias'):
        name = k % fused._gate_names[-1]
        out[tag + '/' + name] = unpacked[name]
    out[tag + '_repacked'] = fused.pack_weights(unpacked)['parameters']
    stack = fused.unfuse()
    smod, sy = run(stack, tag + '_stack')
    smod.init_params()
    smod.set_params(stack.pack_weights(unpacked), {}, allow_missing=False)
    meta[tag + '_stack_args'] = sorted(sy.list_arguments())
    x = nd.array(inp['x'])
    batch = mx.io.DataBatch(data=[x])
    for m, side in ((mod, 'fused'), (smod, 'stack')):
        m.forward(batch, is_train=False)
        out[tag + '_infer_' + side] = m.get_outputs()[0]
        m.forward(batch, is_train=True)
        dy = nd.array(inp['dy'][:, :, :m.get_outputs()[0].shape[2]])
        m.backward(out_grads=[dy])
        out[tag + '_dx_' + side] = m.get_input_grads()[0]
    out[tag + '_dparams'] = mod._exec_group.grad_arrays[0][0] if hasattr(mod, '_exec_group') else \\
        mod._block.collect_params()['parameters'].grad()
    meta[tag + '_shapes'] = y.infer_shape(data=(N, T, I))

for mode in ('lstm', 'gru', 'rnn_tanh', 'rnn_relu'):
    check(mode, False)
check('lstm', True)
check('gru', True)
"""


def test_fused_and_unfused_cells_match_mxnet(both):
    """FusedRNNCell and its unfused stack under mx.mod.Module: outputs, input and weight gradients, the
    per-gate weights and their names, the graph's arguments and shapes, as MXNet 1.9.1 gives them."""
    both(FUSED + AS_JSON, rtol=1e-5, atol=1e-6, x=X, dy=DY, p=P)


CELLS = """
import warnings
warnings.simplefilter('ignore')
T, N, I, H = 3, 2, 4, 5
data = mx.sym.Variable('data')
x = nd.array(inp['x'])

def evaluate(y, tag, train=False, **known):
    shapes = dict(zip(y.list_arguments(), y.infer_shape(data=(N, T, I), **known)[0]))
    meta[tag + '_args'] = sorted(shapes.items())
    meta[tag + '_outputs'] = y.list_outputs()
    args = {}
    for k, (name, shape) in enumerate(sorted(shapes.items())):
        n = int(np.prod(shape))
        args[name] = x if name == 'data' else nd.array(np.sin(np.arange(n) * 0.37 + k).reshape(shape) * 0.5)
    exe = y.bind(mx.cpu(), args)
    return exe.forward(is_train=train)

# step by step with the unfused cells, outputs as a list, states returned
stack = mx.rnn.SequentialRNNCell()
stack.add(mx.rnn.LSTMCell(H, prefix='a_'))
stack.add(mx.rnn.ResidualCell(mx.rnn.GRUCell(H, prefix='b_')))
stack.add(mx.rnn.DropoutCell(0.5))
stack.add(mx.rnn.RNNCell(H, activation='relu', prefix='c_'))
outputs, states = stack.unroll(T, data, layout='NTC', merge_outputs=False)
meta['stack_states'] = [s.name for s in states]
for i, o in enumerate(evaluate(mx.sym.Group(outputs + states), 'stack')):
    out['stack%d' % i] = o

# time-major input, merged outputs; begin_state given as variables
cell = mx.rnn.GRUCell(H, prefix='g_')
begin = cell.begin_state(func=mx.sym.Variable)
meta['begin'] = [b.name for b in begin]
tnc = mx.sym.swapaxes(data, dim1=0, dim2=1)
y, _ = cell.unroll(T, tnc, begin_state=begin, layout='TNC', merge_outputs=True)
for i, o in enumerate(evaluate(y, 'tnc', g_begin_state_0=(N, H))):
    out['tnc%d' % i] = o

# a bidirectional cell of two LSTMs, outputs unmerged
bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(H, prefix='l_'), mx.rnn.LSTMCell(H, prefix='r_'),
                              output_prefix='bi_')
outputs, states = bi.unroll(T, data, merge_outputs=False)
meta['bi_names'] = [o.name for o in outputs]
for i, o in enumerate(evaluate(mx.sym.Group(outputs), 'bi')):
    out['bi%d' % i] = o

# zoneout: in inference the base cell's values
zone = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(H, prefix='z_'), zoneout_outputs=0.3, zoneout_states=0.3)
y, _ = zone.unroll(T, data, merge_outputs=True)
out['zoneout'] = evaluate(y, 'zoneout')[0]
plain, _ = mx.rnn.RNNCell(H, prefix='z_').unroll(T, data, merge_outputs=True)
out['zoneout_plain'] = evaluate(plain, 'plain')[0]

# convolutional cells on (N, C, H, W) steps
conv_in = mx.sym.Variable('data')
for klass, tag in ((mx.rnn.ConvRNNCell, 'convrnn'), (mx.rnn.ConvLSTMCell, 'convlstm'),
                   (mx.rnn.ConvGRUCell, 'convgru')):
    c = klass(input_shape=(N, 2, 4, 4), num_hidden=3, prefix=tag + '_')
    meta[tag + '_state'] = c.state_shape
    y, _ = c.unroll(2, conv_in, layout='NTC', merge_outputs=True)
    shapes = dict(zip(y.list_arguments(), y.infer_shape(data=(N, 2, 2, 4, 4))[0]))
    meta[tag + '_args'] = sorted(shapes.items())
    args = {k: nd.array(np.cos(np.arange(int(np.prod(s))) * 0.11).reshape(s) * 0.3) for k, s in shapes.items()}
    out[tag] = y.bind(mx.cpu(), args).forward()[0]

# the unpacked names of unfused cells, and a pack/unpack round trip
lstm = mx.rnn.LSTMCell(H, prefix='u_')
packed = {'u_i2h_weight': nd.arange(4 * H * I).reshape((4 * H, I)), 'u_i2h_bias': nd.arange(4 * H),
          'u_h2h_weight': nd.arange(4 * H * H).reshape((4 * H, H)), 'u_h2h_bias': nd.arange(4 * H) + 100}
unpacked = lstm.unpack_weights(packed)
meta['unpacked'] = sorted(unpacked)
out['unpacked_f'] = unpacked['u_i2h_f_weight']
out['repacked'] = lstm.pack_weights(unpacked)['u_h2h_bias']
"""


def test_cells_graphs_and_values_match_mxnet(both):
    """Stacks with residual/dropout cells, begin states as variables, a time-major unroll, bidirectional and
    zoneout cells, the convolutional cells, unfused weights unpacked: names, shapes and values."""
    both(CELLS + AS_JSON, rtol=1e-5, atol=1e-6, x=X)


FILES = """
import os, tempfile, warnings
warnings.simplefilter('ignore')
# a fused cell's weights stored per gate and packed again when loaded
cell = mx.rnn.FusedRNNCell(3, num_layers=1, mode='gru', prefix='f_')
y, _ = cell.unroll(2, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
size = 3 * (4 + 3 + 2) * 3
args = {'f_parameters': nd.array(inp['p'][:size])}
folder = tempfile.mkdtemp()
prefix = os.path.join(folder, 'm')
mx.rnn.save_rnn_checkpoint(cell, prefix, 3, y, args, {})
meta['stored'] = sorted(nd.load(prefix + '-0003.params'))
sym, arg, aux = mx.rnn.load_rnn_checkpoint(cell, prefix, 3)
out['loaded'] = arg['f_parameters']
meta['sym_args'] = sym.list_arguments()
callback = mx.rnn.do_rnn_checkpoint([cell], prefix, period=2)
callback(0, y, args, {})
callback(1, y, args, {})
meta['files'] = sorted(f for f in os.listdir(folder) if f.endswith('.params'))

sentences = [['a', 'b', 'c'], ['b', 'c'], ['c', 'a', 'd', 'e'], ['a'], ['e', 'e', 'b', 'a', 'c']] * 3
coded, vocab = mx.rnn.encode_sentences(sentences, invalid_label=0, start_label=1)
meta['coded'] = coded
meta['vocab'] = sorted(vocab.items())
it = mx.rnn.BucketSentenceIter(coded, 2, buckets=[2, 4, 6], invalid_label=0)
meta['buckets'] = [it.buckets, it.default_bucket_key, [(d.name, d.shape) for d in it.provide_data]]
seen = []
for batch in it:
    data, label = batch.data[0].asnumpy(), batch.label[0].asnumpy()
    seen.append((batch.bucket_key, data.shape, bool((label[:, :-1] == data[:, 1:]).all()), float(label[0, -1])))
meta['batches'] = sorted(seen)
tn = mx.rnn.BucketSentenceIter(coded, 3, invalid_label=0, layout='TN')
meta['tn'] = [tn.buckets, [(d.name, d.shape) for d in tn.provide_label],
              sorted(b.data[0].shape for b in tn)]
"""


def test_rnn_checkpoints_and_bucketing_iterator_match_mxnet(both):
    """save/load/do_rnn_checkpoint (weights stored per gate), encode_sentences and BucketSentenceIter."""
    both(FILES + AS_JSON, rtol=0, atol=0, p=P)


INIT = """
import warnings
warnings.simplefilter('ignore')
# the fused vector's initializer: weights by the global initializer, biases 0, an LSTM's forget gate 1
for mode in ('lstm', 'gru'):
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode=mode, bidirectional=True, forget_bias=2.0, prefix='')
    y, _ = cell.unroll(3, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
    mod = mx.mod.Module(y, label_names=None)
    mod.bind(data_shapes=[('data', (3, 2, 5))])
    mod.init_params(mx.init.Uniform(0.1))
    pieces = cell.unpack_weights(mod.get_params()[0])
    meta[mode] = sorted((k, v.shape, float(np.abs(v.asnumpy()).max() <= 0.1),
                         sorted(set(np.round(v.asnumpy().ravel(), 6).tolist())) if k.endswith('bias') else 0)
                        for k, v in pieces.items())
meta['json'] = mx.init.FusedRNN(mx.init.Xavier(), 4, 1, 'gru').dumps()
"""


def test_fused_rnn_initializer_matches_mxnet(both):
    both(INIT + AS_JSON)


BUCKETING = """
import random
import warnings
warnings.simplefilter('ignore')
random.seed(0)
np.random.seed(0)
V, E, H = 12, 6, 8
rs = np.random.RandomState(1)
sentences = [[int(t) for t in rs.randint(1, V, size=rs.choice([3, 4, 5, 6, 7, 8]))] for _ in range(40)]
it = mx.rnn.BucketSentenceIter(sentences, 4, buckets=[4, 6, 8], invalid_label=0)
stack = mx.rnn.SequentialRNNCell()
stack.add(mx.rnn.LSTMCell(num_hidden=H, prefix='lstm_l0_'))

def sym_gen(seq_len):
    data, label = mx.sym.Variable('data'), mx.sym.Variable('softmax_label')
    embed = mx.sym.Embedding(data=data, input_dim=V, output_dim=E, name='embed')
    stack.reset()
    outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(data=mx.sym.Reshape(outputs, shape=(-1, H)), num_hidden=V, name='pred')
    pred = mx.sym.SoftmaxOutput(data=pred, label=mx.sym.Reshape(label, shape=(-1,)), name='softmax')
    return pred, ('data',), ('softmax_label',)

mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=it.default_bucket_key, context=mx.cpu())
mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
mod.init_params(initializer=mx.init.Xavier())
args, auxs = mod.get_params()
args = {k: nd.array(np.sin(np.arange(v.size) * 0.37 + i).reshape(v.shape) * 0.3)
        for i, (k, v) in enumerate(sorted(args.items()))}
mod.set_params(args, auxs)
meta['arguments'] = sorted(args)
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
metric = mx.metric.Perplexity(ignore_label=0)
for epoch in range(2):
    it.reset()
    metric.reset()
    for batch in it:
        mod.forward(batch, is_train=True)
        mod.update_metric(metric, batch.label)
        mod.backward()
        mod.update()
    out['perplexity%d' % epoch] = np.array([metric.get()[1]])
for k, v in mod.get_params()[0].items():
    out['w/' + k] = v
meta['buckets'] = sorted(int(k) for k in mod._buckets)
meta['output_names'] = mod.output_names
"""


def test_bucketing_language_model_trains_as_mxnet(both):
    """MXNet's language-model recipe: ``BucketSentenceIter`` batches of three lengths, an LSTM cell unrolled per
    bucket by ``sym_gen``, a ``BucketingModule`` sharing the parameters and the optimizer across buckets, two
    epochs of SGD with momentum: the perplexities and trained weights are MXNet's."""
    both(BUCKETING + AS_JSON, rtol=1e-4, atol=1e-5)
