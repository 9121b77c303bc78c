"""Replay what an H100's wgmma read (tests/hardware/*.json.gz, recorded by hardware/run_probe.py)
against spec's read map, with no GPU.

Each observation is one operand read through one sm90 descriptor: the absolute shared-memory address
of every element (mn, k). spec.mma.readmap must predict every one of them exactly.
"""
import collections
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import glob
import gzip
import json
import os

import pytest

from spec.mma import descriptor
from spec.mma import readmap

HERE = TESTS_DIR
FILES = sorted(glob.glob(os.path.join(HERE, "hardware", "wgmma_*.json.gz")))


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


DOCUMENTS = {os.path.basename(p): load(p) for p in FILES}


def operand_of(case):
    desc = descriptor.decode("sm90", int(case["descriptor"], 16))
    return readmap.make_operand(desc, case["dtype"], case["major"], case["mn"], case["k"])


def test_observations_exist_and_say_where_they_come_from():
    assert DOCUMENTS, "no hardware observations in tests/hardware/"
    for name, doc in DOCUMENTS.items():
        facts = doc["provenance"]["details"]
        assert facts["gpu"].startswith("NVIDIA H100") and facts["driver"] and facts["commit"], name
        assert doc["provenance"]["recorded_by"] == "hardware/run_probe.py", name
        assert doc["cases"], name


def test_every_observation_is_clean():
    """Every accumulator value decoded to a code, and the identity block gave zeros elsewhere."""
    for name, doc in DOCUMENTS.items():
        assert all(case["clean"] for case in doc["cases"]), name


def test_observations_cover_what_issue_3_asks():
    cases = [c for doc in DOCUMENTS.values() for c in doc["cases"]]
    seen = collections.defaultdict(set)
    for c in cases:
        seen["operand"].add(c["operand"])
        seen["dtype"].add(c["dtype"])
        seen["major/swizzle"].add((c["major"], c["swizzle"]))
        seen["base_offset"].add(c["base_offset"])
        seen["strides"].add(c["strides"])
        repeat = {"none": 128, "32B": 256, "64B": 512, "128B": 1024}[c["swizzle"]]
        seen["start on boundary"].add(c["start_address"] % repeat == 0)
    assert seen["operand"] == {"A", "B"}
    assert seen["dtype"] == {"bf16", "f16", "tf32", "e4m3"}
    assert seen["major/swizzle"] == {(m, s) for m in ("K", "MN") for s in ("none", "32B", "64B", "128B")}
    assert seen["base_offset"] == set(range(8))
    assert {"canonical", "k-first"} <= seen["strides"] and len(seen["strides"]) >= 5
    assert seen["start on boundary"] == {True, False}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_spec_read_map_predicts_every_observation(name):
    mismatches = []
    for case in DOCUMENTS[name]["cases"]:
        if readmap.read_addresses(operand_of(case)) != case["addresses"]:
            mismatches.append({k: case[k] for k in ("id", "operand", "dtype", "major", "swizzle",
                                                    "strides", "start_address", "base_offset")})
    assert not mismatches, f"{len(mismatches)} observations differ from spec, first: {mismatches[:3]}"


@pytest.mark.parametrize("model", [m for m in readmap.PHASE_MODELS if m != "hardware"])
def test_refuted_phase_models_fail_on_the_observations(model):
    """The replay can fail: each other reading of the base offset mispredicts some observations."""
    cases = [c for doc in DOCUMENTS.values() for c in doc["cases"] if c["swizzle"] != "none"]
    wrong = sum(readmap.read_addresses(operand_of(c), model) != c["addresses"] for c in cases[::7])
    assert wrong > 0
