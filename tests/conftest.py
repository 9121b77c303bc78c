"""The tests are filed by area, and the area is the marker (pyproject.toml lists them):

  tests/spec_tests/       spec/, the executable specification (fast/: the fast paths against theirs)  -m spec
  tests/solver_tests/R/   solver/ by role R: model, prove, synth, fuzz, kernel (PTX reader, audit)     -m solver
  tests/cli_tests/        the command line, the Python API, the docs' examples, the house rules        -m cli
  tests/hardware_replay/  recorded evidence replayed: GPU, ptxas, driver, CUTLASS, Triton recordings,
                          held-out kernels and forms, the counterexample corpus                        -m replay

(The folders are not named spec/ or solver/: tests/ is on sys.path, and a folder there named after a package
would stand in for it wherever that package is found only through an editable install's finder.) Their
data stays in tests/fixtures, tests/hardware and tests/hostile; tests/repo_paths.py says where. The helpers
shared by several areas (once.py, mutants.py, differential.py, ...) stay in tests/, which is put on sys.path
here. `slow` marks the longest tests; `full_replay` the whole recorded campaigns, which the README's command
leaves out.

Shared, expensive results are computed once per session and only when a test asks for them: collection
solves nothing (parametrization lists ids only).
"""
from __future__ import annotations

import os
import sys

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS_DIR)          # the shared helpers (once.py, mutants.py, repo_paths.py, ...)

CATALOGUE_TIMEOUT = 60.0          # seconds per property; every property takes well under a second
AREA_MARKERS = {"spec_tests": "spec", "solver_tests": "solver", "cli_tests": "cli", "hardware_replay": "replay"}


def area_marker(module_file: str):
    """The marker of a test module: the folder under tests/ it is filed in (None for a file outside one)."""
    relative = os.path.relpath(os.path.abspath(module_file), TESTS_DIR).split(os.sep)
    return AREA_MARKERS.get(relative[0]) if len(relative) > 1 else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        marker = area_marker(str(item.fspath))
        if marker is not None:
            item.add_marker(getattr(pytest.mark, marker))


class ProvedCatalogue(dict):
    """property id -> solver.prove.prover.Result, each property proved the first time a test asks for it
    (no file written). Under xdist every worker has its own, so a worker proves only what its tests read
    instead of the whole catalogue."""

    def __init__(self):
        super().__init__()
        from solver.prove.catalogue import all_properties
        self.properties = {p.id: p for p in all_properties()}

    def __missing__(self, pid: str):
        from solver.prove.prover import prove
        self[pid] = result = prove(self.properties[pid], timeout=CATALOGUE_TIMEOUT)
        return result

    def expected(self, status: str) -> dict:
        """id -> Result of the properties expected to come out `status`."""
        return {pid: self[pid] for pid, p in self.properties.items() if p.expected == status}


@pytest.fixture(scope="session")
def proved_catalogue() -> ProvedCatalogue:
    return ProvedCatalogue()


@pytest.fixture(scope="session")
def coverage_reports() -> dict:
    """target -> solver.fuzz.coverage.coverage(target) rows, for the tensormap and desc targets."""
    from solver.fuzz import coverage
    return {target: coverage.coverage(target) for target in ("tensormap", "desc")}
