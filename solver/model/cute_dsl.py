"""CUTLASS CuTe DSL parameters of one MMA operand in shared memory, as Z3 constraints: the `cute-dsl` fuzz
target's model.

A record is the CuTe DSL adapter's case (solver/fuzz/adapters/cute_dsl.py): the arch (sm90: wgmma built
by `hopper_helpers`, sm100: tcgen05.mma by `blackwell_helpers`), which operand, its element type, its
major ("K" or "MN"; the other operand is K-major), the SmemLayoutAtomKind (or the helper's own choice),
the MMA tiler [M, N, K], .cta_group (sm100), the tile's shared-memory byte address and the stages.

Written from the PTX ISA, independently of spec/ (which labels the cases through the judge,
solver/fuzz/compilers/cute_dsl.py; the tests compare the two):
  9.7.15.5.1             wgmma transposes (MN-major) f16 / bf16 only;
  9.7.15.5               wgmma N: at most 256; integer types 8, 16, 24, 32 or multiples of 16;
  9.7.16.10.3 Table 54   tcgen05 MN-major: 8/16-bit every swizzle but 128B with 32B atomicity, 32-bit
                         only that one (the atom MN_SW128_32B);
  9.7.16.3.1.2           a K-major swizzled row's 32-byte K slice stays inside its W-byte swizzle row:
                         k-block kb's descriptor starts at smem_base + 32 kb (mod W, the DSL's k-blocks,
                         checked on the recorded campaign), so a base 16 bytes short of a 32-byte step
                         crosses as soon as a k-block reaches offset W - 16;
  9.7.16.2.1 Table 39    tcgen05 M: .cta_group::1 64 or 128, ::2 128 or 256; N: ::1 8..256 step 8
                         (kind::i8: 8, 16, 24, 32, then 48..256 step 16), ::2 16..256 step 16
                         (kind::i8: 32..256 step 32);
  9.7.16.10.1 Table 52   an MN-major 8-bit B: N 16..256 step 16 (::1), 32..256 step 32 (::2).

Domain (not rules: the judge's `legality` gives them no rule id, or the adapter cannot express them):
the atom's major is the operand's; sm90 has no MN_SW128_32B and no .cta_group::2; the operand's extent
(A: M, B: N, per CTA) is a multiple of 8 and a whole number of atoms, K a whole number of atoms and of
instruction Ks (32 bytes); on sm90 M is a multiple of 64 and N of 8; the base is 16-byte aligned.
The helper's own atom (`atom` 0) is its documented heuristic: the widest swizzle whose row divides the
major extent's bytes, MN_SW128_32B for a 32-bit MN-major operand on sm100. One constraint per rule id
(the fuzzer's hints and anchors: solver/fuzz/cute_dsl_sampling.py).
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model.field import between as _between, is_one_of, table

ARCHES = ("sm90", "sm100")
OPERANDS = ("A", "B")
MAJORS = ("K", "MN")
DTYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}
ATOMS = (None, "K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128",
         "MN_SW128_32B")                     # index 0: the helper's own choice
ATOM_WIDTH = {"K_INTER": 16, "K_SW32": 32, "K_SW64": 64, "K_SW128": 128, "MN_INTER": 16, "MN_SW32": 32,
              "MN_SW64": 64, "MN_SW128": 128, "MN_SW128_32B": 128}
ATOM32 = ATOMS.index("MN_SW128_32B")
MAX_EXTENT = 512                             # M, N, K in 1..MAX_EXTENT
MAX_STAGES = 4
SMEM_BYTES = 227 * 1024                      # smem_base in [0, SMEM_BYTES), 16-byte aligned
FIELDS = ("arch", "operand", "dtype", "major", "atom", "m", "n", "k", "cta_group", "smem_base", "stages")

Record = field_model.record_type("CuteDslRecord", FIELDS)


def symbolic_record(prefix: str = ""):
    return Record.symbolic(prefix)


def on(r, arch: str):
    return r.arch == ARCHES.index(arch)


def is_a(r):
    return r.operand == OPERANDS.index("A")


def mn_major(r):
    return r.major == MAJORS.index("MN")


def bits(r):
    return table(r.dtype, DTYPES, BITS)


def dtype_is(r, *names):
    return is_one_of(r.dtype, DTYPES, *names)


def instruction_k(r):
    """K of one MMA: 32 bytes per row."""
    return table(r.dtype, DTYPES, {d: 256 // b for d, b in BITS.items()})


def tile_mn(r):
    """The tiler's extent of the operand: M (A) or N (B)."""
    return z3.If(is_a(r), r.m, r.n)


def extent(r):
    """The operand's per-CTA extent: with .cta_group::2 each CTA holds half of it."""
    return z3.If(r.cta_group == 2, tile_mn(r) / 2, tile_mn(r))


def _helper_atom(r):
    """The helper's heuristic: the widest swizzle row (in bits) dividing the major extent's bits."""
    size = z3.If(mn_major(r), extent(r), r.k) * bits(r)
    base = z3.If(mn_major(r), ATOMS.index("MN_INTER"), ATOMS.index("K_INTER"))
    pick = z3.If(size % 1024 == 0, base + 3, z3.If(size % 512 == 0, base + 2, z3.If(size % 256 == 0, base + 1, base)))
    return z3.If(z3.And(mn_major(r), bits(r) == 32, on(r, "sm100"), size % 1024 == 0), ATOM32, pick)


def atom(r):
    """The atom the operand's layout is built of (index in ATOMS, never 0)."""
    return z3.If(r.atom == 0, _helper_atom(r), r.atom)


def width(r):
    """The atom's row bytes W (16: no swizzle)."""
    return _width_of(atom(r))


