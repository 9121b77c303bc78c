"""Mutation tests of spec/: each deliberately broken variant of the executable specification (a bound moved
by one, a field at the wrong bit, a table row swapped, ...) must make at least one of the tests named with
it fail. The mutants are applied in-process and undone by monkeypatch (tests/mutants.py); the tree is not
modified. The tests that kill them state expectations from the manual (tests/spec_tests/test_readmap_limits.py,
tests/spec_tests/test_manual_oracles.py), never from spec/'s own output."""
from __future__ import annotations

import pytest

import test_manual_oracles as oracles
import test_readmap_limits as limits
from mutants import swap
from spec.cute import swizzle as cute_swizzle
from spec.mma import descriptor as descriptor
from spec.mma import readmap as readmap
from spec.tma import swizzle as tma_swizzle

pytestmark = pytest.mark.slow


def _each(test, cases):
    """A parametrized test run over its cases (a list of argument tuples)."""
    return lambda: [test(*case) for case in cases]


WGMMA_N = _each(limits.test_wgmma_n_up_to_256, [(256, True), (264, False)])
INTEGER_N = _each(limits.test_wgmma_integer_n, [(40, False), (48, True), (24, True)])
ABSOLUTE_K = _each(limits.test_absolute_mode_with_a_shorter_k_is_flagged, [(32,), (64,)])
K48_SPLIT = _each(limits.test_k48_split_at_the_end_of_the_start_s_line, [(0,), (96,), (112,)])
SM90_WORDS = _each(oracles.test_sm90_words, [(s,) for s in sorted(oracles.SM90_CODES)])
SM100_WORDS = _each(oracles.test_sm100_words, [("sm100", s) for s in sorted(oracles.SM100_CODES)])
CUTE = _each(oracles.test_cute_swizzle_moves_the_right_bits, [(3, 4, 3), (2, 4, -3), (3, 0, -4), (1, 6, -1)])
TMA_TABLES = _each(oracles.test_tma_swizzle_follows_the_printed_table, [(m,) for m in sorted(oracles.PRINTED)])


def _constant(module, name, value):
    return lambda mp: mp.setattr(module, name, value)


def _entry(mapping, key, value):
    return lambda mp: mp.setitem(mapping, key, value)


def _code(function, old, new):
    return lambda mp: swap(mp, function, old, new)


