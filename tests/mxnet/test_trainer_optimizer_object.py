"""``Trainer.optimizer`` (MXNet's ``mx.optimizer`` object behind a trainer made by name) and the trainer's
kvstore checks, against MXNet 1.9.1: the same script on both sides, what it reads and the weights compared."""

import numpy as np

X = np.random.default_rng(0).standard_normal((6, 4)).astype("float32")

SCRIPT = """
from mxnet import autograd

def make(prefix):
    net = gluon.nn.Dense(3, in_units=4, prefix=prefix)
    net.initialize()
    for p in net.collect_params().values():
        p.set_data(nd.array(np.linspace(-0.5, 0.5, int(np.prod(p.shape))).reshape(p.shape)))
    return net

def step(net, trainer, batch=6):
    with autograd.record():
        l = (net(nd.array(inp['x'])) ** 2).sum()
    l.backward()
    trainer.step(batch)

net = make('a_')
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01})
opt = trainer.optimizer
out['type'] = np.array([{'SGD': 1, 'Adam': 2}.get(type(opt).__name__, 0)])
out['before'] = np.array([opt.learning_rate, opt.lr, opt.wd, opt.momentum, opt.rescale_grad, opt.num_update])
out['param_dict'] = np.array(sorted(opt.param_dict))
step(net, trainer)
step(net, trainer, 3)
out['after'] = np.array([opt.num_update, opt.rescale_grad, opt._get_lr(0), opt._get_wd(1)])
net.collect_params()['a_weight'].lr_mult = 0.5
out['lr_mult'] = np.array([opt._get_lr(0), opt._get_lr(1)])
opt.wd = 0.5                        # seen by the next step, as MXNet's trainer reads its optimizer
opt.set_learning_rate(0.2)
out['lr_set'] = np.array([trainer.learning_rate])
step(net, trainer)
for k, p in net.collect_params().items():
    out['w/' + k] = p.data().asnumpy()
out['same'] = np.array([trainer.optimizer is opt])

# Adam given a schedule and no learning_rate: its default 0.001 becomes the schedule's base_lr
sched = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=0.05)
adam = gluon.Trainer(make('b_').collect_params(), 'adam', {'lr_scheduler': sched})
out['adam'] = np.array([sched.base_lr, adam.learning_rate, adam.optimizer.learning_rate])

# an object given: the trainer's optimizer is that object
sgd = mx.optimizer.SGD(learning_rate=0.3)
out['given'] = np.array([gluon.Trainer(make('c_').collect_params(), sgd).optimizer is sgd])

# several contexts: the store updates (MXNet's default), so update() and allreduce_grads() are refused
x = gluon.Parameter('x', shape=(4,))
x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
multi = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0})
with autograd.record():
    for w in x.list_data():
        (w + 1).backward()
multi.step(1)
refused = []
for f in (lambda: multi.update(1), multi.allreduce_grads):
    try:
        f()
        refused.append(0)
    except AssertionError:
        refused.append(1)
out['multi'] = np.array([multi._update_on_kvstore is True] + refused)
out['multi_x'] = x.data(mx.cpu(1)).asnumpy()
x2 = gluon.Parameter('x2', shape=(4,))
x2.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
manual = gluon.Trainer([x2], 'sgd', {'learning_rate': 1.0}, update_on_kvstore=False)
with autograd.record():
    for i, w in enumerate(x2.list_data()):
        (w * (i + 1)).backward()
manual.allreduce_grads()
manual.update(1)
out['manual'] = np.concatenate([x2.data(mx.cpu(0)).asnumpy(), x2.data(mx.cpu(1)).asnumpy(),
                                [manual._update_on_kvstore is False]])
single = gluon.Trainer(make('d_').collect_params(), 'sgd')
out['single'] = np.array([single._kvstore is None, single._update_on_kvstore is None])
"""


def test_trainer_optimizer_and_kvstore_checks_match_mxnet(both):
    both(SCRIPT, rtol=1e-5, atol=1e-7, x=X)


