"""Properties of block-scaled MMA scale factors (spec/scales): the interleaved layout is one-to-one onto
its footprint, and the reader CUTLASS and Triton emit applies the writer's own scale to every element,
for every size; a linear writer and an off-by-one scale-factor id are refuted.

For every size. Write a row r = 128 i + w (w < 128) and a K block c = 4 j + b (b < 4); R rows take
RT = ceil(R / 128) row tiles and C blocks KT = ceil(C / 4) K tiles. The interleaved writer puts S[r][c]
at (i KT + j) 512 + inner(w, b), inner(w, b) = 16 (w mod 32) + 4 (w div 32) + b (spec.scales.layouts).

  scales.interleaved.injective   (i, j) -> i KT + j is one-to-one for j < KT (lemma mixed_radix), and
      below RT KT for i < RT (lemma footprint); inner is one-to-one onto [0, 512) (lemma tile); so
      X 512 + inner is one-to-one (mixed_radix with 512 for KT) and below the footprint RT KT 512.
  scales.path.interleaved.V      The MMA of k-step t = c div N reads scale s = c mod N of row r at lane
      w mod 32 (each quarter alike), column 4 (j' RT + i) + w div 32, byte sf + s, where j' = (t N) div 4
      and sf = (t N) mod 4. Lemma k_step.N: j' = j and sf + s = b. Lemma chunk_column: that column is
      4 X + (w div 32) with X = j RT + i, so the copy that wrote it is copy X and the word is w div 32.
      Lemma mixed_radix (RT for KT): copy X = j RT + i with i < RT is chunk (i, j), which came from
      (i KT + j) 512. The byte the MMA reads is then (i KT + j) 512 + 16 (w mod 32) + 4 (w div 32) + b:
      the writer's own.

The lemmas are over the integers (no bound on R or C), each a Z3 query of a few milliseconds; the
composition above is the argument that joins them, as solver/prove/layout.py joins its four lemmas.
The refuted properties use the bit-vector model of solver/model/scales.py at a concrete size, and each
counterexample is replayed through spec.scales.path.
"""
from __future__ import annotations

import z3

from solver.model import scales as model
from solver.model.bitvec import Arith, in_range
from solver.prove.property import Query, prop

SOURCE = ("cuBLAS documentation, 1D Block Scaling Factors Layout; PTX ISA 9.0 9.7.16.10.7 (scale factor "
          "A / B ID), 9.7.16.9.1 (tcgen05.cp .32x128b.warpx4)")
FAMILY = "scales"
EVERY_SIZE = "every R >= 1 rows and C >= 1 K blocks (integers, no bound)"
REFUTED_ROWS, REFUTED_BLOCKS = 256, 16     # the concrete size of the refuted properties (2 x 4 tiles)
PATH_RULES = ("scales.layout.interleaved", "tmem.cp.layout", "scales.tmem.cells", "scales.vector.sf_id",
              "scales.path.interleaved_writer")


# --- lemmas (integers) ----------------------------------------------------------------------------------
def _lemma_mixed_radix() -> Query:
    """i KT + j = i' KT + j' with j, j' < KT forces i = i' and j = j' (any KT >= 1)."""
    kt, i, i2, j, j2 = z3.Ints("KT i i2 j j2")
    assumptions = [kt >= 1, i >= 0, i2 >= 0, j >= 0, j < kt, j2 >= 0, j2 < kt]
    claim = z3.Implies(i * kt + j == i2 * kt + j2, z3.And(i == i2, j == j2))
    return Query({"KT": kt, "i": i, "i2": i2, "j": j, "j2": j2}, assumptions, claim)


def _lemma_footprint() -> Query:
    """0 <= i KT + j < RT KT for i < RT, j < KT."""
    rt, kt, i, j = z3.Ints("RT KT i j")
    assumptions = [rt >= 1, kt >= 1, i >= 0, i < rt, j >= 0, j < kt]
    return Query({"RT": rt, "KT": kt, "i": i, "j": j}, assumptions, z3.And(i * kt + j >= 0, i * kt + j < rt * kt))


def _inner(w, b):
    return 16 * (w % 32) + 4 * (w / 32) + b


def _lemma_tile() -> Query:
    """inner(w, b) is one-to-one from [0, 128) x [0, 4) into [0, 512)."""
    w, b, w2, b2 = z3.Ints("w b w2 b2")
    assumptions = [w >= 0, w < 128, b >= 0, b < 4, w2 >= 0, w2 < 128, b2 >= 0, b2 < 4]
    claim = z3.And(_inner(w, b) >= 0, _inner(w, b) < 512,
                   z3.Implies(_inner(w, b) == _inner(w2, b2), z3.And(w == w2, b == b2)))
    return Query({"w": w, "b": b, "w2": w2, "b2": b2}, assumptions, claim)


def _lemma_k_step(per_row: int) -> Query:
    """For t = c div N, s = c mod N: (t N) div 4 = c div 4 and (t N) mod 4 + s = c mod 4 (N divides 4)."""
    c = z3.Int("c")
    first = per_row * (c / per_row)
    claim = z3.And(first / 4 == c / 4, first % 4 + c % per_row == c % 4)
    return Query({"c": c}, [c >= 0], claim)


def _lemma_chunk_column() -> Query:
    """Column 4 X + q with q < 4 is word q of copy X."""
    x, q = z3.Ints("X q")
    return Query({"X": x, "q": q}, [x >= 0, q >= 0, q < 4], z3.And((4 * x + q) / 4 == x, (4 * x + q) % 4 == q))


