"""The tcgen05.mma accumulator layouts in tensor memory (spec/tmem/accumulator.py, PTX 9.7.16.10.5):
expectations from the manual's table (which layout for which M / cta_group / .ws, which use half the data
path, the lane alignment 0 or 16) and counts (every element in its own cell, inside 128 x 512), and a
read-back by tcgen05.ld (spec/tmem/ld_st.py), not from the module's own output."""
from __future__ import annotations

import itertools

import pytest

from spec.rule import SpecError
from spec.tmem import accumulator, address, ld_st

CASES = [  # (M, cta_group, ws, layout) from the table of 9.7.16.10.5
    (32, 1, True, "G"), (64, 1, True, "E"), (64, 1, False, "F"), (128, 1, False, "D"), (128, 1, True, "D"),
    (128, 2, False, "B"), (256, 2, False, "A")]


@pytest.mark.parametrize("M,cta_group,ws,layout", CASES)
def test_layout_selection_follows_the_table(M, cta_group, ws, layout):
    assert accumulator.layout_id(M, cta_group, ws) == layout
    assert accumulator.layout_id(128, 2, sparse=True) == "C"


@pytest.mark.parametrize("M,cta_group,ws,layout", CASES)
@pytest.mark.parametrize("N", [64, 128, 256])
def test_each_layout_is_injective_and_inside_tensor_memory(M, cta_group, ws, layout, N):
    for offset in accumulator.lane_offsets(layout):
        seen = set()
        for m, n in itertools.product(range(M), range(N)):
            cta, lane, column = accumulator.d_location(m, n, M, N, cta_group, ws, offset)
            assert address.in_range(lane, column)
            assert cta in ((0, 1) if cta_group == 2 else (0,))
            seen.add((cta, lane, column))
        assert len(seen) == M * N
        # every CTA holds the same number of elements
        per_cta = [sum(1 for c, _, _ in seen if c == k) for k in range(cta_group)]
        assert len(set(per_cta)) == 1


def test_half_datapath_layouts_use_lanes_0_15_or_16_31_of_each_quarter():
    assert accumulator.lane_offsets("F") == accumulator.lane_offsets("C") == (0, 16)
    for other in "ABDEG":
        assert accumulator.lane_offsets(other) == (0,)
    low = accumulator.lanes_used(64, 1, False, 0)
    high = accumulator.lanes_used(64, 1, False, 16)
    assert low == [32 * q + i for q in range(4) for i in range(16)]
    assert high == [32 * q + 16 + i for q in range(4) for i in range(16)]
    with pytest.raises(SpecError):
        accumulator.d_cell(0, 0, 64, 64, 1, False, lane_offset=8)
    with pytest.raises(SpecError):
        accumulator.d_cell(0, 0, 128, 64, 1, False, lane_offset=16)


def test_full_datapath_layouts_use_all_128_lanes():
    for M, cta_group, ws, _ in CASES:
        if (M, ws) != (64, False) and M != 32:
            assert accumulator.lanes_used(M, cta_group, ws) == list(range(128)), (M, cta_group, ws)
    assert accumulator.lanes_used(32, 1, True) == list(range(128))       # 1x4: N split over 4 quarters


def test_16_bit_d_takes_the_low_half_of_a_cell():
    assert accumulator.d_bits(16) == (0, 16) and accumulator.d_bits(32) == (0, 32)


def test_malformed_requests():
    for args in ((64, 2, False), (128, 2, True), (512, 1, False), (32, 1, False)):
        with pytest.raises(SpecError):
            accumulator.layout_id(*args)
    with pytest.raises(SpecError):
        accumulator.d_cell(0, 0, 128, 36, 1)                      # N not a multiple of 8
    with pytest.raises(SpecError):
        accumulator.d_cell(128, 0, 128, 64, 1)                    # m outside D


def test_four_warps_of_32x32b_loads_read_every_element_of_d_once():
    """M=128, cta_group::1, N=256: warp w loads lanes 32w..32w+31 with two .32x32b.x128 at columns 0 and
    128 (each within its lane quarter, rule tmem.access.lane_quarter); every D element is read once."""
    M, N = 128, 256
    where = {accumulator.d_cell(m, n, M, N, 1): (m, n) for m in range(M) for n in range(N)}
    reads = []
    for warp in range(4):
        for column in (0, 128):
            access = ld_st.TmemAccess("ld", "32x32b", 128, lane=32 * warp, column=column, warp=warp,
                                      registers=128)
            assert ld_st.violations(access) == []
            for t, pieces in enumerate(ld_st.fragment_map("32x32b", 128)):
                cells = {(32 * warp + lane, column + col) for lane, col, _ in pieces}
                reads += [where[cell] for cell in cells]
    assert len(reads) == M * N and set(reads) == {(m, n) for m in range(M) for n in range(N)}
