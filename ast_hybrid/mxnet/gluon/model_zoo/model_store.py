"""``mxnet.gluon.model_zoo.model_store``: where MXNet keeps pretrained weights; ast-hybrid downloads none.

``get_model_file(name)`` returns a file already on disk under MXNet's name
(``<root>/<name>-<short hash>.params``, as a real MXNet left it in ``~/.mxnet/models``); otherwise it is
an error saying how to get the weights (``pretrained=True`` reaches here).
"""

from __future__ import annotations

import glob
import os

from ast_hybrid.mxnet import base
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["get_model_file", "purge"]


class PretrainedUnavailable(FileNotFoundError):
    """The weights are not on disk, and ast-hybrid does not download."""


def get_model_file(name, root=os.path.join(base.data_dir(), "models")):
    """The path of ``name``'s pretrained ``.params`` under ``root``, if MXNet already downloaded it there."""
    root = os.path.expanduser(root)
    found = sorted(glob.glob(os.path.join(root, f"{glob.escape(name)}-*.params")))
    if found:
        return found[-1]
    raise PretrainedUnavailable(
        f"mxnet.gluon.model_zoo.model_store.get_model_file({name!r}): no pretrained weights for {name!r} in "
        f"{root}, and ast-hybrid does not download them (it works offline). Download them once with MXNet "
        f"(vision.get_model({name!r}, pretrained=True) leaves {name}-<hash>.params in {root}), or build the "
        "model without pretrained=True and net.load_parameters(path)")


def purge(root=os.path.join(base.data_dir(), "models")):
    """Remove every ``.params`` file under ``root``."""
    root = os.path.expanduser(root)
    for f in glob.glob(os.path.join(root, "*.params")):
        os.remove(f)


__getattr__ = module_getattr("mxnet.gluon.model_zoo.model_store", __name__)
