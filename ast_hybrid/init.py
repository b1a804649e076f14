"""Initializers with MXNet 1.9.1's names, defaults, registry and protocol.

MXNet's protocol: ``init(desc, arr)`` fills the NDArray ``arr`` in place, by ``desc``'s name suffix
(``*weight`` -> ``_init_weight(desc, arr)``, ``*bias`` -> ``_init_bias``, ``*gamma``, ``*beta``, ``*min``,
``*max``; an :class:`InitDesc` whose ``attrs['__init__']`` names an initializer uses that one's
``_init_weight``; a plain name takes MXNet's legacy table, moving_mean/moving_var included), and a
subclass overrides ``_init_weight(self, name, arr)`` (and ``_init_bias``...) with ``arr[:] = ...``.
``register``/``alias`` add a class to the names ``create`` (and ``initialize('name')``) knows; ``create``
also takes MXNet's JSON (``init.dumps()``).

ast-hybrid's own calls return a value instead: ``init._init_weight(name, shape, dtype)`` (what
``gluon.Parameter`` calls: the built-ins compute it directly, a subclass's in-place ``_init_weight`` fills
zeros of that shape) and ``init(name, shape, dtype, explicit=None)`` (the name table below, gluon's
running_mean/running_var included).

    >>> import numpy as np
    >>> np.asarray(Uniform()('dense0_bias', (3,))).tolist()
    [0.0, 0.0, 0.0]
    >>> float(np.abs(np.asarray(Uniform(0.07)('dense0_weight', (50, 40)))).max()) <= 0.07
    True
"""

from __future__ import annotations

import functools
import json
import re
import warnings

import numpy as np

__all__ = ["Initializer", "InitDesc", "Uniform", "Normal", "Xavier", "MSRAPrelu", "Zero", "One", "Constant",
           "Orthogonal", "Bilinear", "LSTMBias", "FusedRNN", "Mixed", "Load", "create", "register", "alias"]


def _draw(shape, dtype, kind, scale):
    """``scale`` times uniform draws on [-1, 1) or standard normal ones, of ``shape``, made on the host by
    ``ast_hybrid.ops.rng.host_generator`` (``nd.random.seed`` makes initialisation reproducible; no XLA
    program is compiled per weight shape), as a JAX array of ``dtype``."""
    from ast_hybrid.ops.rng import host_generator

    gen = host_generator()
    dtype = _np_dtype(dtype)
    work = np.float64 if dtype == np.float64 else np.float32
    if kind == "uniform":
        value = gen.random(shape, dtype=work) * work(2 * scale) - work(scale)
    else:
        value = gen.standard_normal(shape, dtype=work) * work(scale)
    return _device(np.asarray(value).astype(dtype, copy=False))


def _np_dtype(dtype):
    import jax.numpy as jnp

    return jnp.dtype(dtype)      # bfloat16 included


def _device(value):
    """A host array on the default device (``jax.device_put``: ``jnp.asarray`` compiles a copy per shape)."""
    import jax

    return jax.device_put(value)


def _zeros(shape, dtype):
    from ast_hybrid import nd

    return nd.zeros(tuple(int(s) for s in shape), dtype=dtype)


