"""TMA shared-memory swizzling modes (PTX ISA 5.5.7 "Swizzling Modes", Table 14; cuda.h
CUtensorMapSwizzle).

THE definition is PTX ISA 5.5.7's tables: each table row lists 8 numbered 16-byte cells, i.e. one
128-byte shared-memory row, and "... Pattern repeats ..." means the list of rows repeats cyclically over successive
128-byte rows. The tables are transcribed below literally, as data, in the order PTX ISA 5.5.7 gives them.

How a table is read (an interpretation, rule "tma.swizzle.table_reading"):
  * row i of a table, with i = (address // 128) % len(table), applies to the 128-byte shared-memory row
    that holds `address`; the row is selected by the ABSOLUTE shared-memory address (as the H100 showed,
    tests/hardware/tma_loads_sm90.json.gz: the swizzle phase follows the absolute smem address; PTX ISA
    5.5.7 states the tables for a starting address aligned to the repeat boundary, where absolute and
    relative row numbers coincide);
  * the table shows "the destination data layout": entry j of a row is the number of the SOURCE 16-byte
    chunk (the chunk at position j without swizzling) that lands in DESTINATION chunk position j;
  * so the byte at chunk c of a row lands in the position j with row[j] == c. Every row of these tables
    is an involution of the 8 positions (row[row[j]] == j), so the destination and source readings
    coincide; the code nonetheless inverts the row explicitly and the tests check that every row is a
    permutation and an involution instead of assuming it.
Swizzling never moves a byte out of its 128-byte row (the tables permute chunks within a row), so the row
index of the destination equals that of the source: the row may be taken from either address.

The 32B+8B-flip sub-mode (128B_ATOM_32B_FLIP_8B) has no table of its own: PTX ISA 5.5.7 says its
pattern "is similar to the 32-byte atomicity sub-mode except that there is a flip of adjacent 8-bytes within the
16-byte data at every alternate shared memory line". Here: the 128B_ATOM_32B chunk table, plus a swap of
the two 8-byte halves of every 16-byte chunk on the ODD 128-byte rows ((address // 128) % 2 == 1). Which
alternate lines flip is not stated by the text (its figure gives no cell numbers): rule
"tma.swizzle.flip_rows", evidence "interpretation".

The XOR formulas (`xor_formula`) are CLAIMS about the tables, proved equal to them by
tests/spec_tests/test_tma_swizzle.py; they are not the definition.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from spec import fast
from spec.rule import Rule, SpecError, rule
from spec.cute.swizzle import Swizzle

ROW_BYTES = 128    # one shared-memory "line": the 8 numbered cells of one table row
CHUNK_BYTES = 16   # "each element (numbered cell) is 16 byte"
FLIP_BYTES = 8     # the 8-byte halves swapped by the flip sub-mode

DIRECTIONS = ("global_to_shared", "shared_to_global")


# --- The modes (cuda.h CUtensorMapSwizzle; PTX ISA 5.5.7 Table 14) -----------------------------------
@dataclass(frozen=True)
class TmaSwizzleMode:
    name: str                     # the driver's name without the CU_TENSOR_MAP_SWIZZLE_ prefix
    driver_enum: Optional[int]    # cuda.h CUtensorMapSwizzle value; None where cuda.h has none
    ptx_replace_mode: Optional[int]  # PTX tensormap.replace .swizzle_mode; recorded only for 96B
    span: Optional[int]           # the swizzle span in bytes (NONE: no span)
    family: str                   # Table 14's "Swizzling Mode" column: "none", "32B", "64B", "96B", "128B"
    atomicity: Optional[int]      # bytes kept intact while swizzling (NONE: Table 14 is blank)
    flip_8b: bool = False         # the 32B + 8B-flip sub-mode

    @property
    def atomicity_name(self) -> Optional[str]:
        """Table 14's "Swizzle-Atomicity" column spelling: "16B", "32B", "32B + 8B-flip", "64B"."""
        if self.atomicity is None:
            return None
        return f"{self.atomicity}B + 8B-flip" if self.flip_8b else f"{self.atomicity}B"


