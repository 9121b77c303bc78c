"""Differential tests: the Z3 bit-vector model (solver/) against the executable spec (spec/).

The two were written independently (solver/ from the PTX bit tables and canonical layouts, spec/ in
chunks and rows), so agreeing on concrete values is evidence for both. Every Z3 function is built
ONCE over named 32-bit (or 64-bit) constants; a case substitutes concrete values for them and
simplifies to a constant (`Compiled` below), which is several times faster than rebuilding the
expression for every case.

1. solver.model.swizzle.cute_swizzle       vs spec.cute.swizzle.Swizzle
2. solver.model.swizzle.descriptor_swizzle vs spec.mma.readmap.apply_swizzle (phase model "hardware")
3. solver.model.descriptor.encode/decode   vs spec.mma.descriptor.encode/decode (sm90, sm100, sm103)
4. solver.model.readmap.read_address        vs spec.mma.readmap.element_address
5. the desc model's operand-swizzle and MMA-shape rules (solver.model.desc_case) vs spec's checks
   (spec.mma.readmap, spec.mma.shape), on a grid of concrete values

The Shape handed to the model (element bits, elements per 16-byte chunk) is written here from the
manual (PTX 9.7.16.4.2 Tables 42-44; 9.7.16.10 sub-byte packing), not taken from spec.mma.dtypes, so a
wrong width in either side shows up.
"""
from __future__ import annotations

import functools

import pytest
import z3
from hypothesis import example, given, settings, strategies as st

import spec.rules  # noqa: F401  (registers every rule, so violations() sees all checks)
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes as spec_dtypes
from spec.mma import readmap
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, Swizzle

from solver.model import descriptor as descriptor_model
from solver.model import swizzle as swizzle_model
from solver.model.bitvec import WIDTH, Arith
from solver.model.readmap import Fields, Shape, read_address

ARCHES = ("sm90", "sm100", "sm103")
SWIZZLE_NAMES = ("none", "32B", "64B", "128B", "128B_atom32B")

# Written from the manual (PTX 9.7.15.5.1.2.2 and 9.7.16.4.1 Table 40), not from spec's dicts.
SM90_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SM100_CODES = {"none": 0, "128B_atom32B": 1, "128B": 2, "64B": 4, "32B": 6}
# Element widths in bits (PTX 9.7.16.4.2 Tables 42-44; 9.7.16.10; 9.7.16.3.3).
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
        "e2m3": 6, "e3m2": 6, "e2m1": 4}
# W: bytes per swizzle row (PTX 9.7.16.10.6 swizzle atoms; 16 = one core-matrix row with no swizzle).
ROW_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_atom32B": 128}
DENSE_FP4_KINDS = ("mxf4", "mxf4nvf4")     # .b4x16: 32 per chunk; other sub-byte reads are padded

EXAMPLES = settings(max_examples=2500, deadline=None)


def codes_for(arch):
    return SM90_CODES if arch == "sm90" else SM100_CODES


def per_chunk(bits: int, kind: str) -> int:
    """T, elements per 16-byte chunk: 128/bits, dense E2M1 32, padded 4/6-bit types 16."""
    if bits >= 8:
        return 128 // bits
    return 32 if kind in DENSE_FP4_KINDS else 16


class Compiled:
    """A Z3 expression over named bit-vector constants, evaluated by substitution."""

    def __init__(self, expr, constants: dict):
        self.expr = expr
        self.constants = constants          # name -> z3 constant

    def __call__(self, **values) -> int:
        assert set(values) == set(self.constants), (sorted(values), sorted(self.constants))
        pairs = [(c, z3.BitVecVal(values[name], c.size())) for name, c in self.constants.items()]
        result = z3.simplify(z3.substitute(self.expr, *pairs))
        assert z3.is_bv_value(result), f"not a constant after substitution: {result}"
        return result.as_long()

    def partial(self, **values) -> "Compiled":
        """Substitute some constants now (kept symbolic: the rest)."""
        pairs = [(self.constants[name], z3.BitVecVal(v, self.constants[name].size()))
                 for name, v in values.items()]
        rest = {n: c for n, c in self.constants.items() if n not in values}
        return Compiled(z3.simplify(z3.substitute(self.expr, *pairs)), rest)


