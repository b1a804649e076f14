"""``mxnet.test_utils``' checks that drive MXNet's executors (``Symbol.bind``/``simple_bind``:
``ast_hybrid/symbol/executor.py``): ``simple_forward``, ``numeric_grad``, ``check_numeric_gradient``,
``check_symbolic_forward``, ``check_symbolic_backward``, ``check_speed`` and ``check_consistency``, as MXNet
1.9.1's ``python/mxnet/test_utils.py`` writes them (the same steps, in the same order, with the same random
draws: a test seeded as MXNet's draws what MXNet's draws).  Sparse gradient storage (``grad_stype_dict``,
``grad_stypes`` other than 'default') is an error naming it.  ``test_utils`` re-exports them.
"""

from __future__ import annotations

import time
import traceback

import numpy as np

__all__ = ["simple_forward", "numeric_grad", "check_numeric_gradient", "check_symbolic_forward",
           "check_symbolic_backward", "check_speed", "check_consistency"]


def _tu():
    from ast_hybrid.mxnet import test_utils

    return test_utils


def _nd():
    from ast_hybrid import nd

    return nd


def _dense_only(stypes, where):
    from ast_hybrid.core.errors import NotAvailable, api_message

    sparse = {k: v for k, v in (stypes or {}).items() if v not in (None, "default")}
    if sparse:
        raise NotAvailable(api_message(f"mxnet.test_utils.{where}", f"ast-hybrid has dense storage only "
                                       f"(asked: {sparse})"))


def _sorted_items(d):
    return sorted(d.items(), key=lambda t: t[0])


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """The outputs (NumPy arrays; one, not a list, when there is one) of ``sym`` for the inputs given by name."""
    ctx = ctx or _tu().default_context()
    inputs = {k: _nd().array(v) for k, v in inputs.items()}
    exe = sym.bind(ctx, args=inputs)
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _as_nd(v, ctx, dtype):
    return _nd().array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype) if isinstance(v, np.ndarray) else v


def _parse_location(sym, location, ctx, dtype=np.float32):
    assert isinstance(location, (dict, list, tuple))
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    if isinstance(location, dict):
        if set(location.keys()) != set(sym.list_arguments()):
            raise ValueError("Symbol arguments and keys of the given location do not match.symbol args:%s, "
                             "location.keys():%s" % (str(set(sym.list_arguments())), str(set(location.keys()))))
    else:
        location = dict(zip(sym.list_arguments(), location))
    location = {k: _as_nd(v, ctx, dtype) for k, v in location.items()}
    return dict(_sorted_items(location))


