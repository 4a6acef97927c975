"""The set-up every Python test of chunkmeta runs with (the package's tests in
python/tests and each spec folder's, specs/*/test_*.py): the mutants and the
examples importable, no example database unless a test asks for one, and
the package under test the one expected. Each folder's conftest.py imports it.
"""

import os
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "mutants"))
sys.path.insert(0, str(SOURCE / "examples" / "python"))

import chunkmeta  # noqa: E402

# The tests expect each check() to start afresh: no example database unless a test asks for one.
chunkmeta.settings.register_profile("chunkmeta-tests", database=None)
chunkmeta.settings.load_profile("chunkmeta-tests")


def pytest_configure(config):
    # The wheel test runs these tests against an installed package, which must be the one imported.
    expected = os.environ.get("CHUNKMETA_EXPECTED_PACKAGE_ROOT")
    if expected:
        assert chunkmeta.__file__.startswith(expected), f"chunkmeta imported from {chunkmeta.__file__}, not {expected}"


@pytest.fixture
def int32():
    import torch
    return lambda values: torch.tensor(values, dtype=torch.int32)
