"""Real code nobody here wrote, run on ast-hybrid; the helpers are imported from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
