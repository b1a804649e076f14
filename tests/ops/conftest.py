import sys
from pathlib import Path

collect_ignore = ["custom_user_script.py"]   # an MXNet script the oracle test runs, not a test module

sys.path.insert(0, str(Path(__file__).parent))
