"""A descriptor and the tile it is meant to read, as Z3 constraints: the `desc` fuzz target's model.

Written from the PTX sections the rules cite (9.7.15.5.1.2.2 and 9.7.16.4.1 Table 40: descriptor bits;
9.7.15.5 and 9.7.16 Tables 39, 51, 54: operand types, K and swizzles; 9.7.16.3.1-2: LBO / SBO),
independently of spec/mma/descriptor.py, spec/mma/readmap.py and spec/cases/desc_case.py, which label the cases; the
tests compare the two.

The record is field-level. The descriptor: start address, LBO, SBO (bytes), base offset, the raw
swizzle code, the LBO mode bit, the 3 bits [46,49) ("fixed": 0b001 on sm100/sm103, unused on sm90) and
`stray`, which unused or reserved region holds a stray 1 bit (0: none). The tile: a canonical layout
(PTX 9.7.16.3.3) given by its swizzle, start address and its two strides in bytes, which
solver/fuzz/desc.py writes out in CuTe notation. One constraint per rule id (the fuzzer's hints and
anchors: solver/fuzz/desc_sampling.py).

The MMA the operand is B of: on sm100/sm103 its .cta_group (1, 2) and M (64, 128, 256), with N the
operand's MN extent times the .cta_group (each CTA of a pair reads half of B; CUTLASS's 2x1SM MMA traits),
checked against PTX 9.7.16.2.1 Table 39 (M, N and K = 96 per kind and .cta_group) and 9.7.16.10.1 Table 52
(N of a transposed 8-bit B); on sm90 wgmma's M is 64 and it has no .cta_group (both fixed).

Data types: those whose elements fill their 16-byte chunks (T * bits = 128): f16 bf16 tf32 f32 e4m3
e5m2 s8 u8, and e2m1 read dense (kind::mxf4 / mxf4nvf4). The padded sub-byte packings (kind::f8f6f4 of
6- and 4-bit types) place elements at byte offsets a CuTe element layout cannot express.
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model.field import between as _between, is_one_of as _is, table as _table
from solver.model.vocab import (ARCHES, DESCRIPTOR_PATTERN_ROWS, DESCRIPTOR_ROW_BYTES, DESCRIPTOR_SWIZZLES,
                                MMA_DTYPE_BITS, SM90_SWIZZLE_CODES, SM100_SWIZZLE_CODES)

DTYPES = ("f16", "bf16", "tf32", "f32", "e4m3", "e5m2", "s8", "u8", "e2m1")
BITS = {d: MMA_DTYPE_BITS[d] for d in DTYPES}
WGMMA_TYPES = ("f16", "bf16", "tf32", "f32", "e4m3", "e5m2", "s8", "u8")     # PTX 9.7.15.5
WGMMA_TRANSPOSABLE = ("f16", "bf16")                                         # PTX 9.7.15.5.1
KINDS = {"f16": ("f16",), "bf16": ("f16",), "tf32": ("tf32",), "f32": ("tf32",), "e4m3": ("f8f6f4", "mxf8f6f4"),
         "e5m2": ("f8f6f4", "mxf8f6f4"), "s8": ("i8",), "u8": ("i8",), "e2m1": ("mxf4", "mxf4nvf4")}
ALL_KINDS = ("f16", "tf32", "f8f6f4", "mxf8f6f4", "i8", "mxf4", "mxf4nvf4")
MAJORS = ("K", "MN")
SWIZZLES = DESCRIPTOR_SWIZZLES
# Raw descriptor swizzle code -> name: sm90 bits [62,64) (9.7.15.5.1.2.2); sm100 bits [61,64) (Table 40)
SM90_CODES = {code: name for name, code in SM90_SWIZZLE_CODES.items()}
SM100_CODES = {code: name for name, code in SM100_SWIZZLE_CODES.items()}
# The 3 bits [46,49): sm100/sm103's fixed field (Table 40), unused on sm90 (9.7.15.5.1.2.2)
FIXED_BITS = (46, 49)
# Stray-bit regions: (sm90 bit range, sm100 bit range); 0 = no stray bit
STRAY_REGIONS = {1: ((14, 16), (14, 16)), 2: ((30, 32), (30, 32)), 3: ((52, 62), (53, 61))}
FIELD_LIMIT = 1 << 18          # 14-bit fields of 16-byte units


FIELDS = ("arch", "dtype", "kind", "major", "mn", "k", "start", "lbo", "sbo", "base_offset", "swizzle_code",
          "lbo_mode", "fixed", "stray", "tile_swizzle", "tile_start", "tile_lbo", "tile_sbo", "cta_group", "m")
M_VALUES = (64, 128, 256)       # the M the model draws from (Table 39 lists these; 64 and 256 not for every row)
Record = field_model.record_type("Record", FIELDS)
symbolic_record = Record.symbolic





def bits(r):
    return _table(r.dtype, DTYPES, BITS)


def per_chunk(r):
    """T: elements per 16-byte chunk."""
    return _table(r.dtype, DTYPES, {d: 128 // b for d, b in BITS.items()})


row_bytes = field_model.descriptor_row_bytes


def descriptor_swizzle(r):
    """The descriptor's swizzle as a SWIZZLES code; -1 for an invalid sm100 code."""
    sm90 = _table(r.swizzle_code, tuple(range(4)), {c: SWIZZLES.index(n) for c, n in SM90_CODES.items()}, -1)
    sm100 = z3.IntVal(-1)
    for code_, name in SM100_CODES.items():
        sm100 = z3.If(r.swizzle_code == code_, SWIZZLES.index(name), sm100)
    return z3.If(r.arch == 0, sm90, sm100)


