"""spec/mma/shape.py: tcgen05.mma's M x N x K against the manual's tables, written out below from the text
of PTX ISA 9.7.16.2.1 Table 39 (dense rows, no .ws) and 9.7.16.10.1 Table 52, not from the module.

Table 39 (dense, no .ws), as printed:
  .kind::f16, .kind::tf32, .kind::f8f6f4  cta 1: 64xNxK, 128xNxK; N = {8, 16, 24, ... 256} steps of 8
                                          cta 2: 128xNxK, 256xNxK; N = {16, 32, ... 256} steps of 16
  .kind::mxf8f6f4                          cta 1: 128xNxK; N steps of 8    cta 2: 128xNxK, 256xNxK; steps of 16
  .kind::i8                                cta 1: 64xNxK, 128xNxK; N = {8, 16, 24, 32, 48, ... 256} steps of
                                                  16 after N > 32
                                           cta 2: 128xNxK, 256xNxK; N = {32, 64, ... 256} steps of 32
  .kind::mxf4, .kind::mxf4nvf4             cta 1: 128xNxK; N steps of 8; K = 64
                                           cta 2: 128xNxK, 256xNxK, 256xNxK1; N steps of 16; K = 64, K1 = 96
Table 52 (8bit transpose B): cta 1: 16 <= N <= 256, step 16; cta 2: 32 <= N <= 256, step 32.
"""
from __future__ import annotations

import pytest

from spec.cases import desc_case
from spec.mma import descriptor, instr_desc
from spec.mma import shape as mma_shape
from spec.rules import SpecError, check_all, rules_for

STEP8, STEP16, STEP32 = set(range(8, 257, 8)), set(range(16, 257, 16)), set(range(32, 257, 32))
I8_ONE = {8, 16, 24, 32} | set(range(48, 257, 16))
# (kind, cta_group) -> {(M, K): N set}, the dense rows of Table 39
TABLE39 = {
    **{(kind, 1): {(64, k): STEP8, (128, k): STEP8} for kind, k in (("f16", 16), ("tf32", 8), ("f8f6f4", 32))},
    **{(kind, 2): {(128, k): STEP16, (256, k): STEP16} for kind, k in (("f16", 16), ("tf32", 8), ("f8f6f4", 32))},
    ("mxf8f6f4", 1): {(128, 32): STEP8},
    ("mxf8f6f4", 2): {(128, 32): STEP16, (256, 32): STEP16},
    ("i8", 1): {(64, 32): I8_ONE, (128, 32): I8_ONE},
    ("i8", 2): {(128, 32): STEP32, (256, 32): STEP32},
    **{(kind, 1): {(128, 64): STEP8} for kind in ("mxf4", "mxf4nvf4")},
    **{(kind, 2): {(128, 64): STEP16, (256, 64): STEP16, (256, 96): STEP16} for kind in ("mxf4", "mxf4nvf4")},
}
TABLE52 = {1: STEP16, 2: STEP32}
# a B type each kind reads, K-major; and its 8-bit types (Table 52 applies to them when MN-major)
B_TYPE = {"f16": "bf16", "tf32": "tf32", "f8f6f4": "e4m3", "mxf8f6f4": "e5m2", "i8": "s8", "mxf4": "e2m1",
          "mxf4nvf4": "e2m1"}
KINDS = tuple(B_TYPE)
K_OF = {"f16": 16, "tf32": 8, "f8f6f4": 32, "mxf8f6f4": 32, "i8": 32, "mxf4": 64, "mxf4nvf4": 64}


def listed(kind, cta_group, m, n, k) -> bool:
    return n in TABLE39[(kind, cta_group)].get((m, k), set())


def broken(arch, kind, cta_group, m, n, k, dtype=None, major="K"):
    s = mma_shape.make_shape(arch, kind, cta_group, m, n, k, dtype or B_TYPE[kind], major)
    return [v.rule.id for v in check_all("mma_shape", s)]


def grid():
    for kind in KINDS:
        for cta_group in (1, 2):
            for m in (64, 128, 192, 256):
                for k in sorted({K_OF[kind], 96} if kind in ("mxf4", "mxf4nvf4") else {K_OF[kind]}):
                    yield kind, cta_group, m, k


@pytest.mark.parametrize("kind,cta_group,m,k", list(grid()))
def test_table39_decides_every_k_major_shape(kind, cta_group, m, k):
    """A K-major B: the shape breaks no rule exactly when Table 39 lists it (sm103: K = 96 exists)."""
    for n in range(8, 265, 8):
        assert (broken("sm103", kind, cta_group, m, n, k) == []) == listed(kind, cta_group, m, n, k), n


@pytest.mark.parametrize("kind,dtype", [("f8f6f4", "e4m3"), ("f8f6f4", "e5m2"), ("mxf8f6f4", "e4m3"),
                                        ("i8", "s8"), ("i8", "u8")])
@pytest.mark.parametrize("cta_group", [1, 2])
def test_table52_decides_transposed_8bit_b(kind, dtype, cta_group):
    m = 128
    for n in range(8, 265, 8):
        expected = listed(kind, cta_group, m, n, 32) and n in TABLE52[cta_group]
        assert (broken("sm100", kind, cta_group, m, n, 32, dtype, "MN") == []) == expected, n


def test_table52_is_about_8bit_only():
    """A transposed 16- or 32-bit B keeps Table 39's N steps."""
    assert broken("sm100", "f16", 1, 128, 24, 16, "f16", "MN") == []
    assert broken("sm100", "tf32", 2, 256, 48, 8, "tf32", "MN") == []


