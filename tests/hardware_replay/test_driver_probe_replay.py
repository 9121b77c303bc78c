"""Replay issue 14's H100 driver probe (tests/hardware/driver_probe_sm90.json.gz, recorded by
hardware/run_driver_probe.py) against `layoutproof tma check --arch sm90`, with no GPU.

Each recorded set is regenerated from its name and seed (hardware/driver_probe_sets.py, plain Python) and
must hash to the recorded SHA-256, so the documents are exactly those the driver answered. The driver's
answer is the expectation: "S" accepted, "V" CUDA_ERROR_INVALID_VALUE, "U" a value the C API cannot take
(layoutproof must then refuse it or call it malformed, exit 2). heldout:2 is the held-out score: drawn
after the rules were fitted to heldout:1 and the class sets; the issue asks for at least 99.9%.
"""
import functools
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import gzip
import json
import os
import sys

import pytest

from spec.rule import SpecError
from spec.tma import tensormap

HERE = TESTS_DIR
sys.path.insert(0, os.path.join(HERE, "..", "hardware"))
import driver_probe_sets  # noqa: E402

with gzip.open(os.path.join(HERE, "hardware", "driver_probe_sm90.json.gz"), "rt") as handle:
    RECORDING = json.load(handle)
SETS = {f"{s['name']}:{s['seed']}": s for s in RECORDING["sets"]}


def test_the_recording_says_where_it_comes_from():
    facts = RECORDING["provenance"]["details"]
    assert facts["gpu"].startswith("NVIDIA H100") and facts["driver"] and facts["arch"] == "sm90"
    assert {"heldout:1", "heldout:2", "box_bytes:1", "interleaved_im2col:1", "spatial_2_31:1", "ranks:1"} <= set(SETS)
    assert SETS["heldout:2"]["count"] >= 50000


def _verdict(document) -> str:
    """"accept", "refuse" (a rule the driver enforces on sm90) or "malformed" (exit 2)."""
    try:
        return "accept" if tensormap.check_document(document, "sm90")["legal"] else "refuse"
    except SpecError:
        return "malformed"


@functools.lru_cache(maxsize=None)
def _agreement(key: str) -> tuple:
    recorded = SETS[key]
    documents = driver_probe_sets.documents(recorded["name"], recorded["seed"], recorded["count"])
    assert driver_probe_sets.digest(documents) == recorded["sha256"], "the set's documents changed since recording"
    disagreements = []
    for index, (document, code) in enumerate(zip(documents, recorded["results"])):
        ours = _verdict(document)
        driver = {"S": "accept", "V": "refuse", "U": "unrepresentable"}[code]
        agrees = ours == driver or (driver == "unrepresentable" and ours in ("refuse", "malformed"))
        if not agrees:
            disagreements.append((index, driver, ours))
    return len(documents), disagreements


@pytest.mark.parametrize("key", sorted(SETS))
def test_tma_check_agrees_with_the_driver_on_every_call_of_the_set(key):
    count, disagreements = _agreement(key)
    assert count == SETS[key]["count"] == len(SETS[key]["results"])
    assert not disagreements, disagreements[:10]


def test_the_held_out_score_is_at_least_99_9_percent():
    count, disagreements = _agreement("heldout:2")
    assert (count - len(disagreements)) / count >= 0.999


def test_the_sets_exercise_both_answers_and_the_classes_they_were_made_for():
    for key, recorded in SETS.items():
        assert "S" in recorded["results"] and "V" in recorded["results"], key
    # class 1: a box the driver accepts only because it divides boxDim[0] by elementStrides[0]
    box = driver_probe_sets.documents("box_bytes", 1, SETS["box_bytes:1"]["count"])
    divided = [d for d, code in zip(box, SETS["box_bytes:1"]["results"]) if code == "S" and d["elementStrides"][0] > 1
               and d["boxDim"][0] * tensormap_bytes(d) > 228 * 1024]
    assert divided
    # class 2: interleaved im2col maps, accepted and refused
    maps = driver_probe_sets.documents("interleaved_im2col", 1, SETS["interleaved_im2col:1"]["count"])
    answers = {code for d, code in zip(maps, SETS["interleaved_im2col:1"]["results"]) if d["interleave"] != "NONE"}
    assert answers == {"S", "V"}
    # class 3: spatial dimensions above 2^31, accepted and refused
    spatial = driver_probe_sets.documents("spatial_2_31", 1, SETS["spatial_2_31:1"]["count"])
    answers = {code for d, code in zip(spatial, SETS["spatial_2_31:1"]["results"])
               if max(d["globalDim"][1:-1]) > 2 ** 31}
    assert answers == {"S", "V"}


def tensormap_bytes(document) -> int:
    """Element size times the box's dimensions 1.. (each divided by its stride, rounded down)."""
    size = {"UINT8": 1, "FLOAT16": 2, "FLOAT32": 4, "FLOAT64": 8}[document["dataType"]]
    for extent, stride in zip(document["boxDim"][1:], document["elementStrides"][1:]):
        size *= extent // stride
    return size


def test_the_issue_examples():
    """The issue's example and the classes, as the driver answered them."""
    box = {"encode": "tiled", "dataType": "UINT8", "rank": 3, "globalAddress": 0, "globalDim": [64, 512, 92],
           "globalStrides": [64, 32768], "boxDim": [32, 256, 46], "elementStrides": [4, 1, 1], "interleave": "NONE",
           "swizzle": "NONE", "l2Promotion": "NONE", "oobFill": "NONE"}
    assert tensormap.check_document(box, "sm90")["legal"]                      # 8 x 256 x 46 counted
    assert not tensormap.check_document(dict(box, elementStrides=[1, 1, 1]), "sm90")["legal"]   # 32 x 256 x 46
