"""Shared-memory matrix descriptors (spec/mma/descriptor.py) against the PTX bit tables.

Every expected word here is built with this file's own shifts from the manual's bit positions
(PTX 9.7.15.5.1.2.2; 9.7.16.4.1 Tables 40-41):

  sm90  (PTX 9.7.15.5.1.2.2): start [0,14), LBO [16,30), SBO [32,46), base offset [49,52),
        swizzle [62,64): 0 none, 1 128B, 2 64B, 3 32B. All other bits unused.
  sm100/sm103 (PTX 9.7.16.4.1 Table 40): start [0,14), LBO [16,30), SBO [32,46), fixed 0b001 at
        [46,49), base offset [49,52), LBO mode bit 52, fixed 0 at [53,61), swizzle [61,64):
        0 none, 1 128B_atom32B, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid.
  Addresses/offsets are stored as (x & 0x3FFFF) >> 4.

Nothing here calls the spec's BitField helpers or copies output of the code under test.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import spec.rules  # noqa: F401  (registers every rule)
from spec.mma import descriptor as d
from spec.rules import SpecError, rules_for

ARCHES = ("sm90", "sm100", "sm103")
SM100_LIKE = ("sm100", "sm103")

# Swizzle codes written out from the manual's tables (not from spec.mma.descriptor's dicts).
SM90_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SM100_CODES = {"none": 0, "128B_atom32B": 1, "128B": 2, "64B": 4, "32B": 6}
SM100_INVALID_CODES = (3, 5, 7)

MASK64 = (1 << 64) - 1


def codes_for(arch):
    return SM90_CODES if arch == "sm90" else SM100_CODES


def enc(x):
    """The manual's encode(x) = (x & 0x3FFFF) >> 4."""
    return (x & 0x3FFFF) >> 4


def sm90_word(start=0, lbo=0, sbo=0, base_offset=0, swizzle_code=0):
    return (enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | base_offset << 49 | swizzle_code << 62)


def sm100_word(start=0, lbo=0, sbo=0, base_offset=0, swizzle_code=0, lbo_mode=0, fixed=0b001):
    return (enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | fixed << 46 | base_offset << 49
            | lbo_mode << 52 | swizzle_code << 61)


def word_for(arch, start=0, lbo=0, sbo=0, base_offset=0, swizzle="none", lbo_mode=None):
    if arch == "sm90":
        assert lbo_mode in (None, "relative")
        return sm90_word(start, lbo, sbo, base_offset, SM90_CODES[swizzle])
    return sm100_word(start, lbo, sbo, base_offset, SM100_CODES[swizzle],
                      1 if lbo_mode == "absolute" else 0)


FIXED_0B001 = 1 << 46  # present in every well-formed sm100/sm103 word


def fixed_bits(arch):
    return 0 if arch == "sm90" else FIXED_0B001


def ids(violations):
    return sorted(v.rule.id for v in violations)


# --- encode: one field at a time -> literal word --------------------------------------------------

@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("field,lo", [("start_address", 0), ("leading_byte_offset", 16),
                                      ("stride_byte_offset", 32)])
@pytest.mark.parametrize("value", [16, 0x400, 0x3FFF0])
def test_encode_byte_field_position(arch, field, lo, value):
    args = {"start_address": 0, "leading_byte_offset": 0, "stride_byte_offset": 0}
    args[field] = value
    desc = d.encode(arch, swizzle="none", **args)
    assert desc.raw == ((value >> 4) << lo) | fixed_bits(arch)
    assert getattr(desc, field) == value


def test_encode_byte_fields_literal_words():
    # 14-bit fields filled with ones: 0x3FFF at bit 0, 16 and 32.
    assert d.encode("sm90", 0x3FFF0, 0, 0, "none").raw == 0x0000_0000_0000_3FFF
    assert d.encode("sm90", 0, 0x3FFF0, 0, "none").raw == 0x0000_0000_3FFF_0000
    assert d.encode("sm90", 0, 0, 0x3FFF0, "none").raw == 0x0000_3FFF_0000_0000
    assert d.encode("sm100", 0x3FFF0, 0, 0, "none").raw == 0x0000_4000_0000_3FFF
    assert d.encode("sm103", 0, 0, 0x3FFF0, "none").raw == 0x0000_7FFF_0000_0000


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("base_offset", range(8))
def test_encode_base_offset_position(arch, base_offset):
    desc = d.encode(arch, 0, 0, 0, "128B", base_offset=base_offset)
    swz = (1 << 62) if arch == "sm90" else (2 << 61)
    assert desc.raw == (base_offset << 49) | swz | fixed_bits(arch)
    assert desc.base_offset == base_offset


