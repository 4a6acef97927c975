import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "properties" / "mutants"))
sys.path.insert(0, str(SOURCE / "examples" / "python"))


@pytest.fixture
def int32():
    import torch
    return lambda values: torch.tensor(values, dtype=torch.int32)
