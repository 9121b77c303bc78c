"""Replay what TMA loads wrote to shared memory on an H100 against spec/, with no GPU.

tests/hardware/tma_loads_sm90.json.gz was recorded by hardware/run_tma_probe.py (cases in
hardware/tma_probe_cases.py). For every load it holds the raw shared-memory contents: the code found in
each element slot the load wrote (code c > 0 is global element c - 1, linear index with dimension 0
fastest; a fill writes 0, or the NaN pattern). spec.tma.place (tiled) and spec.tma.im2col (im2col) must
predict every written slot and its code, and nothing else may be written.
"""
import collections
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import gzip
import json
import math
import os
import sys

import pytest

from spec.tma import im2col
from spec.tma import place as tma_place

HERE = TESTS_DIR
sys.path.insert(0, os.path.join(HERE, "..", "hardware"))
with gzip.open(os.path.join(HERE, "hardware", "tma_loads_sm90.json.gz"), "rt") as f:
    RECORD = json.load(f)
CASES = RECORD["cases"]
RAN = [c for c in CASES if c.get("run") == "ok"]


def linear_code(coords, dims) -> int:
    """The code the probe stored at tensor coordinate `coords` (dimension 0 first): its linear index + 1."""
    index, scale = 0, 1
    for x, size in zip(coords, dims):
        index += x * scale
        scale *= size
    return index + 1


def fill_code(case) -> int:
    return tma_place.fill_pattern(case["oob_fill"], case["element_bytes"])


def observed(case) -> dict:
    eb = case["element_bytes"]
    return {case["written_from"] + i * eb: code for i, code in enumerate(case["codes"]) if code != -1}


def predicted_tiled(case) -> dict:
    dims, strides = case["global_dim"], case["element_strides"]
    box = tma_place.make_box(case["swizzle"], case["element_bytes"], case["box"],
                             case["smem_base"] + case["smem_offset"], strides, case["coord"][0])
    expected = {}
    for n, address in enumerate(tma_place.place(box)):
        index = []
        for count in box.counts:
            index.append(n % count)
            n //= count
        # no traversal stride along dimension 0 (tma.place.tiled); strides elsewhere
        coords = [case["coord"][0] + index[0]] + [c + i * s for c, i, s in zip(case["coord"][1:], index[1:], strides[1:])]
        inside = all(0 <= x < size for x, size in zip(coords, dims))
        expected[address] = linear_code(coords, dims) if inside else fill_code(case)
    return expected


def predicted_im2col(case) -> dict:
    dims = case["global_dim"]
    load = im2col.make_load("im2col", dims, case["lower"], case["upper"], case["channels"], case["pixels"],
                            case["coord"], offsets=case["offsets"], element_strides=case["element_strides"],
                            elem_bytes=case["element_bytes"], swizzle=case["swizzle"],
                            smem_address=case["smem_base"] + case["smem_offset"])
    expected = {}
    for element in im2col.placement(load):
        if element.source is None:
            expected[element.smem_address] = fill_code(case)
            continue
        n, d, h, w, c = element.source
        coords = {5: (c, w, h, d, n), 4: (c, w, h, n), 3: (c, w, n)}[len(dims)]
        expected[element.smem_address] = linear_code(coords, dims)
    return expected


def test_the_record_says_where_it_comes_from():
    facts = RECORD["provenance"]["details"]
    assert facts["gpu"].startswith("NVIDIA H100") and facts["driver"] and facts["commit"]
    assert not [c for c in CASES if c.get("run", "").startswith("not run")]


def test_the_record_is_the_case_list_of_the_harness():
    import tma_probe_cases
    listed = tma_probe_cases.cases()
    assert len(listed) == len(CASES)
    for case, recorded in zip(listed, CASES):
        assert {k: recorded[k] for k in case} == case


def test_the_loads_cover_what_the_tma_issue_asks():
    tiled = [c for c in RAN if c["mode"] == "tiled"]
    seen = {(c["swizzle"], c["element_bytes"], c["smem_offset"]) for c in tiled}
    assert seen >= {(s, e, o) for s in ("NONE", "32B", "64B", "128B") for e in (1, 2, 4) for o in range(0, 1024, 128)}
    assert {c["where"] for c in tiled} >= {"inside", "past_far_corner", "before_origin", "traversal_strides",
                                           "rank3_edges", "nan_fill", "narrow_rows"}
    loads = [c for c in RAN if c["mode"] == "im2col"]
    assert {len(c["global_dim"]) for c in loads} == {3, 4, 5}
    assert any(min(c["lower"]) < 0 for c in loads) and any(max(c["lower"]) > 0 for c in loads)
    assert any(max(c["offsets"]) > 0 for c in loads) and any(max(c["element_strides"]) > 1 for c in loads)


@pytest.mark.parametrize("case", [c for c in RAN if c["mode"] == "tiled"], ids=lambda c: f"{c['id']}-{c['where']}")
def test_tiled_loads_land_where_spec_says(case):
    assert observed(case) == predicted_tiled(case)


@pytest.mark.parametrize("case", [c for c in RAN if c["mode"] == "im2col"], ids=lambda c: f"{c['id']}-{c['where']}")
def test_im2col_loads_land_where_spec_says(case):
    assert observed(case) == predicted_im2col(case)


def test_the_load_completes_with_the_bytes_spec_counts():
    """The mbarrier's transaction count (the harness's expect_bytes) completed for every load that ran:
    the bytes spec counts (boxDim[0] per row, no stride along dimension 0) are what the copy delivered."""
    for case in RAN:
        if case["mode"] == "tiled":
            box = tma_place.make_box(case["swizzle"], case["element_bytes"], case["box"], 0, case["element_strides"])
            assert case["expect_bytes"] == math.prod(box.counts) * case["element_bytes"], case["id"]


def test_a_load_traps_exactly_when_its_first_column_or_its_destination_is_misaligned():
    """Rules tma.load.coord0_16B and tma.box.destination_alignment: every tiled load that trapped broke one
    of them ("illegal instruction" for the column, "misaligned address" for the destination), every one that
    ran broke neither. The destinations tried off 128 bytes are 8, 16, 32, 48, 64 and 96 bytes past it."""
    outcomes = collections.Counter()
    for case in CASES:
        if case["mode"] != "tiled" or case.get("encode_status") != 0:
            continue
        box = tma_place.make_box(case["swizzle"], case["element_bytes"], case["box"],
                                 case["smem_base"] + case["smem_offset"], case["element_strides"], case["coord"][0])
        broken = tuple(sorted(v.rule.id for v in tma_place.violations(box)))
        outcomes[(broken, case["run"])] += 1
    column, destination = (tma_place.COORD0_ALIGNMENT.id,), (tma_place.DESTINATION.id,)
    assert set(outcomes) == {((), "ok"), (column, "cuda error 715"), (destination, "cuda error 716")}, outcomes
    assert outcomes[(column, "cuda error 715")] >= 12 and outcomes[(destination, "cuda error 716")] >= 12
    offsets = {c["smem_offset"] % 128 for c in CASES if c["run"] == "cuda error 716"}
    assert offsets == {8, 16, 32, 48, 64, 96}
