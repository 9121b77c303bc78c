"""bounds.py: the few values a register computed from an unknown input takes, proved by Z3, checked by
enumeration; and integers.py, the exact translation of bit-vector terms to integers it relies on.
"""
from __future__ import annotations

import random
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)

import z3

from solver.cli.ptx import descriptors_document
from solver.kernel import analysis
from solver.kernel.symbolic import bounds, integers
from spec.mma import descriptor as desc_mod

# --- the integer translation against Z3's own bit-vector evaluation ---------------------------------------


def _random_term(rng: random.Random, variables: list, depth: int):
    """A bit-vector term of the operations integers.py writes (or NotLinear ones, to see them refused)."""
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.7:
            return rng.choice(variables)
        width = rng.choice(variables).size()
        return z3.BitVecVal(rng.getrandbits(width), width)
    a = _random_term(rng, variables, depth - 1)
    w = a.size()
    constant = z3.BitVecVal(rng.choice([0, 1, 3, 6, 7, 255, rng.getrandbits(w)]) % (1 << w), w)
    choice = rng.randrange(17)
    if choice == 0:
        return a + _fit(_random_term(rng, variables, depth - 1), w)
    if choice == 1:
        return a - _fit(_random_term(rng, variables, depth - 1), w)
    if choice == 2:
        return -a
    if choice == 3:
        return a * constant
    if choice == 4:
        low = rng.randrange(w)
        return z3.Extract(rng.randrange(low, w), low, a)
    if choice == 5:
        return z3.Concat(a, rng.choice(variables))
    if choice == 6:
        return z3.ZeroExt(rng.choice([1, 8, 32]), a)
    if choice == 7:
        return z3.SignExt(rng.choice([1, 8, 32]), a)
    if choice == 8:
        return z3.LShR(a, z3.BitVecVal(rng.randrange(w + 2), w))
    if choice == 9:
        return a << z3.BitVecVal(rng.randrange(w + 2), w)
    if choice == 10:
        return a >> z3.BitVecVal(rng.randrange(w + 2), w)
    if choice == 11:
        k = rng.randrange(1, w) if w > 1 else 1
        mask = (1 << k) - 1 if rng.random() < 0.5 else ((1 << w) - 1) ^ ((1 << k) - 1)
        return a & z3.BitVecVal(mask, w)
    if choice == 12:
        divisor = z3.BitVecVal(rng.choice([1, 3, 6, 7, (1 << w) - 3]) % (1 << w) or 1, w)
        return rng.choice([z3.UDiv, z3.URem, lambda x, y: x / y, z3.SRem])(a, divisor)
    if choice == 13:
        b = _fit(_random_term(rng, variables, depth - 1), w)
        return z3.If(rng.choice([z3.ULT, z3.UGE, lambda x, y: x < y, lambda x, y: x >= y,
                                 lambda x, y: x == y])(a, b), a, b)
    if choice == 14:
        return ~a
    if choice == 15:
        return a * _fit(rng.choice(variables), w)             # a product of two unknowns: NotLinear
    return a | constant                                       # an or: NotLinear


def _fit(term, width):
    have = term.size()
    if have == width:
        return term
    return z3.Extract(width - 1, 0, term) if have > width else z3.ZeroExt(width - have, term)


def test_the_integer_translation_is_exact():
    """For random terms and random assignments, the integer term's value is the bit-vector term's
    unsigned value; terms it cannot write raise NotLinear (and are counted, so both paths are seen)."""
    rng = random.Random(26)
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 16)
    translated = refused = 0
    for _ in range(400):
        term = _random_term(rng, [x, y], 4)
        translation = integers.Translation()
        try:
            as_integer = translation.integer(term)
        except integers.NotLinear:
            refused += 1
            continue
        translated += 1
        ix, iy = translation.variables.get("x"), translation.variables.get("y")
        for _ in range(5):
            vx, vy = rng.choice([0, 1, 2**31, 2**32 - 1, rng.getrandbits(32)]), rng.getrandbits(16)
            expected = z3.simplify(z3.substitute(term, (x, z3.BitVecVal(vx, 32)), (y, z3.BitVecVal(vy, 16))))
            pairs = [(v, z3.IntVal(n)) for v, n in ((ix, vx), (iy, vy)) if v is not None]
            got = z3.simplify(z3.substitute(as_integer, *pairs) if pairs else as_integer)
            assert got.as_long() == expected.as_long(), (term, vx, vy)
    assert translated > 150 and refused > 20