def bvs(*names, width=WIDTH):
    return {name: z3.BitVec(name, width) for name in names}


# =====================================================================================================
# 1. CuTe Swizzle<B,M,S>
# =====================================================================================================
@functools.lru_cache(maxsize=None)
def z3_cute_symbolic() -> Compiled:
    c = bvs("x", "B", "M", "S")
    return Compiled(swizzle_model.cute_swizzle(c["x"], c["B"], c["M"], c["S"]), c)


@functools.lru_cache(maxsize=None)
def z3_cute_fixed(B: int, M: int, S: int) -> Compiled:
    """Python-int parameters (the model's other entry form), x symbolic."""
    c = bvs("x")
    return Compiled(swizzle_model.cute_swizzle(c["x"], B, M, S), c)


def spec_cute(x, B, M, S):
    return Swizzle(B, M, S)(x)


@pytest.mark.slow
@EXAMPLES
@given(B=st.integers(0, 4), M=st.integers(0, 8), S=st.integers(-8, 8), x=st.integers(0, 2**20 - 1))
@example(B=3, M=4, S=0, x=0b1111111111)      # S = 0: the bits XOR themselves (clears them)
@example(B=4, M=8, S=0, x=2**20 - 1)
@example(B=4, M=8, S=-8, x=2**20 - 1)        # largest left shift: result still < 2^32
@example(B=4, M=8, S=8, x=2**20 - 1)
@example(B=0, M=0, S=0, x=12345)
def test_cute_swizzle_symbolic_parameters_match_spec(B, M, S, x):
    # S enters Z3 as two's complement (negative S shifts left).
    assert z3_cute_symbolic()(x=x, B=B, M=M, S=S & 0xFFFFFFFF) == spec_cute(x, B, M, S)


@settings(max_examples=1000, deadline=None)
@given(B=st.integers(0, 4), M=st.integers(0, 8), S=st.integers(-8, 8), x=st.integers(0, 2**20 - 1))
@example(B=2, M=3, S=0, x=0b111100000)
def test_cute_swizzle_int_parameters_match_spec(B, M, S, x):
    assert z3_cute_fixed(B, M, S)(x=x) == spec_cute(x, B, M, S)


def test_cute_swizzle_hits_zero_shift():
    """S = 0 is in the strategy's range; make sure it is also checked on its own, for every B, M."""
    f = z3_cute_symbolic()
    for B in range(5):
        for M in range(9):
            for x in (0, 1, 0x3FF, 0xABCDE, 2**20 - 1):
                assert f(x=x, B=B, M=M, S=0) == spec_cute(x, B, M, 0)


CUTE_GRID = (
    (0, 4, 3), (1, 4, 3), (2, 4, 3), (3, 4, 3), (2, 5, 2),    # the descriptor swizzles
    (3, 0, 3), (2, 1, 5), (1, 2, -3), (3, 2, -4), (2, 3, -1),   # positive / negative S, |S| < B
    (2, 2, 0), (1, 0, 0), (0, 3, 3), (4, 1, -5), (4, 0, 4),
)


@pytest.mark.parametrize("B,M,S", CUTE_GRID, ids=lambda v: str(v))
def test_cute_swizzle_exhaustive_below_2_10(B, M, S):
    f = z3_cute_fixed(B, M, S)
    g = z3_cute_symbolic().partial(B=B, M=M, S=S & 0xFFFFFFFF)
    sw = Swizzle(B, M, S)
    for x in range(1 << 10):
        expected = sw(x)
        assert f(x=x) == expected, (x, B, M, S)
        if x % 4 == 0 or x >= 1020:     # the symbolic-parameter form, on a quarter of them
            assert g(x=x) == expected, (x, B, M, S)


