"""spec/tmem: tensor-memory addresses, tcgen05.ld/st fragments and footprints, the instruction checker
and the allocation-sequence checker. Expectations come from the manual's statements (PTX 9.7.16.1,
9.7.16.2.3, 9.7.16.7.1, 9.7.16.8.x, Table 49), from CUTLASS's CuTe layouts of its SM100_TMEM_LOAD atoms
evaluated with pycute (include/cute/atom/copy_traits_sm100.hpp), and from what ptxas 13.0 accepts."""
from __future__ import annotations

import pytest

from spec.rule import SpecError
from spec.rules import rules_for
from spec.tmem import address, alloc, instruction, ld_st
from spec.tmem.ld_st import TmemAccess

# Manual: lanes per access and bits per lane per access (9.7.16.2.3.1), registers per .x1 (Table 49).
MANUAL_LANES = {"32x32b": 32, "16x64b": 16, "16x128b": 16, "16x256b": 16, "16x32bx2": 16}
MANUAL_BITS = {"32x32b": 32, "16x64b": 64, "16x128b": 128, "16x256b": 256, "16x32bx2": 32}
TABLE_49_X1 = {"32x32b": 1, "16x64b": 1, "16x32bx2": 1, "16x128b": 2, "16x256b": 4}
TABLE_49_NA = {"16x128b": (128,), "16x256b": (64, 128)}


def _splitoff(shape, num, pack=False):
    return num * (2 if pack else 1) if shape == "16x32bx2" else None


CASES = [(s, n, p) for s in ld_st.SHAPES for n in ld_st.legal_nums(s) for p in (False, True)]


# --- address ---------------------------------------------------------------------------------------------
def test_geometry_and_address_layout():
    assert (address.LANES, address.COLUMNS, address.CELL_BITS) == (128, 512, 32)
    assert address.encode(0, 0) == 0
    assert address.encode(1, 0) == 1 << 16
    assert address.encode(127, 511) == (127 << 16) | 511
    assert address.decode(0x0020_0010) == (32, 16)


@pytest.mark.parametrize("lane", [0, 1, 31, 64, 127, 300])
@pytest.mark.parametrize("column", [0, 7, 256, 511, 4000])
def test_encode_decode_round_trip(lane, column):
    assert address.decode(address.encode(lane, column)) == (lane, column)


def test_encode_rejects_what_does_not_fit():
    with pytest.raises(SpecError):
        address.encode(1 << 16, 0)
    with pytest.raises(SpecError):
        address.decode(1 << 32)


def test_address_range_rule():
    from spec.rule import check_all
    assert check_all("tmem_address", address.encode(127, 511)) == []
    assert [v.rule.id for v in check_all("tmem_address", address.encode(128, 0))] == ["tmem.address.range"]
    assert [v.rule.id for v in check_all("tmem_address", address.encode(0, 512))] == ["tmem.address.range"]


@pytest.mark.parametrize("warp", range(8))
def test_lane_quarter_follows_the_rank_in_the_warpgroup(warp):
    table = {0: (0, 31), 1: (32, 63), 2: (64, 95), 3: (96, 127)}       # 9.7.16.8.1
    quarter = address.lane_quarter(warp)
    assert (quarter.start, quarter.stop - 1) == table[warp % 4]


def test_quarters_partition_the_lanes():
    lanes = [lane for w in range(4) for lane in address.lane_quarter(w)]
    assert sorted(lanes) == list(range(128))


# --- Table 49 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ld_st.SHAPES)
def test_table_49(shape):
    for num in (1, 2, 4, 8, 16, 32, 64, 128):
        if num in TABLE_49_NA.get(shape, ()):
            assert num not in ld_st.legal_nums(shape)
            with pytest.raises(SpecError):
                ld_st.registers_per_thread(shape, num)
        else:
            assert ld_st.registers_per_thread(shape, num) == TABLE_49_X1[shape] * num
            assert ld_st.registers_per_thread(shape, num, pack=True) == TABLE_49_X1[shape] * num


