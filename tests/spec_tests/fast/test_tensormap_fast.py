"""The tensormap target's witness of rule tma.map.smem_alignment by prefixes of rows (row 0, rows 0-7,
the rows of one swizzle repeat: solver.fuzz.tensormap.misplaced_element) against the whole box placed
element by element (misplaced_element_whole): on the fuzz domain of every arch, on hypothesis-drawn
boxes (every swizzle mode, element size, destination, rank and traversal stride; boxes taller than a
repeat, so that the repeat decides), and with the TMA swizzle replaced (no repeat to go by)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle
from spec.tma import tensormap as spec_tensormap
from solver.fuzz import engine
from solver.fuzz import tensormap

TYPES = [name for name, t in spec_tensormap.DATA_TYPES.items() if t.bits % 8 == 0]


@pytest.mark.parametrize("arch", ("sm90", "sm100", "sm103"))
def test_witness_by_prefixes_is_the_whole_box_on_the_fuzz_domain(arch):
    outcomes = set()
    for seed in (1, 2):
        for r in engine.generate("tensormap", arch, frozenset({"tma.map.smem_alignment"}), 80, seed, engine.Stats()):
            expected = tensormap.misplaced_element_whole(r["case"])
            assert tensormap.misplaced_element(r["case"]) == expected, r["case"]
            outcomes.add(expected is None)
    assert outcomes == {True, False}        # both witnesses and right placements were compared


@st.composite
def documents(draw):
    swizzle = draw(st.sampled_from([m for m in tma_swizzle.MODES if m != "NONE"]))
    data_type = draw(st.sampled_from(TYPES))
    span = tma_swizzle.mode_info(swizzle).span
    element = spec_tensormap.DATA_TYPES[data_type].bits // 8
    inner = max(1, draw(st.sampled_from((span, span // 2, 16, 32, 48, span + 16))) // element)
    rank = draw(st.integers(2, 4))
    dims = [inner] + [draw(st.integers(1, 40)) for _ in range(rank - 1)]
    strides = [draw(st.integers(1, 3))] + [draw(st.sampled_from((1, 1, 2, 3))) for _ in range(rank - 1)]
    destination = draw(st.sampled_from((16, 128, 256))) * draw(st.integers(0, 1 << 8))
    return {"encode": "tiled", "dataType": data_type, "swizzle": swizzle, "smemAddress": destination,
            "boxDim": dims, "elementStrides": strides}


@settings(max_examples=500, deadline=None)
@given(documents())
def test_witness_by_prefixes_is_the_whole_box_on_drawn_boxes(document):
    assert tensormap.misplaced_element(document) == tensormap.misplaced_element_whole(document)


def test_boxes_taller_than_a_repeat_are_decided_by_it():
    """Boxes whose rows past the first repeat are placed as the repeat's: ok at a destination one repeat of
    the table away, misplaced at others, the same as the whole box either way."""
    for swizzle in ("128B_ATOM_64B", "128B_ATOM_32B", "64B", "96B", "128B_ATOM_32B_FLIP_8B"):
        for destination in (0x100, 0x200, 0x280, 0x410):
            doc = {"encode": "tiled", "dataType": "UINT16", "swizzle": swizzle, "smemAddress": destination,
                   "boxDim": [16, 200], "elementStrides": [1, 1]}
            written, _ = tensormap._boxes(doc)
            assert tensormap.repeat_rows(written) < 200
            assert tensormap.misplaced_element(doc) == tensormap.misplaced_element_whole(doc)


def test_a_replaced_tma_swizzle_places_the_whole_box(monkeypatch):
    original = tma_swizzle.swizzle_byte_address
    # the same as the table up to row 40 of a box at 0x400, then shifted: only the whole box shows it
    monkeypatch.setattr(tma_swizzle, "swizzle_byte_address",
                        lambda mode, a: original(mode, a) + (16 if a >= 0x400 + 40 * 128 else 0))
    doc = {"encode": "tiled", "dataType": "UINT8", "swizzle": "128B", "smemAddress": 0x400,
           "boxDim": [128, 64], "elementStrides": [1, 1]}
    written, _ = tensormap._boxes(doc)
    assert tensormap.repeat_rows(written) is None
    expected = tensormap.misplaced_element_whole(doc)
    assert expected is not None and expected["element"]["row"] == 40
    assert tensormap.misplaced_element(doc) == expected
    assert tma_place.place_rows(written) == tma_place.place(written)
