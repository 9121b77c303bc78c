"""TMA swizzle modes (spec/tma/swizzle.py) against PTX ISA 5.5.7 (Swizzling Modes), the CUDA Driver API's
CUtensorMapSwizzle (cuda.h 13.0) and CUTLASS cute/swizzle.hpp."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from spec.tma import swizzle as tma
from spec.rules import CATALOGUE, SpecError, check_all, rules_for
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, Swizzle

ALL_MODES = list(tma.MODES)

# The tables as printed in PTX ISA 5.5.7 (copied from the text, one line per table row).
SEED_TABLES = {
    "NONE": """0 1 2 3 4 5 6 7
               0 1 2 3 4 5 6 7""",
    "32B": """0 1 2 3 4 5 6 7
              1 0 3 2 5 4 7 6""",
    "64B": """0 1 2 3 4 5 6 7
              1 0 3 2 5 4 7 6
              2 3 0 1 6 7 4 5
              3 2 1 0 7 6 5 4""",
    "96B": """0 1 2 3 4 5 6 7
              1 0 3 2 5 4 7 6""",
    "128B": """0 1 2 3 4 5 6 7
               1 0 3 2 5 4 7 6
               2 3 0 1 6 7 4 5
               3 2 1 0 7 6 5 4
               4 5 6 7 0 1 2 3
               5 4 7 6 1 0 3 2
               6 7 4 5 2 3 0 1
               7 6 5 4 3 2 1 0""",
    "128B_ATOM_32B": """0 1 2 3 4 5 6 7
                        2 3 0 1 6 7 4 5
                        4 5 6 7 0 1 2 3
                        6 7 4 5 2 3 0 1""",
    # "similar to the 32-byte atomicity sub-mode" + the 8-byte flip (checked separately)
    "128B_ATOM_32B_FLIP_8B": """0 1 2 3 4 5 6 7
                                2 3 0 1 6 7 4 5
                                4 5 6 7 0 1 2 3
                                6 7 4 5 2 3 0 1""",
    "128B_ATOM_64B": """0 1 2 3 4 5 6 7
                        4 5 6 7 0 1 2 3""",
}


def parse(text: str) -> list[list[int]]:
    return [[int(cell) for cell in line.split()] for line in text.strip().splitlines()]


# --- Modes and enum values -----------------------------------------------------------------------
def test_driver_enum_values():
    expected = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3, "128B_ATOM_32B": 4,
                "128B_ATOM_32B_FLIP_8B": 5, "128B_ATOM_64B": 6, "96B": None}
    assert {name: m.driver_enum for name, m in tma.MODES.items()} == expected
    assert tma.MODES["96B"].ptx_replace_mode == 4
    for name, value in expected.items():
        if value is not None:
            assert tma.mode_from_driver_enum(value) == name
    with pytest.raises(SpecError) as info:
        tma.mode_from_driver_enum(7)
    assert info.value.rule_id == "tma.swizzle.modes"


def test_spans_and_atomicity():
    spans = {name: m.span for name, m in tma.MODES.items()}
    assert spans == {"NONE": None, "32B": 32, "64B": 64, "96B": 96, "128B": 128, "128B_ATOM_32B": 128,
                     "128B_ATOM_32B_FLIP_8B": 128, "128B_ATOM_64B": 128}
    atomicity = {name: m.atomicity_name for name, m in tma.MODES.items()}
    assert atomicity == {"NONE": None, "32B": "16B", "64B": "16B", "96B": "16B", "128B": "16B",
                         "128B_ATOM_32B": "32B", "128B_ATOM_32B_FLIP_8B": "32B + 8B-flip",
                         "128B_ATOM_64B": "64B"}


# --- The tables ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ALL_MODES)
def test_tables_are_the_seed_text(mode):
    assert tma.chunk_table(mode) == parse(SEED_TABLES[mode])


def test_literal_rows():
    assert tma.chunk_table("128B")[3] == [3, 2, 1, 0, 7, 6, 5, 4]
    assert tma.chunk_table("64B")[2] == [2, 3, 0, 1, 6, 7, 4, 5]
    assert tma.chunk_table("32B")[1] == [1, 0, 3, 2, 5, 4, 7, 6]
    assert tma.chunk_table("128B_ATOM_32B")[3] == [6, 7, 4, 5, 2, 3, 0, 1]
    assert tma.chunk_table("128B_ATOM_64B")[1] == [4, 5, 6, 7, 0, 1, 2, 3]
    assert tma.chunk_table("96B") == tma.chunk_table("32B")
    assert {m: len(tma.chunk_table(m)) for m in ALL_MODES} == {
        "NONE": 2, "32B": 2, "64B": 4, "96B": 2, "128B": 8, "128B_ATOM_32B": 4,
        "128B_ATOM_32B_FLIP_8B": 4, "128B_ATOM_64B": 2}


def test_chunk_table_is_a_copy():
    table = tma.chunk_table("128B")
    table[0][0] = 99
    assert tma.chunk_table("128B")[0][0] == 0


@pytest.mark.parametrize("mode", ALL_MODES)
def test_rows_are_permutations_and_involutions(mode):
    for row in tma.chunk_table(mode):
        assert sorted(row) == list(range(8)), row
        assert all(row[row[j]] == j for j in range(8)), row


@pytest.mark.parametrize("mode", ["128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B"])
def test_32_byte_atomicity_tables_move_chunk_pairs(mode):
    for row in tma.chunk_table(mode):
        assert all(row[2 * k] % 2 == 0 and row[2 * k + 1] == row[2 * k] + 1 for k in range(4))


def test_64_byte_atomicity_table_moves_chunk_quads():
    for row in tma.chunk_table("128B_ATOM_64B"):
        assert row[0] % 4 == 0 and row[:4] == list(range(row[0], row[0] + 4))


# --- swizzle_byte_address: worked examples from the tables ----------------------------------------
def test_examples():
    # 32B row 1 "1 0 3 2 ...": source chunk 0 lands in position 1, chunk 1 in position 0.
    assert tma.swizzle_byte_address("32B", 128) == 144
    assert tma.swizzle_byte_address("32B", 128 + 16 + 5) == 128 + 5
    assert tma.swizzle_byte_address("32B", 5) == 5
    # 128B row 3 "3 2 1 0 7 6 5 4": chunk 0 lands in position 3.
    assert tma.swizzle_byte_address("128B", 3 * 128) == 3 * 128 + 48
    # The row follows the absolute address: 1024 + 3*128 behaves like 3*128.
    assert tma.swizzle_byte_address("128B", 1024 + 3 * 128 + 7) == 1024 + 3 * 128 + 48 + 7
    # 128B_ATOM_64B row 1: the two 64-byte halves swap.
    assert tma.swizzle_byte_address("128B_ATOM_64B", 128 + 10) == 128 + 64 + 10
    # Flip sub-mode row 1 "2 3 0 1 ...": chunk 0 lands in position 2 and its 8-byte halves swap.
    assert tma.swizzle_byte_address("128B_ATOM_32B_FLIP_8B", 128) == 128 + 32 + 8
    assert tma.swizzle_byte_address("128B_ATOM_32B_FLIP_8B", 128 + 9) == 128 + 32 + 1
    # ... but not on the even rows.
    assert tma.swizzle_byte_address("128B_ATOM_32B_FLIP_8B", 256 + 3) == 256 + 64 + 3
    assert tma.swizzle_byte_address("NONE", 12345) == 12345


def test_flip_rows_are_the_odd_rows():
    assert [tma.flips_8b("128B_ATOM_32B_FLIP_8B", 128 * r) for r in range(4)] == [False, True, False, True]
    assert not any(tma.flips_8b(m, 128) for m in ALL_MODES if m != "128B_ATOM_32B_FLIP_8B")
    assert CATALOGUE["tma.swizzle.flip_rows"].evidence == "interpretation"


# --- Bijectivity, involution, atomicity ----------------------------------------------------------
BASES = [0, 128, 384, 1024, 3 * 1024 + 640, 0x10000 + 896, 0x3FF80]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_repeat_block_is_permuted(mode):
    block = tma.repeat_boundary(mode)
    # The pattern really repeats after `block` bytes (NONE's two printed rows are identical, so its
    # 128-byte boundary is consistent with them although the printed table is 2 rows long).
    table = tma.chunk_table(mode)
    assert all(table[r % len(table)] == table[(r + block // 128) % len(table)] for r in range(8))
    for base in (0, block, 2 * block, 37 * block):
        images = [tma.swizzle_byte_address(mode, a) for a in range(base, base + block)]
        assert sorted(images) == list(range(base, base + block))


@pytest.mark.parametrize("mode", ALL_MODES)
def test_bytes_stay_in_their_128_byte_row(mode):
    for base in BASES:
        row_start = base - base % 128
        images = {tma.swizzle_byte_address(mode, a) for a in range(row_start, row_start + 128)}
        assert images == set(range(row_start, row_start + 128))


@pytest.mark.parametrize("mode", ALL_MODES)
def test_atomicity_pieces_stay_intact(mode):
    info = tma.MODES[mode]
    for a in range(0, 2048):
        piece = info.atomicity or 16
        if tma.flips_8b(mode, a):
            piece = 8
        start = a - a % piece
        assert tma.swizzle_byte_address(mode, a) - tma.swizzle_byte_address(mode, start) == a - start


@settings(max_examples=300, deadline=None)
@given(mode=st.sampled_from(ALL_MODES), address=st.integers(0, 2 ** 32))
def test_whole_map_is_an_involution(mode, address):
    once = tma.swizzle_byte_address(mode, address)
    assert tma.swizzle_byte_address(mode, once) == address
    assert once // 128 == address // 128


# --- Table definition == claimed XOR formula ----------------------------------------------------
@pytest.mark.parametrize("mode", ALL_MODES)
def test_table_equals_formula_over_repeat_blocks(mode):
    block = tma.repeat_boundary(mode)
    for base in BASES:
        for a in range(base, base + max(block, 1024)):
            assert tma.swizzle_byte_address(mode, a) == tma.xor_formula_address(mode, a), (mode, hex(a))


@settings(max_examples=400, deadline=None)
@given(mode=st.sampled_from(ALL_MODES), address=st.integers(0, 2 ** 40))
def test_table_equals_formula_random(mode, address):
    assert tma.swizzle_byte_address(mode, address) == tma.xor_formula_address(mode, address)


def test_claimed_formulas():
    claimed = {"NONE": Swizzle(0, 4, 3), "32B": Swizzle(1, 4, 3), "64B": Swizzle(2, 4, 3),
               "96B": Swizzle(1, 4, 3), "128B": Swizzle(3, 4, 3), "128B_ATOM_32B": Swizzle(2, 5, 2),
               "128B_ATOM_64B": Swizzle(1, 6, 1), "128B_ATOM_32B_FLIP_8B": None}
    assert {m: tma.xor_formula(m) for m in ALL_MODES} == claimed
    assert tma.FLIP_8B_FORMULA == (Swizzle(2, 5, 2), Swizzle(1, 3, 4))
    # Where a formula exists its period is the table's period.
    for mode, sw in claimed.items():
        if sw is not None and sw.bits:
            assert sw.period == tma.pattern_period(mode)


def test_formulas_agree_with_descriptor_swizzles():
    # spec/cute/swizzle.py names the same byte functions for the shared-memory descriptors.
    pairs = {"NONE": "none", "32B": "32B", "64B": "64B", "128B": "128B", "128B_ATOM_32B": "128B_atom32B"}
    for mode, name in pairs.items():
        assert tma.xor_formula(mode) == DESCRIPTOR_SWIZZLES[name]


def test_flip_mode_differs_from_plain_32_byte_atomicity_formula():
    # The flip sub-mode is NOT Sw<2,5,2> alone: the first differing address is the first odd row.
    first = next(a for a in range(4096)
                 if tma.swizzle_byte_address("128B_ATOM_32B_FLIP_8B", a) != Swizzle(2, 5, 2)(a))
    assert first == 128
    assert tma.swizzle_byte_address("128B_ATOM_32B_FLIP_8B", 128) == 168
    assert Swizzle(2, 5, 2)(128) == 160


def test_96B_is_not_a_96_byte_row_pattern():
    # Reading the 96B table per 96-byte row (row = address // 96) would be a different function; the
    # per-128-byte-row reading (PTX 5.5.7's 8 cells per row, 256-byte aligned start) is Sw<1,4,3>.
    # Byte 96 is in 128-byte row 0 (identity): it stays put.
    assert tma.swizzle_byte_address("96B", 96) == 96
    # A packed 96-byte box row keeps its bytes (96 is a multiple of the 32-byte swap unit).
    for r in range(16):
        images = {tma.swizzle_byte_address("96B", a) for a in range(96 * r, 96 * r + 96)}
        assert images == set(range(96 * r, 96 * r + 96))


def test_phase_follows_absolute_address():
    # PTX 5.5.7 (base offset from dstMem): a destination at +128 under 128B swizzle is NOT swizzled like
    # offset 0.
    dst = 128
    relative = [dst + tma.swizzle_byte_address("128B", k) for k in range(128)]
    absolute = [tma.swizzle_byte_address("128B", dst + k) for k in range(128)]
    assert relative != absolute
    assert absolute[0] == dst + 16 and relative[0] == dst
    # The base offset tells which table row dst starts on.
    assert tma.base_offset("128B", dst) == 1


# --- Repeat boundary and base offset ------------------------------------------------------------
def test_repeat_boundary_table():
    assert {m: tma.repeat_boundary(m) for m in ALL_MODES} == {
        "NONE": 128, "32B": 256, "64B": 512, "96B": 256, "128B": 1024, "128B_ATOM_32B": 1024,
        "128B_ATOM_32B_FLIP_8B": 1024, "128B_ATOM_64B": 1024}
    assert {m: tma.pattern_period(m) for m in ALL_MODES} == {
        "NONE": 256, "32B": 256, "64B": 512, "96B": 256, "128B": 1024, "128B_ATOM_32B": 512,
        "128B_ATOM_32B_FLIP_8B": 512, "128B_ATOM_64B": 256}


def test_base_offset_values():
    assert [tma.base_offset("128B", 128 * r) for r in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    assert [tma.base_offset("64B", 128 * r) for r in range(6)] == [0, 1, 2, 3, 0, 1]
    assert [tma.base_offset("32B", 128 * r) for r in range(4)] == [0, 1, 0, 1]
    assert [tma.base_offset("96B", 128 * r) for r in range(4)] == [0, 1, 0, 1]
    for sub in ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"):
        assert tma.base_offset(sub, 5 * 128) == 5
    assert tma.base_offset("NONE", 384) == 0
    assert tma.base_offset("128B", 0x7000 + 3 * 128 + 16) == 3


@pytest.mark.parametrize("mode", [m for m in ALL_MODES if m != "NONE"])
def test_base_offset_zero_exactly_on_repeat_boundary(mode):
    # The two tables agree for 128-byte-aligned destinations.
    boundary = tma.repeat_boundary(mode)
    for dst in range(0, 8 * 1024, 128):
        assert (tma.base_offset(mode, dst) == 0) == (dst % boundary == 0)
    # PTX 5.5.7's wording "otherwise ... a non-zero value" fails for a 16-byte aligned dstMem just past a
    # boundary: the formula gives 0 there although dstMem is not on the boundary.
    assert tma.base_offset(mode, boundary + 16) == 0


@pytest.mark.parametrize("mode", ALL_MODES)
def test_base_offset_is_the_table_row_of_dst(mode):
    rows = len(tma.chunk_table(mode))
    if mode == "NONE":
        return
    modulus = tma.BASE_OFFSET_MODULUS[tma.MODES[mode].family]
    assert modulus % rows == 0
    assert modulus * 128 == tma.repeat_boundary(mode)
    for dst in range(0, 4096, 128):
        assert tma.base_offset(mode, dst) % rows == (dst // 128) % rows


# --- Table 14 -----------------------------------------------------------------------------------
def test_table_14_legality():
    legal = {(f, a) for f in tma.TABLE_14 for a in (None, "16B", "32B", "32B + 8B-flip", "64B")
             if tma.atomicity_legal(f, a)}
    assert legal == {("none", None), ("32B", "16B"), ("64B", "16B"), ("96B", "16B"),
                     ("128B", "16B"), ("128B", "32B"), ("128B", "32B + 8B-flip"), ("128B", "64B")}
    assert tma.mode_for("128B", "32B + 8B-flip") == "128B_ATOM_32B_FLIP_8B"
    assert tma.mode_for("96B", "16B") == "96B"
    assert tma.mode_for("none", None) == "NONE"
    for m in tma.MODES.values():   # every mode is a legal Table 14 pair
        assert tma.atomicity_legal(m.family, m.atomicity_name)
        assert tma.mode_for(m.family, m.atomicity_name) == m.name
    with pytest.raises(SpecError) as info:
        tma.mode_for("64B", "32B")
    assert info.value.rule_id == "tma.swizzle.atomicity_legal"
    with pytest.raises(SpecError):
        tma.atomicity_legal("256B", "16B")


# --- Constraint rules -----------------------------------------------------------------------------
VIOLATING = [
    (tma.TmaSwizzleUse("128B_ATOM_32B", 0x1010, "global_to_shared"), {"tma.swizzle.alignment"}),
    (tma.TmaSwizzleUse("128B_ATOM_64B", 0x1020, "shared_to_global"), {"tma.swizzle.alignment"}),
    (tma.TmaSwizzleUse("128B_ATOM_32B_FLIP_8B", 0x1000, "shared_to_global"),
     {"tma.swizzle.flip_direction"}),
    (tma.TmaSwizzleUse("128B_ATOM_32B_FLIP_8B", 0x1010, "shared_to_global"),
     {"tma.swizzle.alignment", "tma.swizzle.flip_direction"}),
]
OBEYING = [
    tma.TmaSwizzleUse("128B_ATOM_32B", 0x1020, "shared_to_global"),
    tma.TmaSwizzleUse("128B_ATOM_64B", 0x1040, "global_to_shared"),
    tma.TmaSwizzleUse("128B_ATOM_32B_FLIP_8B", 0x1020, "global_to_shared"),
    tma.TmaSwizzleUse("128B", 0x1010, "shared_to_global"),
    tma.TmaSwizzleUse("96B", 0x1010, "global_to_shared"),
]


@pytest.mark.parametrize("use,broken", VIOLATING)
def test_violations_name_the_rule(use, broken):
    found = check_all("tma_swizzle_use", use)
    assert {v.rule.id for v in found} == broken
    assert all(v.message and "\n" not in v.message for v in found)


@pytest.mark.parametrize("use", OBEYING)
def test_obeying_uses(use):
    assert check_all("tma_swizzle_use", use) == []


def test_every_constraint_rule_is_broken_by_a_case():
    constraint_ids = {r.id for r in rules_for("tma_swizzle_use") if r.check is not None}
    assert constraint_ids == {"tma.swizzle.alignment", "tma.swizzle.flip_direction"}
    assert set().union(*(broken for _, broken in VIOLATING)) == constraint_ids


def test_alignment_required():
    assert {m: tma.alignment_required(m) for m in ALL_MODES} == {
        "NONE": 16, "32B": 16, "64B": 16, "96B": 16, "128B": 16, "128B_ATOM_32B": 32,
        "128B_ATOM_32B_FLIP_8B": 32, "128B_ATOM_64B": 64}


def test_malformed_input():
    with pytest.raises(SpecError) as info:
        tma.swizzle_byte_address("256B", 0)
    assert info.value.rule_id == "tma.swizzle.modes"
    with pytest.raises(SpecError):
        tma.swizzle_byte_address("128B", -16)
    with pytest.raises(SpecError):
        tma.base_offset("128B", 1.5)
    with pytest.raises(SpecError) as info:
        tma.TmaSwizzleUse("128B", 0, "shared_to_shared")
    assert info.value.rule_id == "tma.swizzle.flip_direction"
    with pytest.raises(SpecError):
        tma.TmaSwizzleUse("32B_ATOM_32B", 0, "global_to_shared")


# --- Rule registration ------------------------------------------------------------------------------
def test_rules_registered_with_sources():
    ids = ["tma.swizzle.modes", "tma.swizzle.table_reading", "tma.swizzle.atomicity_legal",
           "tma.swizzle.repeat_boundary", "tma.swizzle.base_offset", "tma.swizzle.alignment",
           "tma.swizzle.flip_direction", "tma.swizzle.flip_rows", "tma.swizzle.xor_formula"]
    ids += [f"tma.swizzle.table.{m}" for m in ALL_MODES]
    for rule_id in ids:
        r = CATALOGUE[rule_id]
        assert r.source.startswith(("PTX 5.5.7", "PTX ISA 5.5.7")), r
        assert r.statement
    assert CATALOGUE["tma.swizzle.atomicity_legal"].source == "PTX 5.5.7 Table 14"
    assert CATALOGUE["tma.swizzle.table.128B"].statement.count("/") == 7
    for r in rules_for("tma_swizzle_use"):
        assert r.check is not None
