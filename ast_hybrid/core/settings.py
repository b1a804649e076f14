"""Every switch of ast-hybrid in one place, and the one module that reads the environment.

Each ``AST_HYBRID_*`` variable is declared once below (:data:`SETTINGS`) with its default, the values it
accepts and one line of help; :func:`get` reads it when the code that uses it runs (so a test or a script can
set it at any time before), and a value it does not accept is a :class:`SettingError` naming the variable and
the accepted values, never silently "on".  Switches accept ``1``/``on``/``true``/``yes`` and
``0``/``off``/``false``/``no`` in any case; unset or empty is the default.  :data:`READ` lists the variables of
other tools ast-hybrid also reads (MXNet's, JAX's, XLA's, the platform's), through :func:`environ`.

``ast-hybrid config`` (``python -m ast_hybrid config``) prints them all with their current values; the table
in ``docs/performance.md`` is :func:`markdown_table`'s, checked by a test.

    >>> get("AST_HYBRID_HOIST", {"AST_HYBRID_HOIST": "1"})
    'on'
    >>> get("AST_HYBRID_HOIST", {"AST_HYBRID_HOIST": "yess"})
    Traceback (most recent call last):
    ...
    ast_hybrid.core.settings.SettingError: AST_HYBRID_HOIST='yess' is not a value it takes: 0/off/false/no, 1/on/true/yes or timed (unset: timed)

May import: the standard library.  Nothing of ast_hybrid, and not jax (``ast-hybrid config`` starts at once).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["Setting", "SETTINGS", "READ", "SettingError", "get", "is_set", "put", "environ", "mxnet_home", "key_variables",
           "rows", "markdown_table"]

_OFF = ("0", "off", "false", "no")
_ON = ("1", "on", "true", "yes")


class SettingError(ValueError):
    """An ``AST_HYBRID_*`` variable holds a value it does not take."""


@dataclass(frozen=True)
class Setting:
    """One variable: ``values`` maps each value :func:`get` returns to the spellings that give it (empty for a
    free-form value such as a path); ``default`` is returned when it is unset or empty."""

    name: str
    default: object
    help: str
    values: dict = field(default_factory=dict)
    used_by: str = ""

    def accepted(self) -> str:
        if not self.values:
            return "any text" if self.default is None or isinstance(self.default, str) else "a number"
        spellings = ["/".join(s) for s in self.values.values()]
        return ", ".join(spellings[:-1]) + " or " + spellings[-1] if len(spellings) > 1 else spellings[0]

    def parse(self, text: str | None):
        if text is None or not text.strip():
            return self.default
        if not self.values:
            if isinstance(self.default, int) and not isinstance(self.default, bool):
                try:
                    return int(text.strip())
                except ValueError:
                    raise SettingError(f"{self.name}={text!r} is not a value it takes: a whole number "
                                       f"(unset: {self.default})") from None
            return text
        value = text.strip().lower()
        for result, spellings in self.values.items():
            if value in spellings:
                return result
        shown = "unset" if self.default is None else _shown(self.default, self)
        raise SettingError(f"{self.name}={text!r} is not a value it takes: {self.accepted()} (unset: {shown})")


def _shown(value, setting):
    """How a value is spelt in the docs: a switch's value by its first spelling."""
    if isinstance(value, bool):
        return setting.values[value][0]
    return str(value)


def _switch(name, default, help, used_by):
    return Setting(name, default, help, {True: _ON, False: _OFF}, used_by)


