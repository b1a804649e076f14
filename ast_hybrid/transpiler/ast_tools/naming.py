"""Fresh names for the variables and functions the passes create.

Every name the transpiler invents starts with ``ah__`` (the reserved prefix;
``ah__`` alone is the runtime), so it cannot clash with a user's name, and the
runtime can tell a synthetic variable (a ``break`` flag, the return value)
from a user's one by its name alone.

>>> n = Namer({"x", "ah__if_true_0"})
>>> n.new("if_true"), n.new("if_true"), n.new("brk")
('ah__if_true_1', 'ah__if_true_2', 'ah__brk_0')
>>> is_synthetic("ah__retval"), is_synthetic("retval")
(True, False)
"""

from __future__ import annotations

import itertools

__all__ = ["RUNTIME", "PREFIX", "RETVAL", "Namer", "is_synthetic"]

#: The one name generated code uses to reach the runtime.
RUNTIME = "ah__"
#: Prefix of every invented name.
PREFIX = "ah__"
#: The return pass's variable holding the function's result (``Namer.fixed("retval")``).
RETVAL = PREFIX + "retval"


def is_synthetic(name: str) -> bool:
    """True for names the transpiler invented (flags, return values, branch functions)."""
    return name.startswith(PREFIX)


class Namer:
    """Hands out ``ah__<base>_<n>`` names unused in ``taken``; one per conversion."""

    def __init__(self, taken=()):
        self._taken = set(taken)
        self._counters: dict[str, itertools.count] = {}

    def new(self, base: str) -> str:
        counter = self._counters.setdefault(base, itertools.count())
        while True:
            name = f"{PREFIX}{base}_{next(counter)}"
            if name not in self._taken:
                self._taken.add(name)
                return name

    def fixed(self, base: str) -> str:
        """``ah__<base>`` (no counter) for names that exist once per function."""
        name = PREFIX + base
        self._taken.add(name)
        return name
