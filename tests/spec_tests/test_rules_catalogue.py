"""The rule catalogue: well-formed, complete, and every constraint rule broken by some input.

Breaking cases for the descriptor, instruction-descriptor and TMA-swizzle rules live in their own
test files, each with a completeness check of its own; the operand and swizzle rules are broken here.
"""
import os
from repo_paths import ROOT_DIR, TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import re

import pytest

from spec.mma import descriptor
from spec.mma import readmap
from spec.rules import ENFORCERS, EVIDENCE_KINDS, aliases, all_rules, check_all, resolve, rules_for
from spec.cute.swizzle import Swizzle, brute_force_is_bijective, brute_force_is_involution

SUBJECTS_WITH_BREAKERS = {
    "descriptor": "tests/spec_tests/test_descriptor.py", "instr_desc": "tests/spec_tests/test_instr_desc.py",
    "tma_swizzle_use": "tests/spec_tests/test_tma_swizzle.py", "operand": __file__, "swizzle": __file__,
    "recipe": "tests/solver_tests/synth/test_recipe.py", "tma_box": "tests/spec_tests/test_tma_place.py",
    "tensormap": "tests/spec_tests/test_tensormap.py", "im2col_load": "tests/spec_tests/test_im2col.py",
    "desc_case": "tests/spec_tests/test_desc_case.py", "recipe_case": "tests/solver_tests/fuzz/test_fuzz_recipe.py",
    "tmem_address": "tests/spec_tests/test_tmem_spec.py", "tmem_access": "tests/spec_tests/test_tmem_spec.py",
    "tmem_instruction": "tests/spec_tests/test_tmem_spec.py", "tmem_alloc_sequence": "tests/spec_tests/test_tmem_spec.py",
    "mma_shape": "tests/spec_tests/test_mma_shape.py", "scale_config": "tests/spec_tests/test_scales_spec.py",
    "scale_path": "tests/solver_tests/synth/test_scales_plan.py",
}


REPOSITORY = ROOT_DIR


def test_catalogue_is_well_formed():
    rules = all_rules()
    assert len({r.id for r in rules}) == len(rules) > 40
    for r in rules:
        assert r.id and r.source and r.statement, r.id
        assert r.evidence in EVIDENCE_KINDS
        assert (r.check is None) == (r.subject == "definition"), r.id
        if r.evidence == "interpretation":
            assert r.note, f"{r.id}: an interpretation says in its note what is ambiguous"


def test_every_subject_has_a_breaker_file():
    subjects = {s for r in all_rules() for s in r.subjects}
    assert subjects <= set(SUBJECTS_WITH_BREAKERS), subjects - set(SUBJECTS_WITH_BREAKERS)


def operand(arch, dtype, major, swizzle="128B", k=None, lbo_mode=None, start=0, lbo=16, kind=None):
    desc = descriptor.encode(arch, start, lbo, 1024, swizzle, lbo_mode=lbo_mode)
    return readmap.make_operand(desc, dtype, major, 64, k, kind)