STORES = """
from mxnet import autograd
# a local store with an optimizer: a push updates the stored value (MXNet's updater(key, grad, stored))
kv = mx.kv.create('local')
out['capable'] = np.array([kv.is_capable('optimizer')])
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
kv.init(3, nd.ones((2, 3)))
for i in range(3):
    kv.push(3, [nd.ones((2, 3)) * (i + 1), nd.ones((2, 3))])
    got = nd.zeros((2, 3))
    kv.pull(3, out=got)
    out['pushed%d' % i] = got

# a store of one's own, registered, then made by name; the trainer takes it (no optimizer on it)
@mx.kv.KVStoreBase.register
class MyStore(mx.kv.KVStoreBase):
    type = 'mine'

mine = mx.kv.create('mystore')
out['mine'] = np.array([type(mine).__name__ == 'MyStore', mine.type == 'mine'])
x = gluon.Parameter('x', shape=(4,))
x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0, 'momentum': 0.5}, kvstore=mx.kv.create('teststore'))
for _ in range(2):
    with autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)
out['teststore'] = np.concatenate([x.data(mx.cpu(1)).asnumpy(), [trainer._update_on_kvstore is False]])
refused = gluon.Trainer([x], 'sgd', kvstore=mx.kv.create('teststore'), update_on_kvstore=True)
try:
    refused._init_kvstore()
    out['refused'] = np.array([0])
except ValueError:
    out['refused'] = np.array([1])
ts = mx.kv.create('teststore')
a, b = nd.ones((3,)), nd.ones((3,)) * 2
ts.pushpull(0, [a, b])
out['pushpull'] = np.concatenate([a.asnumpy(), b.asnumpy()])
"""


def test_kvstores_match_mxnet(both):
    """``set_optimizer`` on a local store, ``KVStoreBase.register`` and MXNet's TestStore, in a trainer too."""
    both(STORES, rtol=1e-6, atol=1e-7)