MODES: dict[str, TmaSwizzleMode] = {m.name: m for m in (
    TmaSwizzleMode("NONE", 0, None, None, "none", None),
    TmaSwizzleMode("32B", 1, None, 32, "32B", 16),
    TmaSwizzleMode("64B", 2, None, 64, "64B", 16),
    # No 96B enumerator in cuda.h 13.0; PTX tensormap.replace names it swizzle_mode 4 (sm_103a).
    TmaSwizzleMode("96B", None, 4, 96, "96B", 16),
    TmaSwizzleMode("128B", 3, None, 128, "128B", 16),
    TmaSwizzleMode("128B_ATOM_32B", 4, None, 128, "128B", 32),
    TmaSwizzleMode("128B_ATOM_32B_FLIP_8B", 5, None, 128, "128B", 32, flip_8b=True),
    TmaSwizzleMode("128B_ATOM_64B", 6, None, 128, "128B", 64),
)}

TMA_SWIZZLE_MODES = rule(
    "tma.swizzle.modes", "PTX ISA 5.5.7, Table 14; CUDA Driver API: CUtensorMapSwizzle (cuda.h 13.0)",
    "TMA swizzle modes and their cuda.h CUtensorMapSwizzle values: NONE 0, 32B 1, 64B 2, 128B 3, "
    "128B_ATOM_32B 4, 128B_ATOM_32B_FLIP_8B 5, 128B_ATOM_64B 6; 96B has no cuda.h enumerator (PTX "
    "tensormap.replace swizzle_mode 4, sm_103a). Spans 32/64/96/128 bytes (all 128B sub-modes 128); "
    "atomicity 16 B except the 128B sub-modes (32, 32 + 8-byte flip, 64).",
    evidence="driver")


def mode_info(mode: str) -> TmaSwizzleMode:
    """The mode record; an unknown name is malformed input."""
    try:
        return MODES[mode]
    except (KeyError, TypeError):
        raise SpecError("tma_swizzle.mode", mode, f"unknown TMA swizzle mode; expected one of "
                        f"{', '.join(MODES)}", TMA_SWIZZLE_MODES.id) from None


def mode_from_driver_enum(value: int) -> str:
    for m in MODES.values():
        if m.driver_enum == value:
            return m.name
    raise SpecError("CUtensorMapSwizzle", value, "not a cuda.h CUtensorMapSwizzle value (0..6)",
                    TMA_SWIZZLE_MODES.id)


# --- Table 14: valid (swizzling mode, swizzle atomicity) pairs ---------------------------------------
# Transcribed as given: "No Swizzling" has a blank atomicity cell; 32B, 64B, 96B: 16B only;
# 128B: 16B, 32B, 32B + 8B-flip, 64B.
TABLE_14: dict[str, tuple[str, ...]] = {
    "none": (),
    "32B": ("16B",),
    "64B": ("16B",),
    "96B": ("16B",),
    "128B": ("16B", "32B", "32B + 8B-flip", "64B"),
}
ATOMICITY_LEGAL = rule(
    "tma.swizzle.atomicity_legal", "PTX 5.5.7 Table 14",
    "Valid swizzle-atomicity per swizzling mode: no swizzling: none (blank); 32B, 64B, 96B: 16B only; "
    "128B: 16B, 32B, 32B + 8B-flip, 64B.")


def atomicity_legal(family: str, atomicity: Optional[str]) -> bool:
    """Table 14: may swizzling mode `family` ("none", "32B", "64B", "96B", "128B") take `atomicity`
    ("16B", "32B", "32B + 8B-flip", "64B"; None for the blank cell of "No Swizzling")?"""
    if family not in TABLE_14:
        raise SpecError("tma_swizzle.family", family, f"not a Table 14 swizzling mode; expected one of "
                        f"{', '.join(TABLE_14)}", ATOMICITY_LEGAL.id)
    if atomicity is None:
        return family == "none"
    return atomicity in TABLE_14[family]


def mode_for(family: str, atomicity: Optional[str]) -> str:
    """The driver mode name for a Table 14 pair; an illegal pair is malformed input."""
    if not atomicity_legal(family, atomicity):
        raise SpecError("tma_swizzle.atomicity", atomicity,
                        f"not a valid swizzle atomicity for swizzling mode {family}", ATOMICITY_LEGAL.id)
    for m in MODES.values():
        if m.family == family and m.atomicity_name == atomicity:
            return m.name
    raise AssertionError("Table 14 and MODES disagree")  # pragma: no cover


