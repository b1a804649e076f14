"""What every vision family shares: its named constructors (``resnet18_v1(**kwargs)`` is
``get_resnet(1, 18, **kwargs)``) and ``pretrained=True``, which uses MXNet's weights only where MXNet already
left them on disk (``<root>/<name>-<short sha1>.params``, checked against MXNet's sha1 table); ast-hybrid
downloads nothing, and otherwise says so and how to get them (``model_store.get_model_file``'s error)."""

from __future__ import annotations


def load_pretrained(net, name, ctx=None, root=None):
    """Load MXNet's pretrained ``name`` into ``net`` from ``root`` (MXNet's default ``$MXNET_HOME/models``)."""
    from ast_hybrid.gluon.model_zoo.model_store import get_model_file

    path = get_model_file(name) if root is None else get_model_file(name, root=root)
    net.load_parameters(path, ctx=ctx)
    return net


def constructor(name, build, *args, **fixed):
    """The function ``name(**kwargs)`` = ``build(*args, **kwargs, **fixed)`` (``fixed`` wins, as in MXNet's
    ``vgg11_bn``, which sets ``batch_norm=True`` whatever the caller passed)."""
    def construct(**kwargs):
        return build(*args, **{**kwargs, **fixed})

    construct.__name__ = construct.__qualname__ = name
    given = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in fixed.items()]
    construct.__doc__ = (f"{name}(pretrained=False, ctx=None, root=None, **kwargs): "
                         f"``{build.__name__}({', '.join(given)}, ...)``")
    return construct