@pytest.mark.parametrize("shape", ld_st.SHAPES)
def test_registers_carry_the_bits_the_manual_states(shape):
    """32 threads x registers x 32 bits == lanes x bits per lane (x2 accesses for .16x32bx2)."""
    accesses = 2 if shape == "16x32bx2" else 1
    for num in ld_st.legal_nums(shape):
        assert 32 * ld_st.registers_per_thread(shape, num) * 32 == \
            accesses * MANUAL_LANES[shape] * MANUAL_BITS[shape] * num


# --- Fragment map: properties ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape,num,pack", CASES, ids=lambda c: str(c))
def test_fragment_map_is_injective_and_covers_the_stated_cells(shape, num, pack):
    frag = ld_st.fragment_map(shape, num, pack, _splitoff(shape, num, pack))
    assert len(frag) == 32
    registers = ld_st.registers_per_thread(shape, num, pack)
    pieces = [piece for thread in frag for piece in thread]
    assert all(len(thread) == 2 * registers for thread in frag)
    assert len(set(pieces)) == len(pieces)                                    # injective
    cells = {(lane, column) for lane, column, _ in pieces}
    lanes = MANUAL_LANES[shape]
    columns = MANUAL_BITS[shape] * num // 32 * (2 if shape == "16x32bx2" else 1) * (2 if pack else 1)
    assert cells == {(l, c) for l in range(lanes) for c in range(columns)}
    halves = {half for _, _, half in pieces}
    assert halves == ({0} if pack else {0, 1})                               # packed: low halves only


@pytest.mark.parametrize("shape", ld_st.SHAPES)
def test_pack_doubles_the_columns_a_register_spans(shape):
    """.pack::16b: a register holds 16-bit values of two adjacent columns (9.7.16.8.2)."""
    num = 2
    plain = ld_st.fragment_map(shape, num, False, _splitoff(shape, num))
    packed = ld_st.fragment_map(shape, num, True, _splitoff(shape, num, True))
    for t in range(32):
        for j in range(ld_st.registers_per_thread(shape, num)):
            (l0, c0, h0), (l1, c1, h1) = packed[t][2 * j], packed[t][2 * j + 1]
            assert l0 == l1 and c1 == c0 + 1 and h0 == h1 == 0
            lane, column, _ = plain[t][2 * j]
            assert plain[t][2 * j + 1] == (lane, column, 1)


def test_16x32bx2_second_half_comes_from_the_split_offset():
    """Two .16x32b accesses: threads 0-15 at taddr, threads 16-31 at taddr + immHalfSplitoff."""
    frag = ld_st.fragment_map("16x32bx2", 4, half_splitoff=100)
    for t in range(32):
        lanes = {lane for lane, _, _ in frag[t]}
        columns = {column for _, column, _ in frag[t]}
        assert lanes == {t % 16}
        assert columns == (set(range(4)) if t < 16 else set(range(100, 104)))


def test_32x32b_thread_is_lane_register_is_column():
    frag = ld_st.fragment_map("32x32b", 8)
    assert all(frag[t][2 * j] == (t, j, 0) for t in range(32) for j in range(8))


def test_fragment_map_needs_the_split_offset_exactly_for_16x32bx2():
    with pytest.raises(SpecError):
        ld_st.fragment_map("16x32bx2", 1)
    with pytest.raises(SpecError):
        ld_st.fragment_map("32x32b", 1, half_splitoff=1)


# --- Fragment map against CUTLASS's CuTe layouts (pycute) ------------------------------------------------
DP_B = 1 << 21                    # TMEM::DP_b: the lane stride in bit addressing


def _cute(shape, stride):
    from pycute import Layout
    return Layout(shape, stride)


