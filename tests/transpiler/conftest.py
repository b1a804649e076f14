"""The transpiler tests import their helpers (``helpers``, ``progen``) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