OPERAND_BREAKERS = {
    "operand.sm90.dtype": operand("sm90", "e2m1", "K", "none"),
    "operand.mn_major.dtype": operand("sm90", "e4m3", "MN"),
    "operand.swizzle.table54": operand("sm100", "tf32", "MN", "128B"),
    "operand.swizzle.k_major_atom32": operand("sm100", "bf16", "K", "128B_atom32B"),
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


# --- One rule per constraint: where it is, what it cites, which ids it replaced -------------------------
def test_the_catalogue_is_complete_without_importing_the_solver():
    """spec.rules.all_rules() holds every rule: none is registered from solver/ (the recipe rules too)."""
    ids = [r.id for r in all_rules()]
    assert len(ids) == len(set(ids))
    assert {"recipe.swizzle_alignment", "tma.box.destination_alignment"} <= set(ids)
    assert {r.id for r in rules_for("recipe")} == {"recipe.swizzle_alignment", "tma.box.destination_alignment"}
    assert not [r.id for r in all_rules() if not r.defined_in.startswith("spec/")]


def test_rules_for_a_subject_follow_the_catalogue_order_whatever_the_import_order():
    """check_all reports in rules_for's order: it is all_rules' order restricted to the subject, also in a
    process that imports a later chapter's module first (spec.tmem.instruction before spec.tmem.address)."""
    import subprocess
    import sys
    order = [r.id for r in all_rules()]
    subjects = sorted({s for r in all_rules() for s in r.subjects})
    for subject in subjects:
        ids = [r.id for r in rules_for(subject)]
        assert ids == [i for i in order if i in set(ids)], subject
    script = ("import spec.tmem.shift, spec.tmem.instruction, spec.tmem.alloc\n"
              "from spec.rule import rules_for\n"
              "print(' '.join(r.id for r in rules_for('tmem_instruction')))")
    fresh = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert fresh == [i for i in order if i in set(fresh)] and fresh


def test_every_constraint_rule_checks_each_subject_and_names_its_enforcer():
    for r in all_rules():
        if not r.subjects:
            assert not r.checks and not r.enforced_by and not r.not_enforced_on, r.id
            continue
        assert set(r.checks) == set(r.subjects), r.id
        assert r.enforced_by in ENFORCERS, r.id
        if r.not_enforced_on:
            assert r.enforced_by != "nobody", r.id


def test_ptxas_decided_rules_are_enforced_by_ptxas():
    """A rule whose evidence is what ptxas refused (tests/hardware/ptxas_forms.json) is ptxas's to enforce."""
    for r in all_rules():
        if r.evidence == "ptxas":
            assert r.enforced_by == "ptxas", r.id


@pytest.mark.parametrize("r", all_rules(), ids=lambda r: r.id)
def test_defined_in_points_at_the_rule(r):
    """`layoutproof rules --where` sends a reader to the file and line where the rule's block starts."""
    path, line = r.defined_in.rsplit(":", 1)
    with open(os.path.join(REPOSITORY, path)) as handle:
        lines = handle.read().splitlines()
    start = int(line) - 1
    assert 0 <= start < len(lines), r.defined_in
    block = "\n".join(lines[start:start + 3])
    generated = re.findall(r'f"([^"{]+)\{', block)      # rule(f"tma.swizzle.table.{name}", ...) in a loop
    assert f'"{r.id}"' in block or any(r.id.startswith(prefix) for prefix in generated), (r.id, r.defined_in)


FORBIDDEN_CITATIONS = ("REFERENCE.md", "seed", "CLI contract", "CLI.md", "../shared", "solver/")


@pytest.mark.parametrize("r", all_rules(), ids=lambda r: r.id)
def test_sources_cite_documents_a_user_can_open(r):
    for text in (r.source, r.note):
        for word in FORBIDDEN_CITATIONS:
            assert word not in text, f"{r.id} cites {word!r}"
    for cited in re.findall(r"tests/hardware/[\w.\-]+", r.source + " " + r.note):
        assert os.path.exists(os.path.join(REPOSITORY, cited)), f"{r.id} cites missing {cited}"


def test_spec_modules_cite_no_internal_digest():
    for folder, _, files in os.walk(os.path.join(REPOSITORY, "spec")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as handle:
                    text = handle.read()
                for word in ("REFERENCE.md", "../shared", "seed 00", "CLI contract"):
                    assert word not in text, f"{name} cites {word!r}"
                for cited in re.findall(r"tests/hardware/[\w.\-]+\w", text):
                    assert os.path.exists(os.path.join(REPOSITORY, cited)), f"{name} cites missing {cited}"


def test_every_retired_id_resolves_to_its_live_successor():
    table = aliases()
    live = {r.id for r in all_rules()}
    assert table, "the merges are listed in spec/rule_aliases.json"
    for old, successor in table.items():
        assert old not in live, f"{old} is both retired and live"
        assert successor in live, f"{old} -> {successor}, which does not exist"
        assert resolve(old).id == successor


def test_every_retired_id_is_listed_in_changes():
    with open(os.path.join(REPOSITORY, "CHANGES.md")) as handle:
        changes = handle.read()
    for old, successor in aliases().items():
        assert f"`{old}` | `{successor}`" in changes, old


def test_no_code_names_a_retired_id():
    """Scripts keep working through the alias table, but the project's own code uses the live ids."""
    retired = set(aliases())
    pattern = re.compile(r"[\"']([a-z0-9_]+(?:\.[A-Za-z0-9_]+)+)[\"']")
    for top in ("spec", "solver", "layoutproof", "benchmarks", "hardware"):
        for folder, _, files in os.walk(os.path.join(REPOSITORY, top)):
            for name in files:
                if name.endswith(".py"):
                    with open(os.path.join(folder, name)) as handle:
                        used = set(pattern.findall(handle.read()))
                    assert not used & retired, (name, used & retired)


def test_malformed_tensormap_fields_name_live_rules():
    from spec.tma import tensormap_params
    for key, rule_id in tensormap_params._FIELD_RULES.items():
        assert resolve(rule_id).id == rule_id, key


def test_every_published_rule_id_still_resolves():
    """The ids users scripted against before the merges resolve: to themselves, or (through
    spec/rule_aliases.json) to the rule they were merged into."""
    import json
    import os
    from spec.rules import resolve
    with open(os.path.join(TESTS_DIR, "published_rule_ids.json")) as handle:
        published = json.load(handle)["ids"]
    assert len(published) == len(set(published)) > 100
    for rule_id in published:
        assert resolve(rule_id).id in {r.id for r in all_rules()}, rule_id