def domain(r: Record) -> list:
    """Well-formedness, not rules: enum codes, the 14-bit fields, the tile a canonical layout."""
    sixteen = lambda x: z3.And(x % 16 == 0, _between(x, 0, FIELD_LIMIT - 16))   # noqa: E731
    facts = [_between(r.arch, 0, 2), _between(r.dtype, 0, len(DTYPES) - 1), _between(r.major, 0, 1),
             _between(r.mn, 8, 256), r.mn % 8 == 0, _between(r.k, 1, 256),
             sixteen(r.start), sixteen(r.lbo), sixteen(r.sbo), _between(r.base_offset, 0, 7),
             # sm100 codes 3, 5, 7 name no layout: spec reads such a case as malformed (it cannot be
             # read), so the desc target leaves rule desc.sm100.swizzle_code to `desc decode`
             z3.If(r.arch == 0, _between(r.swizzle_code, 0, 3), _is(r.swizzle_code, tuple(range(8)), 0, 1, 2, 4, 6)),
             _between(r.lbo_mode, 0, 1), z3.Implies(r.arch == 0, r.lbo_mode == 0),
             _between(r.fixed, 0, 7), _between(r.stray, 0, len(STRAY_REGIONS)),
             _between(r.tile_swizzle, 0, len(SWIZZLES) - 1), sixteen(r.tile_start),
             sixteen(r.tile_lbo), sixteen(r.tile_sbo), r.tile_lbo > 0, r.tile_sbo > 0,
             # a K-major tile may be swizzled 128B_atom32B too (the MMA cannot read it: rule
             # operand.swizzle.k_major_atom32), so that a descriptor matching it breaks that rule alone
             _between(r.cta_group, 1, 2), z3.Or(*[r.m == v for v in M_VALUES]),
             z3.Implies(r.arch == SM90, z3.And(r.cta_group == 1, r.m == 64))]
    facts.append(z3.Or(*[z3.And(r.dtype == DTYPES.index(d), _is(r.kind, ALL_KINDS, *KINDS[d])) for d in DTYPES]))
    return facts


def _k_bytes(r):
    """Bytes of K one row reads: whole 16-byte chunks."""
    return ((r.k * bits(r) + 127) / 128) * 16