# --- the compiled term (solver/fast/kernel_symbolic_bounds.py) against Z3's substitute and simplify ------


def _any_term(rng: random.Random, variables: list, depth: int):
    """A bit-vector term of every operation the compiled evaluator writes: _random_term's, and divisions and
    remainders by values (0 among them), smod, xor, and, or, signed and boolean conditions."""
    if depth == 0 or rng.random() < 0.3:
        return _random_term(rng, variables, 1)
    a = _any_term(rng, variables, depth - 1)
    b = _fit(_any_term(rng, variables, depth - 1), a.size())
    choice = rng.randrange(8)
    if choice == 0:
        return rng.choice([z3.UDiv, z3.URem, lambda x, y: x / y, z3.SRem, lambda x, y: x % y])(a, b)
    if choice == 1:
        return rng.choice([lambda x, y: x ^ y, lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x * y])(a, b)
    if choice == 2:
        condition = rng.choice([z3.ULE, z3.UGT, lambda x, y: x <= y, lambda x, y: x > y, lambda x, y: x != y])(a, b)
        other = rng.choice([z3.ULT, lambda x, y: x == y])(b, a)
        return z3.If(rng.choice([z3.And, z3.Or])(condition, z3.Not(other)), a, b)
    if choice == 3:
        return z3.Concat(a, b)
    if choice in (4, 5):
        return a << b if choice == 4 else z3.LShR(a, b) if rng.random() < 0.5 else a >> b
    return _random_term(rng, variables, depth)


def test_the_compiled_term_gives_z3s_values():
    """The fast term_evaluator (a term compiled to Python) gives what Z3's substitute and simplify give,
    on random terms of every operation it compiles, at edge and random values (a division by 0 among
    them: the reference's value there), and a term it cannot compile takes the reference."""
    from spec import fast
    import solver.fast.kernel_symbolic_bounds as compiled
    rng = random.Random(30)
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 16)
    assert fast.fastest(bounds.term_evaluator) is compiled.term_evaluator
    compared = by_zero = 0
    for _ in range(300):
        term = z3.simplify(_any_term(rng, [x, y], 4)) if rng.random() < 0.3 else _any_term(rng, [x, y], 4)
        variables = [x, y]
        fast_value, reference = compiled.term_evaluator(term, variables), bounds.term_evaluator(term, variables)
        for _ in range(6):
            values = [rng.choice([0, 1, 2**31, 2**32 - 1, rng.getrandbits(32)]),
                      rng.choice([0, 1, 2**15, 2**16 - 1, rng.getrandbits(16)])]
            try:
                compiled._compile(term, variables, lambda v: None)(values)
            except compiled._Declined:
                pass
            else:
                by_zero += compiled._compile(term, variables, lambda v: "by zero")(values) == "by zero"
            assert fast_value(values) == reference(values), (term, values)
            compared += 1
    assert compared > 1000 and by_zero > 0
    # an operation not compiled (a rotation): the reference answers
    rotated = z3.RotateLeft(x, 3)
    assert compiled.term_evaluator(rotated, [x])([0x80000001]) == 0x0000000C


# --- bounds: proved sets equal to enumeration ------------------------------------------------------------


def _values_by_enumeration(term, variable, width):
    return {z3.simplify(z3.substitute(term, (variable, z3.BitVecVal(v, width)))).as_long()
            for v in range(1 << width)}


