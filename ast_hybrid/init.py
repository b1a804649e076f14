"""Initializers with MXNet 1.9.1's names, defaults and name-suffix dispatch.

``Initializer.__call__(name, shape, dtype)`` returns a new array (jax).  As in
MXNet's ``Initializer.__call__``: an explicit per-parameter init wins;
otherwise the parameter's name decides: ``*weight`` uses this initializer's
rule, ``*bias``/``*beta``/``*running_mean``/``*moving_mean``/``*min`` get
zeros, ``*gamma``/``*running_var``/``*moving_var``/``*max`` get ones.

    >>> import numpy as np
    >>> np.asarray(Uniform()('dense0_bias', (3,))).tolist()
    [0.0, 0.0, 0.0]
    >>> float(np.abs(np.asarray(Uniform(0.07)('dense0_weight', (50, 40)))).max()) <= 0.07
    True
"""

from __future__ import annotations

import numpy as np

__all__ = ["Initializer", "Uniform", "Normal", "Xavier", "MSRAPrelu", "Zero", "One", "Constant",
           "Orthogonal", "create"]


def _key():
    """A fresh key from ``ast_hybrid.ops.rng`` (``nd.random.seed`` makes initialisation reproducible)."""
    from ast_hybrid.ops.rng import next_key

    return next_key()


class Initializer:
    """Base class: subclasses define ``_init_weight(name, shape, dtype)``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __call__(self, name: str, shape, dtype="float32", explicit=None):
        import jax.numpy as jnp

        shape = tuple(int(s) for s in shape)
        if explicit is not None:
            return create(explicit)._init_weight(name, shape, dtype)
        if name.endswith(("weight",)):
            return self._init_weight(name, shape, dtype)
        if name.endswith(("bias", "beta", "running_mean", "moving_mean", "min", "moving_inv_var",
                          "moving_avg")):
            return jnp.zeros(shape, dtype)
        if name.endswith(("gamma", "running_var", "moving_var", "max")):
            return jnp.ones(shape, dtype)
        return self._init_default(name, shape, dtype)

    def _init_default(self, name, shape, dtype):
        raise ValueError(f"Unknown initialization pattern for {name!r}: the default initialization is "
                         "only defined for names ending in weight, bias, gamma, beta, running_mean, "
                         "running_var; give the parameter an explicit init")

    def _init_weight(self, name, shape, dtype):
        raise NotImplementedError(type(self).__name__ + " must define _init_weight")

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def dumps(self):
        import json

        return json.dumps([type(self).__name__.lower(), self._kwargs])


class Zero(Initializer):
    def _init_weight(self, name, shape, dtype):
        import jax.numpy as jnp

        return jnp.zeros(shape, dtype)


class One(Initializer):
    def _init_weight(self, name, shape, dtype):
        import jax.numpy as jnp

        return jnp.ones(shape, dtype)


class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, name, shape, dtype):
        import jax.numpy as jnp

        return jnp.broadcast_to(jnp.asarray(self.value, dtype), shape)


class Uniform(Initializer):
    """Uniform on [-scale, scale] (MXNet's default initializer, scale 0.07)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, name, shape, dtype):
        import jax

        return jax.random.uniform(_key(), shape, dtype, -self.scale, self.scale)


class Normal(Initializer):
    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, name, shape, dtype):
        import jax

        return jax.random.normal(_key(), shape, dtype) * self.sigma


class Xavier(Initializer):
    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, shape, dtype):
        import jax

        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It requires at least 2D.")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}.get(self.factor_type)
        if factor is None:
            raise ValueError("Incorrect factor type")
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == "uniform":
            return jax.random.uniform(_key(), shape, dtype, -scale, scale)
        if self.rnd_type == "gaussian":
            return jax.random.normal(_key(), shape, dtype) * scale
        raise ValueError("Unknown random type")


class MSRAPrelu(Xavier):
    def __init__(self, factor_type="avg", slope=0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


class Orthogonal(Initializer):
    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale, self.rand_type = scale, rand_type

    def _init_weight(self, name, shape, dtype):
        import jax
        import jax.numpy as jnp

        nout, nin = shape[0], int(np.prod(shape[1:]))
        if self.rand_type == "uniform":
            tmp = jax.random.uniform(_key(), (nout, nin), "float32", -1.0, 1.0)
        else:
            tmp = jax.random.normal(_key(), (nout, nin), "float32")
        u, _, v = jnp.linalg.svd(tmp, full_matrices=False)
        q = u if u.shape == tmp.shape else v
        return (self.scale * q.reshape(shape)).astype(dtype)


_ALIASES = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "uniform": Uniform, "normal": Normal,
            "xavier": Xavier, "msraprelu": MSRAPrelu, "constant": Constant, "orthogonal": Orthogonal}


def create(init) -> Initializer:
    """An initializer from an instance, a name (``'zeros'``, ``'xavier'``...) or None (Uniform)."""
    if init is None:
        return Uniform()
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise ValueError(f"unknown initializer {init!r}; known: {', '.join(sorted(_ALIASES))}")
        return cls()
    raise TypeError(f"expected an Initializer or a name, got {type(init).__name__}")
