"""``mxnet.gluon.utils``: splitting a batch across devices, ``clip_global_norm``, file helpers.

As MXNet 1.9.1's (``tests/mxnet/test_gluon_utils.py`` compares them with it): ``split_data`` cuts along
``batch_axis`` with the first ``size % num_slice`` slices one longer; ``split_and_load`` moves each slice
to its context; ``clip_global_norm`` rescales the arrays in place and returns the total norm.
``download`` is an error: ast-hybrid works offline and fetches nothing.
"""

from __future__ import annotations

import hashlib
import os
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from ast_hybrid import nd
from ast_hybrid.core import settings

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download", "replace_file",
           "shape_is_known", "DownloadUnavailable", "HookHandle"]


class HookHandle:
    """What ``Block.register_forward_hook``/``register_forward_pre_hook`` return (MXNet's): ``detach()``
    removes the hook; as a context manager, it is removed on leaving."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        assert not self._hooks_dict_ref, "The same handle cannot be attached twice."
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks_dict = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref() if self._hooks_dict_ref is not None else None, self._id)

    def __setstate__(self, state):
        self._hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


class DownloadUnavailable(OSError):
    """``download(url)``: ast-hybrid does not fetch files."""


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """``num_slice`` NDArrays cut from ``data`` along ``batch_axis`` (a list even for one slice)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along axis "
            f"{batch_axis}. Use a batch size that's multiple of {num_slice} or set even_split=False to allow "
            "uneven partitioning of data.")
    if size < num_slice and batch_axis != 0:      # MXNet's slice_axis fails on the empty ranges; say why
        raise ValueError(
            f"data with shape {data.shape} cannot be split into {num_slice} slices along axis {batch_axis}: it "
            f"has only {size} there. Use at most {size} slices (fewer contexts) or a larger batch.")
    each, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extras + [each] * (num_slice - extras))
    if batch_axis == 0:       # MXNet's basic slicing: more slices than rows gives empty ones at the end
        return [data[int(bounds[i]):int(bounds[i + 1])] for i in range(num_slice)]
    return [nd.slice_axis(data, axis=batch_axis, begin=int(bounds[i]), end=int(bounds[i + 1]))
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """``data`` (an NDArray or anything ``nd.array`` takes) split in ``len(ctx_list)`` and moved there."""
    if not isinstance(data, nd.NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``; the norm before."""
    assert len(arrays) > 0

    def _norm(array):       # as MXNet's: a sparse array's squared norm()
        if array.stype == "default":
            x = array.reshape((-1,))
            return nd.dot(x, x)
        return array.norm().square()

    total = nd.sqrt(nd.add_n(*[_norm(a) for a in arrays]))
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."), stacklevel=2)
    scale = nd.min(nd.concat(max_norm / (total + 1e-8), nd.ones(1), dim=0))
    for a in arrays:
        a *= scale
    return total.asscalar() if check_isfinite else total


def _indent(s_, numSpaces):  # noqa: N803  (MXNet's signature)
    """Indent every line of ``s_`` but the first by ``numSpaces`` spaces (MXNet's block ``__repr__`` helper)."""
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    return "\n".join([lines[0]] + [numSpaces * " " + line for line in lines[1:]])


def check_sha1(filename, sha1_hash):
    """Whether the file's sha1 is ``sha1_hash`` (hex digits)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move ``src`` onto ``dst`` atomically."""
    os.replace(src, dst)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Not here: ast-hybrid works offline.  A file already at ``path`` (with the right sha1, if given) is
    returned as MXNet would; anything else is :class:`DownloadUnavailable`."""
    fname = url.split("/")[-1] if path is None else (
        os.path.join(os.path.expanduser(path), url.split("/")[-1]) if os.path.isdir(os.path.expanduser(path))
        else os.path.expanduser(path))
    if not overwrite and os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    raise DownloadUnavailable(f"mxnet.gluon.utils.download({url!r}) is not available in ast-hybrid: it does "
                              f"not fetch files. Download it yourself to {fname!r} (then this call returns it)")


def _get_repo_url():
    """The base URL of MXNet's dataset and model repository: ``$MXNET_GLUON_REPO`` (a ``/`` added if it lacks
    one) or MXNet's default; GluonNLP builds its download URLs from it (ast-hybrid itself downloads nothing)."""
    repo_url = settings.environ("MXNET_GLUON_REPO", "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return repo_url if repo_url.endswith("/") else repo_url + "/"


def _get_repo_file_url(namespace, filename):
    """``<repo url><namespace>/<filename>``."""
    return f"{_get_repo_url()}{namespace}/{filename}"


def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (MXNet 1.x: 0 means unknown)."""
    if shape is None or len(shape) == 0:
        return False
    for dim in shape:
        if dim == 0:
            return False
        assert dim > 0, f"invalid shape dimension {dim} in {shape}"
    return True
