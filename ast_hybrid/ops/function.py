"""MXNet's ``autograd.Function`` (custom gradients): the user's ``forward`` and ``backward`` become one
``jax.custom_vjp``, as a custom operator's do (``ops/custom.py``'s docstring says how they run and how their
errors read; ``ops/custom_lowering.py`` holds the pieces both lowerings share).

A Function declares no output shapes: where its code reads values on the host inside a compiled program, they
are taken from a trial run of its forward on sample inputs, and each real run is checked against them.  What
the user's object keeps from forward to backward (``saved_tensors``, ``self.y = ...``) travels as residuals.

The public name is ``ast_hybrid.autograd.Function``, which re-exports :class:`Function`.  Not MXNet API:
:func:`call_function`.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.core import autograd
from ast_hybrid.core.errors import CustomError
from ast_hybrid.core.ndarray import ARRAYS, NDArray
from ast_hybrid.ops.custom_lowering import (ON_HOST, HostNeeded, array_spec, call_user, caller_site, clean_call,
                                            cotangent, definition_site, host_call, is_traced, method_name,
                                            note_host, recorded_call, return_site)

__all__ = ["Function", "call_function"]


# --- state the user's object keeps from forward to backward ----------------------------------

def _stash(obj):
    """The arrays ``obj`` holds after its forward (``saved_tensors``, ``self.y = ...``): (layout, arrays)."""
    layout, arrays = [], []
    for k, v in vars(obj).items():
        if v.__class__ in ARRAYS:
            layout.append((k, None, 1))
            arrays.append(v._arr)
        elif isinstance(v, (list, tuple)) and v and all(x.__class__ in ARRAYS for x in v):
            layout.append((k, type(v), len(v)))
            arrays.extend(x._arr for x in v)
    return layout, arrays


def _unstash(obj, layout, arrays):
    """Put the residual ``arrays`` back on ``obj`` where :func:`_stash` found them."""
    i = 0
    for k, kind, n in layout:
        vals = [NDArray(a) for a in arrays[i:i + n]]
        i += n
        object.__setattr__(obj, k, vals[0] if kind is None else kind(vals))


# --- autograd.Function ---------------------------------------------------------------------

class Function:
    """Customize differentiation (MXNet's ``autograd.Function``): subclass it with ``forward(self, *inputs)``
    and ``backward(self, *output_grads)`` (one NDArray per input of forward), keep what backward needs with
    ``self.save_for_backward(*arrays)`` (read back as ``self.saved_tensors``), and call an instance once.

    As in MXNet, ``forward`` runs with recording off and its result is returned as it returned it; while
    recording, the call goes on the tape with the user's ``backward`` as its gradient.  The two are one
    ``jax.custom_vjp`` (this module), so inside a hybridized block and under ``jax.grad`` through
    ``functional(net)`` both are traced into the compiled program (a forward or backward that calls
    ``asnumpy()`` runs on the host through ``jax.pure_callback``, forward's output shapes taken from a trial
    run).  (MXNet 1.9.1 itself cannot hybridize a block that calls a
    Function.)

        >>> from ast_hybrid import nd, autograd
        >>> class Reverse(autograd.Function):
        ...     def forward(self, x):
        ...         return x * 1
        ...     def backward(self, dy):
        ...         return -dy
        >>> x = nd.array([1., 2.]); x.attach_grad()
        >>> with autograd.record():
        ...     y = Reverse()(x * 2)
        >>> y.backward(); x.grad.asnumpy().tolist()
        [-2.0, -2.0]
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        return call_function(self, inputs)

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError


def call_function(fn_obj, inputs):
    """``Function.__call__``: MXNet's protocol (module doc of ``ast_hybrid.autograd``), lowered to
    ``jax.custom_vjp`` when a gradient may be taken (recording, or traced values)."""
    from ast_hybrid.ops._core import op

    assert not fn_obj._used, "Each Function instance can only be called once. Please create another instance."
    fn_obj._used = True
    arrays = [x._arr for x in inputs if x.__class__ in ARRAYS]
    traced = is_traced(arrays)
    tracked = any(x._ag is not None for x in inputs if x.__class__ in ARRAYS)
    if not traced and not (autograd.is_recording() and tracked):
        return _function_outputs(fn_obj, call_user(fn_obj, "forward", *inputs))
    shape = []       # how forward returned its outputs: NDArray, tuple or list (filled by the first run)
    lowered = _lower_function(fn_obj, inputs, shape, traced, caller_site())
    arrays = [x for x in inputs if x.__class__ in ARRAYS]
    result = clean_call(op(lowered, name=type(fn_obj).__name__) if traced else recorded_call(lowered), arrays)
    result = result if isinstance(result, list) else [result]
    kind = shape[0]
    return result[0] if kind is None else kind(result)


def _function_outputs(fn_obj, outputs):
    """Check what ``forward`` returned (an NDArray, or a tuple/list of them) and return it."""
    items = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    for o in items:
        if o.__class__ not in ARRAYS:
            raise CustomError(f"{method_name(fn_obj, 'forward')} ({definition_site(fn_obj.forward)}) returned a "
                              f"{type(o).__name__}; autograd.Function.forward must return NDArrays")
    return outputs


def _lower_function(fn_obj, inputs, shape, traced, site):
    """``raw arrays -> tuple of raw outputs``, a ``jax.custom_vjp`` whose backward is the user's."""
    import jax

    positions = [i for i, x in enumerate(inputs) if x.__class__ in ARRAYS]
    state = {}

    fwd_key = (type(fn_obj), "forward")

    def run(arrays, traced=False):
        """The user's forward on ``arrays``: (outputs, layout of the saved arrays, saved arrays)."""
        args = list(inputs)
        for i, a in zip(positions, arrays):
            args[i] = NDArray(a)
        out = _function_outputs(fn_obj, call_user(fn_obj, "forward", *args, traced=traced))
        if not shape:
            shape.append(None if out.__class__ in ARRAYS else type(out))
        outs = (out,) if out.__class__ in ARRAYS else tuple(out)
        return (tuple(o._arr for o in outs), *_stash(fn_obj))

    def forward(*arrays):
        if is_traced(arrays) and not ON_HOST.get(fwd_key):
            try:
                return run(arrays, traced=True)
            except HostNeeded:
                ON_HOST[fwd_key] = True
        if is_traced(arrays):
            return _function_on_host(fn_obj, run, arrays)
        return run(arrays)

    @jax.custom_vjp
    def lowered(*arrays):
        return forward(*arrays)[0]

    def fwd(*arrays):
        outs, layout, saved = forward(*arrays)
        state["layout"], state["outs"] = layout, [array_spec(o.shape, o.dtype) for o in outs]
        return outs, (tuple(arrays), tuple(saved))

    def bwd(res, cts):
        arrays, saved = res
        specs = [array_spec(np.shape(a), a.dtype) for a in arrays]
        run = _function_backward(fn_obj, state["layout"], len(saved), specs, site)
        key = (type(fn_obj), "backward")
        grads = None
        if is_traced(list(saved) + list(cts)) and not ON_HOST.get(key):
            try:
                grads = run(*saved, *cts, traced=True)
            except HostNeeded:
                ON_HOST[key] = True
        if grads is None:
            if is_traced(list(saved) + list(cts)):
                note_host(key, type(fn_obj).__name__, "backward")
                grads = host_call(run, specs, *saved, *cts)
            else:
                grads = run(*saved, *cts)
        return tuple(cotangent(a, g) for a, g in zip(arrays, grads))

    lowered.defvjp(fwd, bwd)
    return lowered


def _function_on_host(fn_obj, run, arrays):
    """``run`` (a Function's forward, :func:`_lower_function`) on traced ``arrays`` through
    ``jax.pure_callback``.  A Function declares no output shapes: they, and those of the arrays it keeps for
    backward, are taken from a trial run on sample values of the inputs' shapes; each real run is checked
    against them (outputs whose shapes depend on the values cannot be in a compiled program)."""
    import jax

    who = method_name(fn_obj, "forward")
    with np.errstate(all="ignore"), jax.ensure_compile_time_eval():     # eagerly, inside the trace
        try:
            outs, layout, saved = run([_sample(a) for a in arrays])
        except CustomError as exc:
            raise CustomError(
                f"{who} ({definition_site(fn_obj.forward)}), called at {caller_site()}, reads a traced value on the "
                "host (asnumpy() or similar) inside a compiled program; to run it on the host, its output shapes were "
                f"sought by a trial run on sample inputs, which failed: {exc}.  Write its forward with NDArray ops "
                "(its backward may use asnumpy), or call the block without hybridize()") from None
    trial = [array_spec(np.shape(a), a.dtype) for a in (*outs, *saved)]
    n_out = len(outs)

    def on_host(*values):
        got_outs, got_layout, got_saved = run(values)
        got = [array_spec(np.shape(a), a.dtype) for a in (*got_outs, *got_saved)]
        if got != trial or got_layout != layout:
            raise CustomError(f"{who} ({definition_site(fn_obj.forward)}) gave outputs and saved arrays of shapes "
                              f"{[g.shape for g in got]} here, {[t.shape for t in trial]} in its trial run on "
                              "sample inputs: inside a compiled program their shapes must not depend on the "
                              "values; call the block without hybridize()")
        return [*got_outs, *got_saved]

    note_host((type(fn_obj), "forward"), type(fn_obj).__name__, "forward")
    result = host_call(on_host, trial, *arrays)
    return tuple(result[:n_out]), layout, list(result[n_out:])


def _sample(a):
    """A host array of ``a``'s shape and dtype for a trial run: values in [0.5, 1.5) (no zero, no negative),
    ones for integers and booleans."""
    import jax.numpy as jnp

    shape, dtype = tuple(np.shape(a)), np.dtype(a.dtype)
    if dtype.kind in "fc":
        return jnp.asarray(np.random.default_rng(0).uniform(0.5, 1.5, shape).astype(dtype))
    return jnp.ones(shape, dtype)


def _function_backward(fn_obj, layout, n_saved, specs, site):
    """``(*saved, *output grads) -> input grads``: the user's backward on NDArrays, its result checked (an error
    names the return statement and ``site``, where the Function was called)."""

    def where():
        return f"{method_name(fn_obj, 'backward')} ({return_site(fn_obj.backward)}; the Function called at {site})"

    def run(*values, traced=False):
        _unstash(fn_obj, layout, values[:n_saved])
        rets = call_user(fn_obj, "backward", *[NDArray(g) for g in values[n_saved:]], traced=traced)
        rets = (rets,) if rets.__class__ in ARRAYS else rets
        if not isinstance(rets, (list, tuple)) or len(rets) != len(specs):
            got = len(rets) if isinstance(rets, (list, tuple)) else type(rets).__name__
            raise CustomError(f"{where()} returned {got} gradient(s); forward took {len(specs)} NDArray input(s): "
                              "backward must return exactly one NDArray per input of forward")
        for i, (r, s) in enumerate(zip(rets, specs)):
            if r.__class__ not in ARRAYS:
                raise CustomError(f"{where()} returned a {type(r).__name__} as gradient {i}: autograd.Function."
                                  "backward must return NDArrays")
            if tuple(r.shape) != tuple(s.shape):
                raise CustomError(f"{where()} returned a gradient of shape {tuple(r.shape)} for input {i} of "
                                  f"shape {tuple(s.shape)}")
        return [r._arr for r in rets]

    return run