# (shape, num, pack, ValID, DstLayout), copied from include/cute/atom/copy_traits_sm100.hpp (CUTLASS 4.2)
CUTLASS_ATOMS = [
    ("32x32b", 1, False, ((32, 32), (1, DP_B)), ((32, 32), (32, 1))),
    ("32x32b", 2, False, ((64, 32), (1, DP_B)), ((32, 64), (64, 1))),
    ("32x32b", 1, True, (((16, 2), 32), ((1, 32), DP_B)), ((32, 32), (32, 1))),
    ("16x64b", 1, False, ((64, 16), (1, DP_B)), (((2, 2, 8), 32), ((512, 32, 64), 1))),
    ("16x64b", 2, False, ((128, 16), (1, DP_B)), (((2, 2, 8), (32, 2)), ((1024, 32, 128), (1, 64)))),
    ("16x64b", 1, True, (((16, 4), 16), ((1, 32), DP_B)), (((2, 2, 8), 32), ((512, 32, 64), 1))),
    ("16x128b", 1, False, ((128, 16), (1, DP_B)), (((4, 8), (32, 2)), ((32, 128), (1, 1024)))),
    ("16x128b", 2, False, ((256, 16), (1, DP_B)), (((4, 8), (32, 2, 2)), ((32, 256), (1, 2048, 128)))),
    ("16x128b", 1, True, (((16, 8), 16), ((1, 32), DP_B)), (((4, 8), (32, 2)), ((32, 128), (1, 1024)))),
    ("16x256b", 1, False, ((256, 16), (1, DP_B)), (((4, 8), (64, 2)), ((64, 256), (1, 2048)))),
    ("16x256b", 2, False, ((512, 16), (1, DP_B)), (((4, 8), (64, 2, 2)), ((64, 512), (1, 4096, 256)))),
    ("16x256b", 1, True, (((16, 16), 16), ((1, 32), DP_B)), (((4, 8), (64, 2)), ((64, 256), (1, 2048)))),
    ("16x32bx2", 1, False, ((64, 16), (1, DP_B)), (((16, 2), 32), ((64, 32), 1))),
    ("16x32bx2", 2, False, ((128, 16), (1, DP_B)), (((16, 2), 64), ((128, 64), 1))),
    ("16x32bx2", 1, True, (((16, 4), 16), ((1, 32), DP_B)), (((16, 2), 32), ((64, 32), 1))),
]


@pytest.mark.parametrize("shape,num,pack,val_id,dst", CUTLASS_ATOMS, ids=lambda c: str(c))
def test_fragment_map_matches_cutlass(shape, num, pack, val_id, dst):
    """thread t, register bit b -> DstLayout(t, b) = bit id -> ValID(bit id) = lane * DP_b + bit."""
    val_layout, dst_layout = _cute(*val_id), _cute(*dst)
    frag = ld_st.fragment_map(shape, num, pack, _splitoff(shape, num, pack))
    for t in range(32):
        for piece, (lane, column, half) in enumerate(frag[t]):
            bit = 16 * piece                                   # first bit of the piece in t's registers
            where = val_layout(dst_layout((t, bit)))
            assert divmod(where, DP_B) == (lane, 32 * column + 16 * half), (t, piece)


# --- Access rules, each broken by a hand-made access ----------------------------------------------------
GOOD = TmemAccess("ld", "32x32b", 2, lane=32, column=8, warp=1, registers=2)

