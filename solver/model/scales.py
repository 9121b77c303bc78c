"""A Z3 model of the scale-factor path of a block-scaled tcgen05.mma, written apart from spec/scales (the
executor) and checked against it (tests/solver_tests/model/test_scales_model.py).

Sources, read again for this model: cuBLAS's 1D block-scaling-factor layout (128 x 4 tiles of 512 bytes,
tiles row-major, row r of a tile at 16 (r mod 32) + 4 ((r mod 128) div 32)); PTX ISA 9.0 9.7.16.10.7
(scale_A: row m's scales in one word at lane m mod 32, column m div 32; the scale-factor id a byte
offset), 9.7.16.9.1 (tcgen05.cp.32x128b.warpx4: 32 rows of 128 bits, row r to lane r of each 32-lane
quarter, 4 columns), Table 54 (1X, 2X, 4X: 1, 2, 4 scales per row of one MMA).

Every quantity is a WIDTH-bit unsigned bit-vector; the sizes a model is built for keep every offset
below 2^40 (rows x blocks <= 2^24, so a footprint is below 2^26 bytes), and `Arith` records each sum's
and product's no-overflow condition, which `prove` checks with the claim.
"""
from __future__ import annotations

import z3

from solver.model.bitvec import Arith, in_range

WIDTH = 48
TILE_ROWS, TILE_BLOCKS, TILE_BYTES, ROW_BYTES = 128, 4, 512, 16
PER_ROW = {"1X": 1, "2X": 2, "4X": 4}


def const(value):
    """A term: the value itself when it is one already (a size left symbolic), else the constant."""
    return value if isinstance(value, z3.ExprRef) else z3.BitVecVal(value, WIDTH)


