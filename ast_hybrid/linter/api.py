"""The linter's Python API: ``ast_hybrid.lint(path_or_source)`` -> diagnostics.

What counts as a path and what as source:

- a :class:`os.PathLike`, or a list/tuple of str/PathLike, is always paths
  (files, or directories walked as :mod:`ast_hybrid.linter.config` describes);
- a ``str`` that contains a newline, or that names no existing file or
  directory, is Python *source* (its diagnostics carry the path ``<string>``);
- any other ``str`` is a path.

Files are read with :func:`ast_hybrid.common.source.read_file` and checked by
:func:`ast_hybrid.linter.check_source`; nothing is imported or executed.  A
file that cannot be read or decoded gives a HY020 diagnostic (at its
position when it has one) and the other files go on; an exception inside the
checker gives a HY999 internal-error diagnostic, never a traceback.

>>> [d.code for d in lint("def f(:\\n")]
['HY020']
>>> lint("x = 1\\n")
[]
"""

from __future__ import annotations

import gc
import os

from .config import ConfigError, Settings, discover, find_pyproject, load_settings
from ast_hybrid.common.diagnostics import Diagnostic
from ast_hybrid.common.rules import TARGETS, message
from ast_hybrid.common.source import SourceError, SourceFile, read_file

__all__ = ["lint", "lint_source", "lint_file", "lint_files", "resolve_settings",
           "missing_path", "ConfigError", "STRING_PATH"]

STRING_PATH = "<string>"


def _is_source(obj) -> bool:
    if not isinstance(obj, str):
        return False
    return "\n" in obj or not os.path.exists(obj)


def resolve_settings(paths=(), *, config=None, respect_config: bool = True,
                     target=None, select=None, ignore=None, extend_select=None) -> Settings:
    """Settings from ``config`` (a Settings, or a pyproject.toml path), else the
    nearest pyproject.toml above the first path (when ``respect_config``), with
    the explicit arguments on top."""
    if isinstance(config, Settings):
        settings = config
    elif config is not None:
        settings = load_settings(config)
    elif respect_config:
        first = next(iter(paths), None)
        settings = load_settings(find_pyproject(first))
    else:
        settings = Settings()
    settings = settings.with_overrides(
        target=target,
        select=_codes(select),
        ignore=_codes(ignore),
        extend_select=_codes(extend_select),
    )
    settings.check_selectors()
    return settings


def _codes(value):
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    return tuple(v.strip().upper() for v in value if v.strip())


def _internal_error(path: str, exc: BaseException) -> Diagnostic:
    text, help = message("HY999", "file", error=f"{type(exc).__name__}: {exc}")
    return Diagnostic("HY999", text, path, None, help=help)


def lint_source(src: SourceFile, settings: Settings) -> list[Diagnostic]:
    """Check one decoded source; select/ignore applied; never raises."""
    from . import check_source  # late: keeps `import ast_hybrid.linter.api` light

    try:
        found = check_source(src, target=settings.target)
    except RecursionError as exc:
        text, help = message("HY020", "too-deep", error=exc)
        found = [Diagnostic("HY020", text, src.path, None, help=help)]
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        found = [_internal_error(src.path, exc)]
    kept = [d for d in found if settings.is_selected(d.code, d.path)]
    kept.sort(key=lambda d: d.sort_key())
    return kept


def lint_file(path: str, settings: Settings) -> list[Diagnostic]:
    """Read and check one file; unreadable files become HY020."""
    try:
        src = read_file(path)
    except SourceError as err:
        text, help = message("HY020", "unreadable", reason=err.message)
        return [Diagnostic("HY020", text, path, err.span, help=help)]
    except Exception as exc:  # noqa: BLE001
        return [_internal_error(path, exc)]
    return lint_source(src, settings)


def lint_files(files, settings: Settings) -> list[Diagnostic]:
    """Check ``files`` in order.  Python's cyclic collector is paused while each file is checked
    and run once on what that file made (``gc.collect(0)``): a file's trees are a few hundred
    thousand small objects that die together, and left to itself the collector walked them
    (and every live object) many times per file, close to half of lint's time on the Gluon trees."""
    out: list[Diagnostic] = []
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for f in files:
            out.extend(lint_file(f, settings))
            gc.collect(0)
    finally:
        if was_enabled:
            gc.enable()
    return out


def lint(path_or_source, *, target: str | None = None, select=None, ignore=None,
         config=None, respect_config: bool = True) -> list[Diagnostic]:
    """Lint files, directories, or a source string (see the module docstring).

    ``target``: ``"jax"`` (what ast-hybrid's conversion rejects) or
    ``"mxnet"`` (what breaks MXNet 1.x ``hybridize()``); default: the
    configuration's, else ``"jax"``.  ``select``/``ignore``: codes or prefixes
    (a list, or a comma-separated string).  ``config``: a ``pyproject.toml``
    path or a :class:`~ast_hybrid.linter.config.Settings`; else the nearest
    ``pyproject.toml`` is used unless ``respect_config=False``.

    A path that does not exist gives a positionless HY020 diagnostic and the
    other paths are still linted; a bad configuration raises
    :class:`~ast_hybrid.linter.config.ConfigError`.
    """
    if target is not None and target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
    if _is_source(path_or_source):
        settings = resolve_settings((), config=config, respect_config=respect_config,
                                    target=target, select=select, ignore=ignore)
        return lint_source(SourceFile.from_text(path_or_source, STRING_PATH), settings)
    if isinstance(path_or_source, (str, os.PathLike)):
        paths = [os.fspath(path_or_source)]
    else:
        paths = [os.fspath(p) for p in path_or_source]
    settings = resolve_settings(paths, config=config, respect_config=respect_config,
                                target=target, select=select, ignore=ignore)
    files, missing = discover(paths, settings)
    return [missing_path(p) for p in missing] + lint_files(files, settings)


def missing_path(path: str) -> Diagnostic:
    text, help = message("HY020", "missing-path")
    return Diagnostic("HY020", text, path, None, help=help)