BREAKERS = {
    "mma.shape.m": ("sm100", "mxf4", 1, 64, 64, 64, "e2m1", "K"),
    "mma.shape.n": ("sm100", "f16", 2, 128, 24, 16, "bf16", "K"),
    "mma.shape.k96.cta_group": ("sm103", "mxf4nvf4", 1, 128, 128, 96, "e2m1", "K"),
    "mma.shape.k96.m": ("sm103", "mxf4", 2, 128, 128, 96, "e2m1", "K"),
    "mma.shape.mn_major_8bit.n": ("sm100", "f8f6f4", 1, 128, 24, 32, "e4m3", "MN"),
}


def test_breakers_cover_every_shape_rule():
    assert set(BREAKERS) == {r.id for r in rules_for("mma_shape")}


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_breaker_breaks_its_rule_alone(rule_id):
    assert broken(*BREAKERS[rule_id]) == [rule_id]


def test_no_shape_rule_on_sm90():
    """wgmma's shape is part of its opcode: Table 39 is tcgen05's."""
    for args in BREAKERS.values():
        assert broken("sm90", *args[1:]) == []


def test_k96_shape_from_the_instruction_descriptor():
    """K = 96 read from bit 31 of a kind::mxf4 instruction descriptor: 256xNx96 with .cta_group::2 only."""
    def shape_of(m, n, cta_group, k96=1):
        word = instr_desc.encode("mxf4", "sm103", m=m, n=n, atype=1, btype=1, scale_type=1, k96=k96).word
        return mma_shape.of_instr_desc(instr_desc.decode("mxf4", word, "sm103"), cta_group, "e2m1")
    assert shape_of(256, 128, 2).k == 96 and check_all("mma_shape", shape_of(256, 128, 2)) == []
    assert [v.rule.id for v in check_all("mma_shape", shape_of(256, 128, 1))] == ["mma.shape.m",
                                                                                    "mma.shape.k96.cta_group"]
    assert [v.rule.id for v in check_all("mma_shape", shape_of(128, 128, 2))] == ["mma.shape.k96.m"]
    assert shape_of(128, 128, 1, k96=0).k == 64 and check_all("mma_shape", shape_of(128, 128, 1, 0)) == []


def test_malformed_shapes():
    with pytest.raises(SpecError, match="cta_group"):
        mma_shape.make_shape("sm100", "f16", 3, 128, 64, 16, "f16", "K")
    with pytest.raises(SpecError, match="kind"):
        mma_shape.make_shape("sm100", "i8", 1, 128, 64, 16, "f16", "K")


# --- The desc case names its MMA -----------------------------------------------------------------------
LAYOUT = "((8,16),(32,2)):((32,256),(1,8192))"       # e2m1 K-major, no swizzle, 128 rows


def e2m1_case(arch, k, cta_group=None, m=None, mn=128):
    word = descriptor.encode(arch, 0x8000, 4096, 128, "none").raw
    case = {"descriptor": hex(word), "dtype": "e2m1", "major": "K", "mn": mn, "k": k,
            "layout": LAYOUT.replace("16),", f"{mn // 8}),"), "start_address": 0x8000, "kind": "mxf4"}
    if cta_group is not None:
        case["cta_group"] = cta_group
    if m is not None:
        case["m"] = m
    return desc_case.parse_case(case, arch)


def ids(c):
    return [v.rule.id for v in desc_case.violations(c)]


def test_desc_case_default_instruction_is_cta_group_1_m128():
    c = e2m1_case("sm100", 64)
    assert (c.cta_group, c.m) == (1, 128) and ids(c) == []


def test_desc_case_k96_needs_the_pair_and_m256():
    assert ids(e2m1_case("sm103", 96, 2, 256)) == []
    assert ids(e2m1_case("sm103", 96)) == ["mma.shape.k96.cta_group"]
    assert ids(e2m1_case("sm103", 96, 2, 128)) == ["mma.shape.k96.m"]


def test_desc_case_pair_reads_half_of_n():
    """Rule desc.tile.cta_pair_split (CUTLASS's 2x1SM traits split B by N): with .cta_group::2 the
    instruction's N is twice mn (so mn 128 is N = 256, the largest; mn 8 is N = 16, the smallest)."""
    from spec.rules import resolve
    assert resolve("desc.tile.cta_pair_split").evidence == "cutlass"
    assert desc_case.shape(e2m1_case("sm103", 64, 2, 256)).n == 256
    assert desc_case.shape(e2m1_case("sm103", 64, 1, 128)).n == 128
    assert ids(e2m1_case("sm103", 64, 2, 256, mn=8)) == []
    assert ids(e2m1_case("sm103", 64, 2, 256, mn=136)) == ["mma.shape.n"]


@pytest.mark.parametrize("arch,field,value", [("sm100", "cta_group", 3), ("sm100", "m", 100), ("sm100", "m", True),
                                              ("sm90", "cta_group", 2), ("sm90", "m", 128)])
def test_desc_case_malformed_instruction(arch, field, value):
    word = descriptor.encode(arch, 0x8000, 128, 256, "none").raw
    case = {"descriptor": hex(word), "dtype": "bf16", "major": "K", "mn": 64, "k": 16,
            "layout": "((8,8),(8,2)):((8,64),(1,512))", "start_address": 0x8000, field: value}
    with pytest.raises(SpecError, match=field):
        desc_case.parse_case(case, arch)