def tiles(count, per_tile: int):
    """ceil(count / per_tile), for a constant or a term."""
    if isinstance(count, z3.ExprRef):
        return z3.UDiv(count + (per_tile - 1), const(per_tile))
    return const(-(-count // per_tile))


def writer_offset(layout: str, r, c, rows, blocks, arith: Arith):
    """Where the writer puts S[r][c] (in bytes), as a term."""
    if layout == "interleaved":
        tiles_per_row = tiles(blocks, TILE_BLOCKS)
        tile = arith.add(arith.mul(z3.UDiv(r, const(TILE_ROWS)), tiles_per_row), z3.UDiv(c, const(TILE_BLOCKS)))
        return arith.add(arith.mul(tile, const(TILE_BYTES)), arith.mul(z3.URem(r, const(32)), const(ROW_BYTES)),
                         arith.mul(z3.UDiv(z3.URem(r, const(TILE_ROWS)), const(32)), const(4)),
                         z3.URem(c, const(TILE_BLOCKS)))
    if layout == "linear-k":
        return arith.add(arith.mul(r, const(blocks)), c)
    if layout == "linear-mn":
        return arith.add(arith.mul(c, const(rows)), r)
    raise ValueError(layout)


# The lanes a copy form writes source row L of, as the source row lane L holds (PTX ISA 9.0 9.7.16.9.1):
# .32x128b.warpx4 broadcasts its 32 rows to the four 32-lane quarters (row L mod 32); .128x128b writes its
# 128 rows one per lane (row L). Another form in the reader's place is a bug the catalogue refutes.
COPY_ROW_OF_LANE = {"32x128b.warpx4": 32, "128x128b": 128}       # the row lane L holds: L mod this


def applied_offset(r, c, rows, blocks, vector: str, arith: Arith, sf_id_shift: int = 0, quarter=None,
                   copy_form: str = "32x128b.warpx4"):
    """The writer byte the MMA applies to row r's block c under the reader (the bytes of 128 x 4 chunk (i, j)
    at (i * K tiles + j) * 512 copied by one 32x128b.warpx4 to column 4 (j * row tiles + i); the MMA of
    k-step t reads its scales at the chunk of block t N, scale-factor id (t N) mod 4; sf_id_shift > 0: a
    reader whose ids are that much off, ((t N) + shift) mod 4, a bug the catalogue refutes). `quarter`
    (a term in [0, 4), or None for 0): the 32-lane sub-partition whose copy of the cell is read;
    `copy_form`: the copy that wrote it (COPY_ROW_OF_LANE), its rows 16 bytes apart from the chunk's start."""
    n = const(PER_ROW[vector])
    row_tiles, k_tiles = tiles(rows, TILE_ROWS), tiles(blocks, TILE_BLOCKS)
    i, within = z3.UDiv(r, const(TILE_ROWS)), z3.URem(r, const(TILE_ROWS))
    t, s = z3.UDiv(c, n), z3.URem(c, n)
    first = arith.mul(t, n)
    j = z3.UDiv(first, const(TILE_BLOCKS))
    sf_id = z3.URem(arith.add(first, const(sf_id_shift)), const(TILE_BLOCKS))
    # the cell the MMA reads: lane m mod 32 of a quarter (the copy writes source row lane mod R there)
    lane = arith.add(z3.URem(within, const(32)), arith.mul(const(32), const(0) if quarter is None else quarter))
    row = z3.URem(lane, const(COPY_ROW_OF_LANE[copy_form]))
    column = arith.add(arith.mul(const(4), arith.add(arith.mul(j, row_tiles), i)), z3.UDiv(within, const(32)))
    byte = arith.add(sf_id, s)
    # which copy wrote that cell, and from which byte of its chunk
    chunk = z3.UDiv(column, const(4))
    source_i, source_j = z3.URem(chunk, row_tiles), z3.UDiv(chunk, row_tiles)
    source = arith.mul(arith.add(arith.mul(source_i, k_tiles), source_j), const(TILE_BYTES))
    return arith.add(source, arith.mul(row, const(ROW_BYTES)), arith.mul(z3.URem(column, const(4)), const(4)), byte)


MAX_ELEMENTS = 1 << 24              # rows x blocks the model is built for (offsets then stay below 2^40)


def _outside(rows, blocks) -> str:
    """Why a size is outside the model's preconditions ("" when inside): whole numbers, at least one of
    each, rows x blocks <= MAX_ELEMENTS (so no constant of WIDTH bits wraps)."""
    if not all(isinstance(n, int) and n >= 1 for n in (rows, blocks)) or rows * blocks > MAX_ELEMENTS:
        return f"rows {rows} x blocks {blocks}: the model is built for 1 <= rows x blocks <= {MAX_ELEMENTS}"
    return ""


def prove_path(layout: str, rows: int, blocks: int, vector: str, timeout_ms: int = 20000) -> dict:
    """{"status": "proved" | "refuted" | "unknown", "witness"}: every (r, c) gets its own scale."""
    if _outside(rows, blocks):
        return {"status": "unknown", "witness": None, "reason": _outside(rows, blocks)}
    arith = Arith()
    r, c = z3.BitVec("r", WIDTH), z3.BitVec("c", WIDTH)
    domain = z3.And(in_range(r, 0, rows), in_range(c, 0, blocks))
    got, wanted = applied_offset(r, c, rows, blocks, vector, arith), writer_offset(layout, r, c, rows, blocks, arith)
    return _decide(z3.And(domain, z3.Or(got != wanted, z3.Not(z3.And(*arith.no_overflow)))), timeout_ms,
                   lambda m: {"row": m.eval(r).as_long(), "k_block": m.eval(c).as_long(),
                              "applied_offset": m.eval(got).as_long(), "expected_offset": m.eval(wanted).as_long()})


def prove_one_to_one(layout: str, rows: int, blocks: int, footprint: int, timeout_ms: int = 20000) -> dict:
    """{"status", "witness"}: no two scales share a byte, and every one lies below the footprint."""
    if _outside(rows, blocks) or not 0 <= footprint < 1 << 40:
        return {"status": "unknown", "witness": None, "reason": _outside(rows, blocks) or "footprint out of range"}
    arith = Arith()
    r, c, r2, c2 = (z3.BitVec(n, WIDTH) for n in ("r", "c", "r2", "c2"))
    domain = z3.And(in_range(r, 0, rows), in_range(c, 0, blocks), in_range(r2, 0, rows), in_range(c2, 0, blocks))
    first, second = writer_offset(layout, r, c, rows, blocks, arith), writer_offset(layout, r2, c2, rows, blocks, arith)
    broken = z3.Or(z3.And(z3.Or(r != r2, c != c2), first == second), z3.UGE(first, const(footprint)),
                   z3.Not(z3.And(*arith.no_overflow)))
    return _decide(z3.And(domain, broken), timeout_ms,
                   lambda m: {"first": [m.eval(r).as_long(), m.eval(c).as_long()],
                              "second": [m.eval(r2).as_long(), m.eval(c2).as_long()],
                              "offset": m.eval(first).as_long()})


def _decide(negation, timeout_ms: int, witness) -> dict:
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(negation)
    answer = solver.check()
    if answer == z3.unsat:
        return {"status": "proved", "witness": None}
    if answer == z3.sat:
        return {"status": "refuted", "witness": witness(solver.model())}
    return {"status": "unknown", "witness": None, "reason": solver.reason_unknown()}
