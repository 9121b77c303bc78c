"""spec/ against values written here from the manual's tables: descriptor words bit by bit (PTX
9.7.15.5.1.2.2, 9.7.16.4.1 Table 40), CuTe's Swizzle on its bit fields (cute/swizzle.hpp), and the TMA
swizzle tables, repeat boundaries and base offsets (PTX 5.5.7). spec/'s own round trips cannot notice a
field or a table row that is wrong consistently; these can (tests/spec_tests/test_spec_mutations.py checks that)."""
from __future__ import annotations

import pytest

from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, Swizzle
from spec.mma import descriptor as spec_descriptor
from spec.tma import swizzle as spec_tma


# --- descriptors: bit positions of the manual's tables ----------------------------------------------------
def _sm90_word(start, lbo, sbo, base_offset, code):
    """PTX 9.7.15.5.1.2.2: start bits 0-13, LBO 16-29, SBO 32-45 (each (x & 0x3FFFF) >> 4), base offset
    49-51, swizzle mode 62-63."""
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | base_offset << 49 | code << 62


def _sm100_word(start, lbo, sbo, base_offset, absolute, code):
    """Table 40: the same three byte fields, 0b001 at 46-48, base offset 49-51, LBO mode bit 52, 0 at
    53-60, swizzle mode 61-63."""
    return ((start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 0b001 << 46 | base_offset << 49
            | absolute << 52 | code << 61)


SM90_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}                       # "Swizzle mode" values
SM100_CODES = {"none": 0, "128B_atom32B": 1, "128B": 2, "64B": 4, "32B": 6}   # Table 40


@pytest.mark.parametrize("swizzle", sorted(SM90_CODES))
def test_sm90_words(swizzle):
    for start, lbo, sbo, bo in ((0x1230, 0x20, 0x400, 3), (0x3FFF0, 0x3FFF0, 0x3FFF0, 7), (0x10, 0x0, 0x10, 1)):
        word = _sm90_word(start, lbo, sbo, bo, SM90_CODES[swizzle])
        assert spec_descriptor.encode("sm90", start, lbo, sbo, swizzle, bo).raw == word
        d = spec_descriptor.decode("sm90", word)
        assert (d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.swizzle) == \
            (start, lbo, sbo, bo, swizzle)


@pytest.mark.parametrize("arch", ["sm100", "sm103"])
@pytest.mark.parametrize("swizzle", sorted(SM100_CODES))
def test_sm100_words(arch, swizzle):
    for start, lbo, sbo, bo, mode in ((0x1230, 0x20, 0x400, 5, "absolute"), (0x3FFF0, 0x3FFF0, 0x3FFF0, 7, "relative"),
                                      (0x10, 0x0, 0x10, 2, "relative")):
        word = _sm100_word(start, lbo, sbo, bo, mode == "absolute", SM100_CODES[swizzle])
        assert spec_descriptor.encode(arch, start, lbo, sbo, swizzle, bo, mode).raw == word
        d = spec_descriptor.decode(arch, word)
        assert (d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.swizzle,
                d.lbo_mode) == (start, lbo, sbo, bo, swizzle, mode)


def test_sm100_fixed_bits_rule_reads_bits_46_to_48():
    good = _sm100_word(0x100, 0x10, 0x400, 0, False, 2)
    assert not spec_descriptor.violations(spec_descriptor.decode("sm100", good))
    bad = {v.rule.id for v in spec_descriptor.violations(spec_descriptor.decode("sm100", good ^ (0b011 << 46)))}
    assert "desc.sm100.fixed_bits" in bad


# --- CuTe Swizzle<B,M,S> on its bit fields (cute/swizzle.hpp) ------------------------------------------------
def _definition(x, B, M, S):
    """S >= 0: bits [M+S, M+S+B) XORed into [M, M+B); S < 0: bits [M, M+B) XORed into [M-S, M-S+B)."""
    mask = (1 << B) - 1
    return x ^ ((((x >> (M + S)) & mask) << M) if S >= 0 else (((x >> M) & mask) << (M - S)))


@pytest.mark.parametrize("B, M, S", [(3, 4, 3), (2, 5, 2), (1, 4, 3), (2, 4, -3), (3, 0, -4), (1, 6, -1),
                                     (2, 3, 5)])
def test_cute_swizzle_moves_the_right_bits(B, M, S):
    sw = Swizzle(B, M, S)
    assert [sw(x) for x in range(1 << 12)] == [_definition(x, B, M, S) for x in range(1 << 12)]


def test_descriptor_swizzles_are_the_atoms_byte_functions():
    """PTX 9.7.16.3.3 / CUTLASS Layout_*_SW*_Atom: 32B addr[4] ^= addr[7]; 64B addr[5:4] ^= addr[8:7];
    128B addr[6:4] ^= addr[9:7]; 128B with 32B atomicity addr[6:5] ^= addr[8:7]; none: identity."""
    expected = {"none": (0, 4), "32B": (1, 4), "64B": (2, 4), "128B": (3, 4), "128B_atom32B": (2, 5)}
    for name, (bits, base) in expected.items():
        sw = DESCRIPTOR_SWIZZLES[name]
        assert [sw(x) for x in range(4096)] == \
            [x ^ (((x >> 7) & ((1 << bits) - 1)) << base) for x in range(4096)], name


