"""Properties of canonical layouts and of the descriptor read map, over symbolic descriptor fields.

LBO and SBO range over their whole 14-bit encodings (multiples of 16 below 2^18), the start address
likewise, the base offset over 0..7, and the repeat counts over the ranges each property states.
Each refuted variant drops one condition of a proved property and comes with a counterexample that
spec/ confirms.
"""
from __future__ import annotations

import z3

from spec.mma import descriptor as spec_descriptor
from spec.mma import readmap as spec_readmap
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES

from solver.model.bitvec import Arith, bv, encoded_bytes, in_range, multiple_of, narrow, var
from solver.model.readmap import Fields, Shape, element_bit_address, linear_address
from solver.prove.property import Query, prop
from solver.model.swizzle import descriptor_swizzle, descriptor_swizzle_absolute, repeat_bytes
from solver.model.vocab import DESCRIPTOR_ROW_BYTES as ROW_BYTES

FIELD_RANGE = "start, LBO, SBO multiples of 16 in [0, 2^18); base offset in [0, 8)"
SPEC_DTYPE = {4: "e2m1", 8: "e4m3", 16: "bf16", 32: "tf32"}
SWIZZLED = ("32B", "64B", "128B", "128B_atom32B")


def _fields(absolute_lbo: bool = False):
    """Descriptor fields over their whole encodings: the ranges are structural (see bitvec.narrow)."""
    f = Fields(encoded_bytes("start"), encoded_bytes("lbo"), encoded_bytes("sbo"),
               narrow("base_offset", 3), absolute_lbo)
    return f, []


