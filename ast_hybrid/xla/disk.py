"""Files the XLA room keeps beside compiled programs (the program cache's source manifest, the convolution
timings): written atomically, and never a reason for a program to fail.

May import: the standard library.
"""

from __future__ import annotations

import os

__all__ = ["write_quietly"]


def write_quietly(path, text):
    """Write ``text`` to ``path`` (a ``pathlib.Path``) atomically; a folder that cannot be written leaves nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