# =====================================================================================================
# 2. The descriptor swizzle as the H100 applies it
# =====================================================================================================
@functools.lru_cache(maxsize=None)
def z3_descriptor_swizzle(name: str) -> Compiled:
    c = bvs("address", "base_offset")
    return Compiled(swizzle_model.descriptor_swizzle(c["address"], name, c["base_offset"]), c)


@functools.lru_cache(maxsize=None)
def z3_descriptor_swizzle_absolute(name: str) -> Compiled:
    c = bvs("address")
    return Compiled(swizzle_model.descriptor_swizzle_absolute(c["address"], name), c)


@EXAMPLES
@given(name=st.sampled_from(SWIZZLE_NAMES), address=st.integers(0, 2**18 - 1),
       base_offset=st.integers(0, 7), origin=st.integers(0, 2**18 - 1))
@pytest.mark.slow
@example(name="128B", address=0, base_offset=7, origin=0)
@example(name="128B_atom32B", address=2**18 - 1, base_offset=5, origin=0)
@example(name="32B", address=128, base_offset=1, origin=128)
def test_descriptor_swizzle_matches_spec(name, address, base_offset, origin):
    # The hardware phase model does not use the origin; any origin must give the same answer.
    expected = readmap.apply_swizzle(name, origin, address, base_offset)
    assert expected == readmap.apply_swizzle(name, origin, address, base_offset, "hardware")
    assert z3_descriptor_swizzle(name)(address=address, base_offset=base_offset) == expected


@pytest.mark.parametrize("name", SWIZZLE_NAMES)
def test_descriptor_swizzle_exhaustive_one_pattern(name):
    """Every 16-byte-aligned address, and byte 5 of it, over 1024 bytes (one 128B repeat, two of the
    512-byte patterns), every base offset."""
    f = z3_descriptor_swizzle(name)
    for base_offset in range(8):
        for address in range(0, 1024, 16):
            for a in (address, address + 5):
                assert f(address=a, base_offset=base_offset) == \
                    readmap.apply_swizzle(name, 0, a, base_offset), (name, a, base_offset)


@settings(max_examples=500, deadline=None)
@given(name=st.sampled_from(SWIZZLE_NAMES), address=st.integers(0, 2**18 - 1))
def test_descriptor_swizzle_absolute_is_spec_cute_swizzle(name, address):
    """CuTe's byte swizzle on absolute addresses (model) vs spec's DESCRIPTOR_SWIZZLES functors, and
    both equal the hardware phase with base offset 0 (rule readmap.swizzle_phase)."""
    expected = DESCRIPTOR_SWIZZLES[name](address)
    assert z3_descriptor_swizzle_absolute(name)(address=address) == expected
    assert readmap.apply_swizzle(name, 0, address, 0) == expected


# =====================================================================================================
# 3. Descriptor words
# =====================================================================================================
@functools.lru_cache(maxsize=None)
def z3_encoder(arch: str) -> Compiled:
    c = bvs("start", "lbo", "sbo", "base_offset", "swizzle", "lbo_mode")
    return Compiled(descriptor_model.encode(arch, c), c if arch != "sm90" else
                    {n: v for n, v in c.items() if n != "lbo_mode"})


@functools.lru_cache(maxsize=None)
def z3_decoder(arch: str) -> dict:
    c = bvs("word", width=64)
    return {name: Compiled(expr, c) for name, expr in descriptor_model.decode(arch, c["word"]).items()}


byte_field = st.integers(0, 2**14 - 1).map(lambda v: v * 16)


@pytest.mark.parametrize("arch", ARCHES)
@settings(max_examples=500, deadline=None)
@given(data=st.data(), start=byte_field, lbo=byte_field, sbo=byte_field,
       base_offset=st.integers(0, 7))
def test_encode_matches_spec(arch, data, start, lbo, sbo, base_offset):
    swizzle = data.draw(st.sampled_from(sorted(codes_for(arch))), label="swizzle")
    mode = None if arch == "sm90" else data.draw(st.sampled_from(["relative", "absolute"]),
                                                 label="lbo_mode")
    desc = spec_descriptor.encode(arch, start, lbo, sbo, swizzle, base_offset, mode)
    values = dict(start=start, lbo=lbo, sbo=sbo, base_offset=base_offset,
                  swizzle=codes_for(arch)[swizzle])
    if arch != "sm90":
        values["lbo_mode"] = int(mode == "absolute")
    assert z3_encoder(arch)(**values) == desc.raw


