import os
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "properties" / "mutants"))
sys.path.insert(0, str(SOURCE / "examples" / "python"))


def pytest_configure(config):
    # The wheel test runs these tests against an installed package, which must be the one imported.
    expected = os.environ.get("CHUNKMETA_EXPECTED_PACKAGE_ROOT")
    if expected:
        import chunkmeta
        assert chunkmeta.__file__.startswith(expected), f"chunkmeta imported from {chunkmeta.__file__}, not {expected}"


@pytest.fixture
def int32():
    import torch
    return lambda values: torch.tensor(values, dtype=torch.int32)