SETTINGS: tuple[Setting, ...] = (
    _switch("AST_HYBRID_COMPILE_CACHE", True,
            "JAX's persistent compilation cache for hybridized blocks (off: JAX's cache left as it is)",
            "xla/compile_cache.py"),
    Setting("AST_HYBRID_COMPILE_CACHE_DIR", None,
            "where compiled programs are kept (default: the platform's cache folder, ast-hybrid/jax)",
            used_by="xla/compile_cache.py"),
    _switch("AST_HYBRID_PROGRAM_CACHE", True,
            "a hybridized block's compiled predict program kept on disk for the next process (needs the compile "
            "cache on)", "xla/program_cache.py"),
    Setting("AST_HYBRID_CHANNEL_LAST", True,
            "hybridized blocks' predict and training programs run their convolutions channel-last (NHWC) inside "
            "(predict: predict programs only)", {True: _ON, "predict": ("predict",), False: _OFF},
            "xla/program.py"),
    Setting("AST_HYBRID_ONEDNN", "auto",
            "training programs' 2-D float32 convolutions (forward and both gradients) through oneDNN, built at "
            "first use against the onednn-devel-cpu-gomp package with the C++ compiler found: where both are "
            "present (auto), an error where not (on), never (off: XLA's)",
            {"auto": ("auto",), "on": _ON, "off": _OFF}, "xla/onednn.py"),
    Setting("AST_HYBRID_CONV_LOWERING", None,
            "force one lowering of every convolution where it applies (unset: the per-shape rule)",
            {"xla": ("xla",), "im2col": ("im2col",), "taps": ("taps",)}, "ops/conv_lowering.py"),
    Setting("AST_HYBRID_CONV_TUNE", "shapes",
            "time each convolution both ways the first time its shape is met (shapes); also the whole program "
            "(program); never (off)",
            {"off": _OFF, "program": _ON + ("program",), "shapes": ("shapes",)}, "xla/conv_tuning.py"),
    Setting("AST_HYBRID_HOIST", "timed",
            "compute what a program reads from its parameters alone once per update: timed against the "
            "program as written on short programs (timed), always (on), never (off)",
            {"off": _OFF, "on": _ON, "timed": ("timed",)}, "xla/hoist.py"),
    Setting("AST_HYBRID_HYBRIDIZE", "asked",
            "which blocks run hybridized: those the script hybridizes (asked); every block the script calls, "
            "HybridBlock or Block, falling back to op by op block by block where a forward does not convert "
            "(all: `ast-hybrid run --hybridize`)",
            {"asked": ("asked",), "all": ("all",)}, "gluon/whole.py"),
    Setting("AST_HYBRID_TUNING", "later",
            "when a hybridized program's convolution timing, hoisting choice and channel-last compile happen: "
            "after its first call, which runs the program as traced, in the background and in short slices of "
            "the next calls (later); before its first call returns (first)",
            {"later": ("later",), "first": ("first",)}, "xla/tuning.py"),
    Setting("AST_HYBRID_TIERS", "one",
            "how a recorded backward and an optimizer step compile on CPU: XLA's optimised program at the first "
            "call (one); quickly for the first calls, the optimised program compiled in the background and "
            "swapped in (two: for cores to spare; the swap's moment, and so the last bits of the values, depend "
            "on timing)",
            {"one": ("one", "1"), "two": ("two", "2")}, "core/tiers.py"),
    Setting("AST_HYBRID_WEIGHT_FIRST", "auto",
            "GEMMs over few rows take their weight first: when the parameters exceed the last-level cache "
            "(auto), always (on), never (off)",
            {"off": _OFF, "on": _ON, "auto": ("auto",)}, "xla/program.py"),
    Setting("AST_HYBRID_PROGRAM_LIMIT", 1000,
            "how many programs XLA compiles in this process before JAX's in-memory caches are emptied (they "
            "hold every compiled program; code run op by op on ever new shapes grows without bound); 0: never",
            used_by="xla/program_memory.py"),
    _switch("AST_HYBRID_MALLOC", True,
            "glibc's malloc keeps one arena, serves blocks up to 128 MB (a predict program's temporaries: up to "
            "512 MB) from its heap and keeps up to 1 GB of freed memory, for XLA's threads (set when jax creates "
            "its CPU client)", "xla/host_memory.py"),
    Setting("AST_HYBRID_GLUON_PKGS", None,
            "the folder holding GluonCV 0.10.5 / GluonNLP 0.10.0 for the tests and the conformance report "
            "(default: .venv-mxnet/gluon-pkgs)", used_by="testing/oracle.py"),
    Setting("AST_HYBRID_PROPERTY", "fast",
            "how many generated programs the transpiler's property tests run",
            {"fast": ("fast",), "ci": ("ci",)}, "tests/transpiler"),
)

_BY_NAME = {s.name: s for s in SETTINGS}

