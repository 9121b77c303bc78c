"""The operand rules at their limits, and read addresses of small canonical layouts, against values worked
out here from the manual's words (not from spec/): each test pins one boundary that a one-character
change of spec/ would move (tests/spec_tests/test_spec_mutations.py applies such changes and expects a test here,
or in tests/spec_tests/test_manual_oracles.py, to fail)."""
from __future__ import annotations

import pytest

from spec.mma import descriptor as spec_descriptor
from spec.mma import readmap


def _rules(op) -> set:
    return {v.rule.id for v in readmap.violations(op)}


def _operand(arch, dtype, major, mn, k=None, swizzle="128B", mode=None, kind=None, start=0, lbo=0, sbo=1024,
             base_offset=0):
    desc = spec_descriptor.encode(arch, start, lbo, sbo, swizzle, base_offset, mode)
    return readmap.make_operand(desc, dtype, major, mn, k, kind)


# --- wgmma N (PTX 9.7.15.5: N = 8..256 in steps of 8; s8/u8: 8, 16, 24 and multiples of 16 up to 256) ----
@pytest.mark.parametrize("n, legal", [(8, True), (248, True), (256, True), (264, False), (512, False)])
def test_wgmma_n_up_to_256(n, legal):
    assert ("operand.sm90.n_extent" not in _rules(_operand("sm90", "bf16", "K", n))) == legal


@pytest.mark.parametrize("n, legal", [(8, True), (16, True), (24, True), (32, True), (40, False), (48, True),
                                      (56, False), (256, True)])
def test_wgmma_integer_n(n, legal):
    """tests/hardware/ptxas_forms.json: ptxas refuses .m64n40k32 for integer types."""
    assert ("operand.sm90.n_extent" not in _rules(_operand("sm90", "s8", "K", n))) == legal


def test_wgmma_n_256_and_the_descriptor_target_still_break_nothing_else():
    assert _rules(_operand("sm90", "bf16", "K", 256)) == set()


# --- absolute LBO mode (PTX 9.7.16.3.1.2: the mode for a 48-byte K; restriction 2: K-major only) ---------
def test_absolute_mode_with_a_48_byte_k_is_the_intended_use():
    op = _operand("sm103", "e2m1", "K", 128, 96, mode="absolute", kind="mxf4", lbo=0x8000)
    assert op.k_bytes == 48
    assert "operand.lbo_absolute.k48" not in _rules(op)


@pytest.mark.parametrize("k", [32, 64])       # 16 and 32 bytes of dense E2M1
def test_absolute_mode_with_a_shorter_k_is_flagged(k):
    op = _operand("sm103", "e2m1", "K", 128, k, mode="absolute", kind="mxf4", lbo=0x8000)
    assert "operand.lbo_absolute.k48" in _rules(op)


def test_absolute_mode_is_k_major_only():
    mn_major = _operand("sm103", "bf16", "MN", 64, 16, mode="absolute", lbo=0x8000)
    k_major = _operand("sm103", "e2m1", "K", 128, 96, mode="absolute", kind="mxf4", lbo=0x8000)
    assert "operand.lbo_absolute.k_major" in _rules(mn_major)
    assert "operand.lbo_absolute.k_major" not in _rules(k_major)


# --- 128B with 32-byte atomicity has an MN-major atom only (PTX 9.7.16.10.6 Table 55) -----------------------
def test_k_major_atom32_is_flagged_and_mn_major_is_not():
    assert "operand.swizzle.k_major_atom32" in _rules(_operand("sm100", "tf32", "K", 64, 8, "128B_atom32B"))
    assert "operand.swizzle.k_major_atom32" not in _rules(_operand("sm100", "tf32", "MN", 64, 8, "128B_atom32B"))


# --- kind::i8 exists on sm_100a, not on sm_103a (PTX 9.7.16.10.9.1 target notes) --------------------------
def test_kind_i8_on_sm103_only_is_flagged():
    assert "operand.sm103.kind_i8" in _rules(_operand("sm103", "s8", "K", 64, 32))
    assert "operand.sm103.kind_i8" not in _rules(_operand("sm100", "s8", "K", 64, 32))


# --- read addresses of small layouts, from the canonical layouts of PTX 9.7.16.3.3 ------------------------
def _swizzled(address, bits, base, base_offset):
    """The descriptor swizzle as the H100 applies it (rule readmap.swizzle_phase): bits [base, base+bits)
    XOR ((address >> 7) - base offset) mod 2^bits."""
    return address ^ ((((address >> 7) - base_offset) & ((1 << bits) - 1)) << base)