# --- TMA swizzle modes (PTX 5.5.7) -----------------------------------------------------------------------
# The printed rows: cell j of a line shows the chunk that lands there; the rows repeat over the lines.
_IDENTITY = (0, 1, 2, 3, 4, 5, 6, 7)
_PAIRS = (1, 0, 3, 2, 5, 4, 7, 6)
_ATOM32 = (_IDENTITY, (2, 3, 0, 1, 6, 7, 4, 5), (4, 5, 6, 7, 0, 1, 2, 3), (6, 7, 4, 5, 2, 3, 0, 1))
PRINTED = {
    "NONE": (_IDENTITY,),
    "32B": (_IDENTITY, _PAIRS),
    "64B": (_IDENTITY, _PAIRS, (2, 3, 0, 1, 6, 7, 4, 5), (3, 2, 1, 0, 7, 6, 5, 4)),
    "96B": (_IDENTITY, _PAIRS),
    "128B": (_IDENTITY, _PAIRS, (2, 3, 0, 1, 6, 7, 4, 5), (3, 2, 1, 0, 7, 6, 5, 4), (4, 5, 6, 7, 0, 1, 2, 3),
             (5, 4, 7, 6, 1, 0, 3, 2), (6, 7, 4, 5, 2, 3, 0, 1), (7, 6, 5, 4, 3, 2, 1, 0)),
    "128B_ATOM_32B": _ATOM32,
    "128B_ATOM_32B_FLIP_8B": _ATOM32,
    "128B_ATOM_64B": (_IDENTITY, (4, 5, 6, 7, 0, 1, 2, 3)),
}


def _printed_destination(mode, address):
    rows = PRINTED[mode]
    line = address >> 7
    cell = rows[line % len(rows)].index((address >> 4) & 7)
    within = address & 15
    if mode == "128B_ATOM_32B_FLIP_8B" and line % 2:     # "at every alternate shared memory line"
        within ^= 8
    return (address & ~127) + 16 * cell + within


@pytest.mark.parametrize("mode", sorted(PRINTED))
def test_tma_swizzle_follows_the_printed_table(mode):
    addresses = list(range(0, 2048, 8)) + [0x12345670 + i for i in range(0, 1024, 40)]
    assert [spec_tma.swizzle_byte_address(mode, a) for a in addresses] == \
        [_printed_destination(mode, a) for a in addresses]


def test_tma_repeat_boundaries_and_base_offsets():
    """PTX 5.5.7: the repeating pattern starts on 1024 (128B), 256 (96B), 512 (64B), 256 (32B) bytes;
    otherwise base offset = (dstMem / 128) % 8 | % 2 | % 4 | % 2."""
    assert {m: spec_tma.repeat_boundary(m) for m in ("128B", "96B", "64B", "32B")} == \
        {"128B": 1024, "96B": 256, "64B": 512, "32B": 256}
    for line in range(16):
        address = 128 * line
        assert (spec_tma.base_offset("128B", address), spec_tma.base_offset("96B", address),
                spec_tma.base_offset("64B", address), spec_tma.base_offset("32B", address)) == \
            (line % 8, line % 2, line % 4, line % 2)


# --- descriptor field ranges and the repeat of the descriptor swizzles ---------------------------------------
def test_byte_fields_hold_14_bits_of_x_shifted_by_4():
    """PTX 9.7.15.5.1.2.2 / Table 40: encode(x) = (x & 0x3FFFF) >> 4 in 14 bits: 0x3FFF0 is the largest
    value; 0x40000 does not fit, and neither does a value off the 16-byte grid."""
    assert spec_descriptor.encode("sm90", 0x3FFF0, 0x3FFF0, 0x3FFF0, "none").raw == \
        _sm90_word(0x3FFF0, 0x3FFF0, 0x3FFF0, 0, 0)
    for bad in (0x40000, 0x18):
        with pytest.raises(spec_descriptor.SpecError):
            spec_descriptor.encode("sm90", bad, 0, 0, "none")


def test_base_offset_is_three_bits():
    """Bits 49-51: 0..7."""
    assert spec_descriptor.encode("sm100", 0, 0, 0, "128B", 7).raw == _sm100_word(0, 0, 0, 7, False, 2)
    with pytest.raises(spec_descriptor.SpecError):
        spec_descriptor.encode("sm100", 0, 0, 0, "128B", 8)


def test_descriptor_swizzle_repeats():
    """PTX Table 41: the pattern starts on 1024 (128B), 512 (64B), 256 (32B) bytes; the 128B_atom32B atom
    Sw<2,5,2> takes address bits 7-8, so it repeats every 4 lines (512 bytes); none: one line."""
    from spec.cute.swizzle import pattern_rows, repeat_bytes
    assert {s: repeat_bytes(s) for s in ("none", "32B", "64B", "128B", "128B_atom32B")} == \
        {"none": 128, "32B": 256, "64B": 512, "128B": 1024, "128B_atom32B": 512}
    assert {s: pattern_rows(s) for s in ("none", "32B", "64B", "128B", "128B_atom32B")} == \
        {"none": 1, "32B": 2, "64B": 4, "128B": 8, "128B_atom32B": 4}
