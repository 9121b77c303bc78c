"""Replays `layoutproof fuzz --against` on the H100's driver (tests/hardware/fuzz_driver_sm90.json.gz):
1440 fuzz cases and 14 hand-made limit probes, each with the driver's answer through
solver.fuzz.adapters.driver_encode. spec/tma/tensormap.py must refuse exactly the cases the driver refused, except
the disagreements kept in counterexamples/against/driver_encode_sm90.json (with a note each): a new
disagreement, or a kept one that no longer disagrees, fails.

tests/hardware/fuzz_driver_labels_sm90.json.gz (issue 14, hardware/fuzz_against_driver.py --per-rule 100
--valid 12000 --wide 5000): the fuzzer's labels must be true: every case labelled "refused" was refused, every
other case (valid, warnings only, or a rule the driver does not check) was accepted, with at least 5000
accepted maps per encoder."""
import collections
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import gzip
import json
import os

from spec.rules import rules_for
from spec.tma import tensormap

HERE = TESTS_DIR
with gzip.open(os.path.join(HERE, "hardware", "fuzz_driver_sm90.json.gz"), "rt") as handle:
    RECORDING = json.load(handle)
with open(os.path.join(HERE, "..", "counterexamples", "against", "driver_encode_sm90.json")) as handle:
    KEPT = json.load(handle)
with gzip.open(os.path.join(HERE, "hardware", "fuzz_driver_labels_sm90.json.gz"), "rt") as handle:
    LABELS = json.load(handle)


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


def test_every_fuzz_label_is_what_the_driver_did():
    wrong = [(i, c["violates"], c["outcome"], c["driver"]) for i, c in enumerate(LABELS["cases"])
             if (c["outcome"] == "refused") != (c["driver"]["verdict"] == "refuse")]
    assert not wrong, wrong[:5]


def test_the_valid_campaign_is_large_on_every_encoder():
    accepted = collections.Counter(c["case"]["encode"] for c in LABELS["cases"] if c["driver"]["verdict"] == "accept")
    valid = collections.Counter(c["case"]["encode"] for c in LABELS["cases"] if not c["violates"])
    assert valid["tiled"] >= 5000 and valid["im2col"] >= 5000
    # sm90 has no valid im2col_wide map (tma.map.im2col_wide.arch), which its driver does not check
    assert accepted["im2col_wide"] >= 5000 and min(accepted.values()) >= 5000
    # every rule the sm90 driver enforces is seen refusing, but the packed types' (sm90 refuses the types)
    refused_rules = {r for c in LABELS["cases"] if c["outcome"] == "refused" for r in c["violates"]}
    enforced = {r.id for r in rules_for("tensormap") if tensormap.enforced(r.id, "sm90")}
    assert enforced - refused_rules == {"tma.map.packed_global_dim", "tma.map.interleave_dtype",
                                        "tma.map.packed_box", "tma.map.packed_swizzle"}


def test_labels_still_follow_from_spec():
    """The recorded labels are spec's verdicts today too (a rule change shows here before the next run)."""
    for c in LABELS["cases"]:
        legal = tensormap.check_document(c["case"], "sm90")["legal"]
        assert legal == (c["driver"]["verdict"] == "accept"), (c["violates"], c["outcome"])
