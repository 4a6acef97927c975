# The package tests' set-up (chunkmeta_test_setup.py).
from chunkmeta_test_setup import *  # noqa: F401,F403