def sbo_used(r):
    T = per_chunk(r)
    atom32 = _is(r.tile_swizzle, SWIZZLES, "128B_atom32B")
    mn_major = z3.If(r.tile_swizzle == 0, r.mn > T, r.k > z3.If(atom32, 4, 8))
    return z3.If(r.major == 0, r.mn > 8, mn_major)


def lbo_used(r):
    T, W = per_chunk(r), row_bytes(r.tile_swizzle)
    atom = T * W / 16
    k_major = z3.If(r.tile_swizzle == 0, r.k > T, r.k > atom)
    mn_major = z3.If(r.tile_swizzle == 0, r.k > 8, r.mn > atom)
    return z3.If(r.major == 0, k_major, mn_major)


RULES: dict = {}
_rule = field_model.rule_registry(RULES)


SM90, SM103 = ARCHES.index("sm90"), ARCHES.index("sm103")


@_rule("desc.sm90.unused_bits_zero")
def _sm90_unused(r):
    return z3.Implies(r.arch == SM90, z3.And(r.stray == 0, r.fixed == 0))


@_rule("desc.sm100.fixed_bits")
def _sm100_fixed(r):
    return z3.Implies(r.arch != SM90, r.fixed == 1)


@_rule("desc.sm100.reserved_bits_zero")
def _sm100_reserved(r):
    return z3.Implies(r.arch != SM90, r.stray == 0)


@_rule("desc.sm100.swizzle_code")
def _sm100_swizzle_code(r):
    return z3.Implies(r.arch != SM90, z3.And(r.swizzle_code != 3, r.swizzle_code != 5, r.swizzle_code != 7))


@_rule("desc.base_offset.no_swizzle")
def _base_offset_no_swizzle(r):
    return z3.Implies(r.swizzle_code == 0, r.base_offset == 0)


@_rule("desc.lbo_mode.arch")
def _lbo_mode_arch(r):
    return z3.Implies(r.lbo_mode == 1, r.arch == SM103)


@_rule("desc.lbo_mode.absolute.swizzle_128b")
def _lbo_mode_swizzle(r):
    return z3.Implies(r.lbo_mode == 1, descriptor_swizzle(r) == SWIZZLES.index("128B"))


@_rule("desc.lbo_mode.absolute.base_offset_zero")
def _lbo_mode_base_offset(r):
    return z3.Implies(r.lbo_mode == 1, r.base_offset == 0)


@_rule("operand.sm90.dtype")
def _sm90_dtype(r):
    return z3.Implies(r.arch == SM90, _is(r.dtype, DTYPES, *WGMMA_TYPES))


@_rule("operand.mn_major.dtype")
def _mn_major_dtype(r):
    allowed = z3.If(r.arch == SM90, _is(r.dtype, DTYPES, *WGMMA_TRANSPOSABLE), bits(r) >= 8)
    return z3.Implies(r.major == 1, allowed)


@_rule("operand.swizzle.table54")
def _table54(r):
    """Table 54, MN-major rows: 8/16-bit anything but 128B_atom32B, 32-bit only 128B_atom32B (tcgen05)."""
    atom32 = descriptor_swizzle(r) == SWIZZLES.index("128B_atom32B")
    return z3.Implies(r.major == 1, z3.If(bits(r) < 32, z3.Not(atom32), z3.Implies(r.arch != SM90, atom32)))


@_rule("operand.swizzle.k_major_atom32")
def _k_major_atom32(r):
    """The swizzle-atom table has no K-major 128B_atom32B atom."""
    return z3.Implies(r.major == 0, descriptor_swizzle(r) != SWIZZLES.index("128B_atom32B"))


@_rule("operand.instruction_k")
def _instruction_k(r):
    k96 = z3.And(r.arch == SM103, r.dtype == DTYPES.index("e2m1"), r.k == 96)
    return z3.Or(r.k * bits(r) == 256, k96)


