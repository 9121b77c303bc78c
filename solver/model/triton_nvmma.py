"""Triton's NVMMASharedLayout parameters for one MMA operand, as Z3 constraints: the `triton-nvmma` fuzz
target's model.

A record is the adapter's case (solver/fuzz/adapters/triton_gluon.py): the arch (sm90: one warpgroup's
wgmma, M = 64; sm100: tcgen05.mma, M = 128, .cta_group::1), the element type, which operand (A is
[M, K], B is [K, N], as Gluon allocates them), its shape [rows, cols], the swizzle width in bytes,
the layout's element bitwidth and whether the tile is transposed. A untransposed is K-major, B
untransposed is MN-major (its contiguous dimension is N); `transposed` flips both.

Written from the PTX ISA, independently of spec/ (which labels the cases through the judge,
solver/fuzz/compilers/triton.py; the tests compare the two):
  9.7.15.5 / 9.7.16.2.1  K of one MMA is 32 bytes per row: the operand's K must be a whole number of
                         instruction Ks;
  9.7.15.5               wgmma N: a multiple of 8 up to 256; integer types 8, 16, 24 or multiples of 16;
  9.7.15.5.1             wgmma transposes (MN-major) f16 / bf16 only;
  9.7.16.10.3 Table 54   tcgen05 MN-major 32-bit operands need 128B swizzling with 32B atomicity (which
                         NVMMASharedLayout does not have); 8- and 16-bit ones take every other swizzle;
  9.7.16 Table 51        tcgen05 MN-major: 8-, 16- and 32-bit types;
  9.7.16.2.1 Table 39    tcgen05 .cta_group::1 M 64 or 128; N 8..256 step 8 (kind::i8: 8, 16, 24, 32,
                         then 48..256 step 16);
  9.7.16.10.1 Table 52   an MN-major 8-bit B takes N 16..256 step 16 with .cta_group::1.

Domain (not rules): element_bitwidth is the dtype's (the judge does not judge a layout written for
another type: spec_verdict answers legal None); B's MN extent is a multiple of 8 (9.7.16.3.3: any
other is malformed input, the judge raises rather than reports a rule); on sm90 A's M is the
kernel's 64 (one warpgroup's wgmma; no catalogue rule). One constraint per rule id (the fuzzer's hints
and anchors: solver/fuzz/triton_nvmma_sampling.py).
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model.field import between as _between, is_one_of, table

ARCHES = ("sm90", "sm100")
DTYPES = ("f16", "bf16", "e4m3", "e5m2", "f32", "s8")
BITS = {"f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "f32": 32, "s8": 8}
OPERANDS = ("A", "B")
SWIZZLE_WIDTHS = (0, 32, 64, 128)           # bytes (0: no swizzle)
ELEMENT_BITWIDTHS = (8, 16, 32, 64)
MAX_EXTENT = 1024                           # rows, cols in 1..MAX_EXTENT
KERNEL_M = {"sm90": 64, "sm100": 128}
FIELDS = ("arch", "dtype", "operand", "rows", "cols", "swizzle_byte_width", "element_bitwidth", "transposed")

Record = field_model.record_type("TritonNvmmaRecord", FIELDS)


def symbolic_record(prefix: str = ""):
    return Record.symbolic(prefix)


def bits(r):
    return table(r.dtype, DTYPES, BITS)


def is_a(r):
    return r.operand == OPERANDS.index("A")


def mn(r):
    """The operand's M (A) or N (B) extent: A [M, K], B [K, N]."""
    return z3.If(is_a(r), r.rows, r.cols)


def k(r):
    return z3.If(is_a(r), r.cols, r.rows)


def mn_major(r):
    """A transposed, or B untransposed."""
    return z3.If(is_a(r), r.transposed == 1, r.transposed == 0)


def on(r, arch: str):
    return r.arch == ARCHES.index(arch)


def dtype_is(r, *names):
    return is_one_of(r.dtype, DTYPES, *names)