def _width_of(a):
    term = z3.IntVal(16)
    for i, name in enumerate(ATOMS[1:], start=1):
        term = z3.If(a == i, ATOM_WIDTH[name], term)
    return term


def _divides(x, term, values) -> z3.BoolRef:
    """x is a multiple of `term`, whose value is one of `values` (kept linear)."""
    return z3.Or(*[z3.And(term == v, x % v == 0) for v in values])


def domain(r) -> list:
    w, b, a = width(r), bits(r), atom(r)
    atom_elems = z3.If(b == 8, w, z3.If(b == 16, w / 2, w / 4))        # elements per atom row
    mn_atom, k_atom = z3.If(mn_major(r), atom_elems, 8), z3.If(mn_major(r), 8, atom_elems)
    return [_between(r.arch, 0, len(ARCHES) - 1), _between(r.operand, 0, 1), _between(r.major, 0, 1),
            _between(r.dtype, 0, len(DTYPES) - 1), _between(r.atom, 0, len(ATOMS) - 1),
            _between(r.m, 1, MAX_EXTENT), _between(r.n, 1, MAX_EXTENT), _between(r.k, 1, MAX_EXTENT),
            z3.Or(r.cta_group == 1, r.cta_group == 2), _between(r.stages, 1, MAX_STAGES),
            _between(r.smem_base, 0, SMEM_BYTES - 1), r.smem_base % 16 == 0,
            # the atom's major is the operand's (the helper's own choice always is)
            z3.If(mn_major(r), a >= ATOMS.index("MN_INTER"), a < ATOMS.index("MN_INTER")),
            z3.Implies(on(r, "sm90"), z3.And(r.atom != ATOM32, r.cta_group == 1, r.m % 64 == 0, r.n % 8 == 0)),
            tile_mn(r) % r.cta_group == 0, extent(r) % 8 == 0,
            _divides(extent(r), mn_atom, (4, 8, 16, 32, 64, 128)), _divides(r.k, k_atom, (4, 8, 16, 32, 64, 128)),
            _divides(r.k, instruction_k(r), (8, 16, 32))]


RULES: dict = {}
_rule = field_model.rule_registry(RULES)


@_rule("operand.mn_major.dtype")
def _mn_major_dtype(r):
    # 9.7.15.5.1: wgmma transposes .f16/.bf16 only; tcgen05 (Table 51): every type here
    return z3.Implies(z3.And(on(r, "sm90"), mn_major(r)), dtype_is(r, "f16", "bf16"))


@_rule("operand.swizzle.table54")
def _table54(r):
    # Table 54: MN-major 8/16-bit: all but 128B with 32B atomicity; 32-bit: only that one
    return z3.Implies(z3.And(on(r, "sm100"), mn_major(r)),
                      z3.If(bits(r) < 32, atom(r) != ATOM32, atom(r) == ATOM32))


@_rule("operand.sm90.n_extent")
def _sm90_n(r):
    # 9.7.15.5: N at most 256 (a multiple of 8: domain); integer types 8, 16, 24, 32 or multiples of 16
    return z3.Implies(on(r, "sm90"), z3.And(r.n <= 256, z3.Or(z3.Not(dtype_is(r, "s8", "u8")), r.n <= 32,
                                                              r.n % 16 == 0)))


@_rule("operand.k_slice.inside_line")
def _inside_line(r):
    # 9.7.16.3.1.2: k-block kb starts at smem_base + 32 kb; its 32-byte slice must not cross W
    w = width(r)
    offset = z3.If(w == 128, r.smem_base % 128, z3.If(w == 64, r.smem_base % 64, r.smem_base % 32))
    first_crossing = (w - 16 - offset) / 32                 # the k-block starting at W - 16
    k_blocks = r.k / instruction_k(r)
    crosses = z3.And(z3.Not(mn_major(r)), w >= 32, r.smem_base % 32 == 16, first_crossing < k_blocks)
    return z3.Not(crosses)


@_rule("mma.shape.m")
def _m(r):
    # Table 39: .cta_group::1 M 64 or 128, ::2 128 or 256
    return z3.Implies(on(r, "sm100"), z3.If(r.cta_group == 1, z3.Or(r.m == 64, r.m == 128),
                                            z3.Or(r.m == 128, r.m == 256)))


@_rule("mma.shape.n")
def _n(r):
    # Table 39: ::1 N 8..256 step 8 (kind::i8 8, 16, 24, 32, 48..256 step 16); ::2 16..256 step 16
    # (kind::i8 32..256 step 32)
    n = r.n
    one = z3.And(n % 8 == 0, _between(n, 8, 256),
                 z3.Implies(dtype_is(r, "s8", "u8"), z3.Or(n <= 32, z3.And(n >= 48, n % 16 == 0))))
    two = z3.And(z3.If(dtype_is(r, "s8", "u8"), n % 32 == 0, n % 16 == 0), _between(n, 16, 256))
    return z3.Implies(on(r, "sm100"), z3.If(r.cta_group == 1, one, two))


@_rule("mma.shape.mn_major_8bit.n")
def _mn_major_8bit_n(r):
    # Table 52: an MN-major 8-bit B: ::1 N 16..256 step 16, ::2 32..256 step 32
    n = r.n
    legal = z3.If(r.cta_group == 1, z3.And(n % 16 == 0, _between(n, 16, 256)), z3.And(n % 32 == 0, _between(n, 32, 256)))
    return z3.Implies(z3.And(on(r, "sm100"), z3.Not(is_a(r)), mn_major(r), bits(r) == 8), legal)


RULE_IDS = tuple(RULES)


def constraints(r) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


TERMS = field_model.Terms(symbolic_record, constraints, domain)     # also the terms the fuzz sampling poses over
evaluate, violated, in_domain = TERMS.evaluate, TERMS.violated, TERMS.in_domain