@pytest.mark.parametrize("arch", ARCHES)
def test_encode_extremes_match_spec(arch):
    top = 2**18 - 16
    for swizzle, code in codes_for(arch).items():
        for start, lbo, sbo, bo in ((0, 0, 0, 0), (top, top, top, 7), (16, top, 0, 3), (top, 0, 16, 4)):
            modes = (None,) if arch == "sm90" else ("relative", "absolute")
            for mode in modes:
                desc = spec_descriptor.encode(arch, start, lbo, sbo, swizzle, bo, mode)
                values = dict(start=start, lbo=lbo, sbo=sbo, base_offset=bo, swizzle=code)
                if mode is not None:
                    values["lbo_mode"] = int(mode == "absolute")
                assert z3_encoder(arch)(**values) == desc.raw, (swizzle, start, lbo, sbo, bo, mode)


def spec_fields(desc) -> dict:
    """The spec's decoded descriptor as the model's field dict (swizzle as its code)."""
    name = desc.swizzle
    code = int(name[len("invalid("):-1]) if name.startswith("invalid(") else codes_for(desc.arch)[name]
    fields = dict(start=desc.start_address, lbo=desc.leading_byte_offset,
                  sbo=desc.stride_byte_offset, base_offset=desc.base_offset, swizzle=code)
    if desc.arch != "sm90":
        fields["lbo_mode"] = {"relative": 0, "absolute": 1}[desc.lbo_mode]
    return fields


def z3_decode(arch: str, word: int) -> dict:
    return {name: f(word=word) for name, f in z3_decoder(arch).items()}


words = st.one_of(st.integers(0, 2**64 - 1),
                  # mostly-legal words: random fields OR'd with random stray bits now and then
                  st.builds(lambda lo, hi: lo | hi << 32, st.integers(0, 2**32 - 1),
                            st.integers(0, 2**32 - 1) | st.sampled_from([0, 1 << 14, 1 << 29, 1 << 30])))


@pytest.mark.parametrize("arch", ARCHES)
@settings(max_examples=500, deadline=None)
@given(word=words)
@example(word=0)
@example(word=2**64 - 1)
def test_decode_matches_spec(arch, word):
    desc = spec_descriptor.decode(arch, word)
    got = z3_decode(arch, word)
    fixed = got.pop("fixed", None)
    assert got == spec_fields(desc)
    if arch != "sm90":
        # The fixed field [46,49) (Table 40) is not a spec Descriptor field; it is what the fixed-bits
        # rule reads, and it must be absent from the violations exactly when the model reads 0b001.
        flagged = any(v.rule is spec_descriptor.SM100_FIXED_BITS for v in spec_descriptor.violations(desc))
        assert flagged == (fixed != 0b001)


@pytest.mark.parametrize("arch", ARCHES)
@settings(max_examples=300, deadline=None)
@given(data=st.data(), start=byte_field, lbo=byte_field, sbo=byte_field, base_offset=st.integers(0, 7))
def test_model_decode_inverts_spec_encode(arch, data, start, lbo, sbo, base_offset):
    swizzle = data.draw(st.sampled_from(sorted(codes_for(arch))), label="swizzle")
    mode = None if arch == "sm90" else data.draw(st.sampled_from(["relative", "absolute"]))
    desc = spec_descriptor.encode(arch, start, lbo, sbo, swizzle, base_offset, mode)
    got = z3_decode(arch, desc.raw)
    if arch != "sm90":
        assert got.pop("fixed") == 0b001
    assert got == spec_fields(desc)