def _both_ways(op):
    """Every element's address, through element_address and through read_addresses."""
    table = readmap.read_addresses(op)
    return {(mn, k): (readmap.element_address(op, mn, k), table[mn][k]) for mn in range(op.mn) for k in range(op.k)}


def _check(op, expected):
    for (mn, k), addresses in _both_ways(op).items():
        assert addresses == (expected(mn, k),) * 2, (mn, k, addresses, expected(mn, k))


def test_k_major_64b_bf16_with_a_base_offset():
    """((8,m),(T,C,k)):((C*T,SBO),(1,T,LBO)), W = 64: 8 bf16 per chunk, 4 chunks per row."""
    start, sbo, lbo = 0x1080, 512, 0x4000
    op = _operand("sm100", "bf16", "K", 16, 16, "64B", start=start, lbo=lbo, sbo=sbo, base_offset=1)
    _check(op, lambda mn, k: _swizzled(start + (mn // 8) * sbo + (mn % 8) * 64 + (k // 8) * 16 + (k % 8) * 2,
                                       2, 4, 1))


def test_k_major_no_swizzle_bf16():
    """((8,m),(T,2k)):((1T,SBO),(1,LBO)): rows 16 bytes apart, K chunks LBO apart."""
    start, sbo, lbo = 0x2000, 256, 0x400
    op = _operand("sm100", "bf16", "K", 16, 16, "none", start=start, lbo=lbo, sbo=sbo)
    _check(op, lambda mn, k: start + (mn // 8) * sbo + (mn % 8) * 16 + (k // 8) * lbo + (k % 8) * 2)


def test_mn_major_no_swizzle_bf16():
    """((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)): MN chunks SBO apart, K rows 16 bytes apart, K groups LBO."""
    start, sbo, lbo = 0x3000, 256, 0x800
    op = _operand("sm100", "bf16", "MN", 16, 16, "none", start=start, lbo=lbo, sbo=sbo)
    _check(op, lambda mn, k: start + (mn // 8) * sbo + (k // 8) * lbo + (k % 8) * 16 + (mn % 8) * 2)


def test_mn_major_64b_bf16():
    """((T,C,m),(R,k)):((1,T,LBO),(C*T,SBO)), W = 64, R = 8: atoms along MN LBO apart."""
    start, sbo, lbo = 0x4000, 0x200, 0x1000
    op = _operand("sm100", "bf16", "MN", 64, 16, "64B", start=start, lbo=lbo, sbo=sbo)
    _check(op, lambda mn, k: _swizzled(start + (mn // 8 % 4) * 16 + (mn // 32) * lbo + (k % 8) * 64
                                       + (k // 8) * sbo + (mn % 8) * 2, 2, 4, 0))


def test_mn_major_128b_atom32b_tf32():
    """128B with 32-byte atomicity: R = 4 K rows of 128 bytes per SBO step, Sw<2,5,2>."""
    start, sbo, lbo = 0x8000, 0x400, 0x2000         # SBO past the 4 rows: R = 8 would read elsewhere
    op = _operand("sm100", "tf32", "MN", 64, 8, "128B_atom32B", start=start, lbo=lbo, sbo=sbo)
    _check(op, lambda mn, k: _swizzled(start + (mn // 4 % 8) * 16 + (mn // 32) * lbo + (k % 4) * 128
                                       + (k // 4) * sbo + (mn % 4) * 4, 2, 5, 0))


@pytest.mark.parametrize("line_offset", [0, 16, 80, 96, 112])
def test_k48_split_at_the_end_of_the_start_s_line(line_offset):
    """PTX 9.7.16.3.1.2: byte p of the 48-byte K slice is at start + p while it stays in the start's
    128-byte line, past it at LBO (an absolute address) + the bytes that did not fit."""
    start, lbo, sbo = 0x2000 + line_offset, 0x6000, 1024
    op = _operand("sm103", "e2m1", "K", 16, 96, mode="absolute", kind="mxf4", start=start, lbo=lbo, sbo=sbo)

    def expected(mn, k):
        p, in_line = k // 2, line_offset + k // 2
        linear = (mn // 8) * sbo + (mn % 8) * 128 + (start + p if in_line < 128 else lbo + in_line - 128)
        return _swizzled(linear, 3, 4, 0)
    _check(op, expected)
