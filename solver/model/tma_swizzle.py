"""TMA swizzle modes as Z3 bit-vector functions of a byte address (PTX ISA 5.5.7 "Swizzling Modes").

Written from PTX 5.5.7, independently of spec/tma/swizzle.py (which is not imported here): the tests and
the replays of solver/prove/tma.py compare the two.

THE definition is PTX 5.5.7's tables. Each table row lists 8 numbered cells of 16 bytes, i.e. one 128-byte
shared-memory line, and "... Pattern repeats ..." means the rows repeat cyclically over successive lines.
Reading, for a byte at absolute shared-memory address a (32 bits):

  * row         = (a >> 7) mod len(table)       the table row of a's 128-byte line (absolute address)
  * chunk       = (a >> 4) & 7                  a's 16-byte cell within the line
  * the table "shows the pattern of the destination data layout": cell j of a row holds the number of
    the (unswizzled) chunk that lands at position j. So chunk c lands at the position j with
    table[row][j] == c. `destination_chunk` encodes exactly that search. Every row of PTX 5.5.7's tables
    is an involution (table[row][table[row][c]] == c), so this equals the shorter reading
    "destination = table[row][chunk]"; the tests prove that equality rather than assume it.
  * result      = line start + 16 * destination chunk + (a & 15), with, for 128B_ATOM_32B_FLIP_8B only,
    the two 8-byte halves of the 16-byte chunk swapped ((a & 15) ^ 8) on ODD lines ((a >> 7) & 1 == 1).
    PTX 5.5.7 says only "a flip of adjacent 8-bytes within the 16-byte data at every alternate shared
    memory line" (its Figure 36 is not in the text); "odd lines" is the same reading spec/ takes.

The XOR formulas (`formula_swizzle`) are CLAIMS about the tables, stated as CuTe Swizzle<B,M,S> on the
absolute byte address (solver.model.swizzle.cute_swizzle); solver/prove/tma.py proves them equal to
the tables for every 32-bit address. Derivation from the rows: 32B/64B/96B/128B XOR the chunk with the
row (Sw<B,4,3>: line bits 7.. into chunk bits 4..); 32-byte atomicity XORs it with 2*row (Sw<2,5,2>);
64-byte atomicity with 4*row (Sw<1,6,1>); the 8-byte flip is address bit 7 into bit 3 (Sw<1,3,4>).
"""
from __future__ import annotations

import z3

from spec import fast      # the fast paths' registry and switch only (no definition: the model stays apart from spec)

from solver.model.bitvec import bv
from solver.model.swizzle import cute_swizzle

LINE_BYTES = 128    # one table row: 8 cells
CHUNK_BYTES = 16    # "each element (numbered cell) is 16 byte"
HALF_BYTES = 8      # the 8-byte halves the flip sub-mode swaps
NOWHERE = 8         # destination chunk when a row does not list the source chunk (only a broken table)

MODES = ("NONE", "32B", "64B", "96B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")

# --- The tables, copied row by row from PTX ISA 5.5.7 (Swizzling Modes) -------------------------------
_ATOM_32B_ROWS = (
    # "32-byte atomicity sub-mode"
    (0, 1, 2, 3, 4, 5, 6, 7),
    (2, 3, 0, 1, 6, 7, 4, 5),
    (4, 5, 6, 7, 0, 1, 2, 3),
    (6, 7, 4, 5, 2, 3, 0, 1),
)
CHUNK_TABLES: dict = {
    # "No swizzle mode" (printed as two identical rows)
    "NONE": ((0, 1, 2, 3, 4, 5, 6, 7),
             (0, 1, 2, 3, 4, 5, 6, 7)),
    # "32 byte swizzle mode" (starting address 256 bytes aligned)
    "32B": ((0, 1, 2, 3, 4, 5, 6, 7),
            (1, 0, 3, 2, 5, 4, 7, 6)),
    # "64 byte swizzle mode" (starting address 512 bytes aligned)
    "64B": ((0, 1, 2, 3, 4, 5, 6, 7),
            (1, 0, 3, 2, 5, 4, 7, 6),
            (2, 3, 0, 1, 6, 7, 4, 5),
            (3, 2, 1, 0, 7, 6, 5, 4)),
    # "96 byte swizzle mode"
    "96B": ((0, 1, 2, 3, 4, 5, 6, 7),
            (1, 0, 3, 2, 5, 4, 7, 6)),
    # "128 byte swizzle mode", "16-byte atomicity sub-mode" (starting address 1024 bytes aligned)
    "128B": ((0, 1, 2, 3, 4, 5, 6, 7),
             (1, 0, 3, 2, 5, 4, 7, 6),
             (2, 3, 0, 1, 6, 7, 4, 5),
             (3, 2, 1, 0, 7, 6, 5, 4),
             (4, 5, 6, 7, 0, 1, 2, 3),
             (5, 4, 7, 6, 1, 0, 3, 2),
             (6, 7, 4, 5, 2, 3, 0, 1),
             (7, 6, 5, 4, 3, 2, 1, 0)),
    "128B_ATOM_32B": _ATOM_32B_ROWS,
    # "32-byte atomicity with 8-byte flip sub-mode": "similar to the 32-byte atomicity sub-mode" (no table
    # of its own) plus the flip (FLIP_8B_MODES)
    "128B_ATOM_32B_FLIP_8B": _ATOM_32B_ROWS,
    # "64-byte atomicity sub-mode"
    "128B_ATOM_64B": ((0, 1, 2, 3, 4, 5, 6, 7),
                      (4, 5, 6, 7, 0, 1, 2, 3)),
}
FLIP_8B_MODES = frozenset({"128B_ATOM_32B_FLIP_8B"})