ACCESS_BREAKERS = {
    "tmem.address.range": TmemAccess("ld", "32x32b", 16, lane=0, column=500, registers=16),
    "tmem.access.lane_quarter": TmemAccess("st", "32x32b", 1, lane=0, column=0, warp=1, registers=1),
    "tmem.ld.target": TmemAccess("ld", "32x32b", 2, target="sm_120a"),
    "tmem.ld.shape": TmemAccess("ld", "32x64b", 2),
    "tmem.ld.num": TmemAccess("ld", "16x256b", 64),
    "tmem.ld.registers": TmemAccess("ld", "16x128b", 2, registers=2),
    "tmem.ld.pack": TmemAccess("st", "32x32b", 2, pack="pack::16b"),
    "tmem.ld.half_splitoff": TmemAccess("ld", "16x32bx2", 2),
    "tmem.ld.lane_alignment": TmemAccess("ld", "16x64b", 1, lane=4),
    "tmem.ld_red.target": TmemAccess("ld.red", "32x32b", 2, target="sm_100a", red_op="min", red_type="u32"),
    "tmem.ld_red.shape": TmemAccess("ld.red", "16x64b", 2, target="sm_103a", red_op="min", red_type="u32"),
    "tmem.ld_red.num": TmemAccess("ld.red", "32x32b", 1, target="sm_110a", red_op="max", red_type="s32"),
    "tmem.ld_red.operation": TmemAccess("ld.red", "32x32b", 2, target="sm_110a", red_op="add", red_type="u32"),
    "tmem.ld_red.abs_nan": TmemAccess("ld.red", "32x32b", 2, target="sm_110a", red_op="min", red_type="u32",
                                      abs=True),
}


def test_access_breakers_cover_every_access_rule():
    assert set(ACCESS_BREAKERS) == {r.id for r in rules_for("tmem_access")}


@pytest.mark.parametrize("rule_id", sorted(ACCESS_BREAKERS))
def test_access_rule_is_broken(rule_id):
    assert rule_id in [v.rule.id for v in ld_st.violations(ACCESS_BREAKERS[rule_id])]


@pytest.mark.parametrize("access", [
    GOOD, TmemAccess("st", "16x256b", 32, lane=112, column=256, warp=7, registers=128),
    TmemAccess("ld", "16x32bx2", 4, lane=80, column=0, warp=2, half_splitoff=4, pack=True, registers=4),
    TmemAccess("ld.red", "16x32bx2", 8, lane=16, target="sm_103a", red_op="max", red_type="f32", abs=True,
               nan=True, half_splitoff=16, registers=8),
], ids=str)
def test_valid_accesses_break_nothing(access):
    assert ld_st.violations(access) == []


def test_footprint_is_the_fragment_image_moved_to_the_address():
    access = TmemAccess("ld", "16x128b", 4, lane=48, column=100, warp=1)
    frag = ld_st.fragment_map("16x128b", 4)
    assert access.footprint() == {(48 + l, 100 + c) for thread in frag for l, c, _ in thread}
    assert len(access.footprint()) == 16 * 128 * 4 // 32


def test_footprint_of_the_second_half_is_the_32_bit_address_sum():
    access = TmemAccess("ld", "16x32bx2", 1, lane=0, column=0, half_splitoff=(1 << 16) + 3)
    assert access.footprint() == {(l, 0) for l in range(16)} | {(1 + l, 3) for l in range(16)}


# --- check(text): what ptxas refuses, what it lets through ----------------------------------------------
ACCEPTED = [  # each accepted by ptxas 13.0 (.version 9.0)
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];", "sm_100a"),
    ("tcgen05.ld.sync.aligned.16x128b.x1.b32 {%r1, %r2}, [%r0];", "sm_100f"),
    ("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r1, %r2}, [%r0], 0;", "sm_100a"),
    ("tcgen05.ld.sync.aligned.16x32bx2.x1.pack::16b.b32 {%r1}, [%r0], 2;", "sm_100a"),
    ("tcgen05.st.sync.aligned.16x32bx2.x1.unpack::16b.b32 [%r0], 2, {%r1};", "sm_100a"),
    ("tcgen05.st.sync.aligned.16x64b.x4.b32 [%r0], {%r0, %r1, %r2, %r3};", "sm_103f"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 {%r1, %r2}, %r3, [%r0];", "sm_103a"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.NaN.f32 {%r1, %r2}, %r3, [%r0];", "sm_110a"),
    ("tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.s32 {%r1, %r2}, %r3, [%r0], 2;", "sm_110f"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sv], 32;", "sm_100a"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.b32 [%rd1], 64;", "sm_100a"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sv], %r1;", "sm_100a"),
    ("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r0, 512;", "sm_110f"),
    ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 0, 32;", "sm_100a"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0+65536];", "sm_100a"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sv+4], 32;", "sm_100a"),
    ("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;", "sm_100a"),
    ("tcgen05.wait::ld.sync.aligned;", "sm_100a"),
    ("tcgen05.wait::st.sync.aligned", "sm_103a"),
]