# =====================================================================================================
# 4. The read map
# =====================================================================================================
def legal_combos():
    """Every (arch, dtype, kind, major, swizzle, K) the spec accepts without a violation, for a clean
    descriptor (start 0, LBO 4096, SBO 1024, base offset 0) at each instruction K."""
    found = []
    for arch in ARCHES:
        for name, d in spec_dtypes.DTYPES.items():
            for kind in d.kinds:
                for k in spec_dtypes.instruction_k_values(d, kind, arch):
                    for major in ("K", "MN"):
                        for swizzle in codes_for(arch):
                            desc = spec_descriptor.encode(arch, 0, 4096, 1024, swizzle, 0)
                            op = readmap.make_operand(desc, name, major, 64, k, kind)
                            if not readmap.violations(op):
                                found.append((arch, name, kind, major, swizzle, k))
    return found


LEGAL = legal_combos()

# The combinations the brief names; all must be among those the spec accepts.
EXPECTED_LEGAL = (
    [(a, t, kd, "K", s, k) for a in ARCHES for t, kd, k in (("bf16", "f16", 16), ("tf32", "tf32", 8),
                                                            ("e4m3", "f8f6f4", 32))
     for s in ("none", "32B", "64B", "128B")]
    + [(a, t, kd, "K", s, k) for a in ("sm100", "sm103")
       for t, kd, k in (("e2m1", "mxf4", 64), ("e2m3", "f8f6f4", 32))
       for s in ("none", "32B", "64B", "128B")]
    + [(a, "bf16", "f16", "MN", s, 16) for a in ARCHES for s in ("none", "32B", "64B", "128B")]
    + [(a, "e4m3", "f8f6f4", "MN", s, 32) for a in ("sm100", "sm103") for s in ("none", "32B", "64B", "128B")]
    + [(a, "tf32", "tf32", "MN", "128B_atom32B", 8) for a in ("sm100", "sm103")]
)


def test_legal_combinations_cover_the_named_ones():
    missing = [c for c in EXPECTED_LEGAL if c not in LEGAL]
    assert missing == []
    # and Table 54 excludes what it should
    assert not any(c[4] == "128B_atom32B" and c[3] == "K" for c in LEGAL)
    assert not any(c[1] in ("tf32", "f32") and c[3] == "MN" and c[4] != "128B_atom32B" and c[0] != "sm90"
                   for c in LEGAL)


@functools.lru_cache(maxsize=None)
def z3_read(major: str, swizzle: str, bits: int, chunk: int, absolute: bool = False) -> Compiled:
    c = bvs("start", "lbo", "sbo", "base_offset", "mn", "k")
    f = Fields(c["start"], c["lbo"], c["sbo"], c["base_offset"], absolute)
    return Compiled(read_address(Shape(major, swizzle, bits, chunk), f, c["mn"], c["k"], Arith()), c)


def model_for(dtype: str, kind: str, major: str, swizzle: str, absolute: bool = False) -> Compiled:
    bits = BITS[dtype]
    return z3_read(major, swizzle, bits, per_chunk(bits, kind), absolute)


def combo_id(c):
    return "-".join(map(str, c))


@pytest.mark.parametrize("combo", LEGAL, ids=combo_id)
@settings(max_examples=16, deadline=None)
@given(data=st.data(), start=byte_field, lbo=byte_field, sbo=byte_field, base_offset=st.integers(0, 7),
       mn_extent=st.integers(1, 16).map(lambda v: 8 * v))
def test_read_address_matches_spec(combo, data, start, lbo, sbo, base_offset, mn_extent):
    arch, dtype, kind, major, swizzle, k_extent = combo
    desc = spec_descriptor.encode(arch, start, lbo, sbo, swizzle, base_offset)
    op = readmap.make_operand(desc, dtype, major, mn_extent, k_extent, kind)
    model = model_for(dtype, kind, major, swizzle)
    for _ in range(4):
        mn = data.draw(st.integers(0, mn_extent - 1), label="mn")
        k = data.draw(st.integers(0, k_extent - 1), label="k")
        expected = readmap.element_address(op, mn, k)
        got = model(start=start, lbo=lbo, sbo=sbo, base_offset=base_offset, mn=mn, k=k)
        assert got == expected, dict(desc=desc.fields_json(), mn=mn, k=k, got=got, spec=expected)


