"""Shared, expensive results, computed once per session and only when a test asks for them: collection
solves nothing (parametrization lists ids only).

Markers (pyproject.toml): `replay` marks the tests that replay recorded evidence (hardware recordings,
the counterexample corpus); `slow` the longest tests. Both run by default; `-m "not slow"` skips them.
"""
from __future__ import annotations

import os

import pytest

CATALOGUE_TIMEOUT = 60.0          # seconds per property; every property takes well under a second
# Test modules that replay recorded evidence: the hardware recordings under tests/hardware/ and the
# counterexample corpus under counterexamples/
REPLAY_MODULES = frozenset({"test_hardware_replay.py", "test_tma_replay.py", "test_encoder_replay.py",
                            "test_fuzz_against_replay.py", "test_hardware_pipeline.py",
                            "test_counterexamples.py", "test_desc_ptxas_replay.py"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if os.path.basename(str(item.fspath)) in REPLAY_MODULES:
            item.add_marker(pytest.mark.replay)


@pytest.fixture(scope="session")
def proved_catalogue() -> dict:
    """property id -> solver.prove.prover.Result for every property of the catalogue (no file written)."""
    from solver.prove.catalogue import all_properties
    from solver.prove.prover import prove
    return {p.id: prove(p, timeout=CATALOGUE_TIMEOUT) for p in all_properties()}


@pytest.fixture(scope="session")
def coverage_reports() -> dict:
    """target -> solver.fuzz.coverage.coverage(target) rows, for the tensormap and desc targets."""
    from solver.fuzz import coverage
    return {target: coverage.coverage(target) for target in ("tensormap", "desc")}