@_rule("operand.sm90.n_extent")
def _sm90_n(r):
    integer = _is(r.dtype, DTYPES, "s8", "u8")
    return z3.Implies(r.arch == SM90, z3.Implies(integer, z3.Or(r.mn <= 32, r.mn % 16 == 0)))


@_rule("operand.sm103.kind_i8")
def _sm103_i8(r):
    return z3.Implies(r.arch == SM103, r.kind != ALL_KINDS.index("i8"))


@_rule("operand.lbo_absolute.k_major")
def _absolute_k_major(r):
    return z3.Implies(r.lbo_mode == 1, r.major == 0)


@_rule("operand.lbo_absolute.k48")
def _absolute_k48(r):
    return z3.Implies(r.lbo_mode == 1, z3.And(r.major == 0, _k_bytes(r) == 48))


@_rule("operand.k_slice.inside_line")
def _k_slice(r):
    W = row_bytes(descriptor_swizzle(r))
    applies = z3.And(r.major == 0, descriptor_swizzle(r) > 0, r.lbo_mode == 0)
    return z3.Implies(applies, r.start % W + z3.If(_k_bytes(r) < W, _k_bytes(r), W) <= W)


# --- The MMA's shape (tcgen05 only): PTX 9.7.16.2.1 Table 39, 9.7.16.10.1 Table 52 -----------------------
def instruction_n(r):
    """N of the instruction: the operand's extent, twice it for a CTA pair (each CTA reads half of B)."""
    return z3.If(r.cta_group == 2, 2 * r.mn, r.mn)


def _n_steps(n, step, lowest):
    return z3.And(n % step == 0, _between(n, lowest, 256))


def _dense_k96(r):
    """Dense K = 96: kind::mxf4 / mxf4nvf4 reading 48 bytes of K (the one form that does: Table 44 bit 31)."""
    return z3.And(_is(r.kind, ALL_KINDS, "mxf4", "mxf4nvf4"), _k_bytes(r) == 48)


@_rule("mma.shape.m")
def _shape_m(r):
    block_scaled = _is(r.kind, ALL_KINDS, "mxf8f6f4", "mxf4", "mxf4nvf4")
    one = z3.If(block_scaled, r.m == 128, z3.Or(r.m == 64, r.m == 128))
    return z3.Implies(r.arch != SM90, z3.If(r.cta_group == 1, one, z3.Or(r.m == 128, r.m == 256)))


@_rule("mma.shape.n")
def _shape_n(r):
    n, i8 = instruction_n(r), _is(r.kind, ALL_KINDS, "i8")
    one = z3.If(i8, z3.And(_between(n, 8, 256), z3.Or(z3.And(n % 8 == 0, n <= 32), n % 16 == 0)),
                _n_steps(n, 8, 8))
    two = z3.If(i8, _n_steps(n, 32, 32), _n_steps(n, 16, 16))
    return z3.Implies(r.arch != SM90, z3.If(r.cta_group == 1, one, two))


@_rule("mma.shape.k96.cta_group")
def _shape_k96_cta_group(r):
    return z3.Implies(z3.And(r.arch != SM90, _dense_k96(r)), r.cta_group == 2)


@_rule("mma.shape.k96.m")
def _shape_k96_m(r):
    return z3.Implies(z3.And(r.arch != SM90, _dense_k96(r), r.cta_group == 2), r.m == 256)


@_rule("mma.shape.mn_major_8bit.n")
def _shape_transposed_8bit_n(r):
    n = instruction_n(r)
    applies = z3.And(r.arch != SM90, r.major == 1, bits(r) == 8)
    return z3.Implies(applies, z3.If(r.cta_group == 1, _n_steps(n, 16, 16), _n_steps(n, 32, 32)))


@_rule("desc.tile.swizzle")
def _tile_swizzle(r):
    return descriptor_swizzle(r) == r.tile_swizzle


@_rule("desc.tile.start_address")
def _tile_start(r):
    return r.start == r.tile_start