# --- sm103 absolute LBO, 48-byte K ---------------------------------------------------------------------
@settings(max_examples=800, deadline=None)
@given(start=byte_field, lbo=byte_field, sbo=byte_field, mn_extent=st.integers(1, 16).map(lambda v: 8 * v),
       data=st.data())
@pytest.mark.slow
@example(start=96, lbo=4096, sbo=1024, mn_extent=8, data=None)     # 48 B from line offset 96: split
@example(start=0, lbo=4096, sbo=1024, mn_extent=8, data=None)      # whole K in the first line
def test_absolute_lbo_k48_matches_spec(start, lbo, sbo, mn_extent, data):
    desc = spec_descriptor.encode("sm103", start, lbo, sbo, "128B", 0, "absolute")
    op = readmap.make_operand(desc, "e2m1", "K", mn_extent, 96, "mxf4")
    assert readmap.violations(op) == []
    model = model_for("e2m1", "mxf4", "K", "128B", absolute=True)
    if data is None:
        cells = [(mn, k) for mn in range(mn_extent) for k in range(96)]
    else:
        cells = [(data.draw(st.integers(0, mn_extent - 1)), data.draw(st.integers(0, 95)))
                 for _ in range(3)]
    for mn, k in cells:
        expected = readmap.element_address(op, mn, k)
        got = model(start=start, lbo=lbo, sbo=sbo, base_offset=0, mn=mn, k=k)
        assert got == expected, dict(desc=desc.fields_json(), mn=mn, k=k, got=got, spec=expected)


# --- Absolute LBO with any swizzle and any K (illegal but readable: issue 17) ----------------------------
ABSOLUTE_CASES = [(swizzle, dtype, kind, k, start)
                  for swizzle in SWIZZLE_NAMES
                  for dtype, kind, k in (("e2m1", "mxf4", 96), ("e2m1", "mxf4", 64), ("bf16", "f16", 16),
                                         ("bf16", "f16", 128))
                  for start in (0, 32, 96, 112)]
# every row of the first 8-row group (each its own swizzle phase) and the first and last of the second
# (SBO apart)
ABSOLUTE_ROWS = (*range(8), 8, 15)


