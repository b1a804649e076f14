"""``python -m ast_hybrid.conformance``: see the package's docstring."""
import sys

from ._report import main

sys.exit(main())
