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


# --- layout C (sparse A, M=128, cta_group::2): the manual's table, "4x1", half the data path ----------------
@pytest.mark.parametrize("offset", [0, 16])
def test_sparse_layout_c_is_the_half_datapath_organization_per_cta(offset):
    """Each CTA of the pair holds 64 rows on 16 lanes of each quarter (from lane 0 or 16 of it), N columns."""
    N = 64
    assert accumulator.lane_offsets("C") == (0, 16)
    quarter_half = [32 * q + offset + i for q in range(4) for i in range(16)]
    assert accumulator.lanes_used(128, 2, lane_offset=offset, sparse=True) == quarter_half
    per_cta = {0: set(), 1: set()}
    for m, n in itertools.product(range(128), range(N)):
        cta, lane, column = accumulator.d_location(m, n, 128, N, 2, lane_offset=offset, sparse=True)
        assert cta == m // 64 and column == n            # rows 0..63 in the issuing CTA, columns as in D
        per_cta[cta].add((lane, column))
    assert [len(cells) for cells in per_cta.values()] == [64 * N, 64 * N]
    with pytest.raises(SpecError):
        accumulator.d_location(0, 0, 128, N, 2, lane_offset=8, sparse=True)


# --- A in tensor memory --------------------------------------------------------------------------------------
A_BITS = {"tf32": 32, "f16": 16, "i8": 8, "f8f6f4": 8}   # tf32, 16-bit, 8-bit, .b8x16 containers (9.7.16.9.1)


@pytest.mark.parametrize("kind", sorted(A_BITS))
@pytest.mark.parametrize("M,cta_group,offset", [(64, 1, 0), (64, 1, 16), (128, 1, 0), (128, 2, 0), (256, 2, 0)])
def test_a_in_tensor_memory_packs_one_mma_k_in_8_columns_on_d_lanes(kind, M, cta_group, offset):
    """One MMA's A (M x K, K * w = 256 bits per row) fills 8 columns; every bit is one element's; row m
    sits on the lanes that hold D's row m (every lane D's row uses)."""
    bits = A_BITS[kind]
    K = 256 // bits
    assert accumulator.a_k(kind) == K
    owner = {}
    N = 64
    for m, k in itertools.product(range(M), range(K)):
        places = accumulator.a_locations(m, k, M, kind, cta_group, offset)
        d_lanes = {accumulator.d_location(m, n, M, N, cta_group, False, offset)[:2] for n in range(N)}
        assert {(cta, lane) for cta, lane, _, _, _ in places} == d_lanes
        for cta, lane, column, first_bit, width in places:
            assert width == bits and column < 8 and first_bit + width <= 32
            for bit in range(first_bit, first_bit + width):
                assert owner.setdefault((cta, lane, column, bit), (m, k)) == (m, k)
    copies = 2 if (M, cta_group) == (128, 2) else 1
    assert len(owner) == M * 256 * copies


def test_a_in_tensor_memory_refuses_what_is_not_modelled():
    with pytest.raises(SpecError):
        accumulator.a_locations(0, 0, 128, "mxf4", 1)
    with pytest.raises(SpecError):
        accumulator.a_locations(0, 16, 128, "f16", 1)          # K = 16 for f16: k in 0..15
    with pytest.raises(SpecError):
        accumulator.a_locations(0, 0, 64, "f16", 1, lane_offset=8)