class InitDesc(str):
    """MXNet's descriptor: the parameter's name, its ``attrs`` (``'__init__'``: its own initializer) and the
    ``global_init`` to fall back to."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def _filling_or_returning(fill):
    """A subclass's ``_init_weight(name, arr)`` (MXNet's protocol), also callable as ``(name, shape, dtype)``:
    then it fills zeros of that shape and returns their array (the call ``gluon.Parameter`` makes)."""

    @functools.wraps(fill)
    def _init_weight(self, name, arr, *dtype):
        if not dtype:
            return fill(self, name, arr)
        from ast_hybrid.core.ndarray import ndarray
        from ast_hybrid.core.npmode import MODE

        out = _zeros(arr, dtype[0])
        if MODE.array:                      # npx.set_np(): MXNet fills an mx.np array
            out = ndarray(out._arr)
        fill(self, name, out)
        return out._arr

    _init_weight.fills_in_place = True
    return _init_weight


# ast-hybrid's ``init(name, shape, dtype)``: the method each name suffix uses (gluon's names included)
_BY_SUFFIX = (("weight", "_init_weight"), ("bias", "_init_bias"), ("beta", "_init_beta"),
              ("gamma", "_init_gamma"),
              (("running_mean", "moving_mean", "min", "moving_inv_var", "moving_avg"), "_init_zero"),
              (("running_var", "moving_var", "max"), "_init_one"))
# MXNet's ``_legacy_init(name, arr)`` (a plain name), after its upsampling/stn_loc prefixes
_LEGACY = (("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"), ("weight", "_init_weight"),
           ("moving_mean", "_init_zero"), ("moving_var", "_init_one"), ("moving_inv_var", "_init_zero"),
           ("moving_avg", "_init_zero"), ("min", "_init_zero"), ("max", "_init_one"))
# MXNet's ``__call__(InitDesc, arr)``
_DESC = (("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"),
         ("min", "_init_zero"), ("max", "_init_one"))


class Initializer:
    """MXNet's base class: subclasses override ``_init_weight(self, name, arr)`` (and ``_init_bias``,
    ``_init_gamma``...) and fill ``arr`` in place; the built-ins compute ``_value(name, shape, dtype)``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fill = cls.__dict__.get("_init_weight")
        if fill is not None and not getattr(fill, "fills_in_place", False):
            cls._init_weight = _filling_or_returning(fill)

    def set_verbosity(self, verbose=False, print_func=None):
        self._verbose = verbose
        self._print_func = print_func or (lambda x: str(float(np.linalg.norm(x.asnumpy())) / np.sqrt(x.size)))
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            import logging

            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def __call__(self, desc, arr, dtype="float32", explicit=None):
        from ast_hybrid.core.ndarray import NDArray

        if not isinstance(arr, NDArray):   # ast-hybrid's call: (name, shape, dtype, explicit) -> a new array
            out = _zeros(arr, dtype)
            if explicit is not None:
                create(explicit)._init_weight(desc, out)
            else:
                self._fill_by(_BY_SUFFIX, desc, out)
            return out._arr
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
        else:
            self._fill_by(_DESC, desc, arr)

    def _fill_by(self, table, name, arr):
        for suffix, method in table:
            if name.endswith(suffix):
                getattr(self, method)(name, arr)
                self._verbose_print(name, method[6:], arr)
                return
        self._init_default(name, arr)

    def _legacy_init(self, name, arr):
        from ast_hybrid.core.ndarray import NDArray

        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. please use "
                      "init(mx.init.InitDesc(...), NDArray) instead.", DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if not isinstance(arr, NDArray):
            raise TypeError("arr must be NDArray")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        else:
            self._fill_by(_LEGACY, name, arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear(arr.shape)

    def _init_loc_bias(self, _, arr):
        assert arr.shape[0] == 6
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr, *dtype):
        """MXNet's: fill ``arr`` (subclasses override); ``(name, shape, dtype)``: the value, a new array."""
        if dtype:
            return self._value(name, tuple(int(s) for s in arr), dtype[0])
        arr[:] = self._value(name, arr.shape, arr.dtype)

    _init_weight.fills_in_place = True

    def _value(self, name, shape, dtype):
        raise NotImplementedError("Must override it")

    def _init_default(self, name, _):
        raise ValueError(f"Unknown initialization pattern for {name}. Default initialization is now limited to "
                         '"weight", "bias", "gamma" (1.0), and "beta" (0.0).Please use '
                         "mx.sym.Variable(init=mx.init.*) to set initialization pattern")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def dumps(self):
        return json.dumps([type(self).__name__.lower(), self._kwargs])


_REGISTRY: dict = {}


