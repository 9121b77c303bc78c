"""tcgen05.cp and tcgen05.shift (spec/tmem/cp.py, spec/tmem/shift.py): expectations from the manual's
statements (PTX 9.7.16.2.3: a shape is lanes x bits per lane; 9.7.16.9.1: the multicast qualifiers name
which warps' lane quarters receive the same rows; 9.7.16.9.2: .31x256b shifts 31 rows of 256 bits by one
row), not from the code's own output. What ptxas decides about the text is in test_tmem_ptxas_replay.py."""
from __future__ import annotations

import pytest

from spec.mma import descriptor
from spec.rule import SpecError
from spec.tmem import address, cp, instruction, shift

# (shape, multicast): (rows, bits per row, copies of each row) as the names say
FORMS = {("128x256b", None): (128, 256, 1), ("4x256b", None): (4, 256, 1), ("128x128b", None): (128, 128, 1),
         ("64x128b", "warpx2::02_13"): (64, 128, 2), ("64x128b", "warpx2::01_23"): (64, 128, 2),
         ("32x128b", "warpx4"): (32, 128, 4)}


@pytest.mark.parametrize("shape,multicast", sorted(FORMS, key=str))
def test_footprint_size_is_rows_times_columns_times_copies(shape, multicast):
    rows, bits, copies = FORMS[(shape, multicast)]
    cells = cp.cp_footprint(shape, multicast, address.encode(0, 64))
    assert len(cells) == rows * (bits // 32) * copies
    assert {column for _, column in cells} == set(range(64, 64 + bits // 32))
    assert all(address.in_range(*cell) for cell in cells)
    assert cp.source_bytes(shape) == rows * bits // 8


@pytest.mark.parametrize("shape,multicast", sorted(FORMS, key=str))
def test_each_row_lands_in_distinct_lanes(shape, multicast):
    lanes = cp.row_lanes(shape, multicast)
    rows, _, copies = FORMS[(shape, multicast)]
    flat = [lane for row in lanes for lane in row]
    assert len(lanes) == rows and all(len(row) == copies for row in lanes)
    assert len(flat) == len(set(flat))                       # no lane gets two rows


def quarter_rows(shape, multicast):
    """{quarter: the rows its 32 lanes receive, in lane order}."""
    by_lane = {lane: r for r, lanes in enumerate(cp.row_lanes(shape, multicast)) for lane in lanes}
    return {q: [by_lane.get(32 * q + i) for i in range(32)] for q in range(4)}


def test_multicast_names_the_warps_that_share_rows():
    q = quarter_rows("64x128b", "warpx2::02_13")            # warps 0 and 2 alike, 1 and 3 alike
    assert q[0] == q[2] and q[1] == q[3] and q[0] != q[1]
    q = quarter_rows("64x128b", "warpx2::01_23")            # warps 0 and 1 alike, 2 and 3 alike
    assert q[0] == q[1] and q[2] == q[3] and q[0] != q[2]
    q = quarter_rows("32x128b", "warpx4")                   # all four alike
    assert q[0] == q[1] == q[2] == q[3] == list(range(32))
    for multicast in ("warpx2::02_13", "warpx2::01_23"):     # 64 rows, each in two quarters, all lanes used
        assert sorted(r for rows in quarter_rows("64x128b", multicast).values() for r in rows) == \
            sorted(list(range(64)) * 2)


def test_4x256b_writes_one_lane_per_quarter():
    cells = cp.cp_footprint("4x256b", None, address.encode(31, 0))
    assert sorted({lane for lane, _ in cells}) == [31, 63, 95, 127]


def test_cta_group_2_writes_the_peer_too():
    both = cp.cp_footprints("128x128b", None, 0, cta_group=2)
    assert set(both) == {"self", "peer"} and both["self"] == both["peer"]
    assert set(cp.cp_footprints("128x128b", None, 0, cta_group=1)) == {"self"}


def test_shape_multicast_pairing_is_checked():
    for shape, multicast in (("64x128b", None), ("32x128b", "warpx2::02_13"), ("128x256b", "warpx4")):
        with pytest.raises(SpecError):
            cp.row_lanes(shape, multicast)
    with pytest.raises(SpecError):
        cp.row_lanes("16x256b")


def test_source_follows_the_k_major_canonical_layout():
    desc = descriptor.encode("sm100", 0x1000, 128, 256, "none")     # LBO 128 B, SBO 256 B, no swizzle
    assert cp.row_source("128x256b", desc, 0, 0) == 0x1000
    assert cp.row_source("128x256b", desc, 1, 0) == 0x1000 + 16       # next row of a core matrix
    assert cp.row_source("128x256b", desc, 8, 0) == 0x1000 + 256      # next 8-row group: SBO
    assert cp.row_source("128x256b", desc, 0, 16) == 0x1000 + 128     # next 16-byte chunk: LBO
    assert cp.row_source("128x256b", desc, 9, 21) == 0x1000 + 256 + 16 + 128 + 5
    addresses = {cp.row_source("128x128b", desc, r, b) for r in range(128) for b in range(16)}
    assert len(addresses) == cp.source_bytes("128x128b")             # every byte read once


def test_decompression_keeps_16_bytes_per_16_elements():
    desc = descriptor.encode("sm100", 0, 128, 256, "none")
    for fmt, width, padding in (("b8x16.b6x16_p32", 6, 32), ("b8x16.b4x16_p64", 4, 64)):
        spans = [cp.byte_source("128x256b", desc, 0, i, fmt) for i in range(16)]
        assert {chunk for chunk, _, _ in spans} == {0}
        assert all(bits == width for _, _, bits in spans)
        assert max(first + bits for _, first, bits in spans) == 128 - padding
        assert sorted(first for _, first, _ in spans) == [width * i for i in range(16)]
    assert cp.byte_source("128x256b", desc, 0, 20) == (128, 32, 8)


# --- tcgen05.shift ---------------------------------------------------------------------------------------
def test_shift_moves_31_rows_of_256_bits_by_one_row():
    taddr = address.encode(32, 16)
    moves = shift.moves(taddr)
    assert len(moves) == 31 * 8
    assert all(src[0] == dst[0] + 1 and src[1] == dst[1] for src, dst in moves)
    assert {lane for _, (lane, _) in moves} == set(range(32, 63))
    assert len(shift.shift_footprint(taddr)) == 32 * 8


def test_shift_lane_must_be_32_aligned():
    text = "tcgen05.shift.cta_group::1.down [%r0];"
    for lane, ok in ((0, True), (32, True), (96, True), (16, False), (1, False)):
        result = instruction.check(text, "sm_100a", address=address.encode(lane, 0))
        assert result["ptxas_accepts"]
        assert ("tmem.shift.lane_alignment" not in [v.rule.id for v in result["undefined"]]) == ok, lane


def test_copy_run_time_rules():
    text = "tcgen05.cp.cta_group::2.32x128b.warpx4.b8x16.b4x16_p64 [%r0], %rd1;"
    assert instruction.check(text, "sm_100a")["undefined"] == []
    assert instruction.check(text, "sm_100a", address=address.encode(0, 508))["undefined"] == []
    broken = [v.rule.id for v in instruction.check(text, "sm_100a", address=address.encode(0, 509))["undefined"]]
    assert broken == ["tmem.address.range"]
    broken = [v.rule.id for v in instruction.check(text, "sm_100a", address=address.encode(32, 0))["undefined"]]
    assert set(broken) == {"tmem.address.range", "tmem.cp.lane_alignment"}
    four = "tcgen05.cp.cta_group::1.4x256b [%r0], %rd1;"
    assert instruction.check(four, "sm_100a", address=address.encode(31, 0))["undefined"] == []


def test_parse_reads_cp_and_shift():
    parsed = instruction.parse("tcgen05.cp.cta_group::2.64x128b.warpx2::01_23.b8x16.b6x16_p32 [%r7+8], %rd3;")
    assert (parsed.kind, parsed.cta_group, parsed.shape, parsed.multicast, parsed.format) == \
        ("cp", 2, "64x128b", "warpx2::01_23", "b8x16.b6x16_p32")
    assert parsed.taddr.offset == 8 and parsed.sdesc.text == "%rd3"
    parsed = instruction.parse("tcgen05.shift.down.cta_group::1 [%r0];")
    assert (parsed.kind, parsed.cta_group, parsed.down) == ("shift", 1, True)
