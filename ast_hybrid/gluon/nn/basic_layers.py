"""Basic Gluon layers with MXNet 1.9.1's constructor signatures and parameter names.

    >>> from ast_hybrid.gluon import nn
    >>> nn.Dense(256, activation='relu', in_units=512, prefix='d_')
    Dense(512 -> 256, Activation(relu))
"""

from __future__ import annotations

import warnings

from ast_hybrid.gluon.block import Block, HybridBlock
from ast_hybrid.ops._core import raw

__all__ = ["Sequential", "HybridSequential", "Dense", "BatchNorm", "BatchNormReLU", "LayerNorm", "InstanceNorm",
           "GroupNorm", "Embedding", "LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish", "Activation", "Dropout",
           "Flatten", "Identity", "Lambda", "HybridLambda", "Concurrent", "HybridConcurrent"]


class Sequential(Block):
    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        for block in blocks:
            self.register_child(block)

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. Consider using "
                          "HybridSequential for the best performance.", stacklevel=2)
        super().hybridize(active, **kwargs)

    def forward(self, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args, x = tuple(x[1:]), x[0]
        return (x, *args) if args else x

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class HybridSequential(HybridBlock):
    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    add = Sequential.add
    __getitem__ = Sequential.__getitem__
    __len__ = Sequential.__len__

    def hybrid_forward(self, F, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args, x = tuple(x[1:]), x[0]
        return (x, *args) if args else x


class Dense(HybridBlock):
    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units), init=weight_initializer,
                                          dtype=dtype, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def infer_shape(self, x, *args):
        import numpy as np

        shape = raw(x).shape
        in_units = int(np.prod(shape[1:])) if self._flatten else int(shape[-1])
        self.weight.shape = (self._units, in_units)

    def hybrid_forward(self, F, x, weight, bias=None):
        act = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        if self.act is not None:
            act = self.act(act)
        return act

    def __repr__(self):
        from ast_hybrid.gluon.parameter import _shown

        shape = _shown(self.weight.shape)
        layout = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{type(self).__name__}({layout}, {self.act if self.act else 'linear'})"


class Activation(HybridBlock):
    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}({self._act_type})"


class Dropout(HybridBlock):
    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd")
        return x

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return type(self).__name__


class Identity(HybridBlock):
    def hybrid_forward(self, F, x):
        return x


class Lambda(Block):
    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            from ast_hybrid import nd

            function = getattr(nd, function)
        self._func = function

    def forward(self, *args):
        return self._func(*args)

    def __repr__(self):
        return f"{type(self).__name__}({getattr(self._func, '__name__', self._func)})"


class HybridLambda(HybridBlock):
    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            name = function
            function = lambda F, *args: getattr(F, name)(*args)  # noqa: E731
            function.__name__ = name
        self._func = function

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{type(self).__name__}({getattr(self._func, '__name__', self._func)})"


class Concurrent(Sequential):
    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        from ast_hybrid import nd

        return nd.concat(*[b(x) for b in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[b(x) for b in self._children.values()], dim=self.axis)


class BatchNorm(HybridBlock):
    """MXNet's BatchNorm layer; a training step's backward moves the running statistics by the momentum rule
    ``running = running * momentum + batch * (1 - momentum)`` (``ops.normalization``)."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True, use_global_stats=False,
                 beta_initializer="zeros", gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats}
        self._axis = axis
        self.in_channels = in_channels
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null", shape=(in_channels,),
                                     init=gamma_initializer, allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null", shape=(in_channels,),
                                    init=beta_initializer, allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null", shape=(in_channels,),
                                            init=running_mean_initializer, allow_deferred_init=True,
                                            differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null", shape=(in_channels,),
                                           init=running_variance_initializer, allow_deferred_init=True,
                                           differentiable=False)

    def infer_shape(self, x, *args):
        c = int(raw(x).shape[self._axis])
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (c,)

    def cast(self, dtype):
        import numpy as np

        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    _fuse_relu = False

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        norm = F.contrib.BatchNormWithReLU if self._fuse_relu else F.BatchNorm
        # in training, the op calls _update_running when the backward differentiates it (MXNet's aux states)
        return norm(x, gamma, beta, running_mean, running_var, name="fwd", update=self._update_running,
                    **self._kwargs)

    def _update_running(self, mean, var, momentum):
        """The running statistics' update with a batch's mean and (biased) variance: what BatchNorm's
        backward does to them."""
        self.running_mean.update_running(mean, momentum)
        self.running_var.update_running(var, momentum)

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        args = ", ".join(f"{k}={v}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args}, in_channels={in_channels if in_channels else None})"


class BatchNormReLU(BatchNorm):
    """BatchNorm followed by ReLU, MXNet's fused layer (``contrib.BatchNormWithReLU``); BatchNorm's parameters."""

    _fuse_relu = True


class _Norm(HybridBlock):
    """LayerNorm / InstanceNorm / GroupNorm: ``gamma`` and ``beta`` over the channel axis."""

    _op = ""

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer, in_channels,
                 **kwargs):
        super().__init__(**kwargs)
        self._axis = axis
        self._kwargs = {"eps": epsilon}
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null", shape=(in_channels,),
                                     init=gamma_initializer, allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null", shape=(in_channels,),
                                    init=beta_initializer, allow_deferred_init=True)

    def infer_shape(self, x, *args):
        c = int(raw(x).shape[self._axis])
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def __repr__(self):
        eps, c = self._kwargs["eps"], self.gamma.shape[0] or None
        return f"{type(self).__name__}(axis={self._axis}, eps={eps}, in_channels={c})"


class LayerNorm(_Norm):
    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, prefix=None, params=None):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, in_channels,
                         prefix=prefix, params=params)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._kwargs["eps"])


class InstanceNorm(_Norm):
    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, in_channels,
                         **kwargs)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, eps=self._kwargs["eps"], name="fwd")
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, eps=self._kwargs["eps"], name="fwd").swapaxes(1, self._axis)


class GroupNorm(HybridBlock):
    """MXNet 1.9.1's GroupNorm: ``gamma`` and ``beta`` have one value per GROUP (shape (num_groups,))."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center, "scale": scale}
        self._num_groups = num_groups
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null", shape=(num_groups,),
                                     init=gamma_initializer, allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null", shape=(num_groups,),
                                    init=beta_initializer, allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._kwargs["eps"])

    def __repr__(self):
        return f"{type(self).__name__}(num_groups={self._num_groups}, eps={self._kwargs['eps']})"


class Embedding(HybridBlock):
    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, sparse_grad=False,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class LeakyReLU(HybridBlock):
    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise ValueError("Slope coefficient for LeakyReLU must be no less than 0.")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}({self._alpha})"


class PReLU(HybridBlock):
    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super().__init__(**kwargs)
        from ast_hybrid import init as _init

        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,),
                                         init=alpha_initializer if alpha_initializer is not None
                                         else _init.Constant(0.25))

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name="fwd")
