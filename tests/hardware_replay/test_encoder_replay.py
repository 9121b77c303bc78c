"""Replay the H100 driver's tensor-map encoder decisions against spec/tma/tensormap.py, with no GPU.

tests/hardware/tensormap_encode_sm90.json.gz was recorded by hardware/run_encoder_probe.py: every argument
set of hardware/encoder_cases.py (one factor at a time around valid configurations, seeded random ones,
and targeted thresholds) went to cuTensorMapEncodeTiled / Im2col / Im2colWide through cuda-bindings.
`layoutproof tma check --arch sm90` must say `legal` exactly when the driver accepted.
"""
import collections
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import gzip
import json
import os
import sys

import pytest

from spec.tma import tensormap
from spec.rules import rules_for

HERE = TESTS_DIR
PATH = os.path.join(HERE, "hardware", "tensormap_encode_sm90.json.gz")
sys.path.insert(0, os.path.join(HERE, "..", "hardware"))

with gzip.open(PATH, "rt") as f:
    RECORD = json.load(f)
CASES = RECORD["cases"]

# The one difference kept before issue 14 (an im2col_wide W128 map with W = 2^32, accepted while
# 2^31 .. 2^32 - 1 were refused) is the 32-bit sum of rule tma.map.im2col.box_area: no exception is left.


def driver_accepted(case) -> bool:
    # "exception: ..." means cuda-bindings refused the lists before calling the driver (rank 6).
    return case["result"] == "CUDA_SUCCESS"


def test_the_record_says_where_it_comes_from():
    facts = RECORD["provenance"]["details"]
    assert facts["gpu"].startswith("NVIDIA H100") and facts["driver"] and facts["arch"] == "sm90"
    assert len(CASES) >= 2000
    results = collections.Counter(c["result"] for c in CASES)
    assert results["CUDA_SUCCESS"] > 1000 and results["CUDA_ERROR_INVALID_VALUE"] > 1000


def test_the_record_is_the_case_list_of_the_harness():
    """The recorded argument sets are exactly what hardware/encoder_cases.py lists today (so a change to
    the list without a new recording fails here)."""
    import encoder_cases
    listed = encoder_cases.cases()
    assert len(listed) == len(CASES)
    for case, recorded in zip(listed, CASES):
        document = dict(recorded["document"])
        offset = document.pop("globalAddress") - RECORD["provenance"]["details"]["allocation_base"]
        expected = dict(case["document"])
        assert expected.pop("globalAddressOffset") == offset
        assert expected == document, case["id"]


def test_tma_check_agrees_with_the_driver_on_every_argument_set():
    disagreements = []
    for case in CASES:
        verdict = tensormap.check_document(case["document"], "sm90")
        if verdict["legal"] != driver_accepted(case):
            disagreements.append((case["id"], case["base"], case["factor"], case["result"],
                                  [v["rule"] for v in verdict["violations"]]))
    assert not disagreements, disagreements[:10]


def test_every_refusal_names_a_rule():
    for case in CASES:
        if not driver_accepted(case):
            assert tensormap.check_document(case["document"], "sm90")["violations"], case["id"]


@pytest.mark.parametrize("rule_id", sorted(r.id for r in rules_for("tensormap") if tensormap.enforced(r.id, "sm90")))
def test_every_enforced_rule_is_seen_refusing_alone_or_is_sm100_only(rule_id):
    """Each rule the model calls enforced on sm90 is, in the record, the only violation of some argument
    set the driver refused; rules only sm100 can show are listed here with that reason."""
    sm100_only = {"tma.map.packed_box", "tma.map.packed_swizzle", "tma.map.interleave_dtype",
                  "tma.map.packed_global_dim"}
    alone = [c for c in CASES if not driver_accepted(c) and
             [v["rule"] for v in tensormap.check_document(c["document"], "sm90")["violations"]] == [rule_id]]
    if rule_id in sm100_only:
        # the packed types are refused on sm90 whatever else holds (tma.map.dtype_arch), so their other
        # rules never break alone here
        assert not alone
    else:
        assert alone, f"no refused argument set breaks {rule_id} alone"