def _parse_aux_states(sym, aux_states, ctx, dtype=np.float32):
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    if aux_states is not None:
        if isinstance(aux_states, dict):
            if set(aux_states.keys()) != set(sym.list_auxiliary_states()):
                raise ValueError("Symbol aux_states names and given aux_states do not match.symbol aux_names:%s, "
                                 "aux_states.keys:%s" % (str(set(sym.list_auxiliary_states())),
                                                         str(set(aux_states.keys()))))
        elif isinstance(aux_states, (list, tuple)):
            aux_states = dict(zip(sym.list_auxiliary_states(), aux_states))
        aux_states = {k: _nd().array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                      for k, v in aux_states.items()}
    return aux_states


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True, dtype=np.float32):
    """Finite differences of the sum of the executor's first output, one element of each argument at a time."""
    nd = _nd()
    assert dtype in (np.float16, np.float32, np.float64)
    approx_grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = nd.array(v, dtype=dtype)
    for k in location:
        location[k] = np.asarray(location[k], order="C")
    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        old_value = v.copy()
        for i in range(int(np.prod(v.shape))):
            v.ravel()[i] += eps / 2.0
            executor.arg_dict[k][:] = nd.array(v, dtype=dtype)
            if aux_states is not None:
                for key, val in aux_states.items():
                    executor.aux_dict[key][:] = val
            executor.forward(is_train=use_forward_train)
            f_peps = executor.outputs[0].asnumpy()
            v.ravel()[i] -= eps
            executor.arg_dict[k][:] = nd.array(v, dtype=dtype)
            if aux_states is not None:
                for key, val in aux_states.items():
                    executor.aux_dict[key][:] = nd.array(val, dtype=dtype)
            executor.forward(is_train=use_forward_train)
            f_neps = executor.outputs[0].asnumpy()
            approx_grads[k].ravel()[i] = (f_peps - f_neps).sum() / eps
            v.ravel()[i] = old_value.ravel()[i]
        executor.arg_dict[k][:] = nd.array(old_value, dtype=dtype)
    return approx_grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None, atol=None, grad_nodes=None,
                           use_forward_train=True, ctx=None, grad_stype_dict=None, dtype=np.float32):
    """The executor's gradients against finite differences, through a random projection of the output."""
    from ast_hybrid import sym as mx_sym

    tu, nd = _tu(), _nd()
    assert dtype in (np.float16, np.float32, np.float64)
    _dense_only(grad_stype_dict, "check_numeric_gradient(grad_stype_dict=...)")
    ctx = ctx if ctx is not None else tu.default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    aux_states_npy = {k: v.asnumpy() for k, v in aux_states.items()} if aux_states is not None else None
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = grad_nodes.copy()
        grad_nodes = grad_nodes.keys()
    else:
        raise ValueError
    input_shape = {k: v.shape for k, v in location.items()}
    _, out_shape, _ = sym.infer_shape(**input_shape)
    proj = mx_sym.Variable("__random_proj")
    out = mx_sym.make_loss(sym * proj)
    location = dict(list(location.items()) +
                    [("__random_proj", nd.array(np.random.rand(*out_shape[0]) + 0.1, ctx=ctx, dtype=dtype))])
    args_grad_npy = dict([(k, np.random.normal(0, 0.01, size=location[k].shape)) for k in grad_nodes]
                         + [("__random_proj", np.random.normal(0, 0.01, size=out_shape[0]))])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in args_grad_npy.items()}
    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad, aux_states=aux_states)
    inps = executor.arg_arrays
    if len(inps) != len(location):
        raise ValueError("Executor arg_arrays and and location len do not match.Got %d inputs and %d locations"
                         % (len(inps), len(location)))
    assert len(executor.outputs) == 1
    executor.forward(is_train=True)
    eps = tu.get_tolerance(executor.outputs[0], numeric_eps, tu.default_numeric_eps())
    if dtype in (np.float32, np.float16):       # finite differences with a small eps need high precision
        assert eps >= 1e-5
    executor.backward()
    symbolic_grads = executor.grad_dict
    numeric_gradients = numeric_grad(executor, location_npy, aux_states_npy, eps=eps,
                                     use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        fd_grad, orig_grad, sym_grad = numeric_gradients[name], args_grad_npy[name], symbolic_grads[name]
        names = ("NUMERICAL_%s" % name, "BACKWARD_%s" % name)
        if grad_req[name] == "write":
            tu.assert_almost_equal(fd_grad, sym_grad, rtol, atol, names)
        elif grad_req[name] == "add":
            tu.assert_almost_equal(fd_grad, sym_grad.asnumpy() - orig_grad, rtol, atol, names)
        elif grad_req[name] == "null":
            tu.assert_almost_equal(orig_grad, sym_grad, rtol, atol, names)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (grad_req[name], name))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None, ctx=None, equal_nan=False,
                           dtype=np.float32):
    """The outputs of ``sym`` at ``location`` (inference mode) against ``expected``; returns the outputs."""
    tu, nd = _tu(), _nd()
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    ctx = ctx if ctx is not None else tu.default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad_data = {k: nd.empty(v.shape, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                      for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad_data, aux_states=aux_states)
    for g in executor.grad_arrays:
        if g.ndim == 0:
            g[()] = 0
        else:
            g[:] = 0
    executor.forward(is_train=False)
    outputs = executor.outputs
    for output_name, expect, output in zip(sym.list_outputs(), expected, outputs):
        tu.assert_almost_equal(expect, output, rtol, atol, ("EXPECTED_%s" % output_name, "FORWARD_%s" % output_name),
                               equal_nan=equal_nan)
    return executor.outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None, aux_states=None,
                            grad_req="write", ctx=None, grad_stypes=None, equal_nan=False, dtype=np.float32):
    """The arguments' gradients of ``sym`` at ``location`` for ``out_grads`` against ``expected``; returns the
    gradient arrays."""
    tu, nd = _tu(), _nd()
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    _dense_only(grad_stypes, "check_symbolic_backward(grad_stypes=...)")
    ctx = ctx if ctx is not None else tu.default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    # Dirty the output buffer deterministically, for reproducibility.
    args_grad_npy = {k: np.random.normal(size=v.shape) for k, v in _sorted_items(expected)}
    args_grad_data = {k: nd.array(v, ctx=ctx, dtype=expected[k].dtype if dtype == "asnumpy" else dtype)
                      for k, v in args_grad_npy.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad_data, aux_states=aux_states, grad_req=grad_req)
    executor.forward(is_train=True)
    if isinstance(out_grads, (tuple, list)):
        out_grads = [_as_nd(arr, ctx, dtype) for arr in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: _as_nd(v, ctx, dtype) for k, v in out_grads.items()}
    else:
        assert out_grads is None
    executor.backward(out_grads)
    grads = args_grad_data
    for name in expected:
        names = ("EXPECTED_%s" % name, "BACKWARD_%s" % name)
        if grad_req[name] == "write":
            tu.assert_almost_equal(expected[name], grads[name], rtol, atol, names, equal_nan=equal_nan)
        elif grad_req[name] == "add":
            grad = grads[name].asnumpy() if isinstance(grads[name], nd.NDArray) else grads[name]
            tu.assert_almost_equal(expected[name], grad - args_grad_npy[name], rtol, atol, names, equal_nan=equal_nan)
        elif grad_req[name] == "null":
            tu.assert_almost_equal(args_grad_npy[name], grads[name], rtol, atol, names, equal_nan=equal_nan)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (grad_req[name], name))
    return args_grad_data


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per forward (``typ='forward'``) or forward and backward (``'whole'``) of ``sym``."""
    nd = _nd()
    ctx = ctx if ctx is not None else _tu().default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0) for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), 'Expect dict, get "location"=%s' % str(location)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **{k: v.shape for k, v in location.items()})
    for name, iarr in location.items():
        exe.arg_dict[name][:] = iarr.astype(exe.arg_dict[name].dtype)
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')
    train = typ == "whole"

    def run(times):
        for _ in range(times):
            exe.forward(is_train=train)
            if train:
                exe.backward(out_grads=exe.outputs)
        nd.waitall()

    run(1)                          # warm up
    tic = time.time()
    run(N)
    return (time.time() - tic) / N


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None, aux_params=None, rtol=None,
                      atol=None, raise_on_err=True, ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """The same symbol(s) bound per entry of ``ctx_list`` (``{'ctx': ..., name: shape, 'type_dict': ...}``)
    give the same outputs and gradients as the most precise one."""
    from ast_hybrid.symbol.graph import Symbol

    tu, nd = _tu(), _nd()
    assert len(ctx_list) > 1
    sym = [sym] * len(ctx_list) if isinstance(sym, Symbol) else sym
    assert len(sym) == len(ctx_list)
    output_names, arg_names = sym[0].list_outputs(), sym[0].list_arguments()
    exe_list = []
    for s, ctx in zip(sym, ctx_list):
        assert s.list_arguments() == arg_names
        assert s.list_outputs() == output_names
        exe_list.append(s.simple_bind(grad_req=grad_req, **ctx))
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params

    def smaller_dtype(dt1, dt2):
        return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2

    for n, arr in _sorted_items(exe_list[0].arg_dict):
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for n, arr in exe_list[0].aux_dict.items():
        if n not in aux_params:
            aux_params[n] = 0
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                arr[:] = np.zeros(arr.shape, dtype=arr.dtype)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exe_list]
    gt_idx = np.argmax(dtypes)
    gt = ground_truth
    if gt is None:
        gt = exe_list[gt_idx].output_dict.copy()
        if grad_req != "null":
            gt.update(exe_list[gt_idx].grad_dict)

    def compare(arr, gtarr, rt, at, what):
        try:
            tu.assert_almost_equal(arr, gtarr, rtol=rt, atol=at, equal_nan=equal_nan)
        except AssertionError as e:
            print(what)
            traceback.print_exc()
            if raise_on_err:
                raise e
            print(str(e))

    for exe in exe_list:
        exe.forward(is_train=False)
    for i, exe in enumerate(exe_list):
        if i != gt_idx:
            for name, arr in zip(output_names, exe.outputs):
                compare(arr, gt[name], rtol, atol, "Predict Err: ctx %d vs ctx %d at %s" % (i, gt_idx, name))
    if grad_req != "null":
        for exe in exe_list:
            exe.forward(is_train=True)
        least_precise_dtype = [out.dtype for out in exe_list[0].outputs]
        for exe in exe_list:
            least_precise_dtype = [smaller_dtype(o.dtype, dt) for o, dt in zip(exe.outputs, least_precise_dtype)]
        golden_data_np = [out.astype(dt).asnumpy() for out, dt in zip(exe_list[0].outputs, least_precise_dtype)]
        for exe in exe_list:
            exe.backward([nd.array(g, ctx=exe._ctx, dtype=out.dtype) for g, out in zip(golden_data_np, exe.outputs)])
        for i, exe in enumerate(exe_list):
            if i == gt_idx:
                continue
            for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
                if gt[name] is None:
                    assert arr is None
                    continue
                gtarr = gt[name]
                rt, at = rtol, atol
                smaller_arr_dtype = smaller_dtype(arr.dtype, dtypes[i])
                smaller_gt_dtype = smaller_dtype(gtarr.dtype, dtypes[gt_idx])
                if smaller_arr_dtype != arr.dtype or smaller_gt_dtype != gtarr.dtype:
                    rt, at = tu.get_tols(arr.astype(smaller_arr_dtype), gtarr.astype(smaller_gt_dtype), rtol, atol)
                compare(arr, gtarr, rt, at, "Train Err: {} {} ctx {} vs {} {} ctx {} at {}".format(
                    np.dtype(arr.dtype).name, arr.ctx, i, np.dtype(gtarr.dtype).name, gtarr.ctx, gt_idx, name))
    return gt
