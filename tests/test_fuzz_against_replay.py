"""Replays `layoutproof fuzz --against` on the H100's driver (tests/hardware/fuzz_driver_sm90.json.gz):
1440 fuzz cases and 14 hand-made limit probes, each with the driver's answer through
solver.fuzz.adapters.driver_encode. spec/tma/tensormap.py must refuse exactly the cases the driver refused, except
the disagreements kept in counterexamples/against/driver_encode_sm90.json (with a note each): a new
disagreement, or a kept one that no longer disagrees, fails."""
import gzip
import json
import os

from spec.tma import tensormap

HERE = os.path.dirname(os.path.abspath(__file__))
with gzip.open(os.path.join(HERE, "hardware", "fuzz_driver_sm90.json.gz"), "rt") as handle:
    RECORDING = json.load(handle)
with open(os.path.join(HERE, "..", "counterexamples", "against", "driver_encode_sm90.json")) as handle:
    KEPT = json.load(handle)


def test_recording_is_large_and_answered():
    cases = RECORDING["cases"]
    assert len(cases) >= 1400
    assert all(c["driver"]["verdict"] in ("accept", "refuse") for c in cases)
    assert {c["driver"]["verdict"] for c in cases} == {"accept", "refuse"}


def test_spec_refuses_exactly_what_the_driver_refused_but_the_kept_disagreements():
    disagreeing = set()
    for i, c in enumerate(RECORDING["cases"]):
        ours = "accept" if tensormap.check_document(c["case"], "sm90")["legal"] else "refuse"
        if ours != c["driver"]["verdict"]:
            disagreeing.add(i)
    kept = {i for cls in KEPT["classes"] for i in cls["indices"]}
    assert disagreeing == kept, (sorted(disagreeing - kept)[:10], sorted(kept - disagreeing)[:10])
    assert all(cls["note"] for cls in KEPT["classes"])


def test_the_floor_count_is_what_the_driver_does():
    # the limits probe: [64, 3, 200, 8] with strides [1, 2, 1, 1] loads 400 KiB but counts 200 KiB
    probes = {c["source"]: c for c in RECORDING["cases"] if c["source"].startswith("limits probe")}
    accepted = probes["limits probe C"]
    assert accepted["driver"]["verdict"] == "accept"
    report = tensormap.check_document(accepted["case"], "sm90")
    assert report["legal"] and [w["rule"] for w in report["warnings"]] == ["tma.map.box_bytes_loaded"]