@pytest.mark.parametrize("text,target", ACCEPTED)
def test_forms_ptxas_accepts(text, target):
    result = instruction.check(text, target)
    assert result["ptxas_accepts"], [str(v) for v in result["violations"]]
    assert result["undefined"] == []


REFUSED = [  # (text, target, the rule): each refused by ptxas 13.0
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2, %r3}, [%r0];", "sm_100a", "tmem.ld.registers"),
    ("tcgen05.ld.sync.aligned.16x256b.x64.b32 {%r1, %r2}, [%r0];", "sm_100a", "tmem.ld.num"),
    ("tcgen05.st.sync.aligned.32x32b.x2.pack::16b.b32 [%r0], {%r1, %r2};", "sm_100a", "tmem.ld.pack"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.unpack::16b.b32 {%r1, %r2}, [%r0];", "sm_100a", "tmem.ld.pack"),
    ("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r1, %r2}, [%r0];", "sm_100a", "tmem.ld.half_splitoff"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0], 2;", "sm_100a", "tmem.ld.half_splitoff"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];", "sm_90a", "tmem.ld.target"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];", "sm_120a", "tmem.ld.target"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 {%r1, %r2}, %r3, [%r0];", "sm_100a", "tmem.ld_red.target"),
    ("tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.s32 {%r1, %r2}, %r3, [%r0], 2;", "sm_100f",
     "tmem.ld_red.target"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x1.min.u32 {%r1}, %r3, [%r0];", "sm_110a", "tmem.ld_red.num"),
    ("tcgen05.ld.red.sync.aligned.16x64b.x2.min.u32 {%r1, %r2}, %r3, [%r0];", "sm_110a", "tmem.ld_red.shape"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.u32 {%r1, %r2}, %r3, [%r0];", "sm_110a",
     "tmem.ld_red.abs_nan"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.add.f32 {%r1, %r2}, %r3, [%r0];", "sm_103a",
     "tmem.ld_red.operation"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.b32 {%r1, %r2}, %r3, [%r0];", "sm_103a",
     "tmem.ld_red.operation"),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.pack::16b.min.u32 {%r1, %r2}, %r3, [%r0];", "sm_103a",
     "tmem.ld.pack"),
    ("tcgen05.ld.sync.aligned.32x32b.x3.b32 {%r1, %r2, %r3}, [%r0];", "sm_100a", "tmem.ld.num"),
    ("tcgen05.ld.32x32b.x2.b32 {%r1, %r2}, [%r0];", "sm_100a", "tmem.instruction.sync_aligned"),
    ("tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [sv], 32;", "sm_100a", "tmem.instruction.sync_aligned"),
    ("tcgen05.ld.sync.aligned.32x32b.x2 {%r1, %r2}, [%r0];", "sm_100a", "tmem.instruction.qualifiers"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%rd0];", "sm_100a", "tmem.instruction.operands"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%rd1, %rd2}, [%r0];", "sm_100a", "tmem.instruction.operands"),
    ("tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r1}, [%r0], %r5;", "sm_100a", "tmem.instruction.operands"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [65536];", "sm_100a", "tmem.instruction.operands"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [16], 32;", "sm_100a", "tmem.instruction.operands"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sv], 48;", "sm_100a", "tmem.alloc.columns"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sv], 16;", "sm_100a", "tmem.alloc.columns"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sv], 1024;", "sm_100a", "tmem.alloc.columns"),
    ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 33;", "sm_100a", "tmem.dealloc.columns_granule"),
    ("tcgen05.wait::st.sync.aligned;", "sm_90a", "tmem.target"),
]