@_rule("desc.tile.stride_byte_offset")
def _tile_sbo(r):
    return z3.Implies(sbo_used(r), r.sbo == r.tile_sbo)


def _absolute_k_chunks(r):
    """Absolute LBO mode (PTX 9.7.16.3.1.2): a K-major operand's K chunks are read one after the other from
    the start to the end of its 128-byte line (f chunks), the rest one after the other from the address in
    LBO; the tile holds each where it is read (the line counted from the tile's own start). The canonical
    tile (PTX 9.7.16.3.3) holds K chunk c of row 0 at tile_start + 16 (c mod A) + tile_lbo (c div A), A = W/16
    chunks side by side in a swizzle row (1 with no swizzle). Of the n chunks read, then:
      chunks 1 .. min(f, n) - 1 follow each other: min(f, n) <= A, or tile_lbo = 16 A;
      where f < n: chunk f is at LBO, and chunks f + 1 .. n - 1 follow it: (n - 1) div A = f div A, or
      tile_lbo = 16 A.
    (tests/differential.py checks this against spec's chunk-by-chunk reading.)"""
    first = (128 - r.tile_start % 128) / 16          # 1 .. 8
    chunks = _k_bytes(r) / 16
    by_swizzle = []
    for code, name in enumerate(SWIZZLES):
        per_row = DESCRIPTOR_ROW_BYTES[name] // 16
        dense = r.tile_lbo == 16 * per_row
        chunk_first = r.tile_start
        for f in range(1, 9):       # the tile's chunk f, f a known number (keeps the product linear)
            chunk_first = z3.If(first == f, r.tile_start + 16 * (f % per_row) + (f // per_row) * r.tile_lbo,
                                chunk_first)
        in_line = z3.Or(dense, first <= per_row, chunks <= per_row)
        past_line = z3.Or(first >= chunks, z3.And(r.lbo == chunk_first,
                                                  z3.Or(dense, (chunks - 1) / per_row == first / per_row)))
        by_swizzle.append(z3.Implies(r.tile_swizzle == code, z3.And(in_line, past_line)))
    return z3.And(*by_swizzle)


@_rule("desc.tile.leading_byte_offset")
def _tile_lbo(r):
    """LBO is a distance (relative mode, and any MN-major operand), else the K chunks' addresses."""
    absolute_k = z3.And(r.lbo_mode == 1, r.major == 0)
    return z3.If(absolute_k, _absolute_k_chunks(r), z3.Implies(lbo_used(r), r.lbo == r.tile_lbo))


@_rule("desc.tile.base_offset")
def _tile_base_offset(r):
    """The phase is (line - base offset) mod rows: a multiple of the rows changes nothing."""
    rows = _table(descriptor_swizzle(r), SWIZZLES, {"none": 1, **DESCRIPTOR_PATTERN_ROWS}, 1)
    return r.base_offset % rows == 0


# --- The tcgen05 instruction descriptor the case's MMA carries: PTX 9.7.16.4.2 Tables 42-44 ----------------
@_rule("idesc.transpose")
def _idesc_transpose(r):
    """tcgen05's instruction descriptor says B is MN-major by its transpose bit (Table 42), which kinds
    mxf4 / mxf4nvf4 do not have (Table 44)."""
    return z3.Implies(z3.And(r.arch != SM90, r.major == 1), z3.Not(_is(r.kind, ALL_KINDS, "mxf4", "mxf4nvf4")))


@_rule("idesc.k96.arch")
def _idesc_k96(r):
    """The instruction descriptor's bit 31 (Table 44: dense K = 96, a 48-byte K) is sm103's only."""
    return z3.Implies(z3.And(r.arch != SM90, _dense_k96(r)), r.arch == SM103)


RULE_IDS = tuple(RULES)


def constraints(r: Record) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


def evaluate(values: dict) -> dict:
    """rule id -> whether concrete field values obey it (substituted into the constraints)."""
    r = symbolic_record()
    return field_model.evaluate(r, constraints(r), values)
