"""``mx.init`` against MXNet 1.9.1: the dtypes a constant gives (gluon parameters, ``get_constant``, direct
calls on NDArrays), MXNet's in-place protocol (``init(InitDesc or name, arr)`` dispatching by name suffix to
``_init_weight``/``_init_bias``/..., user subclasses filling ``arr[:] = ...``), ``register``/``alias``/``create``
by name and JSON, ``Mixed``, ``Load``, ``Bilinear`` and ``LSTMBias``.  Only deterministic initializers: the
random streams differ from MXNet's by design."""

import pytest

pytestmark = pytest.mark.oracle


def test_integer_constants_give_float32_like_mxnet(both):
    both("""
p = gluon.Parameter('c_weight', shape=(2, 3), init=mx.init.Constant(3))
p.initialize()
out['param'] = p.data()
net = gluon.nn.Dense(2, in_units=3, weight_initializer=mx.init.Constant(2), bias_initializer=mx.init.Constant(7))
net.initialize()
out['dense_w'], out['dense_b'] = net.weight.data(), net.bias.data()

class WithConstants(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.anchors = self.params.get_constant('anchors', np.array([[10, 13], [16, 30]]))
        self.offsets = self.params.get_constant('offsets', [1.5, 2.5])
        self.kept = self.params.get_constant('kept', nd.array([1, 2], dtype='int32'))
    def hybrid_forward(self, F, x, anchors, offsets, kept):
        return F.broadcast_add(x, anchors)
b = WithConstants()
b.initialize()
out['anchors'], out['offsets'], out['kept'] = b.anchors.data(), b.offsets.data(), b.kept.data()
out['forward'] = b(nd.ones((2, 2)))
for name, dtype, value in [('x_weight', 'float32', 3), ('x_weight', 'int32', 3.7), ('x_weight', 'float16', 2),
                           ('x_bias', 'float32', 3)]:
    a = nd.zeros((2, 2), dtype=dtype)
    mx.init.Constant(value)(mx.init.InitDesc(name), a)
    out['%s_%s_%s' % (name, dtype, value)] = a
a = nd.zeros((2,), dtype='float16')
mx.init.Constant(3)('legacy_weight', a)
out['legacy'] = a
""")


USER_INITS = """
import numpy as _np

class BilinearUpSample(mx.init.Initializer):     # as GluonCV's CenterNet writes it
    def __init__(self):
        super(BilinearUpSample, self).__init__()
    def _init_weight(self, _, arr):
        weight = _np.zeros(_np.prod(arr.shape), dtype='float32')
        shape = arr.shape
        f = _np.ceil(shape[3] / 2.)
        c = (2 * f - 1 - f % 2) / (2. * f)
        for i in range(_np.prod(shape)):
            x = i % shape[3]
            y = (i // shape[3]) % shape[2]
            weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
        arr[:] = weight.reshape(shape)

@mx.init.register
@mx.init.alias('myinit')
class CustomInit(mx.init.Initializer):
    def __init__(self, value=0.1):
        super(CustomInit, self).__init__(value=value)
        self.value = value
    def _init_weight(self, _, arr):
        arr[:] = self.value
    def _init_bias(self, _, arr):
        arr[:] = 1
    def _init_gamma(self, _, arr):
        arr[:] = 5

class Doubled(mx.init.Constant):
    def _init_weight(self, name, arr):
        super(Doubled, self)._init_weight(name, arr)
        arr[:] *= 2
"""


def test_user_initializers_fill_in_place_as_in_mxnet(both):
    both(USER_INITS + """
up = gluon.nn.Conv2DTranspose(3, 4, strides=2, padding=1, groups=3, in_channels=3, use_bias=False,
                              weight_initializer=BilinearUpSample())
up.initialize()
out['upsample_w'] = up.weight.data()
out['upsampled'] = up(nd.array(np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3)))
net = gluon.nn.HybridSequential(prefix='net_')
with net.name_scope():      # fixed names: the automatic ones count the blocks this process made before
    net.add(gluon.nn.Dense(3, in_units=2), gluon.nn.BatchNorm(in_channels=3), gluon.nn.Dense(2, in_units=3))
net.initialize(CustomInit(0.25))      # gluon: the initializer's _init_weight for every parameter without its own
for k, v in net.collect_params().items():
    out['net/' + k] = v.data()
d = gluon.nn.Dense(2, in_units=2, weight_initializer=Doubled(1.5))
d.initialize()
out['doubled'] = d.weight.data()
for name in ['a_weight', 'a_bias', 'a_gamma', 'a_beta', 'a_min', 'a_max']:
    arr = nd.ones((3,)) * 9
    CustomInit()(mx.init.InitDesc(name), arr)
    out['desc/' + name] = arr
arr = nd.ones((3,)) * 9
CustomInit()(mx.init.InitDesc('a_bias', attrs={'__init__': 'myinit'}), arr)
out['desc/attrs'] = arr
desc = mx.init.InitDesc('b_weight')
gi = CustomInit()
gi(desc, nd.zeros((2,)))
meta['global_init_is_self'] = desc.global_init is gi
for name in ['a_moving_mean', 'a_moving_var', 'upsampling0_weight', 'stn_loc_bias', 'a_weight']:
    arr = nd.ones((6, 1, 2, 2)) * 9 if name.startswith('upsampling') else nd.ones((6,)) * 9
    CustomInit()(name, arr)
    out['legacy/' + name] = arr
for bad in [mx.init.InitDesc('a_running_mean'), 'strange']:
    try:
        CustomInit()(bad, nd.zeros((2,)))
    except ValueError as e:
        meta['unknown ' + bad] = str(e)[:60]
""")