def instruction_k(r):
    """K of one MMA: 32 bytes per row."""
    return table(r.dtype, DTYPES, {d: 256 // b for d, b in BITS.items()})


def domain(r) -> list:
    return [_between(r.arch, 0, len(ARCHES) - 1), _between(r.dtype, 0, len(DTYPES) - 1),
            _between(r.operand, 0, 1), _between(r.transposed, 0, 1),
            z3.Or(*[r.swizzle_byte_width == w for w in SWIZZLE_WIDTHS]),
            r.element_bitwidth == bits(r),
            _between(r.rows, 1, MAX_EXTENT), _between(r.cols, 1, MAX_EXTENT),
            z3.Implies(z3.Not(is_a(r)), r.cols % 8 == 0),
            z3.Implies(z3.And(is_a(r), on(r, "sm90")), r.rows == KERNEL_M["sm90"])]


RULES: dict = {}
_rule = field_model.rule_registry(RULES)


@_rule("operand.instruction_k")
def _instruction_k(r):
    # 9.7.15.5 / 9.7.16.2.1: each MMA reads 32 bytes of K per row; the tile's K is a whole number of them
    return k(r) % instruction_k(r) == 0


@_rule("operand.mn_major.dtype")
def _mn_major_dtype(r):
    # 9.7.15.5.1: wgmma transposes .f16/.bf16 only; tcgen05 (Table 51): 8-, 16- and 32-bit types, all here
    return z3.Implies(z3.And(mn_major(r), on(r, "sm90")), dtype_is(r, "f16", "bf16"))


@_rule("operand.swizzle.table54")
def _table54(r):
    # Table 54: a tcgen05 MN-major 32-bit operand needs 128B_atom32B, a swizzle no width here names
    return z3.Not(z3.And(on(r, "sm100"), mn_major(r), bits(r) == 32))


@_rule("operand.sm90.n_extent")
def _sm90_n(r):
    # 9.7.15.5: B's N is a wgmma N: at most 256 (multiple of 8: domain); integers 8, 16, 24 or k*16
    n = mn(r)
    return z3.Implies(z3.And(on(r, "sm90"), z3.Not(is_a(r))),
                      z3.And(n <= 256, z3.Or(z3.Not(dtype_is(r, "s8")), n <= 32, n % 16 == 0)))


@_rule("mma.shape.m")
def _m(r):
    # Table 39, .cta_group::1: M is 64 or 128 (A's rows; B's kernel has M = 128)
    return z3.Implies(z3.And(on(r, "sm100"), is_a(r)), z3.Or(r.rows == 64, r.rows == 128))


@_rule("mma.shape.n")
def _n(r):
    # Table 39, .cta_group::1: N 8..256 step 8; kind::i8 8, 16, 24, 32, then 48..256 step 16 (A's kernel: N 128)
    n = mn(r)
    legal = z3.And(n % 8 == 0, _between(n, 8, 256),
                   z3.Implies(dtype_is(r, "s8"), z3.Or(n <= 32, z3.And(n >= 48, n % 16 == 0))))
    return z3.Implies(z3.And(on(r, "sm100"), z3.Not(is_a(r))), legal)


@_rule("mma.shape.mn_major_8bit.n")
def _mn_major_8bit_n(r):
    # Table 52: an MN-major 8-bit B, .cta_group::1: N 16..256 step 16
    n = mn(r)
    return z3.Implies(z3.And(on(r, "sm100"), z3.Not(is_a(r)), mn_major(r), bits(r) == 8),
                      z3.And(n % 16 == 0, _between(n, 16, 256)))


RULE_IDS = tuple(RULES)


def constraints(r) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


TERMS = field_model.Terms(symbolic_record, constraints, domain)     # also the terms the fuzz sampling poses over
evaluate, violated, in_domain = TERMS.evaluate, TERMS.violated, TERMS.in_domain