def test_encode_base_offset_literal():
    assert d.encode("sm90", 0, 0, 0, "64B", base_offset=7).raw == 0x800E_0000_0000_0000
    assert d.encode("sm100", 0, 0, 0, "64B", base_offset=7).raw == 0x800E_4000_0000_0000


@pytest.mark.parametrize("name,code", SM90_CODES.items())
def test_encode_sm90_swizzle_position(name, code):
    assert d.encode("sm90", 0, 0, 0, name).raw == code << 62


@pytest.mark.parametrize("arch", SM100_LIKE)
@pytest.mark.parametrize("name,code", SM100_CODES.items())
def test_encode_sm100_swizzle_position(arch, name, code):
    assert d.encode(arch, 0, 0, 0, name).raw == (code << 61) | FIXED_0B001


@pytest.mark.parametrize("arch", SM100_LIKE)
def test_encode_sm100_fixed_and_lbo_mode(arch):
    assert d.encode(arch, 0, 0, 0, "none").raw == 0x0000_4000_0000_0000  # only 0b001 at [46,49)
    assert d.encode(arch, 0, 0, 0, "none", lbo_mode="relative").raw == 0x0000_4000_0000_0000
    absolute = d.encode(arch, 0, 0, 0, "none", lbo_mode="absolute")
    assert absolute.raw == 0x0010_4000_0000_0000  # + bit 52
    assert absolute.lbo_mode == "absolute"


def test_sm90_has_no_fixed_bits_and_no_lbo_mode():
    desc = d.encode("sm90", 0, 0, 0, "none")
    assert desc.raw == 0
    assert desc.lbo_mode is None


# --- decode of hand-built words ------------------------------------------------------------------

def test_decode_sm90_hand_built():
    # start 0x1230 -> 0x123; LBO 0x2000 -> 0x200; SBO 0x3FFF0 -> 0x3FFF; base offset 5; swizzle 64B (2).
    word = 0x123 | 0x200 << 16 | 0x3FFF << 32 | 5 << 49 | 2 << 62
    assert word == 0x800A_3FFF_0200_0123
    desc = d.decode("sm90", word)
    assert (desc.start_address, desc.leading_byte_offset, desc.stride_byte_offset) == (0x1230, 0x2000, 0x3FFF0)
    assert desc.base_offset == 5
    assert desc.swizzle == "64B"
    assert desc.lbo_mode is None
    assert desc.raw == word
    assert desc.hex == "0x800a3fff02000123"


@pytest.mark.parametrize("arch", SM100_LIKE)
def test_decode_sm100_hand_built(arch):
    # start 0x10 -> 1; LBO 0x3FFF0 -> 0x3FFF; SBO 0x400 -> 0x40; fixed 0b001; base offset 3;
    # LBO mode 1; swizzle 6 (32B).
    word = 0x1 | 0x3FFF << 16 | 0x40 << 32 | 1 << 46 | 3 << 49 | 1 << 52 | 6 << 61
    assert word == 0xC016_4040_3FFF_0001
    desc = d.decode(arch, word)
    assert (desc.start_address, desc.leading_byte_offset, desc.stride_byte_offset) == (0x10, 0x3FFF0, 0x400)
    assert desc.base_offset == 3
    assert desc.lbo_mode == "absolute"
    assert desc.swizzle == "32B"
    assert desc.raw == word


def test_decode_all_ones_fields_do_not_bleed():
    ones = MASK64
    sm90 = d.decode("sm90", ones)
    assert (sm90.start_address, sm90.leading_byte_offset, sm90.stride_byte_offset) == (0x3FFF0,) * 3
    assert (sm90.base_offset, sm90.swizzle, sm90.lbo_mode) == (7, "32B", None)
    sm100 = d.decode("sm100", ones)
    assert (sm100.start_address, sm100.leading_byte_offset, sm100.stride_byte_offset) == (0x3FFF0,) * 3
    assert (sm100.base_offset, sm100.swizzle, sm100.lbo_mode) == (7, "invalid(7)", "absolute")