# --- The pattern tables, transcribed literally from PTX ISA 5.5.7 ----------------------------------------
_TABLES: dict[str, tuple[tuple[int, ...], ...]] = {
    # "No swizzle mode": PTX ISA 5.5.7 prints two identical rows.
    "NONE": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (0, 1, 2, 3, 4, 5, 6, 7),
    ),
    # "32 byte swizzle mode" (starting address 256 bytes aligned)
    "32B": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (1, 0, 3, 2, 5, 4, 7, 6),
    ),
    # "64 byte swizzle mode" (starting address 512 bytes aligned)
    "64B": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (1, 0, 3, 2, 5, 4, 7, 6),
        (2, 3, 0, 1, 6, 7, 4, 5),
        (3, 2, 1, 0, 7, 6, 5, 4),
    ),
    # "96 byte swizzle mode" (the example's starting address is 256 bytes aligned)
    "96B": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (1, 0, 3, 2, 5, 4, 7, 6),
    ),
    # "128 byte swizzle mode", "16-byte atomicity sub-mode" (starting address 1024 bytes aligned)
    "128B": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (1, 0, 3, 2, 5, 4, 7, 6),
        (2, 3, 0, 1, 6, 7, 4, 5),
        (3, 2, 1, 0, 7, 6, 5, 4),
        (4, 5, 6, 7, 0, 1, 2, 3),
        (5, 4, 7, 6, 1, 0, 3, 2),
        (6, 7, 4, 5, 2, 3, 0, 1),
        (7, 6, 5, 4, 3, 2, 1, 0),
    ),
    # "32-byte atomicity sub-mode"
    "128B_ATOM_32B": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (2, 3, 0, 1, 6, 7, 4, 5),
        (4, 5, 6, 7, 0, 1, 2, 3),
        (6, 7, 4, 5, 2, 3, 0, 1),
    ),
    # "64-byte atomicity sub-mode"
    "128B_ATOM_64B": (
        (0, 1, 2, 3, 4, 5, 6, 7),
        (4, 5, 6, 7, 0, 1, 2, 3),
    ),
}
# "32-byte atomicity with 8-byte flip sub-mode": "similar to the 32-byte atomicity sub-mode" (its chunk
# pattern) plus the 8-byte flip on alternate lines (`flips_8b`).
_TABLES["128B_ATOM_32B_FLIP_8B"] = _TABLES["128B_ATOM_32B"]

TABLE_READING = rule(
    "tma.swizzle.table_reading", "PTX ISA 5.5.7; tests/hardware/tma_loads_sm90.json.gz",
    "A swizzle table row lists, for the 8 destination 16-byte chunk positions of a 128-byte shared-memory "
    "row, the source chunk that lands there; row i = (absolute smem address // 128) % len(table) "
    "applies (the row list repeats cyclically: '... Pattern repeats ...').",
    evidence="interpretation",
    note="PTX ISA 5.5.7 shows the tables for a start address on the repeat boundary; taking the row from the "
         "absolute address is what the H100 did (tests/hardware/tma_loads_sm90.json.gz: destinations at every "
         "128-byte offset of the repeat). "
         "All rows are involutions, so the source/destination reading of an entry does not matter.")

TABLE_RULES: dict[str, Rule] = {
    name: rule(f"tma.swizzle.table.{name}", "PTX 5.5.7",
               f"{name} swizzle pattern (16-byte chunks per 128-byte row, repeating): "
               + " / ".join(" ".join(map(str, row)) for row in table)
               + (" plus the 8-byte flip on alternate rows (tma.swizzle.flip_rows)"
                  if MODES[name].flip_8b else ""))
    for name, table in _TABLES.items()
}