def test_registered_names_and_json_create_as_mxnet(both):
    both(USER_INITS + """
net = gluon.nn.Dense(2, in_units=3, weight_initializer='myinit', bias_initializer='ones')
net.initialize()
out['w'], out['b'] = net.weight.data(), net.bias.data()
net2 = gluon.nn.Dense(2, in_units=3)
net2.initialize('custominit')
out['w2'], out['b2'] = net2.weight.data(), net2.bias.data()
net3 = gluon.nn.Dense(2, in_units=3)
net3.initialize('["constant", {"value": 4}]')
out['w3'] = net3.weight.data()
meta['types'] = [type(mx.init.create(n)).__name__ for n in ['zeros', 'Zero', 'ones', 'one', 'myinit', 'custominit',
                                                               'xavier', 'msraprelu', 'bilinear', 'lstmbias']]
meta['kwargs'] = mx.init.create('myinit', value=0.5).value
c = mx.init.Constant(2.5)
meta['dumps'] = [c.dumps(), mx.init.Xavier(factor_type='in', magnitude=2.34).dumps(), CustomInit(3).dumps()]
meta['from_json'] = [type(mx.init.create(c.dumps())).__name__, mx.init.create(c.dumps()).value,
                     mx.init.create('{"initializer": "myinit", "value": 7}').value]
meta['arrays_dump'] = mx.init.Constant(nd.array([1, 2])).dumps()
meta['eq'] = [mx.init.Constant(2) == mx.init.Constant(2), mx.init.Constant(2) == mx.init.Constant(3),
              mx.init.Zero() == mx.init.create('zeros')]
for bad in ['nope', 3]:
    try:
        mx.init.create(bad)
    except AssertionError as e:
        meta['bad %r' % bad] = str(e)
""")


def test_mixed_load_bilinear_and_lstm_bias_as_mxnet(both, tmp_path):
    both(USER_INITS + f"""
mixed = mx.init.Mixed(['.*bias', '.*'], [mx.init.Constant(1), CustomInit(0.5)])
for name in ['d_bias', 'd_weight', 'bn_gamma']:
    arr = nd.zeros((2, 2))
    mixed(name, arr)
    out['mixed/' + name] = arr
try:
    mx.init.Mixed(['.*bias'], [mx.init.Zero()])('d_weight', nd.zeros((2,)))
except ValueError as e:
    meta['mixed unmatched'] = str(e)
try:
    gluon.nn.Dense(2, in_units=2).initialize(mixed)
except AssertionError as e:
    meta['mixed in initialize'] = str(e)
saved = {{'arg:d_weight': nd.array([[1, 2], [3, 4]]), 'aux:bn_running_mean': nd.array([5, 6]), 'd_bias': nd.array([7, 8])}}
nd.save({str(tmp_path / 'p.params')!r}, saved)
for load in [mx.init.Load(saved, default_init=CustomInit(0.75)), mx.init.Load({str(tmp_path / 'p.params')!r})]:
    meta['load keys %d' % len(meta)] = sorted(load.param)
    for name, shape in [('d_weight', (2, 2)), ('bn_running_mean', (2,)), ('d_bias', (2,)), ('e_weight', (3,))]:
        arr = nd.zeros(shape)
        try:
            load(name, arr)
            out['load%d/%s' % (len(meta), name)] = arr
        except AssertionError as e:
            meta['load%d/%s' % (len(meta), name)] = str(e)
try:
    mx.init.Load(saved)('d_weight', nd.zeros((3,)))
except AssertionError as e:
    meta['load shape'] = str(e)
arr = nd.zeros((2, 1, 4, 4))
mx.init.Bilinear()(mx.init.InitDesc('up_weight'), arr)
out['bilinear'] = arr
arr = nd.zeros((3, 1, 3, 5))
mx.init.Bilinear()(mx.init.InitDesc('up_weight'), arr)
out['bilinear_odd'] = arr
arr = nd.zeros((8,))
mx.init.LSTMBias(forget_bias=2.0)(mx.init.InitDesc('lstm_weight'), arr)
out['lstmbias'] = arr
cell = gluon.rnn.LSTMCell(3, input_size=2, i2h_bias_initializer=mx.init.LSTMBias(1.5))
cell.initialize()
out['cell_bias'] = cell.i2h_bias.data()
""")
