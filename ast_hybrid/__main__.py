"""``python -m ast_hybrid``: the ``ast-hybrid`` command line (see :mod:`ast_hybrid.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