FLIP_ROWS = rule(
    "tma.swizzle.flip_rows", "PTX 5.5.7",
    "128B_ATOM_32B_FLIP_8B: the 128B_ATOM_32B chunk pattern, plus a swap of the two adjacent 8-byte "
    "halves of every 16-byte chunk on every alternate shared-memory line; the lines that flip are the "
    "odd 128-byte rows ((address // 128) % 2 == 1).",
    evidence="interpretation",
    note="The text says only 'at every alternate shared memory line'; that the odd rows (and not the even "
         "ones) flip is this model's reading, to be confirmed on sm_100 hardware (PTX ISA 5.5.7's figure "
         "for the sub-mode gives no cell numbers).")


def chunk_table(mode: str) -> list[list[int]]:
    """PTX ISA 5.5.7's table for `mode`: a list of rows of 8 chunk numbers (a fresh copy)."""
    mode_info(mode)
    return [list(row) for row in _TABLES[mode]]


def pattern_period(mode: str) -> int:
    """Bytes after which the table (and, for the flip mode, the flip) repeats: len(table) * 128."""
    rows = len(_TABLES[mode_info(mode).name])
    if MODES[mode].flip_8b:
        rows = math.lcm(rows, 2)  # the flip alternates every row
    return rows * ROW_BYTES