# "Starting address of the repeating pattern" (the table after Table 14), per swizzling mode; every 128B
# sub-mode takes the 128-byte swizzle row. No swizzle has no entry: one 128-byte line (the identity).
REPEAT_BYTES: dict = {"NONE": 128, "32B": 256, "64B": 512, "96B": 256, "128B": 1024,
                      "128B_ATOM_32B": 1024, "128B_ATOM_32B_FLIP_8B": 1024, "128B_ATOM_64B": 1024}

# --- The claimed XOR formulas: CuTe Swizzle<B,M,S> triples, applied left to right --------------------
XOR_FORMULAS: dict = {
    "NONE": ((0, 4, 3),),
    "32B": ((1, 4, 3),),
    "64B": ((2, 4, 3),),
    "96B": ((1, 4, 3),),            # the same table as 32B, read per 128-byte line
    "128B": ((3, 4, 3),),
    "128B_ATOM_32B": ((2, 5, 2),),
    "128B_ATOM_32B_FLIP_8B": ((2, 5, 2), (1, 3, 4)),   # chunk pattern, then addr[3] ^= addr[7]
    "128B_ATOM_64B": ((1, 6, 1),),
}


def _check_mode(mode: str) -> None:
    if mode not in CHUNK_TABLES:
        raise ValueError(f"unknown TMA swizzle mode {mode!r}; expected one of {', '.join(MODES)}")


# --- Table lookup ---------------------------------------------------------------------------------
def line_row(table, address):
    """The table row that applies to `address`: (address >> 7) mod len(table)."""
    return z3.URem(z3.LShR(address, 7), bv(len(table)))


def source_chunk(address):
    """The 16-byte cell of `address` within its 128-byte line: (address >> 4) & 7."""
    return z3.LShR(address, 4) & bv(7)


def destination_chunk(table, row, chunk):
    """The position j with table[row][j] == chunk (the cell that shows `chunk` in the destination
    layout), as an If-chain over every cell of the table; NOWHERE if the row does not list `chunk`."""
    result = bv(NOWHERE)
    for r in reversed(range(len(table))):          # reversed: the first listed match wins
        for j in reversed(range(len(table[r]))):
            result = z3.If(z3.And(row == r, chunk == table[r][j]), bv(j), result)
    return result


def destination_chunk_term(table, row, chunk):
    """destination_chunk(table, row, chunk); while fast paths are on (spec.fast), the same Z3 term made by
    substituting `row` and `chunk` into a template built once per table (solver.fast.model_tma_swizzle).
    A test that replaces destination_chunk gets what its replacement builds (it has no fast version); one
    that mutates a definition turns fast paths off."""
    return fast.fastest(destination_chunk)(table, row, chunk)


def table_cell(table, row, position):
    """table[row][position] as a term (the direct reading, used to check it against the search)."""
    result = bv(NOWHERE)
    for r in reversed(range(len(table))):
        for j in reversed(range(len(table[r]))):
            result = z3.If(z3.And(row == r, position == j), bv(table[r][j]), result)
    return result


def flips(address):
    """The 8-byte flip applies on odd 128-byte lines."""
    return z3.Extract(7, 7, address) == 1


def _table_swizzle(table, flip_8b: bool, address, direct: bool = False):
    """The table definition for an arbitrary table (mutation tests pass broken ones; `direct` reads a
    cell as the destination of its position instead of searching)."""
    row = line_row(table, address)
    chunk = source_chunk(address)
    target = table_cell(table, row, chunk) if direct else destination_chunk_term(table, row, chunk)
    within = address & bv(CHUNK_BYTES - 1)
    if flip_8b:
        within = z3.If(flips(address), within ^ bv(HALF_BYTES), within)
    line_start = address & ~bv(LINE_BYTES - 1)
    return line_start + target * bv(CHUNK_BYTES) + within


def table_swizzle(mode: str, address):
    """PTX 5.5.7's definition: where the byte that would sit at `address` without swizzling lands."""
    _check_mode(mode)
    return _table_swizzle(CHUNK_TABLES[mode], mode in FLIP_8B_MODES, address)


def _formula_swizzle(triples, address):
    for B, M, S in triples:
        address = cute_swizzle(address, B, M, S)
    return address


def formula_swizzle(mode: str, address):
    """The claimed XOR formula of `mode` applied to `address`."""
    _check_mode(mode)
    return _formula_swizzle(XOR_FORMULAS[mode], address)


def place_byte(mode: str, destination, offset):
    """Where a tiled box load puts the byte at `offset` from `destination` (PTX 5.5.7: the box's rows land
    from the destination, padded to the swizzle span when narrower (tma.place.row_pitch), so every written
    byte has such an offset; then the mode's table moves the byte by its absolute
    address; spec.tma.place.place is the concrete executor of the same rule)."""
    return table_swizzle(mode, destination + offset)


def repeat_block(mode: str, address):
    """Index of the aligned repeat block (REPEAT_BYTES[mode]) that holds `address`."""
    _check_mode(mode)
    size = REPEAT_BYTES[mode]
    return z3.UDiv(address, bv(size))


def formula_notation(triples) -> str:
    return " then ".join(f"Sw<{B},{M},{S}>" for B, M, S in triples)
