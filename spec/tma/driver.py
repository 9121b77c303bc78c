"""What the CUDA driver's tensor-map encoder does beyond the rules' statements: which architectures'
drivers were observed, and whether a rule is enforced on an architecture.

A tensor-map rule says who enforces it in its own block (spec/tma/tensormap.py): `enforced_by="driver"`
when cuTensorMapEncode* refuses arguments that break it (the call fails: a violation), "nobody" when
the encoder accepts them (a warning: the copy traps or loads wrong data at run time, or the rule
concerns the copy instruction, which the encoder cannot see). Where a real driver accepted what the
documentation forbids, the rule's block names the architecture in `not_enforced_on`; the evidence is
the driver's record under tests/hardware/, replayed by tests/hardware_replay/test_encoder_replay.py.
"""
from __future__ import annotations

from spec.rule import CATALOGUE

# Architecture -> the driver whose encoder decisions were recorded, and where. No sm100 driver has been
# observed: there the documentation's enforcement stands.
OBSERVED_DRIVERS = {
    "sm90": ("580.159.04 on an H100", ("tests/hardware/tensormap_encode_sm90.json.gz",
                                       "tests/hardware/fuzz_driver_sm90.json.gz")),
}


def enforced(rule_id: str, arch: str = "sm100") -> bool:
    """Does the driver's encoder on this architecture refuse arguments that break this rule?"""
    r = CATALOGUE[rule_id]
    return r.enforced_by == "driver" and r.refused_on(arch)


def not_enforced_on(arch: str) -> frozenset:
    """The ids of the driver-enforced rules that the observed driver of `arch` does not enforce."""
    return frozenset(r.id for r in CATALOGUE.values() if r.enforced_by == "driver" and arch in r.not_enforced_on)