def test_decode_ignores_neighbouring_bits():
    # Only the gap bits set: none of them belongs to a field of either format except bit 52 (sm100
    # LBO mode) and bits 46..48 (sm100 fixed).
    gaps = (0b11 << 14) | (0b11 << 30) | (0b111 << 46) | (1 << 52)
    for arch in ARCHES:
        desc = d.decode(arch, gaps)
        assert (desc.start_address, desc.leading_byte_offset, desc.stride_byte_offset) == (0, 0, 0)
        assert desc.base_offset == 0
        assert desc.swizzle == "none"
    assert d.decode("sm100", gaps).lbo_mode == "absolute"
    # sm90's swizzle is only [62,64): bit 61 is not part of it.
    assert d.decode("sm90", 1 << 61).swizzle == "none"


@pytest.mark.parametrize("name,code", SM90_CODES.items())
def test_decode_sm90_swizzle_codes(name, code):
    assert d.decode("sm90", code << 62).swizzle == name


@pytest.mark.parametrize("arch", SM100_LIKE)
@pytest.mark.parametrize("code", range(8))
def test_decode_sm100_swizzle_codes(arch, code):
    expected = {0: "none", 1: "128B_atom32B", 2: "128B", 4: "64B", 6: "32B"}.get(code, f"invalid({code})")
    assert d.decode(arch, FIXED_0B001 | code << 61).swizzle == expected


# --- hypothesis round trips -----------------------------------------------------------------------

BYTES = st.integers(0, (1 << 14) - 1).map(lambda e: e << 4)   # multiples of 16 below 2^18
BASE = st.integers(0, 7)


@st.composite
def fields(draw):
    arch = draw(st.sampled_from(ARCHES))
    swizzle = draw(st.sampled_from(sorted(codes_for(arch))))
    mode = None if arch == "sm90" else draw(st.sampled_from(["relative", "absolute"]))
    return dict(arch=arch, start_address=draw(BYTES), leading_byte_offset=draw(BYTES),
                stride_byte_offset=draw(BYTES), base_offset=draw(BASE), swizzle=swizzle, lbo_mode=mode)


@settings(max_examples=300, deadline=None)
@given(fields())
def test_decode_encode_fields_round_trip(f):
    desc = d.encode(f["arch"], f["start_address"], f["leading_byte_offset"], f["stride_byte_offset"],
                    f["swizzle"], f["base_offset"], f["lbo_mode"])
    expected_word = word_for(f["arch"], f["start_address"], f["leading_byte_offset"],
                             f["stride_byte_offset"], f["base_offset"], f["swizzle"], f["lbo_mode"])
    assert desc.raw == expected_word
    back = d.decode(f["arch"], desc.raw)
    got = back.fields_json()
    assert got == {k: v for k, v in f.items() if k != "arch"}
    assert back.arch == f["arch"]


@settings(max_examples=300, deadline=None)
@given(fields())
def test_encode_decode_word_round_trip(f):
    word = word_for(f["arch"], f["start_address"], f["leading_byte_offset"], f["stride_byte_offset"],
                    f["base_offset"], f["swizzle"], f["lbo_mode"])
    desc = d.decode(f["arch"], word)
    again = d.encode(f["arch"], **desc.fields_json())
    assert again.raw == word
    # and via with_fields with no change
    assert d.with_fields(desc).raw == word


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ARCHES), st.integers(0, MASK64))
def test_decode_any_word_extracts_manual_fields(arch, word):
    desc = d.decode(arch, word)
    assert desc.start_address == (word & 0x3FFF) << 4
    assert desc.leading_byte_offset == ((word >> 16) & 0x3FFF) << 4
    assert desc.stride_byte_offset == ((word >> 32) & 0x3FFF) << 4
    assert desc.base_offset == (word >> 49) & 0b111
    if arch == "sm90":
        assert desc.swizzle == {0: "none", 1: "128B", 2: "64B", 3: "32B"}[word >> 62]
        assert desc.lbo_mode is None
    else:
        code = word >> 61
        assert desc.swizzle == {0: "none", 1: "128B_atom32B", 2: "128B", 4: "64B",
                                6: "32B"}.get(code, f"invalid({code})")
        assert desc.lbo_mode == ("absolute" if (word >> 52) & 1 else "relative")


