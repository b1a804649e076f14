"""MXNet's executors (``Symbol.bind``/``simple_bind``, ``ast_hybrid/symbol/executor.py``) and the
``mxnet.test_utils`` checks that drive them, against MXNet 1.9.1: the same script on both sides prints the
same lines.  What MXNet's own ``test_operator.py`` and pre-Gluon scripts lean on: the bound arrays are the
caller's (a write into one is what the next forward reads), ``grad_req`` write/add/null per argument, loss
operators' own head gradients, BatchNorm's moving statistics written into the bound auxiliary states in
training mode only, the inferred shapes of an op's weights (``simple_bind`` given the data's), outputs kept
across forwards, ``reshape``, ``copy_params_from``, and MXNet's errors for bad arguments."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = r'''
import numpy as np
import mxnet as mx
from mxnet import nd

def show(label, arrays):
    arrays = arrays if isinstance(arrays, (list, tuple)) else [arrays]
    print(label, [None if a is None else np.round(a.asnumpy().astype('float64'), 4).tolist() for a in arrays])

a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
c = 2 * a * b + b
args = {'a': nd.array([1, 2]), 'b': nd.array([2, 3])}
grads = {'a': nd.zeros(2), 'b': nd.ones(2)}
exe = c.bind(mx.cpu(), args=args, args_grad=grads, grad_req={'a': 'write', 'b': 'add'})
out = exe.forward(is_train=True)
show('forward', out)
exe.backward(nd.array([1, 10]))
show('grads write/add', [grads['a'], grads['b']])
exe.backward(nd.array([1, 10]))
show('second backward', [grads['a'], grads['b']])
args['a'][:] = 5                       # the bound array is the caller's
kept = exe.outputs[0]
exe.forward()
show('after a write, kept output', kept)
exe.forward(a=nd.array([0, 1]))
show('forward(a=...)', exe.outputs)
print('arg names', sorted(exe.arg_dict), sorted(exe.grad_dict), list(exe.output_dict))

exe = c.bind(mx.cpu(), [nd.array([1, 2]), nd.array([3, 4])], args_grad=[nd.zeros(2), nd.zeros(2)],
             grad_req=['null', 'write'])
exe.forward(is_train=True)
exe.backward([nd.ones(2)])
show('list binding, null/write', exe.grad_arrays)
exe = c.bind(mx.cpu(), args)
exe.forward()
print('no args_grad', exe.grad_arrays)

data = mx.sym.Variable('data')
net = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
net = mx.sym.Activation(net, act_type='relu', name='relu')
net = mx.sym.SoftmaxOutput(net, name='softmax')
exe = net.simple_bind(mx.cpu(), data=(2, 4))
print('inferred', [(n, a.shape) for n, a in sorted(exe.arg_dict.items())], [g is None for g in exe.grad_arrays])
rng = np.random.RandomState(0)
for name, arr in sorted(exe.arg_dict.items()):
    if name != 'softmax_label':
        arr[:] = rng.uniform(-1, 1, arr.shape)
exe.arg_dict['softmax_label'][:] = nd.array([0, 2])
exe.forward(is_train=True)
exe.backward()                         # SoftmaxOutput gives its own head gradient
show('softmax out', exe.outputs)
show('softmax grads', [exe.grad_dict['fc_weight'], exe.grad_dict['fc_bias'], exe.grad_dict['data']])
exe2 = exe.reshape(data=(1, 4), softmax_label=(1,))
print('reshape', [a.shape for a in exe2.arg_arrays], [g is None for g in exe2.grad_arrays])
show('reshaped data starts as the old one', exe2.arg_dict['data'])
exe2.forward(is_train=True)
show('reshaped forward', exe2.outputs)
for label, call in [('up-sizing', lambda: exe.reshape(data=(5, 4), softmax_label=(5,))),
                    ('unnamed change', lambda: exe.reshape(data=(1, 4)))]:
    try:
        call()
        print(label, 'allowed')
    except mx.base.MXNetError as e:
        print(label, 'refused', 'allow_up_sizing' in str(e), 'partial_shaping' in str(e))
print('up-sized', exe.reshape(allow_up_sizing=True, data=(3, 4), softmax_label=(3,)).arg_dict['data'].shape)
exe3 = net.simple_bind(mx.cpu(), data=(2, 4), grad_req='null')
exe3.copy_params_from({'fc_weight': exe.arg_dict['fc_weight'], 'fc_bias': exe.arg_dict['fc_bias']})
show('copied', exe3.arg_dict['fc_bias'])
try:
    exe3.copy_params_from({'other': nd.ones(1)})
except ValueError as e:
    print('extra param', 'other' in str(e))

bn = mx.sym.BatchNorm(data, fix_gamma=False, momentum=0.5, name='bn')
exe = bn.simple_bind(mx.cpu(), data=(4, 3))
print('bn', bn.list_arguments(), bn.list_auxiliary_states())
exe.arg_dict['data'][:] = nd.array(np.arange(12).reshape(4, 3) ** 1.5)
exe.arg_dict['bn_gamma'][:] = 2
exe.aux_dict['bn_moving_var'][:] = 1
exe.forward(is_train=False)
show('bn predict, aux', exe.aux_arrays)
exe.forward(is_train=True)
exe.backward(nd.array(np.arange(12).reshape(4, 3) % 5))
show('bn train out', exe.outputs)
show('bn train aux', exe.aux_arrays)
show('bn grads', exe.grad_arrays)

for label, call in [('wrong shape', lambda: exe.forward(data=nd.ones((2, 3)))),
                    ('unknown name', lambda: exe.forward(nothere=nd.ones((4, 3)))),
                    ('missing arg', lambda: c.bind(mx.cpu(), {'a': nd.ones(2)})),
                    ('short list', lambda: c.bind(mx.cpu(), [nd.ones(2)]))]:
    try:
        call()
        print(label, 'no error')
    except (ValueError, TypeError) as e:
        print(label, type(e).__name__)

from mxnet.test_utils import (check_numeric_gradient, check_symbolic_backward, check_symbolic_forward,
                              simple_forward)
np.random.seed(0)
x = mx.sym.Variable('x')
xv = np.random.uniform(1, 2, size=(3, 4))
print('simple_forward', np.round(simple_forward(mx.sym.sqrt(x), x=xv), 4).tolist()[0])
check_symbolic_forward(mx.sym.sqrt(x), [xv], [np.sqrt(xv)])
grads = check_symbolic_backward(mx.sym.sqrt(x), [xv], [np.ones((3, 4))], [0.5 / np.sqrt(xv)], grad_req='add')
print('checks pass')
fc = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=3, name='fc'), act_type='tanh')
check_numeric_gradient(fc, [np.random.normal(size=(2, 4)), np.random.normal(size=(3, 4)),
                            np.random.normal(size=3)], numeric_eps=1e-3, rtol=1e-2, atol=1e-3)
try:
    check_symbolic_forward(mx.sym.sqrt(x), [xv], [np.sqrt(xv) + 1])
except AssertionError:
    print('a wrong expectation fails')
print('numeric gradient passes')
'''


def test_executors_bind_run_and_differentiate_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert len(theirs) > 25
    for mine, expected in zip(ours, theirs):
        assert mine == expected
    assert len(ours) == len(theirs)


OPS = r'''
import numpy as np
import mxnet as mx
from mxnet import nd

def show(label, arrays):
    print(label, [np.round(a.asnumpy().astype('float64'), 4).tolist() for a in arrays])

rng = np.random.RandomState(1)
rnn = mx.sym.RNN(mode='gru', num_layers=1, state_size=3, name='rnn')      # every input a new variable
print('rnn arguments', rnn.list_arguments(), rnn.list_outputs())
for made in (mx.sym.contrib.PSROIPooling(spatial_scale=0.5, output_dim=2, pooled_size=3, name='ps'),
             mx.sym.ROIPooling(pooled_size=(2, 2), spatial_scale=0.5), mx.sym.Correlation(kernel_size=3)):
    print('made inputs', made.list_arguments(), made.list_outputs())
lstm = mx.sym.RNN(mx.sym.var('data'), mx.sym.var('p'), mx.sym.var('s'), mx.sym.var('c'), mode='lstm',
                  state_size=3, num_layers=2, bidirectional=True)
print('lstm shapes', lstm.infer_shape(data=(5, 2, 4)))
up = mx.sym.UpSampling(mx.sym.var('data'), mx.sym.var('weight'), sample_type='bilinear', scale=3, num_filter=4,
                       num_args=2)
print('bilinear weight', up.infer_shape(data=(2, 4, 5, 5)))
exe = lstm.simple_bind(mx.cpu(), data=(5, 2, 4))
for name, arr in sorted(exe.arg_dict.items()):
    arr[:] = rng.uniform(-0.5, 0.5, arr.shape)
exe.forward(is_train=True)
exe.backward([nd.array(rng.uniform(-1, 1, exe.outputs[0].shape))])
show('lstm grads', [exe.grad_dict['data'][0], exe.grad_dict['s'][1]])

bn = mx.sym.BatchNorm_v1(mx.sym.var('d'), fix_gamma=True)
print('BatchNorm_v1', bn.list_arguments(), bn.list_auxiliary_states())
e = mx.sym.var('e')
print('pow', mx.sym.pow(2, 3))
exe = mx.sym.pow(2, e).bind(mx.cpu(), {'e': nd.array([1, 2])}, args_grad={'e': nd.zeros(2)})
exe.forward(is_train=True)
exe.backward([nd.ones(2)])
show('pow', exe.outputs + exe.grad_arrays)

x, g = mx.sym.var('x'), mx.sym.var('gamma')
for xshape, gshape in [((3, 4), (4,)), ((3, 4), (3, 4)), ((3, 4, 2, 2), (3, 4)), ((3, 4, 2, 2), (1,))]:
    xv = rng.uniform(-1, 1, xshape)
    gv = rng.uniform(0, 1, gshape)
    exe = mx.sym.LeakyReLU(x, gamma=g, act_type='prelu').bind(
        mx.cpu(), {'x': nd.array(xv), 'gamma': nd.array(gv)}, args_grad={'x': nd.zeros(xshape),
                                                                          'gamma': nd.zeros(gshape)})
    exe.forward(is_train=True)
    exe.backward([nd.ones(xshape)])
    show(f'prelu {xshape} {gshape}', [exe.outputs[0].reshape(-1)[:6], exe.grad_dict['gamma'].reshape(-1)])

xv = nd.array(rng.uniform(size=(2, 3)))
exe = mx.sym.shape_array(x).bind(mx.cpu(), {'x': xv}, args_grad={'x': nd.ones((2, 3))})
exe.forward(is_train=True)
exe.backward([nd.ones((2, 3))])                  # an integer output: its head gradient is not read
print('shape_array', exe.outputs[0].asnumpy().tolist(), exe.grad_dict['x'].asnumpy().tolist())

s = mx.sym.Convolution(kernel=(3, 3), num_filter=2) + 2           # the data input made too
print('auto data', s.list_arguments(),
      mx.sym.FullyConnected(weight=mx.sym.var('w'), num_hidden=3, name='fc').list_arguments())
op = mx.nd.CachedOp(s)
data, weight, bias = nd.array(rng.uniform(size=(1, 2, 4, 4))), nd.ones((2, 2, 3, 3)), nd.ones((2,))
weight.attach_grad()
with mx.autograd.record():
    o = op(data, weight, bias) * 2
o.backward()
show('cached op', [o.reshape(-1)[:4], weight.grad.reshape(-1)[:4]])
'''


def test_ops_that_make_their_inputs_infer_their_shapes_and_broadcast_as_mxnet(tmp_path):
    """A fused RNN given no input names them all (``rnn_data``, ``rnn_parameters``...) and infers its states'
    shapes; BatchNorm_v1 makes BatchNorm's; ``sym.pow``; PReLU's gamma broadcast as MXNet's ``expand_shape``
    (per channel, per sample and channel, one slope); an integer output's head gradient not read; an op's
    missing data input made too, the inputs in the op's order; ``mx.nd.CachedOp`` called and differentiated."""
    ours, theirs = run_both(OPS, tmp_path)
    assert len(theirs) == 17
    for mine, expected in zip(ours, theirs):
        assert mine == expected
    assert len(ours) == len(theirs)
