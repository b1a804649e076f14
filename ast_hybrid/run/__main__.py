"""``python -m ast_hybrid.run SCRIPT [ARGS...]`` = ``ast-hybrid run SCRIPT [ARGS...]``."""

import sys

from ast_hybrid.cli import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