@settings(max_examples=300, deadline=None)
@given(fields())
def test_violations_of_encoded_fields_match_hand_oracle(f):
    """A word from encode has no stray/fixed-bit problems; the only violations are the semantic ones."""
    desc = d.encode(f["arch"], f["start_address"], f["leading_byte_offset"], f["stride_byte_offset"],
                    f["swizzle"], f["base_offset"], f["lbo_mode"])
    expected = set()
    if f["swizzle"] == "none" and f["base_offset"]:
        expected.add("desc.base_offset.no_swizzle")
    if f["lbo_mode"] == "absolute":
        if f["arch"] != "sm103":
            expected.add("desc.lbo_mode.arch")
        if f["swizzle"] != "128B":
            expected.add("desc.lbo_mode.absolute.swizzle_128b")
        if f["base_offset"]:
            expected.add("desc.lbo_mode.absolute.base_offset_zero")
    assert set(ids(d.violations(desc))) == expected


# --- CUTLASS make_gmma_desc / make_umma_desc known descriptor -----------------------------------

def test_cutlass_k_major_128b_sm90_word():
    # K-major SW128: start 0x400 -> 0x40 at [0,14); LBO encoded 1 (16 B) -> 1 << 16 = 0x10000;
    # SBO 1024 B -> 64 << 32 = 0x40_0000_0000; swizzle 128B = 1 at [62,64) -> 1 << 62.
    # 0x4000_0000_0000_0000 + 0x40_0000_0000 + 0x1_0000 + 0x40 = 0x4000_0040_0001_0040.
    expected = 0x4000004000010040
    assert (1 << 62) + (64 << 32) + (1 << 16) + 0x40 == expected
    desc = d.encode("sm90", start_address=0x400, leading_byte_offset=16, stride_byte_offset=1024,
                    swizzle="128B")
    assert desc.raw == expected
    assert desc.hex == "0x4000004000010040"
    back = d.decode("sm90", expected)
    assert back.fields_json() == {"start_address": 0x400, "leading_byte_offset": 16,
                                  "stride_byte_offset": 1024, "base_offset": 0, "lbo_mode": None,
                                  "swizzle": "128B"}
    assert d.violations(back) == []


@pytest.mark.parametrize("arch", SM100_LIKE)
def test_cutlass_k_major_128b_sm100_word(arch):
    # Same fields; swizzle 128B = 2 at [61,64) -> 2 << 61 = 1 << 62; version 0b001 at [46,49) -> 1 << 46.
    expected = 0x4000404000010040
    assert (2 << 61) + (1 << 46) + (64 << 32) + (1 << 16) + 0x40 == expected
    desc = d.encode(arch, start_address=0x400, leading_byte_offset=16, stride_byte_offset=1024,
                    swizzle="128B")
    assert desc.raw == expected
    back = d.decode(arch, expected)
    assert back.fields_json() == {"start_address": 0x400, "leading_byte_offset": 16,
                                  "stride_byte_offset": 1024, "base_offset": 0, "lbo_mode": "relative",
                                  "swizzle": "128B"}
    assert d.violations(back) == []


def test_cutlass_sm90_word_is_not_an_sm100_word():
    # Without the 0b001 version bits an sm90 word read as sm100 breaks exactly the fixed-bits rule.
    assert ids(d.violations(d.decode("sm100", 0x4000004000010040))) == ["desc.sm100.fixed_bits"]


# --- swizzle codes differ between sm90 and sm100 (same name, different code) -----------------------

@pytest.mark.parametrize("name,sm90_code,sm100_code", [("128B", 1, 2), ("64B", 2, 4), ("32B", 3, 6)])
def test_swizzle_code_differs_between_sm90_and_sm100(name, sm90_code, sm100_code):
    w90 = d.encode("sm90", 0, 0, 0, name).raw
    w100 = d.encode("sm100", 0, 0, 0, name).raw
    assert (w90 >> 62) & 0b11 == sm90_code
    assert (w100 >> 61) & 0b111 == sm100_code
    assert sm90_code != sm100_code
    # The sm100 field starts one bit lower, so the top two bits coincide (code100 == 2 * code90).
    assert w100 & ~FIXED_0B001 == w90


