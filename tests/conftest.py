"""Shared, expensive results, computed once per session and only when a test asks for them: collection
solves nothing (parametrization lists ids only).

Markers (pyproject.toml): `replay` marks the tests that replay recorded evidence (hardware recordings,
the counterexample corpus); `slow` the longest tests. Both run by default; `-m "not slow"` skips them.
"""
from __future__ import annotations

import os

import pytest

CATALOGUE_TIMEOUT = 60.0          # seconds per property; every property takes well under a second
def replays_evidence(module_file: str) -> bool:
    """A test module replays recorded evidence when its name says so: `*_replay.py` (a recording under
    tests/hardware/ replayed), `*_heldout.py` (held-out kernels or forms recorded apart), and the
    counterexample corpus (test_counterexamples.py). No hand-kept list to fall behind (issue 30)."""
    name = os.path.basename(module_file)
    return name.endswith(("_replay.py", "_heldout.py")) or name == "test_counterexamples.py"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if replays_evidence(str(item.fspath)):
            item.add_marker(pytest.mark.replay)


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