def flips_8b(mode: str, address: int) -> bool:
    """Whether the 8-byte halves of the 16-byte chunks of `address`'s 128-byte row are swapped."""
    return mode_info(mode).flip_8b and (address // ROW_BYTES) % 2 == 1


def _check_address(address: int) -> None:
    if not isinstance(address, int) or isinstance(address, bool) or address < 0:
        raise SpecError("smem_address", address, "must be a non-negative integer byte address",
                        TABLE_READING.id)


def swizzle_byte_address(mode: str, address: int) -> int:
    """The absolute smem byte address where the byte that would land at `address` without swizzling
    actually lands (row chosen by the absolute address; see the module docstring)."""
    mode_info(mode)
    _check_address(address)
    table = _TABLES[mode]
    row_start = address - address % ROW_BYTES
    row = table[(address // ROW_BYTES) % len(table)]
    source_chunk = (address % ROW_BYTES) // CHUNK_BYTES
    destination_chunk = row.index(source_chunk)   # the position j with row[j] == source chunk
    within_chunk = address % CHUNK_BYTES
    if flips_8b(mode, address):
        within_chunk ^= FLIP_BYTES                # swap the two adjacent 8-byte halves
    return row_start + destination_chunk * CHUNK_BYTES + within_chunk


def swizzle_byte_addresses_by_element(mode: str, addresses) -> list:
    """[swizzle_byte_address(mode, a) for a in addresses]: the definition, one address at a time."""
    mode_info(mode)
    return [swizzle_byte_address(mode, a) for a in addresses]


def swizzle_byte_addresses(mode: str, addresses) -> list:
    """swizzle_byte_addresses_by_element; while fast paths are on (spec.fast), one table lookup per address
    (spec.fast.tma_swizzle)."""
    return fast.fastest(swizzle_byte_addresses_by_element)(mode, addresses)


def swizzle_byte_range(mode: str, start: int, count: int, step: int = 1) -> list:
    """swizzle_byte_address of start, start + step, ..., start + (count - 1) * step (one row of a box)."""
    return swizzle_byte_addresses(mode, range(start, start + count * step, step) if step else [start] * count)


def no_period_deltas(mode: str) -> None:
    """The definitions keep no table of differences (period_deltas): None, swizzle_byte_address is called
    address by address."""
    mode_info(mode)
    return None


def period_deltas(mode: str) -> Optional[tuple]:
    """(mask, delta, permutes): swizzle_byte_address(mode, a) = a + delta[a & mask] for every address
    a >= 0, and permutes says whether a -> a + delta[a & mask] permutes each period (then two addresses
    land apart exactly when they were apart). None when no such table stands for swizzle_byte_address:
    call it element by element. The definitions keep none (no_period_deltas); while fast paths are on,
    spec.fast.tma_swizzle computes one period of differences with swizzle_byte_address itself."""
    return fast.fastest(no_period_deltas)(mode)


# --- Repeat boundary and base offset (PTX 5.5.7, the two tables after Table 14) ----------------------
# "The value of swizzle base offset is 0 when the dstMem shared memory address is located at the
# following boundary" (Starting address of the repeating pattern):
REPEAT_BOUNDARY_TABLE = {"128B": 1024, "96B": 256, "64B": 512, "32B": 256}
# "Otherwise, the swizzle base offset is a non-zero value, computed using the following formula":
#   base offset = (dstMem / 128) % modulus
BASE_OFFSET_MODULUS = {"128B": 8, "96B": 2, "64B": 4, "32B": 2}

REPEAT_BOUNDARY = rule(
    "tma.swizzle.repeat_boundary", "PTX 5.5.7",
    "Starting address of the repeating pattern: 128-byte swizzle 1024-byte boundary, 96-byte 256, "
    "64-byte 512, 32-byte 256.",
    note="The table has one row for all 128-byte sub-modes; the tables of 128B_ATOM_32B (4 rows) and "
         "128B_ATOM_64B (2 rows) already repeat after 512 and 256 bytes, which divide 1024. No swizzle has "
         "no entry; this model uses 128 (the identity has no phase).")
BASE_OFFSET = rule(
    "tma.swizzle.base_offset", "PTX 5.5.7",
    "Swizzle base offset = 0 on the repeat boundary, otherwise (dstMem / 128) % 8 for 128-byte swizzle, "
    "% 2 for 96-byte, % 4 for 64-byte, % 2 for 32-byte.",
    note="Applied to every 128-byte sub-mode (the table names only '128-Byte swizzle'); for no swizzle "
         "(no entry) this model gives 0. The formula gives 0 exactly on the boundary, so one formula "
         "covers both sentences. The base offset is the table row at which dstMem's 128-byte row sits.")


def repeat_boundary(mode: str) -> int:
    """The boundary (bytes) on which the repeating pattern starts, per PTX ISA 5.5.7's table."""
    m = mode_info(mode)
    if m.family == "none":
        return ROW_BYTES
    return REPEAT_BOUNDARY_TABLE[m.family]


def base_offset(mode: str, dst_address: int) -> int:
    """The swizzle base offset of a destination at `dst_address` (dstMem), per the formula table."""
    m = mode_info(mode)
    _check_address(dst_address)
    if m.family == "none":
        return 0
    return (dst_address // ROW_BYTES) % BASE_OFFSET_MODULUS[m.family]


# --- Constraints on a use of a mode (subject "tma_swizzle_use") -------------------------------------
@dataclass(frozen=True)
class TmaSwizzleUse:
    mode: str
    smem_address: int
    direction: str   # "global_to_shared" or "shared_to_global"

    def __post_init__(self):
        mode_info(self.mode)
        _check_address(self.smem_address)
        if self.direction not in DIRECTIONS:
            raise SpecError("direction", self.direction, f"expected one of {', '.join(DIRECTIONS)}",
                            FLIP_DIRECTION.id)


def alignment_required(mode: str) -> int:
    """Shared-memory alignment (bytes) the mode needs: its atomicity for the 32- and 64-byte atomicity
    sub-modes (flip included), else 16 (the TMA destination minimum, PTX ISA 5.5.3.1)."""
    m = mode_info(mode)
    return m.atomicity if m.atomicity in (32, 64) else CHUNK_BYTES


ALIGNMENT = rule(
    "tma.swizzle.alignment", "PTX ISA 5.5.7",
    "The 32-byte atomicity sub-mode requires 32-byte alignment at shared memory, the 64-byte atomicity "
    "sub-mode 64-byte alignment.",
    subject="tma_swizzle_use",
    note="PTX ISA 5.5.7 states 32-byte alignment under the 32-byte atomicity sub-mode only; applying it to the "
         "32B + 8B-flip sub-mode (also 32-byte atomicity) is an interpretation. Other modes need the "
         "general 16-byte TMA destination alignment (PTX 5.5.3.1), checked elsewhere.")


@ALIGNMENT.checker
def _check_alignment(use: TmaSwizzleUse) -> Optional[str]:
    m = MODES[use.mode]
    if m.atomicity not in (32, 64):
        return None
    need = alignment_required(use.mode)
    if use.smem_address % need:
        return (f"{use.mode} needs {need}-byte shared-memory alignment; address {use.smem_address:#x} is "
                f"{use.smem_address % need} bytes past a {need}-byte boundary")
    return None


FLIP_DIRECTION = rule(
    "tma.swizzle.flip_direction", "PTX ISA 5.5.7, Table 14",
    "The 32-byte atomicity with 8-byte flip sub-mode is legal only when cp.async.bulk.tensor copies "
    "global -> shared (.shared::cluster.global or .shared::cta.global).",
    subject="tma_swizzle_use")


@FLIP_DIRECTION.checker
def _check_flip_direction(use: TmaSwizzleUse) -> Optional[str]:
    if MODES[use.mode].flip_8b and use.direction != "global_to_shared":
        return f"{use.mode} is legal only for global -> shared copies, not {use.direction}"
    return None


# --- XOR formulas: CLAIMS about the tables, checked by the tests, not the definition -----------------
# Each claim: a CuTe Swizzle on byte addresses. Reading the tables: row r XORs the chunk number with r
# (32B/64B/128B: Sw<B,4,3>, the row index bits 7.. XORed into chunk bits 4..), with 2r (32-byte atomicity:
# Sw<2,5,2>, row bits 8:7 into bits 6:5) or with 4r (64-byte atomicity: Sw<1,6,1>, row bit 7 into bit 6).
#
# 96B: its table is literally the 32B table (2 rows: identity, swap adjacent chunks), read per 128-byte
# row with a 256-byte repeat, exactly as for 32B (same repeat boundary 256, same base offset % 2). On byte
# addresses 96B is therefore the same function as 32B, Sw<1,4,3>; the 96-byte span only changes how wide
# a box row may be. Because 96 is a multiple of 32 and the swaps exchange 16-byte chunks inside aligned
# 32-byte pairs, each packed 96-byte box row keeps its bytes. (Were the rows counted in 96-byte units
# instead, no XOR formula would exist; nothing in PTX ISA 5.5.7 says so.)
#
# 128B_ATOM_32B_FLIP_8B: no single Swizzle; the claim is the composition of Sw<2,5,2> (the chunk
# pattern) and Sw<1,3,4> (addr[3] ^= addr[7]: the 8-byte flip on odd rows), see FLIP_8B_FORMULA.
_XOR_FORMULAS: dict[str, Optional[Swizzle]] = {
    "NONE": Swizzle(0, 4, 3),
    "32B": Swizzle(1, 4, 3),
    "64B": Swizzle(2, 4, 3),
    "96B": Swizzle(1, 4, 3),
    "128B": Swizzle(3, 4, 3),
    "128B_ATOM_32B": Swizzle(2, 5, 2),
    "128B_ATOM_32B_FLIP_8B": None,
    "128B_ATOM_64B": Swizzle(1, 6, 1),
}
FLIP_8B_FORMULA = (Swizzle(2, 5, 2), Swizzle(1, 3, 4))  # applied in either order (disjoint bits)

XOR_FORMULA = rule(
    "tma.swizzle.xor_formula", "PTX ISA 5.5.7; CUTLASS cute/swizzle.hpp",
    "Claim, checked against the tables: NONE=Sw<0,4,3>, 32B=Sw<1,4,3>, 64B=Sw<2,4,3>, 96B=Sw<1,4,3>, "
    "128B=Sw<3,4,3>, 128B_ATOM_32B=Sw<2,5,2>, 128B_ATOM_64B=Sw<1,6,1>, 128B_ATOM_32B_FLIP_8B="
    "Sw<1,3,4> o Sw<2,5,2>, each on absolute shared-memory byte addresses.",
    note="The tables are the definition; tests/spec_tests/test_tma_swizzle.py checks equality over whole repeat "
         "blocks at several absolute bases and on random addresses.")


def xor_formula(mode: str) -> Optional[Swizzle]:
    """The CLAIMED XOR formula for `mode` (None for the flip sub-mode: see FLIP_8B_FORMULA)."""
    return _XOR_FORMULAS[mode_info(mode).name]


def xor_formula_address(mode: str, address: int) -> int:
    """The claimed formula applied to `address`, the flip sub-mode included (for comparisons)."""
    formula = xor_formula(mode)
    if formula is not None:
        return formula(address)
    first, second = FLIP_8B_FORMULA
    return second(first(address))