@pytest.mark.parametrize("sm90_code,sm100_reading", [(1, "128B_atom32B"), (2, "128B"), (3, "invalid(3)")])
def test_sm90_code_written_into_sm100_field_is_a_different_mode(sm90_code, sm100_reading):
    # The bug class: writing the sm90 number into sm100's [61,64) field.
    sm90_name = {1: "128B", 2: "64B", 3: "32B"}[sm90_code]
    assert d.decode("sm100", FIXED_0B001 | sm90_code << 61).swizzle == sm100_reading
    assert sm100_reading != sm90_name
    # and the reverse: sm100's number for 128B (2) placed at sm90's [62,64) means 64B there
    assert d.decode("sm90", 2 << 62).swizzle == "64B"


def test_128b_atom32b_has_no_sm90_code():
    with pytest.raises(SpecError) as e:
        d.encode("sm90", 0, 0, 0, "128B_atom32B")
    assert e.value.field_name == "swizzle"


# --- constraint rules: each broken by hand-made words ---------------------------------------------

V90 = sm90_word(0x400, 16, 1024, 0, 1)                # valid sm90 (CUTLASS K-major SW128)
V100 = sm100_word(0x400, 16, 1024, 0, 2)              # valid sm100/sm103

BREAKING = [
    # desc.sm90.unused_bits_zero: bits [14,16), [30,32), [46,49), [52,62)
    *[("sm90", V90 | 1 << b, "desc.sm90.unused_bits_zero") for b in (14, 15, 30, 31, 46, 47, 48, 52, 53, 57, 61)],
    # desc.sm100.fixed_bits: [46,49) != 0b001
    *[(a, sm100_word(0x400, 16, 1024, 0, 2, fixed=f), "desc.sm100.fixed_bits")
      for a in SM100_LIKE for f in (0b000, 0b010, 0b011, 0b100, 0b111)],
    # desc.sm100.reserved_bits_zero: [14,16), [30,32), [53,61)
    *[(a, V100 | 1 << b, "desc.sm100.reserved_bits_zero")
      for a in SM100_LIKE for b in (14, 15, 30, 31, 53, 54, 55, 56, 57, 58, 59, 60)],
    # desc.sm100.swizzle_code: 3, 5, 7
    *[(a, sm100_word(0x400, 16, 1024, 0, c), "desc.sm100.swizzle_code") for a in SM100_LIKE for c in (3, 5, 7)],
    # desc.base_offset.no_swizzle
    *[("sm90", sm90_word(0x400, 16, 1024, bo, 0), "desc.base_offset.no_swizzle") for bo in (1, 4, 7)],
    *[(a, sm100_word(0x400, 16, 1024, bo, 0), "desc.base_offset.no_swizzle") for a in SM100_LIKE for bo in (1, 7)],
    # desc.lbo_mode.arch: absolute mode on sm100 (with an otherwise legal 128B, base 0 word)
    ("sm100", sm100_word(0x400, 0x430, 1024, 0, 2, lbo_mode=1), "desc.lbo_mode.arch"),
    # desc.lbo_mode.absolute.swizzle_128b: sm103 absolute with any swizzle but 128B
    *[("sm103", sm100_word(0x400, 0x430, 1024, 0, c, lbo_mode=1), "desc.lbo_mode.absolute.swizzle_128b")
      for c in (0, 1, 4, 6)],
    # desc.lbo_mode.absolute.base_offset_zero
    *[("sm103", sm100_word(0x400, 0x430, 1024, bo, 2, lbo_mode=1), "desc.lbo_mode.absolute.base_offset_zero")
      for bo in (1, 7)],
]


@pytest.mark.parametrize("arch,word,rule_id", BREAKING, ids=lambda v: hex(v) if isinstance(v, int) else v)
def test_rule_broken_by_hand_made_word(arch, word, rule_id):
    assert ids(d.violations(d.decode(arch, word))) == [rule_id]


def test_every_descriptor_rule_has_a_breaking_case():
    table = {rule_id for _, _, rule_id in BREAKING}
    catalogue = {r.id for r in rules_for("descriptor")}
    assert table == catalogue
    assert all(r.check is not None for r in rules_for("descriptor"))


VALID = [
    ("sm90", V90),
    ("sm90", sm90_word(0, 0, 0, 0, 0)),
    ("sm90", sm90_word(0x3FFF0, 0x3FFF0, 0x3FFF0, 7, 3)),
    ("sm100", V100),
    ("sm103", V100),
    ("sm100", sm100_word(0x3FFF0, 0x3FFF0, 0x3FFF0, 7, 6)),
    ("sm100", sm100_word(0x400, 16, 1024, 0, 1)),              # 128B_atom32B
    ("sm103", sm100_word(0x400, 0x430, 1024, 0, 2, lbo_mode=1)),  # sm103 absolute LBO, 128B, base 0
]