def test_a_multiply_high_remainder_is_proved_to_its_exact_values():
    """x % 6 as compilers write it for signed 16-bit x (mulhi by ceil(2^16 / 6) = 10923, plus the sign):
    the proved set is the enumerated one, -5..5."""
    x = z3.BitVec("x", 16)
    high = z3.Extract(31, 16, z3.SignExt(16, x) * z3.BitVecVal(10923, 32))
    remainder = x - (high + z3.LShR(high, 15)) * 6
    expected = _values_by_enumeration(remainder, x, 16)
    assert {v if v < 2**15 else v - 2**16 for v in expected} == set(range(-5, 6))
    assert bounds._all_values(remainder, {0}) == expected


def test_a_term_with_many_values_is_not_bounded():
    x = z3.BitVec("x", 16)
    assert bounds._all_values(x & 0x7F, {0}) is None                  # 128 values: past MAX_VALUES
    assert bounds._all_values(x & 0x3F, {0}) == set(range(64))


# --- in a kernel: a stage computed from a parameter ---------------------------------------------------------

STAGED_BY_A_PARAMETER = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry staged(.param .u32 k_tiles)
.reqntid 128
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<33>;
  .shared .align 1024 .b8 smem[65536];
  ld.param.u32 %r1, [k_tiles];
  and.b32 %r2, %r1, 3;                    // CUTLASS: the first stage, k_tiles & (S - 1)
  mul.hi.s32 %r3, %r1, 715827883;         // quack: k_tiles % 6 through a multiply-high
  shr.u32 %r4, %r3, 31;
  add.s32 %r5, %r3, %r4;
  mul.lo.s32 %r6, %r5, 6;
  sub.s32 %r7, %r1, %r6;
  bra.uni $L_use;
