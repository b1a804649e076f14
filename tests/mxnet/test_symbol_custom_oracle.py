"""``mx.sym.Custom`` against MXNet 1.9.1: a custom operator as a node of a Symbol graph built outside any block
(MXNet's legacy symbolic code: inputs given by the prop's names, missing ones made variables, the prop's
auxiliary states the node's, their shapes from its ``infer_shape``), bound and differentiated by an executor."""

SCRIPT = """
class Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = aux[0] + 1
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] + in_data[1])
        self.assign(out_data[1], req[1], in_data[0] * 2)
    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0] + 2 * out_grad[1])
        self.assign(in_grad[1], req[1], out_grad[0])

@mx.operator.register("sqr_sym")
class SqrProp(mx.operator.CustomOpProp):
    def __init__(self, scale='1'):
        super(SqrProp, self).__init__(need_top_grad=True)
        self.scale = float(scale)
    def list_arguments(self):
        return ['data', 'shift']
    def list_outputs(self):
        return ['output', 'twice']
    def list_auxiliary_states(self):
        return ['count']
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], [in_shape[0][:1]]
    def create_operator(self, ctx, shapes, dtypes):
        return Sqr()

data = mx.sym.Variable('data')
op = mx.sym.Custom(data=data, name='sq', op_type='sqr_sym', scale=2)
meta['names'] = [op.list_arguments(), op.list_auxiliary_states(), op.list_outputs()]
meta['shapes'] = [list(map(list, s)) for s in op.infer_shape(data=(3, 4), sq_shift=(3, 4))]
y = mx.sym.Group([op[0] * 3, mx.sym.sum(op[1])])
exe = y.simple_bind(mx.cpu(), data=(3, 4), sq_shift=(3, 4))
exe.arg_dict['data'][:] = nd.array(inp['x'])
exe.arg_dict['sq_shift'][:] = nd.array(inp['x'] * 0.5)
for step in range(2):
    exe.forward(is_train=True)
    exe.backward([nd.ones((3, 4)), nd.ones((1,))])
    out['y%d' % step] = exe.outputs[0]
    out['dx%d' % step] = exe.grad_dict['data']
    out['dshift%d' % step] = exe.grad_dict['sq_shift']
    out['count%d' % step] = exe.aux_dict['sq_count']
"""


def test_custom_op_in_a_symbol_graph_matches_mxnet(both):
    import numpy as np

    both(SCRIPT, rtol=1e-6, atol=1e-7,
         x=np.random.default_rng(3).uniform(-1, 1, (3, 4)).astype("float32"))