def contiguous_absolute_read(swizzle: str, bits: int, start: int, lbo: int, sbo: int, mn: int, k: int) -> int:
    """PTX 9.7.16.3.1.2, read without either side: the K bytes are cut into two pieces, each "laid out
    within the aligned 128-byte address boundary": chunks from the start up to the end of its 128-byte
    line, the rest from the absolute address in LBO, each piece packed contiguously (16-byte chunks one
    after the other), rows at the K-major row pitch (16 bytes, or the swizzle's row), 8-row groups SBO
    apart, then the descriptor swizzle on the absolute address (base offset 0)."""
    chunk, inner = divmod(k * bits // 8, 16)
    first = (128 - start % 128) // 16
    origin, along = (start, chunk * 16) if chunk < first else (lbo, (chunk - first) * 16)
    linear = origin + along + inner + (mn // 8) * sbo + (mn % 8) * ROW_BYTES[swizzle]
    return DESCRIPTOR_SWIZZLES[swizzle](linear)


@pytest.mark.parametrize("case", ABSOLUTE_CASES, ids=lambda c: "-".join(map(str, c)))
def test_absolute_lbo_reads_match_the_manual_for_every_swizzle(case):
    """The model reads each piece of an absolute-LBO K contiguously whatever the swizzle and K: the manual's
    only reading (9.7.16.3.1.2 allows 128B alone, yet both sides read any descriptor: the fuzzer's
    witnesses come from reads of illegal ones)."""
    swizzle, dtype, kind, k_extent, start = case
    model = model_for(dtype, kind, "K", swizzle, absolute=True)
    for mn in ABSOLUTE_ROWS:
        for k in range(k_extent):
            expected = contiguous_absolute_read(swizzle, BITS[dtype], start, 8192, 1024, mn, k)
            assert model(start=start, lbo=8192, sbo=1024, base_offset=0, mn=mn, k=k) == expected, (mn, k)


# spec/mma/readmap.py's k_part once stepped the chunks of each piece as the swizzled layout steps K atoms,
# with LBO 0 (no swizzle: every chunk at the piece's start; 32B: the third chunk onto the first); issue 17
# made spec read each piece contiguously, as the model does and the manual says.
@pytest.mark.parametrize("case", ABSOLUTE_CASES, ids=lambda c: "-".join(map(str, c)))
def test_absolute_lbo_reads_match_spec_for_every_swizzle(case):
    swizzle, dtype, kind, k_extent, start = case
    desc = spec_descriptor.encode("sm103", start, 8192, 1024, swizzle, 0, "absolute")
    op = readmap.make_operand(desc, dtype, "K", 16, k_extent, kind)
    expected = readmap.read_addresses(op)
    model = model_for(dtype, kind, "K", swizzle, absolute=True)
    wrong = [(mn, k) for mn in ABSOLUTE_ROWS for k in range(k_extent)
             if model(start=start, lbo=8192, sbo=1024, base_offset=0, mn=mn, k=k) != expected[mn][k]]
    assert wrong == []


# --- Exhaustive: every element of a small grid of concrete descriptors ----------------------------------
EXHAUSTIVE_TYPES = {
    "K": (("bf16", "f16"), ("tf32", "tf32"), ("e4m3", "f8f6f4"), ("e2m1", "mxf4"), ("e2m3", "f8f6f4")),
    "MN": (("bf16", "f16"), ("e4m3", "f8f6f4"), ("tf32", "tf32")),
}


def exhaustive_cases():
    cases = []
    for major, types in EXHAUSTIVE_TYPES.items():
        for dtype, kind in types:
            for swizzle in SWIZZLE_NAMES:
                # on the repeat boundary (base offset 0), and three lines + 32 bytes past it (base offset
                # 3, and 0: the phase is the absolute line less the base offset either way)
                for start, base_offset in ((4 * 1024, 0), (4 * 1024 + 3 * 128 + 32, 3),
                                           (4 * 1024 + 3 * 128 + 32, 0)):
                    cases.append((major, dtype, kind, swizzle, start, base_offset))
    return cases


@pytest.mark.parametrize("major,dtype,kind,swizzle,start,base_offset", exhaustive_cases(),
                         ids=lambda v: str(v))
def test_read_map_exhaustive(major, dtype, kind, swizzle, start, base_offset):
    """sm100 (the arch with every swizzle); every element (mn < 16 for K-major; for MN-major two
    swizzle atoms along MN, at most 128, so LBO is stepped except for 8-bit 128B) of the instruction K, compared whether or not the spec flags the
    combination: both sides compute an address for any descriptor."""
    lbo = 8192
    sbo = 2048 if major == "K" else 8192
    desc = spec_descriptor.encode("sm100", start, lbo, sbo, swizzle, base_offset)
    k_extent = spec_dtypes.instruction_k_values(spec_dtypes.dtype(dtype), kind, "sm100")[0]
    bits = BITS[dtype]
    T = per_chunk(bits, kind)
    if major == "K":
        mn_extent = 16          # two row groups: SBO is stepped
    else:
        row_chunks = ROW_BYTES[swizzle] // 16
        mn_extent = max(8, min(128, 2 * row_chunks * T))
    op = readmap.make_operand(desc, dtype, major, mn_extent, k_extent, kind)
    expected = readmap.read_addresses(op)
    model = model_for(dtype, kind, major, swizzle).partial(start=start, lbo=lbo, sbo=sbo,
                                                           base_offset=base_offset)
    wrong = []
    for mn in range(mn_extent):
        for k in range(k_extent):
            got = model(mn=mn, k=k)
            if got != expected[mn][k]:
                wrong.append(dict(mn=mn, k=k, got=got, spec=expected[mn][k]))
    assert wrong == [], (len(wrong), wrong[:8])


# =====================================================================================================
# 5. The desc model's swizzle and MMA-shape rules
# =====================================================================================================
SHAPE_RULES = ("mma.shape.m", "mma.shape.n", "mma.shape.k96.cta_group", "mma.shape.k96.m",
               "mma.shape.mn_major_8bit.n")
MN_SAMPLES = (8, 16, 24, 32, 40, 48, 64, 96, 120, 128, 136, 248, 256)


@functools.lru_cache(maxsize=None)
def desc_model_terms():
    from solver.model import desc_case as desc_model
    r = desc_model.symbolic_record()
    return desc_model, r, {rule_id: desc_model.RULES[rule_id](r) for rule_id in desc_model.RULE_IDS}


def shape_grid():
    from solver.model import desc_case as desc_model
    for arch in ARCHES:
        for dtype in desc_model.DTYPES:
            for kind in desc_model.KINDS[dtype]:
                ks = (2 * 128 // BITS[dtype],) + ((96,) if dtype == "e2m1" else ())
                instructions = ((1, 64),) if arch == "sm90" else tuple((g, m) for g in (1, 2) for m in (64, 128, 256))
                for major in ("K", "MN"):
                    for k in ks:
                        for cta_group, m in instructions:
                            yield arch, dtype, kind, major, k, cta_group, m


@pytest.mark.parametrize("arch", ARCHES)
def test_desc_model_shape_rules_match_spec(arch):
    """Each MMA-shape rule of the desc model holds exactly where spec.mma.shape's check passes."""
    from spec.mma import shape as mma_shape
    from spec.rules import check_all
    desc_model, r, terms = desc_model_terms()
    compared = 0
    for a, dtype, kind, major, k, cta_group, m in shape_grid():
        if a != arch:
            continue
        fixed = [(r.arch, z3.IntVal(ARCHES.index(arch))), (r.dtype, z3.IntVal(desc_model.DTYPES.index(dtype))),
                 (r.kind, z3.IntVal(desc_model.ALL_KINDS.index(kind))), (r.major, z3.IntVal(("K", "MN").index(major))),
                 (r.k, z3.IntVal(k)), (r.cta_group, z3.IntVal(cta_group)), (r.m, z3.IntVal(m))]
        partial = {rule_id: z3.simplify(z3.substitute(terms[rule_id], *fixed)) for rule_id in SHAPE_RULES}
        for mn in MN_SAMPLES:
            shape = mma_shape.make_shape(arch, kind, cta_group, m, cta_group * mn, k, dtype, major)
            broken = {v.rule.id for v in check_all("mma_shape", shape)}
            for rule_id, term in partial.items():
                holds = z3.is_true(z3.simplify(z3.substitute(term, (r.mn, z3.IntVal(mn)))))
                assert holds == (rule_id not in broken), (rule_id, arch, dtype, kind, major, k, cta_group, m, mn)
                compared += 1
    assert compared > 1000 or arch == "sm90"


@pytest.mark.parametrize("arch", ("sm100", "sm103"))
def test_desc_model_swizzle_rules_match_spec(arch):
    """operand.swizzle.table54 (MN-major rows) and operand.swizzle.k_major_atom32, model vs spec, for every
    dtype, major-ness and descriptor swizzle code."""
    desc_model, r, terms = desc_model_terms()
    for dtype in desc_model.DTYPES:
        kind = desc_model.KINDS[dtype][0]
        for major in ("K", "MN"):
            for swizzle, code in SM100_CODES.items():
                desc = spec_descriptor.encode(arch, 0, 4096, 1024, swizzle, 0)
                op = readmap.make_operand(desc, dtype, major, 64, None, kind)
                broken = {v.rule.id for v in readmap.violations(op)}
                values = [(r.arch, z3.IntVal(ARCHES.index(arch))), (r.dtype, z3.IntVal(desc_model.DTYPES.index(dtype))),
                          (r.major, z3.IntVal(("K", "MN").index(major))), (r.swizzle_code, z3.IntVal(code))]
                for rule_id in ("operand.swizzle.table54", "operand.swizzle.k_major_atom32"):
                    holds = z3.is_true(z3.simplify(z3.substitute(terms[rule_id], *values)))
                    assert holds == (rule_id not in broken), (rule_id, dtype, major, swizzle)
