# Each spec folder's Python tests (specs/*/test_*.py) run with the package tests' set-up.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))

from chunkmeta_test_setup import *  # noqa: E402,F401,F403