@pytest.mark.parametrize("text,target,rule_id", REFUSED)
def test_forms_ptxas_refuses(text, target, rule_id):
    result = instruction.check(text, target)
    assert not result["ptxas_accepts"]
    assert rule_id in [v.rule.id for v in result["violations"]]


def test_map_request():
    request = ld_st.map_request("ld", "16x32bx2", 2, True, 4)
    assert (request.shape, request.num, request.pack, request.half_splitoff) == ("16x32bx2", 2, True, 4)
    for bad in (("ld", "16x32bx2", 2, False, None), ("st", "32x32b", 3), ("ld", "8x8b", 1), ("ld.red", "32x32b", 2)):
        with pytest.raises(SpecError):
            ld_st.map_request(*bad)


def test_redval_may_be_braced():
    text = "tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 {%r1, %r2}, {%r9}, [%r0];"
    assert instruction.check(text, "sm_103a")["ptxas_accepts"]


def test_ptx_version():
    result = instruction.check("tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32 {%r1, %r2}, %r3, [%r0];",
                               "sm_103a", ptx_version="8.7")
    assert "tmem.ptx_version" in [v.rule.id for v in result["violations"]]
    assert instruction.check("tcgen05.wait::ld.sync.aligned;", "sm_100a", "8.6")["ptxas_accepts"]
    assert not instruction.check("tcgen05.wait::ld.sync.aligned;", "sm_100a", "8.5")["ptxas_accepts"]


UNDEFINED = [  # ptxas accepts each (13.0); the rule is broken at run time (or, .aligned, unchecked)
    ("tcgen05.st.sync.32x32b.x2.b32 [%r0], {%r1, %r2};", {}, "tmem.ld.aligned"),
    ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 96;", {}, "tmem.dealloc.columns"),
    ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 2048;", {}, "tmem.dealloc.columns"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];", {"warp": 2, "address": 0},
     "tmem.access.lane_quarter"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];", {"warp": 0, "address": 65536},
     "tmem.ld.lane_alignment"),
    ("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r1, %r2}, [%r0], 70000;", {"warp": 0, "address": 0},
     "tmem.address.range"),                                   # second half at lane 1, column 4464
    ("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r1, %r2}, [%r0], 0x200000;", {"warp": 0, "address": 0},
     "tmem.access.lane_quarter"),                             # second half at lanes 32..47
    ("tcgen05.st.sync.aligned.16x256b.x32.b32 [%%r200], {%s};" % ", ".join(f"%r{i}" for i in range(128)),
     {"address": 0x101}, "tmem.address.range"),
]


@pytest.mark.parametrize("text,given,rule_id", UNDEFINED)
def test_forms_ptxas_lets_through(text, given, rule_id):
    result = instruction.check(text, "sm_100a", **given)
    assert result["ptxas_accepts"]
    assert rule_id in [v.rule.id for v in result["undefined"]]


def test_run_time_rules_wait_for_an_address():
    text = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r0];"
    assert instruction.check(text, "sm_100a", warp=3)["undefined"] == []
    assert instruction.check(text, "sm_100a", warp=3, address=address.encode(96, 0))["undefined"] == []


@pytest.mark.parametrize("text", ["mov.b32 %r1, %r2;", "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r3, p;", ""])
def test_not_a_modelled_tcgen05_instruction_is_malformed(text):
    with pytest.raises(SpecError):
        instruction.check(text, "sm_100a")


@pytest.mark.parametrize("text", ["tcgen05.ld.sync.aligned.32x32b.x2.b32 [%r0];", "tcgen05.frobnicate;",
                                  "tcgen05.wait::mma.sync;"])
