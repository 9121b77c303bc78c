"""Where the repository and its test data are, for the tests in every folder below tests/ (they are
filed by area: tests/spec_tests, tests/solver_tests/..., tests/cli_tests, tests/hardware_replay; their data stays in
tests/fixtures, tests/hardware and tests/hostile)."""
from __future__ import annotations

import os
import pathlib

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))      # tests/
ROOT_DIR = os.path.dirname(TESTS_DIR)                        # the repository
TESTS = pathlib.Path(TESTS_DIR)
ROOT = pathlib.Path(ROOT_DIR)
