"""``mxnet.gluon.model_zoo.model_store``: where MXNet keeps pretrained weights; ast-hybrid downloads none.

``_model_sha1`` is MXNet 1.9.1's table (model name -> sha1 of its ``.params``; GluonNLP adds its own models
to it at import time; ``tests/mxnet/test_model_store.py`` compares it with MXNet's), ``short_hash(name)`` its
first 8 digits.  ``get_model_file(name)`` returns a file already on disk under MXNet's name
(``<root>/<name>-<short hash>.params``, as a real MXNet left it in ``~/.mxnet/models``, with the right sha1
for a name in the table); otherwise it is an error saying how to get the weights (``pretrained=True``
reaches here).
"""

from __future__ import annotations

import glob
import os

from ast_hybrid.core import settings

__all__ = ["get_model_file", "purge", "short_hash"]

# MXNet 1.9.1's checksums of its model zoo's weights (data read from MXNet, compared with it by the test)
_model_sha1 = {
    'alexnet': '44335d1f0046b328243b32a26a4fbd62d9057b45',
    'densenet121': 'f27dbf2dbd5ce9a80b102d89c7483342cd33cb31',
    'densenet161': 'b6c8a95717e3e761bd88d145f4d0a214aaa515dc',
    'densenet169': '2603f878403c6aa5a71a124c4a3307143d6820e9',
    'densenet201': '1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb',
    'inceptionv3': 'ed47ec45a937b656fcc94dabde85495bbef5ba1f',
    'mobilenet0.25': '9f83e440996887baf91a6aff1cccc1c903a64274',
    'mobilenet0.5': '8e9d539cc66aa5efa71c4b6af983b936ab8701c3',
    'mobilenet0.75': '529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2',
    'mobilenet1.0': '6b8c5106c730e8750bcd82ceb75220a3351157cd',
    'mobilenetv2_0.25': 'ae8f9392789b04822cbb1d98c27283fc5f8aa0a7',
    'mobilenetv2_0.5': 'aabd26cd335379fcb72ae6c8fac45a70eab11785',
    'mobilenetv2_0.75': 'e2be7b72a79fe4a750d1dd415afedf01c3ea818d',
    'mobilenetv2_1.0': '36da4ff1867abccd32b29592d79fc753bca5a215',
    'resnet101_v1': 'd988c13d6159779e907140a638c56f229634cb02',
    'resnet101_v2': '18e93e4f48947e002547f50eabbcc9c83e516aa6',
    'resnet152_v1': '671c637a14387ab9e2654eafd0d493d86b1c8579',
    'resnet152_v2': 'f2695542de38cf7e71ed58f02893d82bb409415e',
    'resnet18_v1': 'a0666292f0a30ff61f857b0b66efc0228eb6a54b',
    'resnet18_v2': 'a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657',
    'resnet34_v1': '48216ba99a8b1005d75c0f3a0c422301a0473233',
    'resnet34_v2': '9d6b80bbc35169de6b6edecffdd6047c56fdd322',
    'resnet50_v1': '0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce',
    'resnet50_v2': 'ecdde35339c1aadbec4f547857078e734a76fb49',
    'squeezenet1.0': '264ba4970a0cc87a4f15c96e25246a1307caf523',
    'squeezenet1.1': '33ba0f93753c83d86e1eb397f38a667eaf2e9376',
    'vgg11': 'dd221b160977f36a53f464cb54648d227c707a05',
    'vgg11_bn': 'ee79a8098a91fbe05b7a973fed2017a6117723a8',
    'vgg13': '6bc5de58a05a5e2e7f493e2d75a580d83efde38c',
    'vgg13_bn': '7d97a06c3c7a1aecc88b6e7385c2b373a249e95e',
    'vgg16': 'e660d4569ccb679ec68f1fd3cce07a387252a90a',
    'vgg16_bn': '7f01cf050d357127a73826045c245041b0df7363',
    'vgg19': 'ad2f660d101905472b83590b59708b71ea22b2e5',
    'vgg19_bn': 'f360b758e856f1074a85abd5fd873ed1d98297c3',
}


def short_hash(name):
    """The first 8 hex digits of ``name``'s sha1 (``ValueError`` for a name not in ``_model_sha1``, as MXNet)."""
    if name not in _model_sha1:
        raise ValueError('Pretrained model for {name} is not available.'.format(name=name))
    return _model_sha1[name][:8]


class PretrainedUnavailable(FileNotFoundError):
    """The weights are not on disk, and ast-hybrid does not download."""


def get_model_file(name, root=os.path.join(settings.mxnet_home(), "models")):
    """The path of ``name``'s pretrained ``.params`` under ``root``, if MXNet already downloaded it there."""
    from ast_hybrid.gluon.utils import check_sha1

    root = os.path.expanduser(root)
    if name in _model_sha1:
        path = os.path.join(root, f"{name}-{short_hash(name)}.params")
        found = [path] if os.path.exists(path) and check_sha1(path, _model_sha1[name]) else []
    else:
        found = sorted(glob.glob(os.path.join(root, f"{glob.escape(name)}-*.params")))
    if found:
        return found[-1]
    raise PretrainedUnavailable(
        f"mxnet.gluon.model_zoo.model_store.get_model_file({name!r}): no pretrained weights for {name!r} in "
        f"{root}, and ast-hybrid does not download them (it works offline). Download them once with MXNet "
        f"(vision.get_model({name!r}, pretrained=True) leaves {name}-<hash>.params in {root}), or build the "
        "model without pretrained=True and net.load_parameters(path)")


def purge(root=os.path.join(settings.mxnet_home(), "models")):
    """Remove every ``.params`` file under ``root``."""
    root = os.path.expanduser(root)
    for f in glob.glob(os.path.join(root, "*.params")):
        os.remove(f)
