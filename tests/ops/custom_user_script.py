"""An MXNet 1.9.1 script with custom operators and a custom gradient, written as MXNet users write them
(issue 17): run unchanged by MXNet and by ``ast-hybrid run`` (``tests/ops/test_custom_user_script_oracle.py``).

    python custom_user_script.py OUT.npz [hybridize-function]

Three custom ops (a pure-NDArray gradient multiplier, a numpy focal loss that calls ``asnumpy()``, a center
loss whose class centers are an aux state) and a gradient-reversal ``autograd.Function``: op by op, recorded,
in a hybridized network trained three steps with a Trainer, and the Function in a block (which MXNet cannot
hybridize: with the flag, only ast-hybrid's run hybridizes it).  Writes every result to OUT.npz."""
import sys
import numpy as np
import mxnet as mx
from mxnet import nd, autograd, gluon


# 1. pure NDArray op: gradient multiplier (identity forward, scaled backward), as in detection code
class GradScale(mx.operator.CustomOp):
    def __init__(self, scale):
        super(GradScale, self).__init__()
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.scale)


@mx.operator.register("grad_scale")
class GradScaleProp(mx.operator.CustomOpProp):
    def __init__(self, scale=1.0):
        super(GradScaleProp, self).__init__(need_top_grad=True)
        self.scale = float(scale)

    def list_arguments(self):
        return ['data']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shape):
        return in_shape, in_shape, []

    def create_operator(self, ctx, shapes, dtypes):
        return GradScale(self.scale)


# 2. numpy op: sigmoid focal loss computed on the host, label input, no top grad
class FocalLoss(mx.operator.CustomOp):
    def __init__(self, alpha, gamma):
        super(FocalLoss, self).__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        label = in_data[1].asnumpy()
        p = 1.0 / (1.0 + np.exp(-x))
        pt = np.where(label > 0.5, p, 1 - p)
        at = np.where(label > 0.5, self.alpha, 1 - self.alpha)
        loss = -at * (1 - pt) ** self.gamma * np.log(np.maximum(pt, 1e-12))
        self.assign(out_data[0], req[0], mx.nd.array(loss.sum(axis=1)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0].asnumpy()
        label = in_data[1].asnumpy()
        p = 1.0 / (1.0 + np.exp(-x))
        g, a = self.gamma, self.alpha
        pos = a * (1 - p) ** g * (g * p * np.log(np.maximum(p, 1e-12)) - (1 - p))
        neg = (1 - a) * p ** g * (p - g * (1 - p) * np.log(np.maximum(1 - p, 1e-12)))
        grad = np.where(label > 0.5, pos, neg) * out_grad[0].asnumpy().reshape((-1, 1))
        self.assign(in_grad[0], req[0], mx.nd.array(grad))
        self.assign(in_grad[1], req[1], 0)


@mx.operator.register("focal_loss")
class FocalLossProp(mx.operator.CustomOpProp):
    def __init__(self, alpha=0.25, gamma=2):
        super(FocalLossProp, self).__init__(need_top_grad=True)
        self.alpha, self.gamma = float(alpha), float(gamma)

    def list_arguments(self):
        return ['data', 'label']

    def list_outputs(self):
        return ['loss']

    def infer_shape(self, in_shape):
        return in_shape, [(in_shape[0][0],)], []

    def create_operator(self, ctx, shapes, dtypes):
        return FocalLoss(self.alpha, self.gamma)


# 3. op with an aux state: center loss, class centers updated in forward (face recognition code)
class CenterLoss(mx.operator.CustomOp):
    def __init__(self, alpha):
        super(CenterLoss, self).__init__()
        self.alpha = alpha

    def forward(self, is_train, req, in_data, out_data, aux):
        x, label, centers = in_data[0], in_data[1], aux[0]
        c = nd.take(centers, label)
        diff = x - c
        self.assign(out_data[0], req[0], 0.5 * nd.sum(diff * diff, axis=1))
        if is_train:
            onehot = nd.one_hot(label, centers.shape[0])
            count = nd.sum(onehot, axis=0).reshape((-1, 1))
            delta = nd.dot(onehot, diff, transpose_a=True) / (count + 1)
            self.assign(aux[0], 'write', centers + self.alpha * delta)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x, label, centers = in_data[0], in_data[1], aux[0]
        diff = x - nd.take(centers, label)
        self.assign(in_grad[0], req[0], diff * out_grad[0].reshape((-1, 1)))
        self.assign(in_grad[1], req[1], 0)


@mx.operator.register("center_loss")
class CenterLossProp(mx.operator.CustomOpProp):
    def __init__(self, num_classes, alpha=0.5):
        super(CenterLossProp, self).__init__(need_top_grad=True)
        self.num_classes, self.alpha = int(num_classes), float(alpha)

    def list_arguments(self):
        return ['data', 'label']

    def list_outputs(self):
        return ['loss']

    def list_auxiliary_states(self):
        return ['centers']

    def infer_shape(self, in_shape):
        return in_shape, [(in_shape[0][0],)], [(self.num_classes, in_shape[0][1])]

    def create_operator(self, ctx, shapes, dtypes):
        return CenterLoss(self.alpha)


# 4. custom gradient: gradient reversal (domain adaptation)
class GradReverse(autograd.Function):
    def __init__(self, lambd):
        super(GradReverse, self).__init__()
        self.lambd = lambd

    def forward(self, x):
        return x.copy()

    def backward(self, dy):
        return -self.lambd * dy


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)
        with self.name_scope():
            self.body = gluon.nn.Dense(8, in_units=6, activation='relu')
            self.cls = gluon.nn.Dense(3, in_units=8)
            self.centers = self.params.get('centers', shape=(3, 8), init='zeros', grad_req='null')

    def hybrid_forward(self, F, x, label, onehot, centers):
        h = F.Custom(self.body(x), op_type='grad_scale', scale=0.5)
        logits = self.cls(h)
        focal = F.Custom(logits, onehot, op_type='focal_loss', alpha=0.25, gamma=2)
        center = F.Custom(h, label, centers, op_type='center_loss', num_classes=3, alpha=0.5)
        return focal + 0.1 * center