prop("scales.interleaved.injective",
     "The interleaved (128 x 4) scale layout puts no two scales of an R x C matrix at one byte, and every "
     "one below its footprint ceil(R / 128) ceil(C / 4) 512. Proved as three lemmas (mixed radix, "
     "footprint, inside a tile).",
     EVERY_SIZE, SOURCE, "proved", None, FAMILY, rules=("scales.layout.interleaved",))(
         lambda: [_lemma_mixed_radix(), _lemma_footprint(), _lemma_tile()])

for _vector, _per_row in model.PER_ROW.items():
    prop(f"scales.path.interleaved.{_vector}",
         f".scale_vec::{_vector}: the reader CUTLASS and Triton emit (one tcgen05.cp.32x128b.warpx4 per 128 x 4 "
         "chunk to column 4 (j RT + i), the k-step's scale-factor id (t N) mod 4) applies to every element "
         "the scale the interleaved writer put for its row and K block. Proved as three lemmas (k-step, "
         "chunk column, mixed radix).",
         EVERY_SIZE, SOURCE, "proved", None, FAMILY, rules=PATH_RULES)(
             lambda per_row=_per_row: [_lemma_k_step(per_row), _lemma_chunk_column(), _lemma_mixed_radix()])


# --- refuted: mismatched pairs, at a concrete size (bit-vector model) -------------------------------------
def _path_query(writer: str, vector: str, sf_id_shift: int = 0, copy_form: str = "32x128b.warpx4") -> Query:
    """Some row, K block and sub-partition (quarter) whose scale is not the writer's."""
    arith = Arith()
    r, c = z3.BitVec("row", model.WIDTH), z3.BitVec("k_block", model.WIDTH)
    q = z3.BitVec("quarter", model.WIDTH)
    got = model.applied_offset(r, c, REFUTED_ROWS, REFUTED_BLOCKS, vector, arith, sf_id_shift, q, copy_form)
    wanted = model.writer_offset(writer, r, c, REFUTED_ROWS, REFUTED_BLOCKS, arith)
    domain = [in_range(r, 0, REFUTED_ROWS), in_range(c, 0, REFUTED_BLOCKS), in_range(q, 0, 4)]
    return Query({"row": r, "k_block": c, "quarter": q, "applied_offset": got, "expected_offset": wanted}, domain,
                 z3.And(z3.And(*arith.no_overflow), got == wanted))


def _replay(writer: str, vector: str, sf_id_shift: int = 0, copy_form: str = "32x128b.warpx4"):
    def replay(cx: dict) -> bool:
        from spec.scales import layouts, path
        reader = path.standard_reader(REFUTED_ROWS, REFUTED_BLOCKS, vector, copy_form)
        if sf_id_shift:
            reader = path.Reader(reader.copies, tuple(path.Step(s.column, (s.sf_id + sf_id_shift) % 4)
                                                      for s in reader.steps))
        held = path.held_by_sub_partition(reader, cx["row"], cx["k_block"], vector)
        got = held[cx["quarter"]]
        wanted = layouts.offset(writer, cx["row"], cx["k_block"], REFUTED_ROWS, REFUTED_BLOCKS)
        return got == cx["applied_offset"] and wanted == cx["expected_offset"] and got != wanted
    return replay


KIND_OF = {"1X": "mxf8f6f4", "2X": "mxf4", "4X": "mxf4nvf4"}     # a kind that takes each vector
_SIZE = f"R = {REFUTED_ROWS} rows, C = {REFUTED_BLOCKS} K blocks"
for _vector in model.PER_ROW:
    for _writer in ("linear-k", "linear-mn"):
        prop(f"scales.path.{_writer}.{_vector}",
             f".scale_vec::{_vector}: the same reader applies the right scales to a {_writer} writer (false: "
             "it reads 128 x 4 chunks, a linear writer's bytes belong to other rows and blocks).",
             _SIZE, SOURCE, "refuted", _replay(_writer, _vector), FAMILY,
             rules=("scales.layout.linear", "scales.path.interleaved_writer"))(
                 lambda writer=_writer, vector=_vector: _path_query(writer, vector))
prop("scales.path.interleaved.4X.copy_128x128b",
     ".scale_vec::4X: a reader that copies each chunk with tcgen05.cp.128x128b instead of .32x128b.warpx4 still "
     "applies the right scales (false: .128x128b writes its 128 rows one per lane, so lanes 32-127 hold the "
     "next chunks' rows, where the MMA needs each row's scales duplicated in all four sub-partitions).",
     _SIZE + "; the sub-partition read any of the four", SOURCE, "refuted",
     _replay("interleaved", "4X", copy_form="128x128b"), FAMILY, rules=("tmem.cp.layout", "scales.tmem.cells"))(
         lambda: _path_query("interleaved", "4X", copy_form="128x128b"))
prop("scales.path.interleaved.1X.sf_id_plus_one",
     ".scale_vec::1X: a reader whose scale-factor ids are one byte off, ((t N) + 1) mod 4, still applies the "
     "right scales (false: k-step t reads the scales of block t + 1).",
     _SIZE, SOURCE, "refuted", _replay("interleaved", "1X", 1), FAMILY, rules=("scales.vector.sf_id",))(
         lambda: _path_query("interleaved", "1X", 1))