# Variables of other tools that ast-hybrid reads (always through environ()): name -> what for
READ = {
    "XLA_FLAGS": "XLA's flags: part of the program cache's and the convolution timings' keys",
    "JAX_ENABLE_X64": "64-bit dtypes; `ast-hybrid run` turns them on unless set (MXNet's float64/int64 where asked)",
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "left to JAX when set (else the compile cache uses 0.02 s)",
    "CXX": "the C++ compiler that builds the optional oneDNN kernels (default: c++, else g++)",
    "XDG_CACHE_HOME": "the cache folder's parent on Linux (default ~/.cache)",
    "LOCALAPPDATA": "the cache folder's parent on Windows",
    "APPDATA": "MXNet's data folder's parent on Windows",
    "MXNET_HOME": "MXNet's data folder (pretrained weights, datasets; default ~/.mxnet)",
    "MXNET_GLUON_REPO": "where MXNet downloads from (gluon.utils: named in errors; ast-hybrid downloads nothing)",
    "MXNET_SAFE_ACCUMULATION": "MXNet's: norm's out_dtype may be narrower than its input's (1)",
    "MXNET_UPDATE_ON_KVSTORE": "MXNet's default update_on_kvstore of a gluon.Trainer with a store (1; 0: off)",
}


def get(name: str, env=None):
    """The value of the ``AST_HYBRID_*`` setting ``name`` (from ``env``, default ``os.environ``): its default
    when unset or empty; :class:`SettingError` for a value it does not take."""
    return _BY_NAME[name].parse((os.environ if env is None else env).get(name))


def is_set(name: str, env=None) -> bool:
    """Whether the user gave ``name`` a (non-empty) value."""
    return bool(((os.environ if env is None else env).get(name) or "").strip())


def put(name: str, value: str) -> None:
    """Set one of the variables declared here, for this process and those it starts (what a command-line
    flag means, ``ast-hybrid run --hybridize``); a value it does not take is a :class:`SettingError`."""
    _BY_NAME[name].parse(value)
    os.environ[name] = value


def environ(name: str, default: str | None = None) -> str | None:
    """Another tool's variable (one of :data:`READ`), as the environment has it."""
    if name not in READ:
        raise KeyError(f"{name} is not one of the variables ast-hybrid reads (core/settings.py READ)")
    return os.environ.get(name, default)


def mxnet_home(env=None) -> str:
    """MXNet's data folder: ``$MXNET_HOME``, else ``~/.mxnet`` (``%APPDATA%\\mxnet`` on Windows), as MXNet."""
    env = os.environ if env is None else env
    home = env.get("MXNET_HOME")
    if home:
        return home
    if os.name == "nt" and os.environ.get("APPDATA"):
        return os.path.join(os.environ["APPDATA"], "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def key_variables() -> dict:
    """The variables a compiled program may depend on, for the program cache's key: every ``AST_HYBRID_*``
    that changes what a program computes or how it is lowered, and ``XLA_FLAGS``; set ones only, sorted."""
    skipped = {"AST_HYBRID_COMPILE_CACHE", "AST_HYBRID_COMPILE_CACHE_DIR", "AST_HYBRID_PROGRAM_CACHE",
               "AST_HYBRID_MALLOC", "AST_HYBRID_TUNING",      # when the program is tuned, not which it is
               "AST_HYBRID_HYBRIDIZE"}                         # which blocks are compiled, not how
    return {k: v for k, v in sorted(os.environ.items())
            if (k.startswith("AST_HYBRID_") and k not in skipped) or k == "XLA_FLAGS"}


def rows(env=None):
    """``(name, current value or the error, default, accepted, help)`` for every setting."""
    env = os.environ if env is None else env
    out = []
    for s in SETTINGS:
        try:
            value = s.parse(env.get(s.name))
            now = "(unset)" if value is None else _shown(value, s)
        except SettingError as exc:
            now = f"ERROR: {exc}"
        default = "(unset)" if s.default is None else _shown(s.default, s)
        out.append((s.name, now, default, s.accepted(), s.help))
    return out


def markdown_table() -> str:
    """The documentation's table of every setting (``docs/performance.md``, section Switches)."""
    lines = ["| variable | default | accepted values | what it does |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = "unset" if s.default is None else _shown(s.default, s)
        lines.append(f"| `{s.name}` | {default} | {s.accepted()} | {s.help} |")
    lines += ["", "Read from other tools:", "", "| variable | what for |", "|---|---|"]
    lines += [f"| `{k}` | {v} |" for k, v in READ.items()]
    return "\n".join(lines)