$L_use:
  mov.u32 %r8, smem;
  shl.b32 %r9, %r2, 12;                   // A: 4 KB a stage
  add.s32 %r10, %r8, %r9;
  shr.u32 %r11, %r10, 4;
  and.b32 %r12, %r11, 16383;
  cvt.u64.u32 %rd1, %r12;
  or.b64 %rd2, %rd1, 4611686293305360384; // 128B swizzle, SBO 1024, LBO 16
  mad.lo.s32 %r13, %r7, 1024, 32768;      // B: 1 KB a stage, from 32 KB; a negative stage reads below
  add.s32 %r14, %r8, %r13;
  shr.u32 %r15, %r14, 4;
  and.b32 %r16, %r15, 16383;
  cvt.u64.u32 %rd3, %r16;
  or.b64 %rd4, %rd3, 4611686293305360384;
  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18, %f19, %f20, %f21, %f22, %f23, %f24, %f25, %f26, %f27, %f28, %f29, %f30, %f31, %f32}, %rd2, %rd4, 1, 1, 1, 0, 0;
  ret;
}
"""


def test_a_stage_from_a_parameter_gives_known_descriptors():
    """With no --param, the stage k_tiles & 3 has 4 values and k_tiles % 6 (signed) 11: every descriptor
    is known, and the sets are exactly those (PTX ISA 9.7.1: and, mul.hi, rem's truncation)."""
    document = descriptors_document(analysis.analyse(STAGED_BY_A_PARAMETER, any_launch="always"),
                                    with_addresses=False)
    (site,) = document["sites"]
    sets = site["iterations"]["any_launch"]
    base = document["shared"]["staged"]["smem"]
    word = lambda offset: int(desc_mod.encode("sm90", (base + offset) & 0x3FFFF, 16, 1024, "128B").hex, 16)  # noqa
    assert sets["a"]["known"] and sets["b"]["known"]
    assert {int(v, 16) for v in sets["a"]["values"]} == {word(0x1000 * s) for s in range(4)}
    assert {int(v, 16) for v in sets["b"]["values"]} == {word(0x8000 + 0x400 * s)
                                                          for s in range(-5, 6)}


ACROSS_BLOCKS = STAGED_BY_A_PARAMETER.replace(
    """  mul.lo.s32 %r6, %r5, 6;
  sub.s32 %r7, %r1, %r6;
  bra.uni $L_use;
$L_use:""",
    """  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_use;                        // the quotient above, the remainder in a block of its own
  mov.u32 %r20, 1;
$L_use:
  mul.lo.s32 %r6, %r5, 6;
  sub.s32 %r7, %r1, %r6;""").replace(".reg .b64 %rd<8>;", ".reg .b64 %rd<8>;\n  .reg .pred %p<2>;").replace(
    "  wgmma.mma_async", "  bra.uni $L_mma;                         // (bounds are taken where a block ends)\n$L_mma:\n"
    "  wgmma.mma_async")


def test_a_remainder_of_a_quotient_from_an_earlier_block_is_bounded():
    """quack writes q = k / 6 in one block and k - 6q in the next: the block alone sees two unknown
    inputs; their only definitions, in a block that comes first in every run, make it k % 6 again."""
    assert "$L_use:\n  mul.lo.s32" in ACROSS_BLOCKS
    document = descriptors_document(analysis.analyse(ACROSS_BLOCKS, any_launch="always"), with_addresses=False)
    (site,) = document["sites"]
    sets = site["iterations"]["any_launch"]
    assert sets["b"]["known"] and sets["b"]["count"] == 11


def test_a_register_a_call_returns_into_is_not_its_value_before_the_call():
    """PTX ISA 9.7.12.2: `call (%r2), f, ()` writes %r2 (a .func's .reg return). Before this was read,
    the executor and the sets kept %r2's value from before the call, and A's descriptor came out known
    (and wrong); the call's result is not modelled, so it is unknown, with that reason."""
    kernel = STAGED_BY_A_PARAMETER.replace(
        ".visible .entry staged", ".func (.reg .b32 out) other()\n{\n  mov.u32 out, 0;\n  ret;\n}\n.visible .entry staged"
    ).replace("  shl.b32 %r9, %r2, 12;", "  mov.u32 %r2, 1;\n  call (%r2), other, ();\n  shl.b32 %r9, %r2, 12;")
    assert "call (%r2)" in kernel
    document = descriptors_document(analysis.analyse(kernel, any_launch="always"), with_addresses=False)
    (site,) = [s for s in document["sites"] if s["function"] == "staged"]
    assert not site["operands"]["a"]["known"]
    assert "call" in site["iterations"]["any_launch"]["a"]["unknown"]


def _graph(body: str):
    from solver.kernel.frontend import cfg, source
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %r<4>;\n"
            " .reg .pred %p<3>;\n" + body + "}\n")
    return cfg.build(source.parse(text).functions[0].statements)


def test_a_jump_into_a_loop_is_not_reducible_and_nothing_is_substituted_across_blocks():
    """A cycle entered at two blocks (B and C, each reached from the entry) has no natural loop: "the
    same loops" says nothing there, so bounds.Definitions substitutes no definition in such a graph."""
    irreducible = _graph(" setp.eq.s32 %p1, %r1, 0;\n @%p1 bra C;\nB:\n add.s32 %r2, %r2, 1;\n"
                         "C:\n add.s32 %r3, %r2, 1;\n setp.eq.s32 %p2, %r3, 9;\n @%p2 bra B;\n ret;\n")
    assert not irreducible.reducible
    assert bounds.Definitions(irreducible).precedes(0, len(irreducible.statements) - 1) is False
    plain_loop = _graph(" mov.u32 %r2, 0;\nL:\n add.s32 %r2, %r2, 1;\n setp.lt.s32 %p1, %r2, 9;\n @%p1 bra L;\n ret;\n")
    assert plain_loop.reducible and len(plain_loop.loops) == 1


def test_the_corpus_kernels_are_reducible():
    import lzma
    from solver.kernel.frontend import cfg, source
    for path in sorted(TESTS.glob("fixtures/ptx/corpus/*/*.ptx.xz"))[::10]:
        for function in source.parse(lzma.open(path, "rt").read()).functions:
            assert cfg.build(function.statements).reducible, (path.name, function.name)
