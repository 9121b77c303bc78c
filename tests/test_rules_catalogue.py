"""The rule catalogue: well-formed, complete, and every constraint rule broken by some input.

Breaking cases for the descriptor, instruction-descriptor and TMA-swizzle rules live in their own
test files, each with a completeness check of its own; the operand and swizzle rules are broken here.
"""
import pytest

from spec.mma import descriptor
from spec.mma import readmap
from spec.rules import EVIDENCE_KINDS, all_rules, check_all, rules_for
from spec.cute.swizzle import Swizzle, brute_force_is_bijective, brute_force_is_involution

SUBJECTS_WITH_BREAKERS = {
    "descriptor": "tests/test_descriptor.py", "instr_desc": "tests/test_instr_desc.py",
    "tma_swizzle_use": "tests/test_tma_swizzle.py", "operand": __file__, "swizzle": __file__,
    "recipe": "tests/test_recipe.py", "tma_box": "tests/test_tma_place.py",
    "tensormap": "tests/test_tensormap.py", "im2col_load": "tests/test_im2col.py",
    "desc_case": "tests/test_desc_case.py", "recipe_case": "tests/test_fuzz_recipe.py",
}


def test_catalogue_is_well_formed():
    import solver.synth.recipe  # noqa: F401  (the recipe rules live with the recipe)
    rules = all_rules()
    assert len({r.id for r in rules}) == len(rules) > 40
    for r in rules:
        assert r.id and r.source and r.statement, r.id
        assert r.evidence in EVIDENCE_KINDS
        assert (r.check is None) == (r.subject == "definition"), r.id
        if r.evidence == "interpretation":
            assert r.note, f"{r.id}: an interpretation says in its note what is ambiguous"


def test_every_subject_has_a_breaker_file():
    subjects = {r.subject for r in all_rules()} - {"definition"}
    assert subjects <= set(SUBJECTS_WITH_BREAKERS), subjects - set(SUBJECTS_WITH_BREAKERS)


def operand(arch, dtype, major, swizzle="128B", k=None, lbo_mode=None, start=0, lbo=16, kind=None):
    desc = descriptor.encode(arch, start, lbo, 1024, swizzle, lbo_mode=lbo_mode)
    return readmap.make_operand(desc, dtype, major, 64, k, kind)


OPERAND_BREAKERS = {
    "operand.sm90.dtype": operand("sm90", "e2m1", "K", "none"),
    "operand.mn_major.dtype": operand("sm90", "e4m3", "MN"),
    "operand.swizzle.table54": operand("sm100", "tf32", "MN", "128B"),
    "operand.instruction_k": operand("sm90", "bf16", "K", k=32),
    "operand.lbo_absolute.k_major": operand("sm103", "bf16", "MN", lbo_mode="absolute", lbo=4096),
    "operand.lbo_absolute.k48": operand("sm103", "bf16", "K", lbo_mode="absolute", lbo=4096),
    "operand.k_slice.inside_line": operand("sm90", "bf16", "K", "32B", start=16),
    # ptxas refuses these forms (tests/hardware/ptxas_forms.json)
    "operand.sm90.n_extent": readmap.make_operand(descriptor.encode("sm90", 0, 16, 1024, "128B"), "s8", "K", 40),
    "operand.sm103.kind_i8": operand("sm103", "s8", "K"),
}
OPERAND_VALID = [
    operand("sm90", "bf16", "K"), operand("sm90", "f16", "MN", "64B"), operand("sm100", "tf32", "MN", "128B_atom32B"),
    operand("sm100", "e4m3", "MN", "32B"), operand("sm103", "e2m1", "K", k=96, lbo_mode="absolute", lbo=4096),
    operand("sm100", "e2m3", "K", "none"), operand("sm90", "s8", "K", "64B", start=32),
]


def test_operand_breakers_cover_every_operand_rule():
    assert set(OPERAND_BREAKERS) == {r.id for r in rules_for("operand")}


@pytest.mark.parametrize("rule_id", sorted(OPERAND_BREAKERS))
def test_operand_rule_is_broken(rule_id):
    assert rule_id in [v.rule.id for v in readmap.violations(OPERAND_BREAKERS[rule_id])]


@pytest.mark.parametrize("op", OPERAND_VALID, ids=lambda o: f"{o.arch}-{o.dtype.name}-{o.major}-{o.desc.swizzle}")
def test_valid_operands_break_nothing(op):
    assert readmap.violations(op) == []


# --- CuTe Swizzle<B,M,S>: bijective and involution are different properties --------------------------
SWIZZLE_BREAKERS = {
    "swizzle.cute.domain": Swizzle(3, 4, 2),
    "swizzle.cute.bijective": Swizzle(1, 4, 0),
    "swizzle.cute.involution": Swizzle(3, 4, 2),
}


def test_swizzle_breakers_cover_every_swizzle_rule():
    assert set(SWIZZLE_BREAKERS) == {r.id for r in rules_for("swizzle")}


@pytest.mark.parametrize("rule_id", sorted(SWIZZLE_BREAKERS))
def test_swizzle_rule_is_broken(rule_id):
    assert rule_id in [v.rule.id for v in check_all("swizzle", SWIZZLE_BREAKERS[rule_id])]


@pytest.mark.parametrize("b", range(0, 4))
@pytest.mark.parametrize("m", range(0, 3))
@pytest.mark.parametrize("s", range(-4, 5))
def test_swizzle_properties_by_enumeration(b, m, s):
    """The rules' closed forms agree with brute force over one period (the oracle is enumeration)."""
    sw = Swizzle(b, m, s)
    broken = {v.rule.id for v in check_all("swizzle", sw)}
    assert ("swizzle.cute.bijective" not in broken) == brute_force_is_bijective(sw)
    assert ("swizzle.cute.involution" not in broken) == brute_force_is_involution(sw)
    assert ("swizzle.cute.domain" in broken) == (abs(s) < b)


def test_bijective_but_not_involution_exists():
    sw = Swizzle(2, 0, 1)  # |S| < B, S != 0: source and target overlap
    assert brute_force_is_bijective(sw) and not brute_force_is_involution(sw)