@pytest.mark.parametrize("arch,word", VALID, ids=lambda v: hex(v) if isinstance(v, int) else v)
def test_valid_descriptor_has_no_violations(arch, word):
    assert d.violations(d.decode(arch, word)) == []


# --- unrepresentable values -----------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("field", ["start_address", "leading_byte_offset", "stride_byte_offset"])
@pytest.mark.parametrize("value", [8, 17, 0x3FFF8, 1 << 18, (1 << 18) + 16, -16, -1])
def test_unrepresentable_byte_value_raises(arch, field, value):
    args = {"start_address": 0, "leading_byte_offset": 0, "stride_byte_offset": 0, field: value}
    with pytest.raises(SpecError) as e:
        d.encode(arch, swizzle="128B", **args)
    assert e.value.field_name == field
    assert field in str(e.value)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("base_offset", [8, 9, -1])
def test_base_offset_out_of_range_raises(arch, base_offset):
    with pytest.raises(SpecError) as e:
        d.encode(arch, 0, 0, 0, "128B", base_offset=base_offset)
    assert e.value.field_name == "base_offset"


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", ["16B", "128b", "NONE", "128B_ATOM_32B", "invalid(3)", ""])
def test_unknown_swizzle_name_raises(arch, name):
    with pytest.raises(SpecError) as e:
        d.encode(arch, 0, 0, 0, name)
    assert e.value.field_name == "swizzle"


def test_lbo_mode_absolute_on_sm90_raises():
    with pytest.raises(SpecError) as e:
        d.encode("sm90", 0, 0, 0, "128B", lbo_mode="absolute")
    assert e.value.field_name == "lbo_mode"


@pytest.mark.parametrize("arch", SM100_LIKE)
def test_unknown_lbo_mode_raises(arch):
    with pytest.raises(SpecError) as e:
        d.encode(arch, 0, 0, 0, "128B", lbo_mode="offset")
    assert e.value.field_name == "lbo_mode"


@pytest.mark.parametrize("arch", ["sm80", "sm_90", "SM100", "sm101"])
def test_unknown_arch_raises(arch):
    with pytest.raises(SpecError) as e:
        d.encode(arch, 0, 0, 0, "none")
    assert e.value.field_name == "arch"
    with pytest.raises(SpecError):
        d.decode(arch, 0)


# --- parse_word -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("0x4000004000010040", 0x4000004000010040),
    ("0X4000004000010040", 0x4000004000010040),
    ("0x4000_0040_0001_0040", 0x4000004000010040),
    ("  0x40  ", 0x40),
    ("9", 9),                    # one digit: the same word read as hex or decimal
    ("0", 0),
    ("0xffffffffffffffff", MASK64),
    ("18446744073709551615", MASK64),
])
def test_parse_word_accepts(text, value):
    assert d.parse_word(text) == value


@pytest.mark.parametrize("text", ["", "0x", "0xZZ", "0x12g4", "hello", "12.5", "0b101", "4000004000010040ab",
                                  "0x10000000000000000", "18446744073709551616", "-1", "-0x1",
                                  "64", "4000004000010040"])   # bare digits that read as another word in hex
def test_parse_word_rejects(text):
    with pytest.raises(SpecError) as e:
        d.parse_word(text)
    assert e.value.field_name == "descriptor"


@pytest.mark.parametrize("word", [-1, 1 << 64, (1 << 64) + 0x40])
def test_decode_refuses_words_outside_64_bits(word):
    with pytest.raises(SpecError) as error:
        d.decode("sm90", word)
    assert error.value.field_name == "descriptor"


@pytest.mark.parametrize("text, arch", [("sm90", "sm90"), ("SM90", "sm90"), ("sm_90a", "sm90"), ("sm_100a", "sm100"),
                                        ("sm_100f", "sm100"), ("sm103", "sm103"), ("sm_103a", "sm103")])
def test_arch_spellings_users_write_read_as_one(text, arch):
    assert d.canonical_arch(text) == arch


@pytest.mark.parametrize("text", ["sm80", "sm_120a", "sm_90x", "90", "", "sm_9 0"])
def test_other_arch_spellings_are_refused(text):
    with pytest.raises(SpecError) as e:
        d.canonical_arch(text)
    assert e.value.field_name == "arch"