def _shape(major: str, swizzle: str, bits: int) -> Shape:
    return Shape(major, swizzle, bits, 32 if bits == 4 else 128 // bits)


def _spec_operand(c: dict, major: str, swizzle: str, bits: int, arch: str = "sm100", mode=None):
    desc = spec_descriptor.encode(arch, c["start"], c["lbo"], c["sbo"], swizzle, c["base_offset"], mode)
    mn = c.get("mn_extent", 8)
    return spec_readmap.make_operand(desc, SPEC_DTYPE[bits], major, mn, c.get("k_extent"))


# --- canonical.injective ----------------------------------------------------------------------------
# A direct query (two symbolic elements, symbolic LBO and SBO) is hard for bit-blasting: two
# multipliers per element. The proved properties therefore split into four lemmas, each checked by Z3,
# whose conjunction implies injectivity:
#   1. decomposition (bit-vectors): the model's linear address of every element is
#      start + i*s_mn + j*s_k + intra, where (i, j) is the element's block (core matrix or swizzle
#      atom) along MN and K, s_mn and s_k the strides stepping them (SBO/LBO per PTX 9.7.16.3.1-2),
#      and intra its byte inside the block, all written here from the canonical layout's modes;
#   2. inside a block (bit-vectors): elements of one block have distinct (intra, bit) < block size;
#   3. blocks (integers, nonlinear): i1*s_mn + j1*s_k + d1 != i2*s_mn + j2*s_k + d2 for distinct blocks
#      and d1, d2 < block, under the stated condition on the strides;
#   4. the swizzle (bit-vectors): injective on byte addresses for every base offset.
# The refuted variants drop the condition and use one direct query, whose collision spec/ replays.

def _blocks(shape: Shape, mn, k):
    """(i, j, intra byte) of element (mn, k), from the canonical layout's modes."""
    T, W = shape.per_chunk, ROW_BYTES[shape.swizzle]
    C = W // 16
    byte = lambda index: z3.UDiv(index * bv(shape.bits), bv(8))
    if shape.major == "K":
        chunk = z3.UDiv(k, bv(T))
        if shape.swizzle == "none":
            return z3.UDiv(mn, bv(8)), chunk, z3.URem(mn, bv(8)) * bv(16) + byte(z3.URem(k, bv(T)))
        return (z3.UDiv(mn, bv(8)), z3.UDiv(chunk, bv(C)),
                z3.URem(mn, bv(8)) * bv(W) + z3.URem(chunk, bv(C)) * bv(16) + byte(z3.URem(k, bv(T))))
    chunk = z3.UDiv(mn, bv(T))
    if shape.swizzle == "none":
        return chunk, z3.UDiv(k, bv(8)), z3.URem(k, bv(8)) * bv(16) + byte(z3.URem(mn, bv(T)))
    R = 4 if shape.swizzle == "128B_atom32B" else 8
    return (z3.UDiv(chunk, bv(C)), z3.UDiv(k, bv(R)),
            z3.URem(chunk, bv(C)) * bv(16) + z3.URem(k, bv(R)) * bv(W) + byte(z3.URem(mn, bv(T))))


def _strides(major: str, swizzle: str, f: Fields):
    """(s_mn, s_k): K-major: SBO between row groups, LBO between K chunks; MN-major swizzled: LBO
    between MN atoms, SBO between K groups; MN-major no swizzle: SBO between MN chunks, LBO between
    K groups (PTX 9.7.16.3.1-2)."""
    if major == "K" or swizzle == "none":
        return f.sbo, f.lbo
    return f.lbo, f.sbo


def _extent(shape: Shape, repeats):
    """(MN extent, K extent, block bytes, K blocks) of one instruction: repeats blocks along MN and
    the instruction's 32 bytes of K."""
    k_elements = 2 * shape.per_chunk
    W = ROW_BYTES[shape.swizzle]
    if shape.major == "K":
        return 8 * repeats, k_elements, 8 * W, (2 if shape.swizzle == "none" else 1)
    rows = 4 if shape.swizzle == "128B_atom32B" else 8
    return shape.per_chunk * (W // 16) * repeats, k_elements, rows * W, k_elements // rows


def _element_bit(shape: Shape, mn, k):
    index = k if shape.major == "K" else mn
    return z3.URem(z3.URem(index, bv(shape.per_chunk)) * bv(shape.bits), bv(8))


def _elements(shape: Shape, repeats, names=("mn1", "k1", "mn2", "k2")):
    mn_extent, k_extent, _, _ = _extent(shape, repeats)
    mn1, k1, mn2, k2 = (narrow(n, 10 if n.startswith("mn") else 7) for n in names)
    bounds = [z3.ULT(mn1, mn_extent), z3.ULT(mn2, mn_extent), z3.ULT(k1, k_extent), z3.ULT(k2, k_extent)]
    return (mn1, k1, mn2, k2), bounds


def _lemma_decomposition(shape: Shape) -> Query:
    f, _ = _fields()
    repeats = narrow("repeats", 5)
    (mn, k, _, _), bounds = _elements(shape, repeats)
    s_mn, s_k = _strides(shape.major, shape.swizzle, f)
    i, j, intra = _blocks(shape, mn, k)
    _, linear = linear_address(shape, f, mn, k, Arith())
    claim = linear == f.start + i * s_mn + j * s_k + intra
    return Query({"mn": mn, "k": k, "lbo": f.lbo, "sbo": f.sbo}, [in_range(repeats, 1, 17)] + bounds[::2], claim)


def _lemma_inside_block(shape: Shape) -> Query:
    repeats = narrow("repeats", 5)
    (mn1, k1, mn2, k2), bounds = _elements(shape, repeats)
    _, _, block, _ = _extent(shape, repeats)
    i1, j1, intra1 = _blocks(shape, mn1, k1)
    i2, j2, intra2 = _blocks(shape, mn2, k2)
    bit1 = intra1 * 8 + _element_bit(shape, mn1, k1)
    bit2 = intra2 * 8 + _element_bit(shape, mn2, k2)
    same_block_distinct = z3.And(i1 == i2, j1 == j2, z3.Or(mn1 != mn2, k1 != k2))
    claim = z3.And(z3.ULT(intra1, block), z3.Implies(same_block_distinct, bit1 != bit2))
    return Query({"mn1": mn1, "k1": k1, "mn2": mn2, "k2": k2}, [in_range(repeats, 1, 17)] + bounds, claim)


def _disjoint_condition(s_mn, s_k, block: int, along_mn, along_k: int):
    """One stride spans every block along the other (or there is one block along a dimension)."""
    mn_outer = z3.And(s_mn >= block, s_k >= (along_mn - 1) * s_mn + block)
    k_outer = z3.And(s_k >= block, s_mn >= (along_k - 1) * s_k + block)
    if along_k == 1:
        return z3.Or(along_mn == 1, s_mn >= block)
    return z3.Or(mn_outer, k_outer, z3.And(along_mn == 1, s_k >= block))


def _lemma_blocks(block: int, along_k: int) -> Query:
    names = "s_mn s_k n i1 i2 j1 j2 d1 d2".split()
    s_mn, s_k, n, i1, i2, j1, j2, d1, d2 = (z3.Int(x) for x in names)
    assumptions = [s_mn >= 0, s_mn < 1 << 18, s_k >= 0, s_k < 1 << 18, s_mn % 16 == 0, s_k % 16 == 0,
                   n >= 1, n <= 16, i1 >= 0, i1 < n, i2 >= 0, i2 < n, j1 >= 0, j1 < along_k,
                   j2 >= 0, j2 < along_k, d1 >= 0, d1 < block, d2 >= 0, d2 < block,
                   _disjoint_condition(s_mn, s_k, block, n, along_k)]
    claim = z3.Implies(z3.Or(i1 != i2, j1 != j2), i1 * s_mn + j1 * s_k + d1 != i2 * s_mn + j2 * s_k + d2)
    return Query(dict(zip(names, (s_mn, s_k, n, i1, i2, j1, j2, d1, d2))), assumptions, claim)


def _lemma_swizzle_injective(swizzle: str) -> Query:
    a, b, bo = var("a"), var("b"), narrow("base_offset", 3)
    claim = z3.Implies(a != b, descriptor_swizzle(a, swizzle, bo) != descriptor_swizzle(b, swizzle, bo))
    return Query({"a": a, "b": b, "base_offset": bo}, [], claim)


def _injective_lemmas(major: str, swizzle: str, bits: int) -> list:
    shape = _shape(major, swizzle, bits)
    _, _, block, along_k = _extent(shape, 1)
    return [_lemma_decomposition(shape), _lemma_inside_block(shape), _lemma_blocks(block, along_k),
            _lemma_swizzle_injective(swizzle)]


def _overlapping_query(major: str, swizzle: str, bits: int) -> Query:
    """The direct query without the stride condition: two elements, one byte."""
    shape = _shape(major, swizzle, bits)
    f, _ = _fields()
    repeats = narrow("repeats", 5)
    (mn1, k1, mn2, k2), bounds = _elements(shape, repeats)
    mn_extent, _, _, _ = _extent(shape, repeats)
    arith = Arith()
    a1 = element_bit_address(shape, f, mn1, k1, arith)
    a2 = element_bit_address(shape, f, mn2, k2, arith)
    claim = z3.Implies(z3.Or(mn1 != mn2, k1 != k2), a1 != a2)
    variables = {"start": f.start, "lbo": f.lbo, "sbo": f.sbo, "base_offset": f.base_offset,
                 "mn_extent": mn_extent, "mn1": mn1, "k1": k1, "mn2": mn2, "k2": k2}
    return Query(variables, [in_range(repeats, 1, 17)] + bounds, claim)


def _replay_collision(major, swizzle, bits):
    def replay(c: dict) -> bool:
        op = _spec_operand(c, major, swizzle, bits)
        first = spec_readmap.element_address(op, c["mn1"], c["k1"])
        second = spec_readmap.element_address(op, c["mn2"], c["k2"])
        index = (lambda mn, k: k) if major == "K" else (lambda mn, k: mn)
        per_chunk = op.elements_per_chunk
        bit = lambda mn, k: (index(mn, k) % per_chunk) * bits % 8
        return ((c["mn1"], c["k1"]) != (c["mn2"], c["k2"])
                and first * 8 + bit(c["mn1"], c["k1"]) == second * 8 + bit(c["mn2"], c["k2"]))
    return replay


def _injective_cases():
    for major in ("K", "MN"):
        for swizzle in ("none", "32B", "64B", "128B", "128B_atom32B"):
            for bits in (4, 8, 16, 32):
                if major == "K" and swizzle == "128B_atom32B":
                    continue
                if major == "MN" and (bits == 4 or (bits == 32) != (swizzle == "128B_atom32B")):
                    continue                    # Table 54 and the MN-major type rules
                yield major, swizzle, bits


def _layout_rules(major: str, swizzle: str) -> tuple:
    """The canonical layout and the read map of (major, swizzle): PTX 9.7.16.3.1-3."""
    layout = "canonical.mn_128b_atom32b" if swizzle == "128B_atom32B" else "canonical.table"
    read_map = f"readmap.{major.lower()}_major.{'none' if swizzle == 'none' else 'swizzled'}"
    return (layout, read_map, "readmap.element_byte", "readmap.swizzle_phase")


def _register_injectivity():
    for major, swizzle, bits in _injective_cases():
        prop(f"canonical.injective.{major}.{swizzle}.{bits}bit",
             f"{major}-major, {swizzle} swizzle, {bits}-bit elements: no two elements one instruction "
             "reads share a bit of shared memory, when the core matrices / swizzle atoms do not overlap "
             "(one of the two strides steps past every block along the other). Proved as four lemmas "
             "(decomposition, inside a block, disjoint blocks, injective swizzle).",
             FIELD_RANGE + "; 1 to 16 blocks along MN; the instruction's 32 bytes of K",
             "PTX 9.7.16.3.3", "proved", None, "canonical", rules=_layout_rules(major, swizzle),
             strategy="smt")(    # the disjoint-blocks lemma is non-linear integer arithmetic: the SMT core
                 lambda major=major, swizzle=swizzle, bits=bits: _injective_lemmas(major, swizzle, bits))
    for major in ("K", "MN"):
        for swizzle in ("none", "128B"):
            prop(f"canonical.injective.{major}.{swizzle}.16bit.overlapping",
                 f"{major}-major, {swizzle}, 16-bit: injective for every LBO and SBO (false: strides "
                 "shorter than a block make blocks overlap).",
                 FIELD_RANGE + "; 1 to 16 blocks along MN", "PTX 9.7.16.3.3", "refuted",
                 _replay_collision(major, swizzle, 16), "canonical",
                 rules=_layout_rules(major, swizzle) + (("canonical.k_major.2k_overlaps",) if major == "K" else ()))(
                     lambda major=major, swizzle=swizzle: _overlapping_query(major, swizzle, 16))


_register_injectivity()


# --- canonical.k_atoms: K-major swizzled layouts along K past one atom ---------------------------------------
# One instruction's 32 bytes of K stay in one swizzle atom, so canonical.injective never steps LBO in a
# K-major swizzled layout. When K spans atoms (Triton; PTX 9.7.16.3.2's LBO "not used" reading aside) the
# layout ((8,m),(T,C,k)):((C*T,SBO),(1,T,LBO)) puts K atom a at a * LBO. The row widths are the canonical
# layouts' (PTX 9.7.16.3.3), written here apart from the model's table.
K_ATOM_ROW_BYTES = {"32B": 32, "64B": 64, "128B": 128}
K_ATOMS = 4


def _k_atoms_query() -> Query:
    f, _ = _fields()
    mn, k = narrow("mn", 8), narrow("k", 8)
    claims = []
    for swizzle, width in K_ATOM_ROW_BYTES.items():
        _, address = linear_address(_shape("K", swizzle, 16), f, mn, k, Arith())
        byte = k * bv(2)                                     # 16-bit elements: byte of k along the K row
        expected = (f.start + z3.UDiv(mn, bv(8)) * f.sbo + z3.URem(mn, bv(8)) * bv(width)
                    + z3.UDiv(byte, bv(width)) * f.lbo + z3.URem(byte, bv(width)))
        claims.append(z3.Implies(z3.ULT(k, bv(K_ATOMS * width // 2)), address == expected))
    return Query({"start": f.start, "lbo": f.lbo, "sbo": f.sbo, "mn": mn, "k": k}, [], z3.And(*claims))


def _replay_k_atoms(c: dict) -> bool:
    for swizzle, width in K_ATOM_ROW_BYTES.items():
        if c["k"] >= K_ATOMS * width // 2:
            continue
        desc = spec_descriptor.encode("sm100", c["start"], c["lbo"], c["sbo"], swizzle, 0)
        op = spec_readmap.make_operand(desc, "bf16", "K", 256, K_ATOMS * width // 2)
        _, linear = spec_readmap.linear_address(op, c["mn"], c["k"])
        byte = 2 * c["k"]
        if linear != (c["start"] + c["mn"] // 8 * c["sbo"] + c["mn"] % 8 * width + byte // width * c["lbo"]
                      + byte % width):
            return True
    return False


prop("canonical.k_atoms", "K-major 32B/64B/128B, 16-bit elements, K over up to 4 swizzle atoms: element (mn, k) "
     "is at start + (mn / 8) * SBO + (mn % 8) * W + (K atom) * LBO + its byte inside the atom's row (the "
     "canonical layout ((8,m),(T,C,k)):((C*T,SBO),(1,T,LBO)) in bytes).",
     FIELD_RANGE + "; MN < 256; K below 4 atoms (4 W / 2 elements)", "PTX 9.7.16.3.2, 9.7.16.3.3", "proved",
     _replay_k_atoms, "canonical", rules=("canonical.table", "readmap.k_major.swizzled"))(_k_atoms_query)


# --- canonical.atom_confined ------------------------------------------------------------------------
def _confined_query(swizzle: str) -> Query:
    repeat = repeat_bytes(swizzle)
    base, offset, bo = var("atom_base"), var("offset"), var("base_offset")
    assumptions = [in_range(base, 0, 1 << 18), multiple_of(base, repeat), in_range(offset, 0, repeat),
                   in_range(bo, 0, 8)]
    read = descriptor_swizzle(base + offset, swizzle, bo)
    claim = z3.And(z3.UGE(read, base), z3.ULT(read, base + repeat))
    return Query({"atom_base": base, "offset": offset, "base_offset": bo}, assumptions, claim)


def _replay_escape(swizzle):
    def replay(c: dict) -> bool:
        repeat = repeat_bytes(swizzle)
        read = spec_readmap.apply_swizzle(swizzle, 0, c["atom_base"] + c["offset"], c["base_offset"])
        return not c["atom_base"] <= read < c["atom_base"] + repeat
    return replay


for _swizzle in SWIZZLED:
    prop(f"canonical.atom_confined.{_swizzle}",
         f"Every byte of a {_swizzle} swizzle atom placed on its repeat boundary is read from inside "
         "that atom's repeat block, whatever the base offset.",
         "atom base a multiple of the repeat in [0, 2^18); every offset in the atom; base offset 0..7",
         "PTX 9.7.16.3.3; rule readmap.swizzle_phase", "proved", _replay_escape(_swizzle),
         "canonical", rules=("readmap.swizzle_phase", "swizzle.descriptor.byte_functions"))(
             lambda swizzle=_swizzle: _confined_query(swizzle))


# --- k48: the sm103 48-byte K slice -------------------------------------------------------------------
def _k48_query(absolute: bool) -> Query:
    shape = _shape("K", "128B", 4)                          # dense E2M1, 32 per chunk, K = 96
    f, ranges = _fields(absolute_lbo=absolute)
    mn, k = narrow("mn", 7), narrow("k", 7)
    arith = Arith()
    origin, address = linear_address(shape, f, mn, k, arith)
    row_base = origin + z3.UDiv(mn, bv(8)) * f.sbo + z3.URem(mn, bv(8)) * bv(128)
    assumptions = ranges + [f.base_offset == 0, multiple_of(f.sbo, 128), z3.ULT(k, 96)]
    if absolute:
        assumptions.append(multiple_of(f.lbo, 128))
    # the start's line and the row's line coincide (row offsets are whole lines)
    claim = z3.LShR(address, 7) == z3.LShR(row_base, 7)
    return Query({"start": f.start, "lbo": f.lbo, "sbo": f.sbo, "mn": mn, "k": k,
                  "crossing_byte": address}, assumptions, claim)


def _replay_k48(absolute: bool):
    def replay(c: dict) -> bool:
        mode = "absolute" if absolute else None
        desc = spec_descriptor.encode("sm103", c["start"], c["lbo"], c["sbo"], "128B", 0, mode)
        op = spec_readmap.make_operand(desc, "e2m1", "K", 128, 96, "mxf4")
        origin, linear = spec_readmap.linear_address(op, c["mn"], c["k"])
        row_base = origin + (c["mn"] // 8) * c["sbo"] + (c["mn"] % 8) * 128
        return linear >> 7 != row_base >> 7 and linear == c["crossing_byte"]
    return replay


prop("k48.contained", "Absolute LBO mode: each chunk of a 48-byte K slice (dense K = 96 E2M1) is read "
     "from inside one aligned 128-byte line, for every start offset.",
     "start multiple of 16, LBO and SBO multiples of 128, all in [0, 2^18); base offset 0; 128 rows",
     "PTX 9.7.16.3.1.2; rule readmap.k48.absolute_split", "proved", _replay_k48(True),
     "k48", rules=("readmap.k48.absolute_split", "operand.lbo_absolute.k48"))(lambda: _k48_query(True))
prop("k48.contiguous", "Relative mode, the same 48-byte K slice packed contiguously: every chunk stays "
     "in the start's 128-byte line (false: from line offset 96 or 112 it crosses; the counterexample "
     "names the crossing byte).",
     "start multiple of 16, SBO multiple of 128, in [0, 2^18); base offset 0; 128 rows",
     "PTX 9.7.16.3.1.2", "refuted", _replay_k48(False), "k48",
     rules=("operand.k_slice.inside_line", "operand.lbo_absolute.k48", "readmap.k_major.swizzled"))(
         lambda: _k48_query(False))


def _k48_split_query() -> Query:
    """The absolute mode's split written from the manual's words, not from the read map's chunks: byte p
    (0..47) of row mn's K slice is at start + p while it stays in the start's 128-byte line, past it at
    LBO + the bytes that did not fit; rows at (mn / 8) * SBO + (mn % 8) * 128."""
    shape = _shape("K", "128B", 4)
    f, ranges = _fields(absolute_lbo=True)
    mn, k = narrow("mn", 7), narrow("k", 7)
    _, address = linear_address(shape, f, mn, k, Arith())
    p = z3.LShR(k, 1)                                       # 4-bit E2M1: element k's byte of the slice
    in_line = z3.URem(f.start, bv(128)) + p
    row = z3.UDiv(mn, bv(8)) * f.sbo + z3.URem(mn, bv(8)) * bv(128)
    expected = row + z3.If(z3.ULT(in_line, bv(128)), f.start + p, f.lbo + in_line - bv(128))
    assumptions = ranges + [f.base_offset == 0, multiple_of(f.sbo, 128), multiple_of(f.lbo, 128), z3.ULT(k, 96)]
    return Query({"start": f.start, "lbo": f.lbo, "sbo": f.sbo, "mn": mn, "k": k, "address": address},
                 assumptions, address == expected)


def _replay_k48_split(c: dict) -> bool:
    desc = spec_descriptor.encode("sm103", c["start"], c["lbo"], c["sbo"], "128B", 0, "absolute")
    op = spec_readmap.make_operand(desc, "e2m1", "K", 128, 96, "mxf4")
    _, linear = spec_readmap.linear_address(op, c["mn"], c["k"])
    p, in_line = c["k"] // 2, c["start"] % 128 + c["k"] // 2
    row = (c["mn"] // 8) * c["sbo"] + (c["mn"] % 8) * 128
    return linear != row + (c["start"] + p if in_line < 128 else c["lbo"] + in_line - 128)


prop("k48.split", "Absolute LBO mode, 48-byte K slice (dense K = 96 E2M1): the bytes that fit in the start's "
     "128-byte line are read from the start on, the rest from the absolute address in LBO on, for every "
     "start offset (the split falls exactly at the end of the start's line).",
     "start multiple of 16, LBO and SBO multiples of 128, all in [0, 2^18); base offset 0; 128 rows; K < 96",
     "PTX 9.7.16.3.1.2; rule readmap.k48.absolute_split", "proved", _replay_k48_split,
     "k48", rules=("readmap.k48.absolute_split", "operand.lbo_absolute.k48"))(_k48_split_query)


# --- base offset and alignment: what the phase does ----------------------------------------------------
def _phase_query(swizzle: str, which: str) -> Query:
    start, offset = var("start"), var("offset")
    assumptions = [in_range(start, 0, 1 << 18), in_range(offset, 0, 1 << 18)]
    if which == "zero":
        read = descriptor_swizzle(start + offset, swizzle, bv(0))
        claim = read == descriptor_swizzle_absolute(start + offset, swizzle)
        assumptions.append(multiple_of(start, 16))
    else:
        assumptions.append(multiple_of(start, 128))
        table41 = z3.LShR(start, 7) & 7
        read = descriptor_swizzle(start + offset, swizzle, table41)
        relative = start + descriptor_swizzle_absolute(offset, swizzle)
        absolute = descriptor_swizzle_absolute(start + offset, swizzle)
        claim = read == (relative if which == "table41" else absolute)
    return Query({"start": start, "offset": offset}, assumptions, claim)


PHASE_RULES = ("readmap.swizzle_phase", "swizzle.descriptor.byte_functions", "desc.tile.base_offset")


def _replay_phase(swizzle: str, which: str):
    def replay(c: dict) -> bool:
        sw = DESCRIPTOR_SWIZZLES[swizzle]
        table41 = (c["start"] >> 7) & 7
        read = spec_readmap.apply_swizzle(swizzle, c["start"], c["start"] + c["offset"], table41)
        if which == "table41":
            return read != c["start"] + sw(c["offset"])
        return read != sw(c["start"] + c["offset"])
    return replay


# (id, which phase _phase_query claims, statement, range, source, expected, replayed): {s} is the swizzle
PHASE_PROPERTIES = (
    ("base_offset.zero.{s}", "zero",
     "{s}: with base offset 0 the read map is CuTe's swizzle of absolute addresses, from any start (what TMA "
     "writes and CuTe's smem pointers assume).",
     "start multiple of 16 and offset in [0, 2^18)", "rule readmap.swizzle_phase (H100)", "proved", False),
    ("base_offset.phase.{s}", "table41",
     "{s}: for a start on a 128-byte line, Table 41's base offset ((start >> 7) & 7) makes the read map the "
     "swizzle of offsets from the start: start + Swizzle(offset).",
     "start multiple of 128 and offset in [0, 2^18)", "PTX Table 41; rule readmap.swizzle_phase (H100)",
     "proved", True),
    ("base_offset.phase.{s}.as_absolute", "as_absolute",
     "{s}: Table 41's base offset makes the read map equal the absolute-address swizzle (false off the "
     "repeat boundary: the H100 subtracts the base offset).",
     "start multiple of 128 and offset in [0, 2^18)", "PTX Table 41; rule readmap.swizzle_phase (H100)",
     "refuted", True),
)

for _swizzle in SWIZZLED:
    for _id, _which, _statement, _range, _source, _expected, _replayed in PHASE_PROPERTIES:
        prop(_id.format(s=_swizzle), _statement.format(s=_swizzle), _range, _source, _expected,
             _replay_phase(_swizzle, _which) if _replayed else None, "base_offset", rules=PHASE_RULES)(
                 lambda swizzle=_swizzle, which=_which: _phase_query(swizzle, which))


def _alignment_query(swizzle: str, aligned: bool) -> Query:
    start, offset = var("start"), var("offset")
    step = repeat_bytes(swizzle) if aligned else 128
    assumptions = [in_range(start, 0, 1 << 18), multiple_of(start, step), in_range(offset, 0, 1 << 18)]
    claim = (descriptor_swizzle_absolute(start + offset, swizzle)
             == start + descriptor_swizzle_absolute(offset, swizzle))
    return Query({"start": start, "offset": offset}, assumptions, claim)


ALIGNMENT_RULES = ("recipe.swizzle_alignment", "tma.swizzle.repeat_boundary",
                   "swizzle.descriptor.byte_functions")
ALIGNMENT_SOURCE = "PTX 5.5.7 (Swizzling Modes: repeat boundary); PTX 9.7.16.4.1 Table 41 (base offset)"


def _replay_alignment(swizzle: str):
    def replay(c: dict) -> bool:
        sw = DESCRIPTOR_SWIZZLES[swizzle]
        return sw(c["start"] + c["offset"]) != c["start"] + sw(c["offset"])
    return replay


for _swizzle in SWIZZLED:
    prop(f"alignment.phase.{_swizzle}",
         f"{_swizzle}: swizzling absolute addresses equals swizzling offsets from the tile start when the "
         "tile starts on the repeat boundary.",
         f"start a multiple of {repeat_bytes(_swizzle)} (the repeat) and offset in [0, 2^18)",
         ALIGNMENT_SOURCE, "proved", _replay_alignment(_swizzle), "alignment", rules=ALIGNMENT_RULES)(
             lambda swizzle=_swizzle: _alignment_query(swizzle, True))
    prop(f"alignment.phase.{_swizzle}.line_aligned",
         f"{_swizzle}: the same for any start on a 128-byte line (false: at +128 the phases differ).",
         "start a multiple of 128 and offset in [0, 2^18)", ALIGNMENT_SOURCE, "refuted",
         _replay_alignment(_swizzle), "alignment", rules=ALIGNMENT_RULES)(
             lambda swizzle=_swizzle: _alignment_query(swizzle, False))


def _alignment_only_if_query(swizzle: str) -> Query:
    start, offset = var("start"), var("offset")
    assumptions = [in_range(start, 0, 1 << 18), multiple_of(start, 16),
                   z3.URem(start, repeat_bytes(swizzle)) != 0]
    differs = z3.And(z3.ULT(offset, 1 << 18), descriptor_swizzle_absolute(start + offset, swizzle)
                     != start + descriptor_swizzle_absolute(offset, swizzle))
    return Query({"start": start}, assumptions, z3.Exists([offset], differs))


def _replay_alignment_only_if(swizzle: str):
    def replay(c: dict) -> bool:
        sw = DESCRIPTOR_SWIZZLES[swizzle]
        return all(sw(c["start"] + o) == c["start"] + sw(o) for o in range(1 << 18))
    return replay


for _swizzle in SWIZZLED:
    prop(f"alignment.phase.{_swizzle}.only_if",
         f"{_swizzle}: for a tile start off the repeat boundary some byte's absolute-address swizzle "
         "differs from its offset-relative swizzle (so alignment.phase holds only on the boundary).",
         "start multiple of 16 in [0, 2^18), not a multiple of the repeat; some offset in [0, 2^18)",
         ALIGNMENT_SOURCE, "proved", _replay_alignment_only_if(_swizzle), "alignment",
         rules=ALIGNMENT_RULES)(
             lambda swizzle=_swizzle: _alignment_only_if_query(swizzle))


# --- model.no_wrap --------------------------------------------------------------------------------------
@prop("model.no_wrap", "No addition or multiplication of the Z3 read map overflows its 32-bit vectors, "
      "for every layout family, element width and LBO mode.",
      FIELD_RANGE + "; MN < 256; K < 128 elements", "solver/model/bitvec.py", "proved", None, "model",
      rules=("readmap.k_major.none", "readmap.k_major.swizzled", "readmap.mn_major.none",
             "readmap.mn_major.swizzled", "readmap.element_byte", "readmap.k48.absolute_split"),
      strategy="smt")      # the SMT core decides the overflow conditions 3x faster than bit-blasting them
def no_wrap():
    f, ranges = _fields()
    mn, k = narrow("mn", 8), narrow("k", 7)
    arith = Arith()
    for major in ("K", "MN"):
        for swizzle in ("none", "32B", "64B", "128B", "128B_atom32B"):
            for bits in (4, 6, 8, 16, 32):
                shape = Shape(major, swizzle, bits, 32 if bits == 4 else (16 if bits == 6 else 128 // bits))
                element_bit_address(shape, f, mn, k, arith)
                if major == "K":
                    element_bit_address(shape, Fields(f.start, f.lbo, f.sbo, f.base_offset, True), mn, k, arith)
    assumptions = ranges
    return Query({"start": f.start, "lbo": f.lbo, "sbo": f.sbo, "mn": mn, "k": k}, assumptions,
                 z3.And(*arith.no_overflow))

