"""The functional door to JAX: ``functional(net) -> (apply_fn, params)``.

``params`` is a dict ``{parameter name: jax array}`` (a pytree) and
``apply_fn(params, *inputs, training=False, key=None)`` is pure: it reads only
its arguments, so it composes with ``jax.jit``, ``jax.grad``, ``jax.vmap`` and
optax.  In training mode it returns ``(output, new_aux)`` where ``new_aux``
holds the running statistics (BatchNorm) as one MXNet training step leaves them, by name.

Inside, a network that convolves runs its convolutions channel-last (NHWC), forward and, when you
differentiate it, backward, as a hybridized block's programs do (``xla/channel_last.py``; the values are the
same operations in another storage order): your params and inputs stay NCHW.  ``AST_HYBRID_CHANNEL_LAST=predict``
(or ``0``), read when your function traces, keeps the program as written.

It scales as any jax function does: under ``jax.jit`` with the inputs laid out by
``NamedSharding(mesh, P('data'))`` and ``params`` replicated, XLA splits the batch over the
devices and sums the gradients inside the step (``examples/sharded_optax.py``, ``docs/distributed.md``).

    >>> import jax, jax.numpy as jnp
    >>> from ast_hybrid.gluon import nn
    >>> net = nn.Dense(2, in_units=3, prefix='f_'); net.initialize()
    >>> apply_fn, params = functional(net)
    >>> sorted(params)
    ['f_bias', 'f_weight']
    >>> jax.grad(lambda p: apply_fn(p, jnp.ones((1, 3))).sum())(params)['f_bias'].tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

__all__ = ["functional"]


def functional(net, *example_inputs):
    """``(apply_fn, params)`` for ``net``; give example inputs if some shapes are still deferred."""
    from ast_hybrid.gluon.programs import run_bound, strip

    plist = list(net.collect_params().values())
    if any(p._value is None for p in plist):
        if not example_inputs:
            missing = [p.name for p in plist if p._value is None]
            raise ValueError(f"Parameter {missing[0]!r} is not initialized (deferred shape?): call "
                             "net.initialize() and run the net once, or pass example inputs to functional()")
        net._call_imperative(*example_inputs) if hasattr(net, "_call_imperative") else net(*example_inputs)
    names = [p.name for p in plist]
    params = {p.name: p._value for p in plist}

    def apply_fn(params, *inputs, training=False, key=None):
        import jax
        import numpy as np

        from ast_hybrid.xla import program

        if training and key is None:
            key = jax.random.PRNGKey(0)

        def body(params, key, inputs):
            leaves = tuple(params[n] for n in names)
            # a training step: the parameters that get gradients in Gluon are differentiated, the inputs not
            # (which BatchNorm layers then update their running statistics: autograd's module doc)
            needs = tuple(p.grad_req != "null" for p in plist) + (False,) * len(inputs) if training else None
            out, writes, running = run_bound(net, plist, leaves, key, training, inputs, needs)
            if training:
                writes.update({i: v for i, (v, _) in running.items()})
                return strip(out), {names[i]: v for i, v in writes.items()}
            return strip(out)

        if not program.training_enabled():
            return body(params, key, inputs)
        # convolutions channel-last inside, forward and (when differentiated) backward, as a hybridized block's
        # programs run (xla/channel_last.py): the arrays among the inputs are arguments, anything else as given
        arrays = [i for i, x in enumerate(inputs) if isinstance(x, (jax.Array, np.ndarray))]

        def traced(params, key, xs):
            full = list(inputs)
            for i, x in zip(arrays, xs):
                full[i] = x
            return body(params, key, tuple(full))

        xs = [inputs[i] for i in arrays]
        return program.differentiable(traced, params, key, xs)(params, key, xs)

    return apply_fn, params
