"""Settings for ``ast-hybrid lint``, and which files it reads.

Settings come from ``[tool.ast-hybrid]`` in the nearest ``pyproject.toml``
(searched upwards from the first linted path), read with :mod:`tomllib`::

    [tool.ast-hybrid]
    target = "mxnet"                 # or "jax" (the default)
    select = ["HY0"]                 # codes or prefixes (default: all)
    extend-select = []
    ignore = ["HY006"]
    exclude = ["tests/data"]         # gitignore-style, relative to the pyproject's folder
    extend-exclude = []
    per-file-ignores = { "examples/*.py" = ["HY012"] }
    output-format = "text"           # text (or full), concise, json, sarif, github

File discovery: a directory is walked recursively for ``*.py`` files
(``.pyi`` stubs hold no ``hybrid_forward`` bodies and are skipped unless named
explicitly), pruning the default excludes (``.git``, ``.venv*``, ``venv``,
``__pycache__``, ``build``, ``dist``, ``node_modules``, ``.tox``, ``.eggs``),
the ``exclude`` patterns, and whatever ``.gitignore`` files say (patterns
with negation, directory-only and anchored patterns, ``**``, nested files).
A file named explicitly is always linted.

>>> m = IgnoreMatcher.from_lines(["*.log", "!keep.log", "/build/", "docs/**/gen"], base="/r")
>>> [m.ignored(p, d) for p, d in [("/r/a.log", False), ("/r/x/keep.log", False),
...                               ("/r/build", True), ("/r/x/build", True), ("/r/docs/a/b/gen", True)]]
[True, False, True, False, True]
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ast_hybrid.common.render import FORMATS
from ast_hybrid.common.rules import RULES, TARGETS

__all__ = ["Settings", "ConfigError", "excluded", "IgnoreMatcher", "find_pyproject", "load_settings",
           "discover", "DEFAULT_EXCLUDE", "TARGETS"]

OUTPUT_FORMATS = FORMATS   # the renderers'
DEFAULT_EXCLUDE = (".git", ".venv*", "venv", "__pycache__", "build", "dist", "node_modules",
                   ".tox", ".eggs", ".hg", ".svn", ".mypy_cache", ".ruff_cache", ".pytest_cache")
_KEYS = {"select", "ignore", "extend-select", "exclude", "extend-exclude", "target",
         "per-file-ignores", "output-format"}


class ConfigError(Exception):
    """A ``[tool.ast-hybrid]`` table that cannot be used (the CLI exits 2)."""


@dataclass(frozen=True)
class Settings:
    """Resolved linter settings; ``root`` is the folder patterns are relative to."""

    root: Path = field(default_factory=Path.cwd)
    target: str = "jax"
    select: tuple[str, ...] | None = None      # None: every rule
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    output_format: str = "text"
    source: Path | None = None                 # the pyproject.toml read, if any

    def __post_init__(self):
        if not isinstance(self.root, Path):
            object.__setattr__(self, "root", Path(self.root))
        if self.target not in TARGETS:
            raise ConfigError(f"target must be one of {', '.join(TARGETS)}, not {self.target!r}")

    def with_overrides(self, **kw) -> "Settings":
        kw = {k: v for k, v in kw.items() if v is not None}
        return replace(self, **kw)

    # -- rule selection (ruff semantics) ---------------------------------
    def is_selected(self, code: str, path: str | None = None) -> bool:
        """Is ``code`` reported (for ``path``)?  The most specific prefix wins;
        on a tie ``ignore`` wins.  A rule the catalogue marks not ``selectable``
        (HY020, an unreadable file; HY999, an internal error) is always reported."""
        rule = RULES.get(code)
        if rule is not None and not rule.selectable:
            return True
        select = ("HY",) if self.select is None else self.select
        best_sel = max((len(p) for p in (*select, *self.extend_select) if _prefix(code, p)), default=-1)
        ignores = list(self.ignore)
        if path is not None and self.per_file_ignores:
            ignores += self.file_ignores(path)
        best_ign = max((len(p) for p in ignores if _prefix(code, p)), default=-1)
        return best_sel >= 0 and best_sel > best_ign

    def check_selectors(self) -> None:
        """:class:`ConfigError` for a select/ignore entry that names no rule (a typo)."""
        known = tuple(RULES)
        entries = [*(self.select or ()), *self.extend_select, *self.ignore,
                   *(c for _, codes in self.per_file_ignores for c in codes)]
        bad = [e for e in entries
               if e.strip().upper() != "ALL" and not any(k.startswith(e.strip().upper()) for k in known)]
        if bad:
            raise ConfigError(f"unknown rule selector(s): {', '.join(bad)} "
                              "(`ast-hybrid rules` lists the codes)")

    def file_ignores(self, path: str) -> list[str]:
        try:
            rel = Path(os.path.abspath(path)).relative_to(self.root.resolve()).as_posix()
        except ValueError:
            rel = Path(path).as_posix()
        name = rel.rsplit("/", 1)[-1]
        out = []
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern):
                out.extend(codes)
        return out


def _prefix(code: str, pattern: str) -> bool:
    p = pattern.strip().upper()
    return p == "ALL" or code.startswith(p)


def find_pyproject(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` holding a ``[tool.ast-hybrid]`` table, upwards from ``start``."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    if not here.is_dir():
        here = here.parent
    for d in (here, *here.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            try:
                with open(candidate, "rb") as fh:
                    data = tomllib.load(fh)
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if "ast-hybrid" in data.get("tool", {}):
                return candidate
    return None


def _str_list(table: dict, key: str, where: Path) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: [tool.ast-hybrid] {key} must be a list of strings")
    return tuple(value)


def load_settings(pyproject: str | os.PathLike | None) -> Settings:
    """Settings from a ``pyproject.toml`` (defaults when ``None``)."""
    if pyproject is None:
        return Settings()
    path = Path(pyproject)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("ast-hybrid", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ast-hybrid] must be a table")
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in [tool.ast-hybrid]: {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(sorted(_KEYS))})")
    s = Settings(root=path.resolve().parent, source=path.resolve())
    target = table.get("target", "jax")
    if target not in TARGETS:
        raise ConfigError(f"{path}: target must be one of {', '.join(TARGETS)}, not {target!r}")
    fmt = table.get("output-format", "text")
    if fmt not in OUTPUT_FORMATS:
        raise ConfigError(f"{path}: output-format must be one of {', '.join(OUTPUT_FORMATS)}, not {fmt!r}")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict) or not all(
            isinstance(v, list) and all(isinstance(c, str) for c in v) for v in pfi.values()):
        raise ConfigError(f"{path}: per-file-ignores must map glob patterns to lists of codes")
    exclude = _str_list(table, "exclude", path)
    return replace(
        s, target=target, output_format=fmt,
        select=_str_list(table, "select", path),
        extend_select=_str_list(table, "extend-select", path) or (),
        ignore=_str_list(table, "ignore", path) or (),
        # like ruff: `exclude` extends the defaults' role only via extend-exclude;
        # setting `exclude` keeps the defaults too, so .git and venvs stay out.
        exclude=DEFAULT_EXCLUDE + (exclude or ()),
        extend_exclude=_str_list(table, "extend-exclude", path) or (),
        per_file_ignores=tuple((k, tuple(v)) for k, v in pfi.items()),
    )


# -- gitignore-style matching -------------------------------------------------
@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern
    negate: bool
    dir_only: bool
    base: str  # absolute folder the pattern is relative to (posix)


def _translate(pat: str) -> str:
    """Regex for a gitignore glob body (no leading ``!``/``/``, no trailing ``/``)."""
    i, n, out = 0, len(pat), []
    while i < n:
        c = pat[i]
        if c == "*":
            if pat.startswith("**", i):
                # "**/" any leading dirs, "/**" anything below, "a/**/b" zero or more dirs
                at_start = i == 0 or pat[i - 1] == "/"
                j = i + 2
                if at_start and (j == n or pat[j] == "/"):
                    if j == n:
                        out.append(".*")
                        i = j
                    else:
                        out.append("(?:.*/)?")
                        i = j + 1
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2 if i + 1 < n and pat[i + 1] in "!^" else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pat[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pat[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class IgnoreMatcher:
    """gitignore semantics over absolute paths; the last matching pattern wins.

    Patterns from deeper ``.gitignore`` files are added later, so they override
    their parents' as in git.
    """

    def __init__(self, patterns: tuple[_Pattern, ...] = ()):
        self.patterns = patterns

    @staticmethod
    def parse(lines, base: str) -> tuple[_Pattern, ...]:
        base = Path(base).as_posix().rstrip("/") or "/"
        out = []
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            # trailing spaces are ignored unless escaped
            stripped = line.rstrip(" ")
            if stripped.endswith("\\") and len(stripped) < len(line):
                stripped += " "
            line = stripped
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            elif line.startswith("\\!") or line.startswith("\\#"):
                line = line[1:]
            dir_only = line.endswith("/") and not line.endswith("\\/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            body = _translate(line)
            rx = ("" if anchored else "(?:.*/)?") + body
            out.append(_Pattern(re.compile(rx + r"\Z", re.DOTALL), negate, dir_only, base))
        return tuple(out)

    @classmethod
    def from_lines(cls, lines, base: str) -> "IgnoreMatcher":
        return cls(cls.parse(lines, base))

    def extended(self, lines, base: str) -> "IgnoreMatcher":
        return IgnoreMatcher(self.patterns + self.parse(lines, base))

    def ignored(self, path: str, is_dir: bool) -> bool:
        path = Path(path).as_posix()
        result = False
        for p in self.patterns:
            if p.dir_only and not is_dir:
                continue
            prefix = p.base if p.base.endswith("/") else p.base + "/"
            if not path.startswith(prefix):
                continue
            if p.regex.match(path[len(prefix):]):
                result = not p.negate
        return result


def _read_gitignore(folder: Path) -> list[str] | None:
    try:
        with open(folder / ".gitignore", encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return None


def _repo_root(folder: Path) -> Path | None:
    for d in (folder, *folder.parents):
        if (d / ".git").exists():
            return d
    return None


def _exclude_matcher(settings: Settings) -> IgnoreMatcher:
    """The configuration's exclude patterns (relative to its root), and the default excludes at every level,
    wherever a walk starts."""
    m = IgnoreMatcher.from_lines(settings.exclude + settings.extend_exclude, base=str(settings.root.resolve()))
    return IgnoreMatcher(IgnoreMatcher.parse(DEFAULT_EXCLUDE, "/") + m.patterns)


def _initial_matcher(folder: Path, settings: Settings) -> IgnoreMatcher:
    """Exclude patterns plus the .gitignore files of ``folder``'s ancestors in its repository."""
    m = _exclude_matcher(settings)
    top = _repo_root(folder)
    if top is not None:
        chain = [d for d in (folder, *folder.parents) if d == top or top in d.parents]
        for d in reversed(chain[1:]):  # ancestors only; the walk reads folder's own
            lines = _read_gitignore(d)
            if lines:
                m = m.extended(lines, str(d))
    return m