OPS = """
a, b = nd.array([[3.0, -5.0], [0.5, 8.0]]), nd.array([[4.0, 12.0], [1.2, -6.0]])
x, y = mx.sym.var('x'), mx.sym.var('y')
out['hypot'] = mx.sym.hypot(x, y).eval(x=a, y=b)[0]          # (MXNet has it on mx.sym only)
out['hypot_scalar'] = mx.sym.hypot(x, 4.0).eval(x=a)[0]
try:
    nd.tile(a, (1, 0)).wait_to_read()
    out['tile_zero'] = np.array([0])
except mx.base.MXNetError:
    out['tile_zero'] = np.array([1])
# a backward without a forward: MXNet runs the backward graph (repeat's gradient reads no forward value)
data = mx.sym.var('data')
g = nd.zeros((2, 3))
exe = mx.sym.repeat(data, repeats=2, axis=0).bind(mx.cpu(), args=[nd.ones((2, 3))], args_grad=[g])
exe.backward(nd.array(np.arange(12.0).reshape(4, 3)))
out['repeat_grad'] = g
# argmax passes no gradient: a head gradient of any shape is not read (MXNet's zero-gradient node)
g2 = nd.ones((2, 3))
exe = mx.sym.argmax(data, axis=1, keepdims=True).bind(mx.cpu(), args=[nd.array(np.arange(6.0).reshape(2, 3))],
                                                      args_grad=[g2])
exe.forward(is_train=True)
exe.backward(nd.ones((2, 3)))
out['argmax_grad'] = g2
# norm's out_dtype narrower than its input: with MXNET_SAFE_ACCUMULATION=1 only
with mx.test_utils.environment('MXNET_SAFE_ACCUMULATION', '1'):
    out['norm_narrow'] = nd.norm(nd.array([[3.0, 4.0], [1.0, 1.0]], dtype='float64'), axis=1, out_dtype='float32')
# arange in an integer type: the length from the floats, the values int(start) + i * int(step)
for i, cfg in enumerate([(1.3, 20.6, 1.3), (0.5, 10.2, 2.7), (-3.7, 5, 1.9), (5.9, -3, -1.6)]):
    out['arange%d' % i] = nd.arange(*cfg, dtype='int32')
# a variable declared with a type: simple_bind's arrays and infer_type have it
xi = mx.sym.var('xi', dtype='int32')
exe = mx.sym.Cast(xi, dtype='float16').simple_bind(mx.cpu(), xi=(2, 2))
meta['declared'] = [str(np.dtype(exe.arg_arrays[0].dtype)), str(np.dtype(exe.outputs[0].dtype)),
                    [str(np.dtype(t)) for t in mx.sym.var('v', dtype='int32', shape=(2,)).infer_type()[0]],
                    type(mx.sym.zeros(shape=(2, 2), dtype=np.float32)).__name__]
# a gradient reaching an int32 input through a cast: C's cast toward zero
c = mx.sym.Cast(xi, dtype='float32') * 0.7
gi = nd.zeros((2, 2), dtype='int32')
exe = c.bind(mx.cpu(), args=[nd.array([[1, 2], [3, 4]], dtype='int32')], args_grad=[gi])
exe.forward(is_train=True)
exe.backward(nd.array([[1.0, 2.0], [-3.0, 9.0]]))
out['cast_grad'] = gi
# contrib.allclose: a 0-d uint8 array
out['allclose'] = nd.contrib.allclose(nd.ones((2, 3)), nd.ones((2, 3)) + 1e-7)
out['allclose_not'] = nd.contrib.allclose(nd.ones((2, 3)), nd.ones((2, 3)) * 1.1)
# multi_all_finite over several arrays
inf = nd.array([1.0, float('inf')])
out['maf'] = nd.concat(nd.multi_all_finite(nd.ones((2,)), inf, num_arrays=2),
                       nd.multi_all_finite(nd.ones((2,)), nd.ones((3,)), num_arrays=2), nd.all_finite(inf), dim=0)
# contrib.index_array
out['index_array'] = nd.contrib.index_array(nd.ones((2, 3, 4)), axes=(2, -3)).astype('float32')
out['index_array_all'] = nd.contrib.index_array(nd.ones((2, 3))).astype('float32')
# the sample_* operators: a draw per parameter element, times shape
meta['sample_shapes'] = [
    list(f(*args, **kw).shape) for f, args in [(nd.sample_normal, (nd.array([1.0, 2.0]), nd.array([0.5, 1.0]))),
                                               (nd.sample_uniform, (nd.array([0.0]), nd.array([1.0]))),
                                               (nd.sample_gamma, (nd.array([2.0, 3.0]), nd.array([1.0, 1.0]))),
                                               (nd.sample_exponential, (nd.array([2.0]),)),
                                               (nd.sample_poisson, (nd.array([2.0, 4.0]),))]
    for kw in ({}, {'shape': ()}, {'shape': 1}, {'shape': (2, 3)})]
# unknown (-1 or 0) dimensions of arrays made from a shape, inferred from the other arrays they meet
o2 = mx.sym.ones(shape=[-1, -1])
out['infer_back'] = (mx.sym.ones(shape=[2, 3]) + mx.sym.transpose(o2)).bind(mx.cpu(), args={}).forward()[0]
o3 = mx.sym.ones(shape=[3, 0]) * 2
out['infer_mixed'] = (mx.sym.ones(shape=[2, -1]) + mx.sym.transpose(o3)).bind(mx.cpu(), args={}).forward()[0]
# the executor's monitor: the names MXNet gives each op's inputs and outputs, and the outputs' values
import os
os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'     # (MXNet's MKLDNN graph would rename the convolution)
d = mx.sym.Variable('data', shape=(2, 3, 6, 6))
net = mx.sym.Convolution(d, kernel=(2, 2), num_filter=2, name='conv')
net = mx.sym.concat(mx.sym.Activation(net, act_type='relu', name='act'), net, dim=1, name='cat')
net = mx.sym.Pooling(mx.sym.softmax(net, axis=1, name='sm'), kernel=(2, 2), pool_type='avg', name='pool')
for every in (False, True):
    seen = []
    exe = net.simple_bind(mx.cpu(), grad_req='null')
    for k, v in exe.arg_dict.items():
        v[:] = nd.array(np.linspace(-1, 1, v.size).reshape(v.shape))
    exe.set_monitor_callback(lambda name, arr: seen.append(mx.base.py_str(name)), monitor_all=every)
    exe.forward()
    mx.nd.waitall()
    meta['monitor%d' % every] = seen
del os.environ['MXNET_SUBGRAPH_BACKEND']
# legacy shape semantics: zeros/ones refuse an unknown (0) dimension and 0-d; empty and np_shape take them
refusals = []
for f in (lambda: nd.zeros((5, 0)), lambda: nd.ones(()), lambda: nd.zeros((0, 1, 3, 0))):
    try:
        f()
        refusals.append(0)
    except mx.base.MXNetError:
        refusals.append(1)
out['refusals'] = np.array(refusals)
out['empty_ok'] = np.array(nd.empty((0, 3)).shape)
with mx.np_shape():
    z = nd.zeros((5, 0))
    out['np_shape_ok'] = np.array(z.shape)
    try:
        z.min()
        out['empty_min'] = np.array([0])
    except mx.base.MXNetError:
        out['empty_min'] = np.array([1])
# a softmax made with no input: MXNet makes its data a variable named after the node
meta['auto'] = [mx.sym.softmin(axis=1).list_arguments(), mx.sym.softmax(axis=1, name='sm').list_arguments(),
                mx.sym.log_softmax(mx.sym.var('x')).list_arguments()]
"""


def test_hypot_tile_and_backward_without_forward_match_mxnet(both):
    both(OPS, rtol=1e-6)
