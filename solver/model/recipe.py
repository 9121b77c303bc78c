"""A TMA box, a shared-memory tile and the per-k descriptors together, as Z3 constraints: the `recipe`
fuzz target's model.

Written from the manual (PTX 5.5.7: a tiled box lands row by row, boxDim[0] elements per row, each row
of a swizzled box starting a new span row; 9.7.16.3.1-2: start address, LBO, SBO; 9.7.15.5 and 9.7.16
Table 54: operand types and swizzles) and the driver's box limits (cuTensorMapEncodeTiled), independently
of spec/cases/recipe_case.py, spec/tma/place.py and spec/mma/readmap.py, which label the cases; the tests compare
the two.

The record is field-level (all Ints). The tile: arch, dtype, major, mn, steps (instructions along K:
k_tile = steps * Kinst, Kinst = 32 bytes of K), smem (A). The boxes: tma_swizzle (an index of SWIZZLES,
the TMA mode of the same name), inner_bytes (boxDim[0] * element size, one of INNER_BYTES), rows,
box_count, box_stride (S). The descriptors, one per step, share desc_swizzle, sbo, lbo and base_offset;
step j starts at start_j = want_j + start_err + j * step_err, where want_j is where the boxes put
element (0, 32j bytes of K) before the swizzle (K-major A + (32j div W)*S + 32j mod W; MN-major
A + j*Kinst*W, W the TMA swizzle's row). The descriptor words keep their fixed and reserved bits right,
a valid swizzle code and the relative LBO mode: the desc target breaks those. One constraint per rule
id (the fuzzer's hints and anchors: solver/fuzz/recipe_sampling.py).
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model.field import between as _between, is_one_of as _is, table as _table
from solver.model.vocab import (ARCHES, DESCRIPTOR_PATTERN_ROWS, DESCRIPTOR_REPEAT_BYTES, DESCRIPTOR_ROW_BYTES,
                                DESCRIPTOR_SWIZZLES, MMA_DTYPE_BITS, TMA_MODE)

DTYPES = ("bf16", "f16", "tf32", "e4m3", "s8")
BYTES = {d: MMA_DTYPE_BITS[d] // 8 for d in DTYPES}
MAJORS = ("K", "MN")
SWIZZLES = DESCRIPTOR_SWIZZLES                                              # descriptor names
TMA_NAMES = tuple(TMA_MODE[s] for s in SWIZZLES)                            # the same index: TMA's name
ROW = DESCRIPTOR_ROW_BYTES                                                  # W; TMA span (16: a chunk)
REPEAT = {"none": 0, **DESCRIPTOR_REPEAT_BYTES}                             # PTX Table 41
INNER_BYTES = (8, 16, 24, 32, 48, 64, 96, 128, 160, 256)
MAX_STEPS = 8
FIELD_LIMIT = 1 << 18          # descriptor address fields: 14 bits of 16-byte units
SM90, SM103 = ARCHES.index("sm90"), ARCHES.index("sm103")


FIELDS = ("arch", "dtype", "major", "mn", "steps", "smem", "tma_swizzle", "inner_bytes", "rows", "box_count",
          "box_stride", "desc_swizzle", "sbo", "lbo", "base_offset", "start_err", "step_err")
Record = field_model.record_type("Record", FIELDS)
symbolic_record = Record.symbolic


def elem_bytes(r):
    return _table(r.dtype, DTYPES, BYTES)


row_bytes = field_model.descriptor_row_bytes


def k_inst(r):
    """Elements of K per instruction (32 bytes)."""
    return _table(r.dtype, DTYPES, {d: 32 // b for d, b in BYTES.items()})


def _by_dtype(r, make):
    """If-chain over the element size: make(E) for each E (keeps products with E linear)."""
    return _table(r.dtype, DTYPES, {d: make(b) for d, b in BYTES.items()})


def _by_row(swizzle_var, make):
    return _table(swizzle_var, SWIZZLES, {s: make(ROW[s]) for s in SWIZZLES})


def want_start(r, j: int):
    """Where the boxes put element (0, j * Kinst) before the swizzle (the recipe layout)."""
    k_major = r.smem + _by_row(r.tma_swizzle, lambda w: (32 * j // w) * r.box_stride + (32 * j) % w)
    mn_major = r.smem + _by_row(r.tma_swizzle, lambda w: _by_dtype(r, lambda e: j * (32 // e) * w))
    return z3.If(r.major == 0, k_major, mn_major)


def start(r, j: int):
    return want_start(r, j) + r.start_err + j * r.step_err


def start_line(j: int):
    """Auxiliary: the 128-byte line of step j's start (defined in the domain)."""
    return z3.Int(f"start_line[{j}]")


def line_offset(r, j: int):
    return start(r, j) - 128 * start_line(j)