def test_a_tcgen05_text_ptxas_cannot_parse_is_refused_for_its_syntax(text):
    """ptxas 13.0 refuses each ("Arguments mismatch", "Unknown modifier", "Parsing error"): a verdict,
    not malformed input."""
    result = instruction.check(text, "sm_100a")
    assert not result["ptxas_accepts"] and [v.rule.id for v in result["violations"]] == ["tmem.instruction.syntax"]


def test_unknown_target_is_malformed():
    with pytest.raises(SpecError):
        instruction.check("tcgen05.wait::ld.sync.aligned;", "sm_999a")


def test_parse_reads_the_operands():
    parsed = instruction.parse("tcgen05.st.sync.aligned.16x32bx2.x2.unpack::16b.b32 [%r7+4], 16, {%r1, %r2};")
    assert (parsed.kind, parsed.shape, parsed.num, parsed.pack) == ("st", "16x32bx2", 2, "unpack::16b")
    assert parsed.taddr.value.text == "%r7" and parsed.taddr.offset == 4
    assert parsed.half_splitoff.value == 16 and [o.text for o in parsed.vector.items] == ["%r1", "%r2"]
    alloc_op = instruction.parse("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [smem], 128;")
    assert (alloc_op.kind, alloc_op.cta_group, alloc_op.ncols, alloc_op.dst.value.kind) == ("alloc", 2, 128, "shared")


INSTRUCTION_BREAKERS = {   # every rule about "tmem_instruction", each broken by one text
    "tmem.target": ("tcgen05.wait::ld.sync.aligned;", "sm_120a"),
    "tmem.ptx_version": ("tcgen05.wait::ld.sync.aligned;", "sm_100a", "8.5"),
    "tmem.instruction.sync_aligned": ("tcgen05.wait::ld.sync;", "sm_100a"),
    "tmem.ld.aligned": ("tcgen05.ld.sync.32x32b.x2.b32 {%r1, %r2}, [%r0];", "sm_100a"),
    "tmem.target_ptx_version": ("tcgen05.wait::ld.sync.aligned;", "sm_100f", "8.7"),
    "tmem.instruction.syntax": ("tcgen05.wait::mma.sync;", "sm_100a"),
    "tmem.instruction.qualifiers": ("tcgen05.dealloc.sync.aligned.b32 %r0, 32;", "sm_100a"),
    "tmem.instruction.operands": ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %rd0, 32;", "sm_100a"),
    "tmem.alloc.columns": ("tcgen05.alloc.cta_group::1.sync.aligned.b32 [sv], 96;", "sm_100a"),
    "tmem.dealloc.columns_granule": ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 40;", "sm_100a"),
    "tmem.dealloc.columns": ("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 0;", "sm_100a"),
    # tcgen05.cp / tcgen05.shift (spec/tmem/cp.py, spec/tmem/shift.py)
    "tmem.cp.shape": ("tcgen05.cp.cta_group::1.16x256b [%r0], %rd1;", "sm_100a"),
    "tmem.cp.multicast": ("tcgen05.cp.cta_group::1.64x128b [%r0], %rd1;", "sm_100a"),
    "tmem.cp.format": ("tcgen05.cp.cta_group::1.128x256b.b8x16 [%r0], %rd1;", "sm_100a"),
    "tmem.cp.format_only": ("tcgen05.wait::ld.sync.aligned.b8x16;", "sm_100a"),
    "tmem.cp.lane_alignment": ("tcgen05.cp.cta_group::1.128x128b [%r0], %rd1;", "sm_100a", "9.0",
                               {"address": address.encode(32, 0)}),
    "tmem.shift.target": ("tcgen05.shift.cta_group::1.down [%r0];", "sm_100f"),
    "tmem.shift.lane_alignment": ("tcgen05.shift.cta_group::1.down [%r0];", "sm_100a", "9.0",
                                  {"address": address.encode(16, 0)}),
    "tmem.address.range": ("tcgen05.cp.cta_group::1.128x256b [%r0], %rd1;", "sm_100a", "9.0",
                           {"address": address.encode(0, 508)}),
}