def register(klass, name=None):
    """MXNet's ``mx.init.register``: ``create`` (and ``initialize('name')``) finds ``klass`` by its lower-cased
    class name (or ``name``)."""
    assert issubclass(klass, Initializer), "Can only register subclass of Initializer"
    name = (name or klass.__name__).lower()
    if name in _REGISTRY:
        old = _REGISTRY[name]
        warnings.warn(f"New initializer {klass.__module__}.{klass.__name__} registered with name {name} is"
                      f"overriding existing initializer {old.__module__}.{old.__name__}", UserWarning,
                      stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """MXNet's ``@mx.init.alias('name', ...)``: register the class under these names too."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass

    return reg


@register
@alias("zeros")
class Zero(Initializer):
    def _value(self, name, shape, dtype):
        return _device(np.zeros(shape, _np_dtype(dtype)))


@register
@alias("ones")
class One(Initializer):
    def _value(self, name, shape, dtype):
        return _device(np.ones(shape, _np_dtype(dtype)))


@register
class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _value(self, name, shape, dtype):
        from ast_hybrid.ops._core import raw

        value = np.asarray(raw(self.value)).astype(_np_dtype(dtype))
        return _device(np.ascontiguousarray(np.broadcast_to(value, shape)))

    def dumps(self):
        val = self._kwargs["value"]
        if not np.isscalar(val):
            self._kwargs["value"] = val.tolist() if isinstance(val, np.ndarray) else val.asnumpy().tolist()
        return json.dumps([type(self).__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Uniform on [-scale, scale] (MXNet's default initializer, scale 0.07)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _value(self, name, shape, dtype):
        return _draw(shape, dtype, "uniform", self.scale)


@register
class Normal(Initializer):
    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _value(self, name, shape, dtype):
        return _draw(shape, dtype, "normal", self.sigma)


@register
class Xavier(Initializer):
    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _value(self, name, shape, dtype):
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It requires at least 2D.")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}.get(self.factor_type)
        if factor is None:
            raise ValueError("Incorrect factor type")
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type not in ("uniform", "gaussian"):
            raise ValueError("Unknown random type")
        return _draw(shape, dtype, self.rnd_type, scale)


@register
class MSRAPrelu(Xavier):
    def __init__(self, factor_type="avg", slope=0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Orthogonal(Initializer):
    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale, self.rand_type = scale, rand_type

    def _value(self, name, shape, dtype):
        nout, nin = shape[0], int(np.prod(shape[1:]))
        tmp = np.asarray(_draw((nout, nin), "float32", "uniform" if self.rand_type == "uniform" else "normal", 1.0))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)     # MXNet's numpy SVD, on the host
        q = u if u.shape == tmp.shape else v
        return _device((self.scale * q.reshape(shape)).astype(_np_dtype(dtype)))


def _bilinear(shape):
    """MXNet's bilinear upsampling kernel for a (..., h, w) weight (float32, as MXNet fills it)."""
    f = np.ceil(shape[3] / 2.)
    c = (2 * f - 1 - f % 2) / (2. * f)
    x = np.arange(shape[3])
    y = np.arange(shape[2])[:, None]
    kernel = ((1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))).astype("float32")
    return np.broadcast_to(kernel, shape)


@register
class Bilinear(Initializer):
    """Weights for upsampling layers (a (c, 1, h, w) deconvolution weight)."""

    def __init__(self):
        super().__init__()

    def _value(self, name, shape, dtype):
        return _device(np.ascontiguousarray(_bilinear(shape)).astype(_np_dtype(dtype)))