def domain(r: Record) -> list:
    """Well-formedness, not rules: enum codes, sizes the spec parses, encodable descriptor fields."""
    sixteen = lambda x: z3.And(x % 16 == 0, _between(x, 0, FIELD_LIMIT - 16))   # noqa: E731
    facts = [_between(r.arch, 0, 2), _between(r.dtype, 0, len(DTYPES) - 1), _between(r.major, 0, 1),
             _between(r.mn, 8, 256), r.mn % 8 == 0, _between(r.steps, 1, MAX_STEPS),
             sixteen(r.smem), sixteen(r.box_stride), sixteen(r.sbo), sixteen(r.lbo),
             z3.If(r.arch == SM90, _between(r.tma_swizzle, 0, 3), _between(r.tma_swizzle, 0, 4)),
             z3.If(r.arch == SM90, _between(r.desc_swizzle, 0, 3), _between(r.desc_swizzle, 0, 4)),
             z3.Or(*[r.inner_bytes == v for v in INNER_BYTES]),
             _between(r.rows, 1, 264), _between(r.box_count, 1, 64),
             _between(r.base_offset, 0, 7),
             r.start_err % 16 == 0, r.step_err % 16 == 0,
             _between(r.start_err, -FIELD_LIMIT, FIELD_LIMIT), _between(r.step_err, -FIELD_LIMIT, FIELD_LIMIT)]
    # bounded work for the labeller: the boxes write at most 1280 bytes per row
    facts.append(z3.Or(*[z3.And(r.inner_bytes == v, r.box_count * v <= 1280) for v in INNER_BYTES]))
    for j in range(MAX_STEPS):
        facts.append(z3.Implies(j < r.steps, sixteen(start(r, j))))
        facts.append(_between(line_offset(r, j), 0, 127))
    facts.append(k_slice_inside_line(r))
    return facts


# --- Rules ----------------------------------------------------------------------------------------------
RULES: dict = {}
_rule = field_model.rule_registry(RULES)


# The boxes (cuTensorMapEncodeTiled limits; the H100's coordinate trap; TMA destination alignment)
@_rule("tma.map.box_range")
def _box_range(r):
    return z3.And(r.inner_bytes <= 256 * elem_bytes(r), r.rows <= 256)


@_rule("tma.map.box_inner_16B")
def _inner_16(r):
    return r.inner_bytes % 16 == 0


@_rule("tma.map.box_swizzle_span")
def _span(r):
    return z3.Implies(r.tma_swizzle != 0, r.inner_bytes <= row_bytes(r.tma_swizzle))


@_rule("tma.load.coord0_16B")
def _coord0(r):
    # box b starts at coordinate b * boxDim[0] along dimension 0: b * inner_bytes bytes
    return z3.Implies(r.box_count >= 2, r.inner_bytes % 16 == 0)


@_rule("tma.box.destination_alignment")
def _destination(r):
    return z3.And(r.smem % 128 == 0, z3.Implies(r.box_count >= 2, r.box_stride % 128 == 0))


# The descriptor and operand rules a recipe can break
@_rule("desc.base_offset.no_swizzle")
def _base_offset_none(r):
    return z3.Implies(r.desc_swizzle == 0, r.base_offset == 0)


@_rule("operand.mn_major.dtype")
def _mn_major_dtype(r):
    return z3.Implies(z3.And(r.major == 1, r.arch == SM90), _is(r.dtype, DTYPES, "bf16", "f16"))


@_rule("operand.swizzle.table54")
def _table54(r):
    """Table 54's MN-major rows: 8/16-bit anything but 128B_atom32B, 32-bit only 128B_atom32B (tcgen05)."""
    atom32 = r.desc_swizzle == SWIZZLES.index("128B_atom32B")
    return z3.Implies(r.major == 1, z3.If(elem_bytes(r) < 4, z3.Not(atom32), z3.Implies(r.arch != SM90, atom32)))


@_rule("operand.swizzle.k_major_atom32")
def _k_major_atom32(r):
    """No K-major 128B_atom32B atom (the swizzle-atom table)."""
    return z3.Implies(r.major == 0, r.desc_swizzle != SWIZZLES.index("128B_atom32B"))


@_rule("operand.sm90.n_extent")
def _sm90_n(r):
    return z3.Implies(z3.And(r.arch == SM90, r.dtype == DTYPES.index("s8")), z3.Or(r.mn <= 32, r.mn % 16 == 0))


@_rule("operand.sm103.kind_i8")
def _sm103_i8(r):
    return z3.Implies(r.arch == SM103, r.dtype != DTYPES.index("s8"))


