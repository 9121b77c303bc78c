"""spec/cases/desc_case.py: a descriptor and the tile it is meant to read. Each tile rule is broken by a
descriptor that differs from a right one in that field alone, and the read map then reads some element
from the wrong address (the witness); the right descriptors come from the manual's canonical-layout
table (spec.mma.canonical), written independently of the per-field derivation in spec/cases/desc_case.py."""
import pytest

from spec.mma import canonical
from spec.cases import desc_case
from spec.mma import descriptor
from spec.rules import SpecError, rules_for

# bf16 K-major 128B: ((8,m),(T,2k)):((8T,SBO),(1,T)) with T = 8; m = 8 row groups (mn = 64), SBO = 1024 B
P = canonical.CanonicalParams("K", "128B", 8, 8, 1, 0, 512)
LAYOUT = canonical.canonical_layout(P)
START = 0x2000


def case(**fields):
    right = dict(start=START, lbo=16, sbo=canonical.descriptor_bytes(P, 16)["sbo_bytes"], swizzle="128B",
                 base_offset=0)
    right.update(fields)
    word = descriptor.encode("sm90", right["start"], right["lbo"], right["sbo"], right["swizzle"],
                             base_offset=right["base_offset"]).raw
    return desc_case.parse_case({"descriptor": hex(word), "dtype": "bf16", "major": "K", "mn": 64, "k": 16,
                                 "layout": LAYOUT, "start_address": START}, "sm90")


BREAKERS = {
    "desc.tile.swizzle": case(swizzle="64B"),
    "desc.tile.start_address": case(start=START + 16),
    "desc.tile.stride_byte_offset": case(sbo=512),
    "desc.tile.base_offset": case(base_offset=3),
}


def test_the_right_descriptor_reads_the_tile():
    right = case()
    assert desc_case.violations(right) == [] and desc_case.first_misread(right) is None


def test_breakers_cover_every_rule_but_lbo():
    # LBO is unused by one swizzled K-major instruction (32 bytes inside a 128-byte row): its breaker
    # is the no-swizzle tile below
    assert set(BREAKERS) | {"desc.tile.leading_byte_offset"} == {r.id for r in rules_for("desc_case")}


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_breaker_breaks_its_rule_alone_and_misreads(rule_id):
    c = BREAKERS[rule_id]
    assert [v.rule.id for v in desc_case.violations(c)] == [rule_id]
    witness = desc_case.first_misread(c)
    assert witness is not None and witness["read_from"] != witness["held_at"]


def test_lbo_rule_on_a_no_swizzle_tile():
    # K-major none: ((8,m),(T,2k)):((1T,SBO),(1,LBO)), LBO = 64 elements = 128 B, SBO = 32 elements = 64 B
    p = canonical.CanonicalParams("K", "none", 8, 8, 1, 64, 32)
    layout = canonical.canonical_layout(p)

    def make(lbo):
        word = descriptor.encode("sm90", START, lbo, 64, "none").raw
        return desc_case.parse_case({"descriptor": hex(word), "dtype": "bf16", "major": "K", "mn": 64, "k": 16,
                                     "layout": layout, "start_address": START}, "sm90")
    assert desc_case.violations(make(128)) == [] and desc_case.first_misread(make(128)) is None
    wrong = make(256)
    assert [v.rule.id for v in desc_case.violations(wrong)] == ["desc.tile.leading_byte_offset"]
    assert desc_case.first_misread(wrong)["element"]["k"] == 8        # the second K chunk


def test_malformed_case_names_the_field():
    with pytest.raises(SpecError, match="layout"):
        desc_case.parse_case({"descriptor": "0x0", "dtype": "bf16", "major": "K", "mn": 64,
                              "start_address": 0}, "sm90")