# name -> (apply(monkeypatch), the tests expected to notice it)
MUTATIONS = {
    # spec/mma/readmap.py: operand rules
    "wgmma N = 256 refused (op.mn < 256)": (
        _code(readmap._sm90_n, "op.mn <= 256", "op.mn < 256"), [WGMMA_N]),
    "integer wgmma N in steps of 8": (
        _code(readmap._sm90_n, "op.mn % 16 == 0", "op.mn % 8 == 0"), [INTEGER_N]),
    "absolute mode accepted from 32 bytes of K": (
        _code(readmap._absolute_k48, "op.k_bytes == 48", "op.k_bytes >= 32"), [ABSOLUTE_K]),
    "absolute mode checked on K-major instead of MN-major": (
        _code(readmap._absolute_k_major, 'op.major != "K"', 'op.major == "K"'),
        [limits.test_absolute_mode_is_k_major_only]),
    "K-major atom32 rule checks MN-major": (
        _code(readmap._k_major_atom32, 'op.major == "K"', 'op.major == "MN"'),
        [limits.test_k_major_atom32_is_flagged_and_mn_major_is_not]),
    "kind::i8 refused on sm100 instead of sm103": (
        _code(readmap._sm103_i8, 'op.arch == "sm103"', 'op.arch == "sm100"'),
        [limits.test_kind_i8_on_sm103_only_is_flagged]),
    # spec/mma/readmap.py: the read map
    "64B swizzle rows 32 bytes apart": (
        _entry(readmap.ROW_BYTES, "64B", 32), [limits.test_k_major_64b_bf16_with_a_base_offset]),
    "MN-major 128B_atom32B groups of 8 K rows": (
        _code(readmap._mn_major_group_rows, "return 4 if", "return 8 if"),
        [limits.test_mn_major_128b_atom32b_tf32]),
    "48-byte K split one chunk early": (
        _code(readmap._k48_first_chunks, "// CHUNK", "// CHUNK - 1"), [K48_SPLIT]),
    "phase adds the base offset (element_address)": (
        _code(readmap.swizzle_phase, "((address // LINE) - base_offset)", "((address // LINE) + base_offset)"),
        [limits.test_k_major_64b_bf16_with_a_base_offset]),
    "phase adds the base offset (read_addresses)": (
        _code(readmap.read_addresses, "(a >> 7) - base_offset", "(a >> 7) + base_offset"),
        [limits.test_k_major_64b_bf16_with_a_base_offset]),
    "K-major no swizzle: K chunks 16 bytes apart instead of LBO": (
        _code(readmap._k_major_k_part, "return chunk * lbo", "return chunk * CHUNK"),
        [limits.test_k_major_no_swizzle_bf16]),
    "K-major row groups LBO apart instead of SBO": (
        _code(readmap._k_major_mn_part, "(mn // 8) * op.desc.stride_byte_offset",
              "(mn // 8) * op.desc.leading_byte_offset"), [limits.test_k_major_64b_bf16_with_a_base_offset]),
    "MN-major no swizzle: K groups SBO apart instead of LBO": (
        _code(readmap._mn_major_k_part, "(k // 8) * desc.leading_byte_offset", "(k // 8) * desc.stride_byte_offset"),
        [limits.test_mn_major_no_swizzle_bf16]),
    "MN-major swizzled: MN atoms SBO apart instead of LBO": (
        _code(readmap._mn_major_mn_part, "(chunk // per_row) * desc.leading_byte_offset",
              "(chunk // per_row) * desc.stride_byte_offset"), [limits.test_mn_major_64b_bf16]),
    # spec/mma/descriptor.py: bit tables, moved consistently in encode and decode
    "SBO at bit 33": (
        _constant(descriptor, "SBO", descriptor.BitField("stride_byte_offset", 33, 14)), [SM90_WORDS]),
    "sm100 swizzle at bit 60": (
        _constant(descriptor, "SM100_SWIZZLE", descriptor.BitField("swizzle", 60, 3)), [SM100_WORDS]),
    "sm100 fixed constant 0b011": (_constant(descriptor, "SM100_FIXED_VALUE", 0b011), [SM100_WORDS]),
    "base offset at bit 48": (
        _constant(descriptor, "BASE_OFFSET", descriptor.BitField("base_offset", 48, 3)), [SM90_WORDS]),
    "sm100 64B swizzle code 5": (_entry(descriptor.SM100_SWIZZLE_CODES, "64B", 5), [SM100_WORDS]),
    "sm90 32B and 64B codes swapped": (
        lambda mp: [mp.setitem(descriptor.SM90_SWIZZLE_CODES, "32B", 2),
                    mp.setitem(descriptor.SM90_SWIZZLE_CODES, "64B", 3)], [SM90_WORDS]),
    "byte fields stored >> 3 in encode": (
        _code(descriptor._encode_bytes, "return value >> 4", "return value >> 3"), [SM90_WORDS]),
    "fixed-bits rule reads bits 47 to 49": (
        _constant(descriptor, "SM100_FIXED", descriptor.BitField("fixed_0b001", 47, 3)),
        [oracles.test_sm100_fixed_bits_rule_reads_bits_46_to_48]),
    "byte fields accepted up to 2^18": (
        _code(descriptor._encode_bytes, "value >= 1 << 18", "value > 1 << 18"),
        [oracles.test_byte_fields_hold_14_bits_of_x_shifted_by_4]),
    "byte fields accepted off the 16-byte grid": (
        _code(descriptor._encode_bytes, "value % 16", "value % 8"),
        [oracles.test_byte_fields_hold_14_bits_of_x_shifted_by_4]),
    "base offset accepted up to 8": (
        _code(descriptor.encode, "0 <= base_offset < 8", "0 <= base_offset <= 8"),
        [oracles.test_base_offset_is_three_bits]),
    # spec/cute/swizzle.py
    "negative shift moves one bit too far": (
        _code(cute_swizzle.Swizzle.__call__, "moved << -self.shift", "moved << (1 - self.shift)"), [CUTE]),
    "source mask at M + |S|": (
        _code(cute_swizzle.Swizzle.yyy_mask.fget, "max(0, self.shift)", "abs(self.shift)"), [CUTE]),
    "128B_atom32B byte function Sw<2,4,3>": (
        _entry(cute_swizzle.DESCRIPTOR_SWIZZLES, "128B_atom32B", cute_swizzle.Swizzle(2, 4, 3)),
        [oracles.test_descriptor_swizzles_are_the_atoms_byte_functions]),
    "descriptor pattern rows 2^(B+1)": (
        _code(cute_swizzle.pattern_rows, "return 1 << DESCRIPTOR_SWIZZLES[swizzle_name].bits",
              "return 2 << DESCRIPTOR_SWIZZLES[swizzle_name].bits"), [oracles.test_descriptor_swizzle_repeats]),
    # spec/tma/swizzle.py
    "96B table replaced by the 64B table": (
        _entry(tma_swizzle._TABLES, "96B", tma_swizzle._TABLES["64B"]), [TMA_TABLES]),
    "8-byte flip on even lines": (_code(tma_swizzle.flips_8b, "% 2 == 1", "% 2 == 0"), [TMA_TABLES]),
    "table row chosen by 256-byte blocks": (
        _code(tma_swizzle.swizzle_byte_address, "(address // ROW_BYTES) % len(table)", "(address // 256) % len(table)"),
        [TMA_TABLES]),
    "96B repeat boundary 512": (
        _entry(tma_swizzle.REPEAT_BOUNDARY_TABLE, "96B", 512), [oracles.test_tma_repeat_boundaries_and_base_offsets]),
    "64B base offset modulo 8": (
        _entry(tma_swizzle.BASE_OFFSET_MODULUS, "64B", 8), [oracles.test_tma_repeat_boundaries_and_base_offsets]),
}


def _fails(test) -> bool:
    try:
        test()
    except (Exception, pytest.fail.Exception):     # an assertion, pytest.raises' "did not raise", or an
        # error a broken spec raises: the test fails
        return True
    return False


def test_there_are_at_least_30_spec_mutants():
    assert len(MUTATIONS) >= 30


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_spec_mutation_is_caught(name, monkeypatch):
    apply, tests = MUTATIONS[name]
    for test in tests:
        assert not _fails(test), f"the test fails without the mutation: {name}"
    apply(monkeypatch)
    assert any(_fails(test) for test in tests), f"no test noticed the mutation: {name}"