def test_instruction_breakers_cover_every_instruction_rule():
    assert set(INSTRUCTION_BREAKERS) == {r.id for r in rules_for("tmem_instruction")}


@pytest.mark.parametrize("rule_id", sorted(INSTRUCTION_BREAKERS))
def test_instruction_rule_is_broken(rule_id):
    *args, given = INSTRUCTION_BREAKERS[rule_id]
    if not isinstance(given, dict):
        args, given = args + [given], {}
    result = instruction.check(*args, **given)
    assert rule_id in [v.rule.id for v in result["violations"] + result["undefined"]]


# --- Allocation sequences -------------------------------------------------------------------------------
def op(kind, columns=None, warp=0, cta_group=1, address_=None):
    found = {"op": kind, "warp": warp, "cta_group": cta_group}
    if columns is not None:
        found["columns"] = columns
    if address_ is not None:
        found["address"] = address_
    return found


GOOD_SEQUENCE = [op("alloc", 256, address_=0), op("alloc", 128, address_=256),
                 op("relinquish_alloc_permit", warp=3), op("dealloc", 128, address_=256),
                 op("dealloc", 256, address_=0)]

SEQUENCE_BREAKERS = {
    "tmem.alloc.columns.run_time": ([op("alloc", 48), op("dealloc", 48)], (0, 1)),
    "tmem.alloc.single_warp": ([op("alloc", 64, warp=0), op("dealloc", 64, warp=1)], 1),
    "tmem.alloc.dealloc_all": ([op("alloc", 64), op("alloc", 32), op("dealloc", 32)], 0),
    "tmem.alloc.dealloc_live": ([op("alloc", 64, address_=0), op("dealloc", 64, address_=0),
                                 op("dealloc", 64, address_=0)], 2),
    "tmem.alloc.dealloc_columns": ([op("alloc", 64, address_=0), op("dealloc", 32, address_=0)], 1),
    "tmem.alloc.cta_group_uniform": ([op("alloc", 64), op("dealloc", 64, cta_group=2)], 1),
    "tmem.alloc.after_relinquish": ([op("relinquish_alloc_permit"), op("alloc", 64), op("dealloc", 64)], 1),
    "tmem.alloc.capacity": ([op("alloc", 512, address_=0), op("alloc", 32, address_=512),
                             op("dealloc", 32, address_=512), op("dealloc", 512, address_=0)], 1),
    "tmem.alloc.non_increasing": ([op("alloc", 32, address_=0), op("alloc", 64, address_=32),
                                   op("dealloc", 64, address_=32), op("dealloc", 32, address_=0)], 1),
}


def test_sequence_breakers_cover_every_sequence_rule():
    assert set(SEQUENCE_BREAKERS) == {r.id for r in rules_for("tmem_alloc_sequence")}


def test_good_sequence_breaks_nothing():
    assert alloc.check_sequence(GOOD_SEQUENCE) == []
    from spec.rule import check_all
    assert check_all("tmem_alloc_sequence", GOOD_SEQUENCE) == []


@pytest.mark.parametrize("rule_id", sorted(SEQUENCE_BREAKERS))
def test_sequence_rule_is_broken_only_at_its_indices(rule_id):
    ops, indices = SEQUENCE_BREAKERS[rule_id]
    indices = indices if isinstance(indices, tuple) else (indices,)
    found = alloc.check_sequence(ops)
    assert [(i, v.rule.id) for i, v in found] == [(i, rule_id) for i in indices]
    from spec.rule import check_all
    assert [v.rule.id for v in check_all("tmem_alloc_sequence", ops)] == [rule_id]


def test_malformed_sequence():
    with pytest.raises(SpecError):
        alloc.check_sequence([{"op": "free", "columns": 32}])
    with pytest.raises(SpecError):
        alloc.check_sequence([{"op": "alloc"}])


def test_legal_columns():
    assert [n for n in range(0, 1025) if alloc.is_legal_columns(n)] == [32, 64, 128, 256, 512]