def k_slice_inside_line(r):
    """Rule operand.k_slice.inside_line, kept in the domain, not in RULES: Z3's optimiser (the coverage
    report) cannot decide its least companions in time, so recipe cases never break it (the desc target
    does)."""
    # with the descriptor's swizzle of W bytes, each start lies at most W - 32 bytes into its W-byte row:
    # intervals of its offset in the 128-byte line (line_offset: no modulo in the term)
    allowed = {"32B": ((0, 16), (32, 48), (64, 80), (96, 112)), "64B": ((0, 48), (64, 112)), "128B": ((0, 112),)}

    def inside(j):
        off = line_offset(r, j)
        return z3.And(*[z3.Implies(r.desc_swizzle == SWIZZLES.index(s), z3.Or(*[z3.And(off >= lo, off < hi)
                                                                                for lo, hi in spans]))
                        for s, spans in allowed.items()])
    return z3.Implies(r.major == 0, z3.And(*[z3.Implies(j < r.steps, inside(j)) for j in range(MAX_STEPS)]))


# The recipe
@_rule("recipe.box.swizzle_matches")
def _swizzle_matches(r):
    return r.desc_swizzle == r.tma_swizzle


@_rule("recipe.box.inner_is_swizzle_row")
def _inner_row(r):
    return r.inner_bytes == row_bytes(r.tma_swizzle)


@_rule("recipe.box.covers_tile")
def _covers(r):
    # K-major: rows = mn, box_count * boxDim[0] = k_tile (32 * steps bytes); MN-major: rows = k_tile,
    # box_count * boxDim[0] = mn
    covers = z3.Or(*[z3.And(r.inner_bytes == v, r.box_count * v ==
                            z3.If(r.major == 0, 32 * r.steps, _by_dtype(r, lambda e: e * r.mn)))
                     for v in INNER_BYTES])
    return z3.And(covers, r.rows == z3.If(r.major == 0, r.mn, _by_dtype(r, lambda e: (32 // e) * r.steps)))


@_rule("recipe.box.stride")
def _stride(r):
    return z3.Implies(r.box_count >= 2, r.box_stride == _by_row(r.tma_swizzle, lambda w: w * r.rows))


@_rule("recipe.swizzle_alignment")
def _alignment(r):
    return z3.Implies(r.tma_swizzle != 0, _by_row_repeat(r) == 0)


def _by_row_repeat(r):
    return _table(r.tma_swizzle, SWIZZLES, {s: (r.smem % REPEAT[s]) if REPEAT[s] else z3.IntVal(0)
                                            for s in SWIZZLES})


@_rule("recipe.k_step.start")
def _start(r):
    return z3.And(r.start_err == 0, z3.Or(r.steps == 1, r.step_err == 0))


def sbo_need(r):
    """(used, value) of SBO in the recipe layout."""
    W, E, kinst = row_bytes(r.tma_swizzle), elem_bytes(r), k_inst(r)
    atom32 = r.tma_swizzle == SWIZZLES.index("128B_atom32B")
    R = z3.If(atom32, 4, 8)
    k_major = (r.mn > 8, 8 * W)
    mn_none = (E * r.mn > 16, r.box_stride)
    mn_swz = (kinst > R, R * W)
    none = r.tma_swizzle == 0
    used = z3.If(r.major == 0, k_major[0], z3.If(none, mn_none[0], mn_swz[0]))
    value = z3.If(r.major == 0, k_major[1], z3.If(none, mn_none[1], mn_swz[1]))
    return used, value


def lbo_need(r):
    W, E, kinst = row_bytes(r.tma_swizzle), elem_bytes(r), k_inst(r)
    none = r.tma_swizzle == 0
    used = z3.If(r.major == 0, none, z3.If(none, kinst > 8, E * r.mn > W))
    value = z3.If(r.major == 0, r.box_stride, z3.If(none, 128, r.box_stride))
    return used, value


@_rule("recipe.k_step.sbo")
def _sbo(r):
    used, value = sbo_need(r)
    return z3.Implies(used, r.sbo == value)


@_rule("recipe.k_step.lbo")
def _lbo(r):
    used, value = lbo_need(r)
    return z3.Implies(used, r.lbo == value)


@_rule("recipe.k_step.base_offset")
def _base_offset(r):
    """The phase is (line - base offset) mod rows: a multiple of the rows changes nothing."""
    rows = _table(r.desc_swizzle, SWIZZLES, {"none": 1, **DESCRIPTOR_PATTERN_ROWS}, 1)
    return r.base_offset % rows == 0


RULE_IDS = tuple(RULES)


def constraints(r: Record) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


TERMS = field_model.Terms(symbolic_record, constraints, domain)     # also the terms the fuzz sampling poses over


def evaluate(values: dict) -> dict:
    """rule id -> whether concrete field values obey it (substituted into the constraints)."""
    return TERMS.evaluate(values)
