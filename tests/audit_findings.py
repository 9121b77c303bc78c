"""Real kernels whose audit refutes a property, and why: findings, not false alarms, each with its evidence.
tests/solver_tests/kernel/test_audit_corpus.py and tests/hardware_replay/test_audit_heldout.py allow exactly these refutations, and require
them (a finding that goes away is a change to explain)."""
from __future__ import annotations

# property id -> (which kernels, by file stem prefix; what the audit shows; the evidence)
FINDINGS = {
    "audit.tmem.access": (
        ("tl_sm100", "tilelang__tl_sm100"),
        "TileLang 0.1.15's sm_100 GEMMs give tcgen05.ld the lane field 0 from every warp of the epilogue "
        "(taddr = C_tmem + (tid & 384) - 128), outside the lane quarter of warps 1-3 of a warpgroup (PTX ISA "
        "9.0 9.7.16.8.1).",
        "deepseek-ai/DeepGEMM#341: release builds route each warp to its quarter whatever the lane bits say; "
        "a -G build's strict warp tensor-memory access check traps; spec rule tmem.access.lane_quarter"),
}


def expected_breaches(stem: str) -> set:
    """The property ids the audit of this kernel refutes, by FINDINGS."""
    return {pid for pid, (prefixes, _, _) in FINDINGS.items() if stem.startswith(prefixes)}
