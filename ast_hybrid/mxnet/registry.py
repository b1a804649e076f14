"""``mxnet.registry``: MXNet 1.9.1's name -> class registries, which packages build on (GluonNLP registers
its datasets, samplers and embeddings through ``get_register_func``/``get_create_func``).

One registry per base class.  ``get_register_func(base, nickname)`` gives ``register(klass, name=None)``
(names lower-cased; re-registering a name warns and replaces); ``get_alias_func`` gives
``alias(*names)``, a decorator registering a class under each name; ``get_create_func`` gives
``create(name_or_instance_or_config, *args, **kwargs)``: an instance passes through, a dict is keyword
arguments (the name under the nickname), a string starting with ``[`` or ``{`` is that in JSON, else the
registered class called with the rest.  ``get_registry(base)`` is a copy of the mapping.
"""

from __future__ import annotations

import json
import warnings

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_REGISTRY: dict = {}


def _table(base_class) -> dict:
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class) -> dict:
    """A copy of the classes registered for ``base_class``, by lower-cased name."""
    return dict(_table(base_class))


def get_register_func(base_class, nickname):
    """``register(klass, name=None)``: records ``klass`` (a subclass of ``base_class``) under ``name``."""
    table = _table(base_class)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise TypeError(f"can only register a subclass of {base_class.__name__} as a {nickname}, "
                            f"got {klass!r}")
        key = (name or klass.__name__).lower()
        if key in table and table[key] is not klass:
            warnings.warn(f"new {nickname} {klass.__module__}.{klass.__name__} registered as {key!r} replaces "
                          f"{table[key].__module__}.{table[key].__name__}", UserWarning, stacklevel=2)
        table[key] = klass
        return klass

    register.__doc__ = f"Register a {nickname} class (a subclass of {base_class.__name__})."
    return register


def get_alias_func(base_class, nickname):
    """``alias(*names)``: a class decorator registering the class under each of ``names``."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def decorate(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return decorate

    return alias


def get_create_func(base_class, nickname):
    """``create(...)``: an instance of a registered ``base_class`` subclass (see the module doc)."""
    table = _table(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        elif nickname in kwargs:
            name = kwargs.pop(nickname)
        else:
            raise TypeError(f"create() needs the {nickname}'s name as its first argument or {nickname}=")
        if isinstance(name, base_class):
            if args or kwargs:
                raise ValueError(f"{nickname} is already an instance; further arguments are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise TypeError(f"{nickname} must be a name (a string), an instance or a dict, got {name!r}")
        if name.startswith("[") or name.startswith("{"):
            if args or kwargs:
                raise ValueError(f"a JSON {nickname} takes no further arguments")
            spec = json.loads(name)
            return create(spec[0], **spec[1]) if isinstance(spec, list) else create(**spec)
        key = name.lower()
        if key not in table:
            raise ValueError(f"{key!r} is not a registered {nickname}; register it with {nickname}.register "
                             f"first (registered: {', '.join(sorted(table)) or 'none'})")
        return table[key](*args, **kwargs)

    create.__doc__ = f"Create a {nickname} from a name, an instance or a config."
    return create
