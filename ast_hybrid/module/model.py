"""MXNet's checkpoint files: ``save_checkpoint``, ``load_checkpoint``, ``load_params`` (``mx.model``), and the
``BatchEndParam`` a Module's loops give their callbacks."""

from __future__ import annotations

import logging
from collections import namedtuple

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """``prefix-symbol.json`` (the graph, when ``symbol`` is given) and ``prefix-%04d.params``."""
    from ast_hybrid import nd

    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    save_dict = {f"arg:{k}": v for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v for k, v in aux_params.items()})
    param_name = "%s-%04d.params" % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    from ast_hybrid import nd

    param_name = "%s-%04d.params" % (prefix, epoch)
    save_dict = nd.load(param_name)
    if not save_dict:
        logging.warning("Params file '%s' is empty", param_name)
    return split_params(save_dict, param_name)


def split_params(save_dict, where):
    """``(arg_params, aux_params)`` of a loaded file's ``arg:``/``aux:`` names."""
    arg_params, aux_params = {}, {}
    for k, value in save_dict.items():
        arg_type, name = k.split(":", 1)
        if arg_type == "arg":
            arg_params[name] = value
        elif arg_type == "aux":
            aux_params[name] = value
        else:
            raise ValueError(f"Params file '{where}' contains unknown param '{k}'")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from ``prefix-symbol.json`` and ``prefix-%04d.params``."""
    from ast_hybrid.symbol.graph import load_json

    with open(f"{prefix}-symbol.json") as f:
        symbol = load_json(f.read(), where=f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