@register
class LSTMBias(Initializer):
    """An LSTM cell's biases: 0, but ``forget_bias`` for the forget gate (the second quarter)."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _value(self, name, shape, dtype):
        num_hidden = int(shape[0] / 4)
        value = np.zeros(shape, _np_dtype(dtype))
        value[num_hidden:2 * num_hidden] = self.forget_bias
        return _device(value)


@register
class FusedRNN(Initializer):
    """A fused RNN's flat ``parameters`` vector (legacy ``mx.rnn.FusedRNNCell``): each gate's weight by
    ``init`` (None: the global initializer, by its name), biases 0 but an LSTM's forget gate's ``forget_bias``,
    as MXNet 1.9.1 initialises the unpacked pieces."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False, forget_bias=1.0):
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=init.dumps() if init is not None else None, num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional, forget_bias=forget_bias)
        self._init, self._num_hidden, self._num_layers = init, num_hidden, num_layers
        self._mode, self._bidirectional, self._forget_bias = mode, bidirectional, forget_bias

    def _init_weight(self, desc, arr):
        from ast_hybrid.ops.rnn import GATES, param_layout

        b, m, h = 1 + bool(self._bidirectional), GATES[self._mode], self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        flat = np.zeros(arr.shape, _np_dtype(arr.dtype))
        global_init = getattr(desc, "global_init", None) or Uniform()      # (gluon's call: MXNet's default)
        for name, offset, shape in param_layout(self._mode, self._num_layers, self._bidirectional, num_input, h):
            piece = _zeros(shape, arr.dtype)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                piece[:] = self._forget_bias
            elif self._init is None:
                global_init(InitDesc(name, global_init=global_init), piece)
            else:
                self._init(InitDesc(name, global_init=global_init), piece)
            flat[offset:offset + piece.size] = piece.asnumpy().reshape(-1)
        arr[:] = flat


class Mixed:
    """MXNet's ``Mixed(patterns, initializers)``: ``init(name, arr)`` uses the initializer of the first
    regular expression that matches ``name``."""

    def __init__(self, patterns, initializers):
        assert len(patterns) == len(initializers)
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError("Parameter name %s did not match any pattern. Consider" +
                         'add a ".*" pattern at the and with default Initializer.')


class Load:
    """MXNet's ``Load(param, default_init=None, verbose=False)``: ``init(name, arr)`` copies the array of that
    name (``arg:``/``aux:`` prefixes dropped) from a ``.params`` file or a dict, else uses ``default_init``."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            from ast_hybrid import nd

            param = nd.load(param)
        assert isinstance(param, dict)
        self.param = {name[4:] if name.startswith(("arg:", "aux:")) else name: arr for name, arr in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        import logging

        if name in self.param:
            assert arr.shape == self.param[name].shape, \
                f"Parameter {name} cannot be initialized from loading. Shape mismatch, target " \
                f"{arr.shape} vs loaded {self.param[name].shape}"
            arr[:] = self.param[name]
            if self.verbose:
                logging.info("Initialized %s by loading", name)
        else:
            assert self.default_init is not None, \
                f"Cannot Initialize {name}. Not found in loaded param and no default Initializer is provided."
            self.default_init(name, arr)
            if self.verbose:
                logging.info("Initialized %s by default", name)


def create(*args, **kwargs) -> Initializer:
    """MXNet's ``mx.init.create``: an instance as it is, a registered name (``'zeros'``, ``'xavier'``, a
    class given to ``register``...) made with the other arguments, MXNet's JSON (``dumps()``) or a dict
    (``{'initializer': name, ...}``); None: Uniform."""
    init, args = (args[0], args[1:]) if args else (kwargs.pop("initializer", None), ())
    if init is None:
        return Uniform()
    if isinstance(init, Initializer):
        assert not args and not kwargs, "initializer is already an instance. Additional arguments are invalid"
        return init
    if isinstance(init, dict):
        return create(**init)
    assert isinstance(init, str), "initializer must be of string type"
    if init.startswith(("[", "{")):
        assert not args and not kwargs
    if init.startswith("["):
        name, kw = json.loads(init)
        return create(name, **kw)
    if init.startswith("{"):
        return create(**json.loads(init))
    name = init.lower()
    assert name in _REGISTRY, f"{name} is not registered. Please register with initializer.register first"
    return _REGISTRY[name](*args, **kwargs)
