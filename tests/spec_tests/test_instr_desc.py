"""The tcgen05 instruction descriptor (spec/mma/instr_desc.py) against PTX 9.7.16.4.2 Tables 42-44.

Bit positions are written out below from the tables (as quoted in spec/mma/instr_desc.py's docstring);
expected words are built with this file's own shifts, never with the spec's BitFields.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import spec.rules  # noqa: F401  (registers every rule)
from spec.mma import instr_desc as idesc
from spec.rules import SpecError, rules_for

# name -> (lo, width), from the tables.
TABLE42 = {  # kinds f16 / tf32 / f8f6f4 / i8
    "sparsity_selector": (0, 2), "sparse": (2, 1), "saturate": (3, 1), "dtype": (4, 2),
    "atype": (7, 3), "btype": (10, 3), "negate_a": (13, 1), "negate_b": (14, 1),
    "transpose_a": (15, 1), "transpose_b": (16, 1), "n_shr3": (17, 6), "m_shr4": (24, 5),
    "max_shift": (30, 2),
}
RESERVED42 = (6, 23, 29)
TABLE43 = {  # kind mxf8f6f4
    "sparse": (2, 1), "b_scale_id": (4, 2), "atype": (7, 3), "btype": (10, 3),
    "negate_a": (13, 1), "negate_b": (14, 1), "transpose_a": (15, 1), "transpose_b": (16, 1),
    "n_shr3": (17, 6), "scale_type": (23, 1), "m_shr7": (27, 2), "a_scale_id": (29, 2),
}
RESERVED43 = (0, 1, 3, 6, 24, 25, 26, 31)
TABLE44 = {  # kinds mxf4 / mxf4nvf4
    "sparse": (2, 1), "b_scale_id": (4, 2), "atype": (7, 3), "btype": (10, 2),
    "negate_a": (13, 1), "negate_b": (14, 1), "transpose_a": (15, 1), "transpose_b": (16, 1),
    "n_shr3": (17, 6), "scale_type": (23, 1), "m_shr7": (27, 2), "a_scale_id": (29, 2),
    "k96": (31, 1),
}
RESERVED44 = (0, 1, 3, 6, 12, 24, 25, 26)

TABLES = {"f16": (TABLE42, RESERVED42), "tf32": (TABLE42, RESERVED42), "f8f6f4": (TABLE42, RESERVED42),
          "i8": (TABLE42, RESERVED42), "mxf8f6f4": (TABLE43, RESERVED43),
          "mxf4": (TABLE44, RESERVED44), "mxf4nvf4": (TABLE44, RESERVED44)}
KINDS = tuple(TABLES)

# Type codes (PTX 9.7.16.4.2 Tables 42-44).
TYPE_CODES = [
    ("f16", "f16", 0), ("f16", "bf16", 1),
    ("tf32", "tf32", 2),
    ("f8f6f4", "e4m3", 0), ("f8f6f4", "e5m2", 1), ("f8f6f4", "e2m3", 3), ("f8f6f4", "e3m2", 4),
    ("f8f6f4", "e2m1", 5),
    ("mxf8f6f4", "e4m3", 0), ("mxf8f6f4", "e5m2", 1), ("mxf8f6f4", "e2m3", 3), ("mxf8f6f4", "e3m2", 4),
    ("mxf8f6f4", "e2m1", 5),
    ("i8", "u8", 0), ("i8", "s8", 1),
    ("mxf4", "e2m1", 1), ("mxf4nvf4", "e2m1", 1),
]
LEGAL_AB = {"f16": {0, 1}, "tf32": {2}, "f8f6f4": {0, 1, 3, 4, 5}, "mxf8f6f4": {0, 1, 3, 4, 5},
            "i8": {0, 1}, "mxf4": {1}, "mxf4nvf4": {1}}
LEGAL_D = {"f16": {0, 1}, "tf32": {1}, "f8f6f4": {0, 1}, "i8": {2}}  # F16 0, F32 1, S32 2

N256 = (256 >> 3) << 17
M128_T42 = (128 >> 4) << 24
M128_T43 = (128 >> 7) << 27

# A legal word per kind, built by hand: M = 128, N = 256, K-major.
VALID = {
    "f16": M128_T42 | N256 | 1 << 10 | 1 << 7 | 1 << 4,          # bf16 x bf16 -> f32
    "tf32": M128_T42 | N256 | 2 << 10 | 2 << 7 | 1 << 4,         # tf32 x tf32 -> f32
    "f8f6f4": M128_T42 | N256 | 5 << 10 | 0 << 7 | 0 << 4,       # e4m3 x e2m1 -> f16
    "i8": M128_T42 | N256 | 0 << 10 | 1 << 7 | 2 << 4 | 1 << 3,  # s8 x u8 -> s32, saturate
    "mxf8f6f4": M128_T43 | 1 << 23 | N256 | 4 << 10 | 3 << 7,    # e2m3 x e3m2, UE8M0
    "mxf4": M128_T43 | 1 << 23 | N256 | 1 << 10 | 1 << 7,        # e2m1 x e2m1, UE8M0
    "mxf4nvf4": M128_T43 | N256 | 1 << 10 | 1 << 7,              # e2m1 x e2m1, UE4M3
}


def ids(violations):
    return sorted(v.rule.id for v in violations)


def set_field(word, lo, width, value):
    mask = ((1 << width) - 1) << lo
    return (word & ~mask) | (value << lo)


# --- bit positions -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_my_tables_partition_32_bits(kind):
    table, reserved = TABLES[kind]
    bits = [b for lo, w in table.values() for b in range(lo, lo + w)] + list(reserved)
    assert sorted(bits) == list(range(32))


@pytest.mark.parametrize("kind", KINDS)
def test_field_names_match_table(kind):
    assert set(idesc.decode(kind, 0).fields) == set(TABLES[kind][0])


@pytest.mark.parametrize("kind,name,lo,width",
                         [(k, n, lo, w) for k in KINDS for n, (lo, w) in TABLES[k][0].items()])
def test_field_position_encode_and_decode(kind, name, lo, width):
    ones = (1 << width) - 1
    assert idesc.encode(kind, **{name: 1}).word == 1 << lo
    assert idesc.encode(kind, **{name: ones}).word == ones << lo
    fields = idesc.decode(kind, ones << lo).fields
    assert fields == {n: (ones if n == name else 0) for n in TABLES[kind][0]}


@pytest.mark.parametrize("kind,bit", [(k, b) for k in KINDS for b in TABLES[k][1]])
def test_reserved_bit_belongs_to_no_field(kind, bit):
    assert all(v == 0 for v in idesc.decode(kind, 1 << bit).fields.values())


def test_literal_words():
    # f16, bf16 x bf16 -> f32, M = 128, N = 256: 8 << 24 | 32 << 17 | 1 << 10 | 1 << 7 | 1 << 4
    word = idesc.encode("f16", m=128, n=256, atype=1, btype=1, dtype=1).word
    assert word == 0x0840_0490
    # mxf4, E2M1 x E2M1, UE8M0, M = 128, N = 256, K = 96: 1 << 31 | 1 << 27 | 1 << 23 | 32 << 17 | 1 << 10 | 1 << 7
    word = idesc.encode("mxf4", m=128, n=256, atype=1, btype=1, scale_type=1, k96=1).word
    assert word == 0x88C0_0480
    # transpose A/B at 15/16, negate at 13/14
    assert idesc.encode("f16", transpose_a=1, transpose_b=1, negate_a=1, negate_b=1).word == 0x1E000


@pytest.mark.parametrize("kind", KINDS)
def test_major_properties(kind):
    assert (idesc.decode(kind, 0).a_major, idesc.decode(kind, 0).b_major) == ("K", "K")
    assert idesc.decode(kind, 1 << 15).a_major == "MN"
    assert idesc.decode(kind, 1 << 15).b_major == "K"
    assert idesc.decode(kind, 1 << 16).b_major == "MN"


# --- M and N ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f16", "tf32", "f8f6f4", "i8"])
@pytest.mark.parametrize("m,n", [(64, 8), (64, 256), (128, 16), (128, 256), (256, 256), (128, 136)])
def test_mn_table42(kind, m, n):
    expected = (m >> 4) << 24 | (n >> 3) << 17
    d = idesc.encode(kind, m=m, n=n)
    assert d.word == expected
    back = idesc.decode(kind, expected)
    assert (back.m, back.n) == (m, n)


def test_mn_table42_literal():
    assert idesc.encode("f16", m=64, n=8).word == 0x0402_0000      # 4 << 24 | 1 << 17
    assert idesc.encode("f16", m=256, n=256).word == 0x1040_0000    # 16 << 24 | 32 << 17


@pytest.mark.parametrize("kind", ["mxf8f6f4", "mxf4", "mxf4nvf4"])
@pytest.mark.parametrize("m,n", [(128, 8), (128, 256), (256, 256), (256, 120)])
def test_mn_tables43_44(kind, m, n):
    expected = (m >> 7) << 27 | (n >> 3) << 17
    d = idesc.encode(kind, m=m, n=n)
    assert d.word == expected
    back = idesc.decode(kind, expected)
    assert (back.m, back.n) == (m, n)


def test_mn_tables43_44_literal():
    assert idesc.encode("mxf8f6f4", m=128, n=256).word == 0x0840_0000  # 1 << 27 | 32 << 17
    assert idesc.encode("mxf4", m=256, n=8).word == 0x1002_0000        # 2 << 27 | 1 << 17
    # (M >> 4) << 24 and (M >> 7) << 27 are both M << 20 for multiples of 128, but bit 26 (M = 64 in
    # Table 42) is reserved in Tables 43-44 and bits 24-26 hold no part of M there.
    assert idesc.decode("f16", 1 << 26).m == 64
    assert idesc.decode("mxf4nvf4", 1 << 26).m == 0
    assert idesc.decode("mxf8f6f4", 0b111 << 24).m == 0


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(KINDS), st.integers(1, 63), st.data())
def test_mn_round_trip(kind, n_enc, data):
    if "m_shr4" in TABLES[kind][0]:
        m_enc = data.draw(st.integers(0, 31))
        m, expected = m_enc << 4, m_enc << 24
    else:
        m_enc = data.draw(st.integers(0, 3))
        m, expected = m_enc << 7, m_enc << 27
    expected |= n_enc << 17
    d = idesc.encode(kind, m=m, n=n_enc << 3)
    assert d.word == expected
    assert (idesc.decode(kind, expected).m, idesc.decode(kind, expected).n) == (m, n_enc << 3)


@pytest.mark.parametrize("kind,values", [
    ("f16", {"m": 512}), ("f16", {"n": 512}), ("mxf4", {"m": 512}), ("f16", {"m": -16}),
    ("f16", {"atype": 8}), ("mxf4", {"btype": 4}), ("f16", {"dtype": 4}), ("i8", {"saturate": 2}),
])
def test_encode_value_too_wide_raises(kind, values):
    with pytest.raises(SpecError):
        idesc.encode(kind, **values)


@pytest.mark.parametrize("kind,values", [
    ("f16", {"m": 72}),        # M >> 4 would drop 8: the word would say M = 64
    ("f16", {"n": 12}),        # N >> 3 would drop 4: the word would say N = 8
    ("i8", {"m": 136}),
    ("mxf8f6f4", {"m": 64}),   # M >> 7 = 0: the word would say M = 0
    ("mxf4", {"m": 192}),      # M >> 7 = 1: the word would say M = 128
])
def test_encode_m_n_with_dropped_low_bits_raises(kind, values):
    """The table stores M >> 4 (or M >> 7) and N >> 3 ("LSBs not included"): an M or N whose low bits
    are not zero cannot be represented, and silently encoding another shape is the clamp the spec's
    encoders promise not to do."""
    with pytest.raises(SpecError) as e:
        idesc.encode(kind, **values)
    assert e.value.field_name in ("m", "n", "m_shr4", "m_shr7", "n_shr3")


# --- type codes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,name,code", TYPE_CODES)
def test_type_code(kind, name, code):
    assert idesc.type_code(kind, name) == code
    d = idesc.encode(kind, atype=code, btype=code)
    assert d.word == code << 7 | code << 10
    assert (d.fields["atype"], d.fields["btype"]) == (code, code)


@pytest.mark.parametrize("kind,name", [("mxf4", "e4m3"), ("mxf4nvf4", "e2m3"), ("f16", "tf32"),
                                       ("i8", "e4m3"), ("tf32", "f16"), ("f16", "nope")])
def test_type_code_unknown_raises(kind, name):
    with pytest.raises(SpecError) as e:
        idesc.type_code(kind, name)
    assert e.value.field_name == "dtype"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("operand", ["atype", "btype"])
def test_every_ab_code_against_the_table(kind, operand):
    lo, width = TABLES[kind][0][operand]
    for code in range(1 << width):
        word = set_field(VALID[kind], lo, width, code)
        got = ids(idesc.violations(idesc.decode(kind, word)))
        assert got == ([] if code in LEGAL_AB[kind] else ["idesc.ab_type_codes"]), (kind, operand, code)


@pytest.mark.parametrize("kind", ["f16", "tf32", "f8f6f4", "i8"])
def test_every_d_code_against_the_table(kind):
    for code in range(4):
        word = set_field(VALID[kind], 4, 2, code)
        got = ids(idesc.violations(idesc.decode(kind, word)))
        assert got == ([] if code in LEGAL_D[kind] else ["idesc.d_type_code"]), (kind, code)


# --- constraint rules ---------------------------------------------------------------------------

BREAKING = [
    # idesc.reserved_zero: every reserved bit of every table
    *[(k, "sm100", VALID[k] | 1 << b, "idesc.reserved_zero") for k in KINDS for b in TABLES[k][1]],
    # idesc.ab_type_codes
    ("f16", "sm100", set_field(VALID["f16"], 7, 3, 2), "idesc.ab_type_codes"),       # TF32 code in f16
    ("f16", "sm100", set_field(VALID["f16"], 10, 3, 7), "idesc.ab_type_codes"),
    ("tf32", "sm100", set_field(VALID["tf32"], 7, 3, 0), "idesc.ab_type_codes"),
    ("f8f6f4", "sm100", set_field(VALID["f8f6f4"], 7, 3, 2), "idesc.ab_type_codes"),  # gap at 2
    ("f8f6f4", "sm100", set_field(VALID["f8f6f4"], 10, 3, 6), "idesc.ab_type_codes"),
    ("i8", "sm100", set_field(VALID["i8"], 10, 3, 2), "idesc.ab_type_codes"),
    ("mxf8f6f4", "sm100", set_field(VALID["mxf8f6f4"], 7, 3, 7), "idesc.ab_type_codes"),
    ("mxf4", "sm100", set_field(VALID["mxf4"], 7, 3, 5), "idesc.ab_type_codes"),      # f8f6f4's E2M1
    ("mxf4", "sm100", set_field(VALID["mxf4"], 10, 2, 0), "idesc.ab_type_codes"),
    ("mxf4nvf4", "sm100", set_field(VALID["mxf4nvf4"], 7, 3, 0), "idesc.ab_type_codes"),
    # idesc.d_type_code
    ("f16", "sm100", set_field(VALID["f16"], 4, 2, 2), "idesc.d_type_code"),
    ("tf32", "sm100", set_field(VALID["tf32"], 4, 2, 0), "idesc.d_type_code"),
    ("f8f6f4", "sm100", set_field(VALID["f8f6f4"], 4, 2, 3), "idesc.d_type_code"),
    ("i8", "sm100", set_field(VALID["i8"], 4, 2, 1), "idesc.d_type_code"),
    # idesc.transpose
    ("mxf4", "sm100", VALID["mxf4"] | 1 << 15, "idesc.transpose"),
    ("mxf4", "sm103", VALID["mxf4"] | 1 << 16, "idesc.transpose"),
    ("mxf4nvf4", "sm100", VALID["mxf4nvf4"] | 1 << 15 | 1 << 16, "idesc.transpose"),
    # idesc.i8_negate
    ("i8", "sm100", VALID["i8"] | 1 << 13, "idesc.i8_negate"),
    ("i8", "sm100", VALID["i8"] | 1 << 14, "idesc.i8_negate"),
    # idesc.saturate
    ("f16", "sm100", VALID["f16"] | 1 << 3, "idesc.saturate"),
    ("tf32", "sm100", VALID["tf32"] | 1 << 3, "idesc.saturate"),
    ("f8f6f4", "sm100", VALID["f8f6f4"] | 1 << 3, "idesc.saturate"),
    # idesc.k96.arch
    ("mxf4", "sm100", VALID["mxf4"] | 1 << 31, "idesc.k96.arch"),
    ("mxf4nvf4", "sm100", VALID["mxf4nvf4"] | 1 << 31, "idesc.k96.arch"),
    ("mxf4", "sm90", VALID["mxf4"] | 1 << 31, "idesc.k96.arch"),
]


@pytest.mark.parametrize("kind,arch,word,rule_id", BREAKING,
                         ids=lambda v: hex(v) if isinstance(v, int) else v)
def test_rule_broken(kind, arch, word, rule_id):
    assert ids(idesc.violations(idesc.decode(kind, word, arch))) == [rule_id]


def test_every_instr_desc_rule_has_a_breaking_case():
    assert {r for _, _, _, r in BREAKING} == {r.id for r in rules_for("instr_desc")}
    assert all(r.check is not None for r in rules_for("instr_desc"))


GOOD = [
    *[(k, "sm100", VALID[k]) for k in KINDS],
    *[(k, "sm103", VALID[k]) for k in KINDS],
    ("mxf4", "sm103", VALID["mxf4"] | 1 << 31),                  # dense K = 96 on sm103
    ("mxf4nvf4", "sm103", VALID["mxf4nvf4"] | 1 << 31),
    ("f16", "sm100", VALID["f16"] | 1 << 31 | 1 << 30),          # Table 42 bit 31 is max shift, not K
    ("f16", "sm100", VALID["f16"] | 1 << 13 | 1 << 14 | 1 << 15 | 1 << 16),  # negate + MN-major
    ("i8", "sm100", VALID["i8"] | 1 << 15 | 1 << 16),            # i8 may be MN-major
    ("mxf8f6f4", "sm100", VALID["mxf8f6f4"] | 3 << 4 | 3 << 29),  # bits 4-5 are a scale id, not dtype
    ("mxf8f6f4", "sm100", (VALID["mxf8f6f4"] & ~(0b111111 << 7)) | 1 << 15 | 1 << 16),  # e4m3 MN-major
    ("f16", "sm100", VALID["f16"] | 1 << 2 | 3 << 0),            # sparse with selector 3
]


@pytest.mark.parametrize("kind,arch,word", GOOD, ids=lambda v: hex(v) if isinstance(v, int) else v)
def test_valid_instr_desc_has_no_violations(kind, arch, word):
    assert idesc.violations(idesc.decode(kind, word, arch)) == []


# --- malformed input -------------------------------------------------------------------------------

@pytest.mark.parametrize("word", [1 << 32, -1, (1 << 40) | 0x490])
def test_decode_word_out_of_range_raises(word):
    with pytest.raises(SpecError) as e:
        idesc.decode("f16", word)
    assert e.value.field_name == "instr_desc"


@pytest.mark.parametrize("kind", ["f32", "mxf6", "F16", "", "kind::f16"])
def test_unknown_kind_raises(kind):
    with pytest.raises(SpecError) as e:
        idesc.decode(kind, 0)
    assert e.value.field_name == "kind"
    with pytest.raises(SpecError):
        idesc.encode(kind)


@pytest.mark.parametrize("kind,name", [("mxf4", "dtype"), ("mxf4", "saturate"), ("f16", "k96"),
                                       ("f16", "scale_type"), ("mxf8f6f4", "m_shr4"), ("i8", "bogus")])
def test_encode_field_not_in_kind_raises(kind, name):
    with pytest.raises(SpecError) as e:
        idesc.encode(kind, **{name: 1})
    assert e.value.field_name == name