def excluded(path: str | os.PathLike, settings: Settings) -> bool:
    """Would a walk of the configuration's folder skip ``path``?  The default excludes and the
    ``exclude``/``extend-exclude`` patterns, tested on the file and each folder above it up to the
    configuration's root (``.gitignore`` files are not read: an editor shows what its user opens).
    The language server asks this; the command line lints a file named explicitly whatever it says.

    >>> s = Settings(root="/p", exclude=DEFAULT_EXCLUDE + ("tests/data",))
    >>> excluded("/p/tests/data/m.py", s), excluded("/p/.venv/lib/m.py", s), excluded("/p/src/m.py", s)
    (True, True, False)
    """
    root = settings.root.resolve()
    m = _exclude_matcher(settings)
    full = Path(os.path.abspath(path))
    chain = [d for d in full.parents if d == root or root in d.parents]
    return any(m.ignored(d.as_posix(), True) for d in reversed(chain)) or m.ignored(full.as_posix(), False)


def discover(paths, settings: Settings):
    """``(files, missing)``: the Python files to lint, in a stable order, and the
    paths that do not exist.  Explicit files are always included."""
    files: list[str] = []
    missing: list[str] = []
    seen = set()

    def add(p: str):
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            files.append(p)

    for raw in paths:
        p = os.fspath(raw)
        if os.path.isdir(p):
            for f in _walk(Path(p), settings):
                add(f)
        elif os.path.exists(p):
            add(p)
        else:
            missing.append(p)
    return files, missing


def _walk(top: Path, settings: Settings):
    start = top.resolve()
    matcher = _initial_matcher(start, settings)
    stack = [(top, start, matcher)]
    out = []
    while stack:
        shown, real, m = stack.pop()
        lines = _read_gitignore(real)
        if lines:
            m = m.extended(lines, str(real))
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)  # no symlink cycles
            except OSError:
                continue
            full = Path(real, e.name).as_posix()
            if m.ignored(full, is_dir):
                continue
            if is_dir:
                subdirs.append((shown / e.name, Path(full), m))
            elif e.name.endswith(".py"):
                out.append(str(shown / e.name))
        stack.extend(reversed(subdirs))
    return sorted(out)