class DomainNet(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(DomainNet, self).__init__(**kwargs)
        with self.name_scope():
            self.feat = gluon.nn.Dense(5, in_units=6)
            self.dom = gluon.nn.Dense(1, in_units=5)

    def hybrid_forward(self, F, x):
        f = self.feat(x)
        return self.dom(GradReverse(0.3)(f)), f


def main(path, hybridize_function):
    rng = np.random.RandomState(0)
    out = {}
    x = nd.array(rng.uniform(-1, 1, (4, 6)))
    label = nd.array([0, 2, 1, 2])
    onehot = nd.one_hot(label, 3)
    # op by op, not recorded
    out['scale'] = nd.Custom(x, op_type='grad_scale', scale=3).asnumpy()
    out['focal'] = nd.Custom(x[:, :3], onehot, op_type='focal_loss').asnumpy()
    centers = nd.array(rng.uniform(-1, 1, (3, 6)))
    with autograd.train_mode():
        out['center'] = nd.Custom(x, label, centers, op_type='center_loss', num_classes=3).asnumpy()
    out['centers_after'] = centers.asnumpy()
    # op by op, recorded
    x.attach_grad()
    with autograd.record():
        a = nd.Custom(x * 2, op_type='grad_scale', scale=3)
        b = nd.Custom(a[:, :3], onehot, op_type='focal_loss', gamma=1)
        d = GradReverse(0.5)(a)
        loss = b.sum() + (d * d).sum()
    loss.backward()
    out['rec_loss'], out['rec_xgrad'] = loss.asnumpy(), x.grad.asnumpy()
    with autograd.record():
        a = nd.Custom(x * 2, op_type='grad_scale', scale=3)
        loss = nd.Custom(a, label, centers, op_type='center_loss', num_classes=3, alpha=0.2).sum()
    loss.backward()
    out['rec2_loss'], out['rec2_xgrad'], out['rec_centers'] = loss.asnumpy(), x.grad.asnumpy(), centers.asnumpy()
    # a hybridized network trained for three steps
    mx.random.seed(1)
    net = Net(prefix='net_')
    net.initialize(mx.init.Xavier())
    for name, p in sorted(net.collect_params().items()):
        if 'centers' not in name:
            p.set_data(nd.array(rng.uniform(-0.5, 0.5, p.shape)))
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    for step in range(3):
        with autograd.record():
            loss = net(x, label, onehot)
        loss.backward()
        trainer.step(4)
        out['net_loss%d' % step] = loss.asnumpy()
    out['net_centers'] = net.centers.data().asnumpy()
    out['net_weight'] = net.body.weight.data().asnumpy()
    out['net_predict'] = net(x, label, onehot).asnumpy()
    # the Function in a block (MXNet cannot hybridize it; ours may)
    dnet = DomainNet(prefix='dom_')
    dnet.initialize()
    for name, p in sorted(dnet.collect_params().items()):
        p.set_data(nd.array(rng.uniform(-0.5, 0.5, p.shape)))
    if hybridize_function:
        dnet.hybridize()
    with autograd.record():
        d, f = dnet(x)
        loss = (d * d).sum() + (f * f).sum()
    loss.backward()
    out['dom_wgrad'] = dnet.feat.weight.grad().asnumpy()
    out['dom_dgrad'] = dnet.dom.weight.grad().asnumpy()
    np.savez(path, **out)
    print("ok", len(out), "arrays")


if __name__ == '__main__':
    main(sys.argv[1], len(sys.argv) > 2)
