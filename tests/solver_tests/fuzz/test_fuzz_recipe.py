"""The `recipe` fuzz target: spec/cases/recipe_case.py's rules (each broken alone by a hand-written case derived
from solver/recipe.build's proved recipe), and generation from solver/model/recipe.py labelled by spec."""
import json
from repo_paths import ROOT  # noqa: E402  (tests/repo_paths.py)
import subprocess
import sys
from functools import lru_cache

import pytest

from solver.fuzz import engine as fuzz
from solver.fuzz import coverage as fuzz_coverage
from solver.fuzz import recipe as fuzz_recipe
from solver.synth import recipe
from spec.mma import descriptor
from spec.cases import recipe_case
from spec.rules import SpecError, rules_for



def case_of(r: recipe.Recipe, **tma) -> dict:
    """The recipe case of a built recipe (the known-good baseline: recipe.case_document), tma fields
    overridden."""
    case = recipe.case_document(r)
    case["tma"].update(tma)
    return case


def redescribe(case: dict, arch: str, step=None, **fields) -> dict:
    """The case with descriptor fields changed (every step, or only `step`); start may be a function
    of the k-step index."""
    out = dict(case, descriptors=[])
    for j, d in enumerate(case["descriptors"]):
        desc = descriptor.decode(arch, int(d["descriptor"], 16))
        if step is None or step == j:
            changes = {k: (v(j) if callable(v) else v) for k, v in fields.items()}
            desc = descriptor.with_fields(desc, **changes)
        out["descriptors"].append({"k_offset": d["k_offset"], "descriptor": desc.hex})
    return out


@lru_cache(maxsize=None)
def built(*args, **options) -> recipe.Recipe:
    """recipe.build(*args), once per session (recipes are synthesized when a test first needs them)."""
    return recipe.build(*args, **options)


def K128():
    return built("sm90", "bf16", "K", 64, 64, "128B", 1024)                  # one box, 4 k-steps


def K128_2():
    return built("sm90", "bf16", "K", 64, 128, "128B", 1024)                 # two boxes, 8 k-steps


def K_NONE():
    return built("sm90", "bf16", "K", 64, 64, "none", 1024)                  # LBO used: box stride


VALID = [("sm90", "bf16", "K", 64, 64, "128B", 1024), ("sm90", "bf16", "K", 64, 128, "128B", 1024),
         ("sm90", "bf16", "K", 64, 64, "none", 1024), ("sm90", "bf16", "MN", 64, 32, "none", 1024),
         ("sm100", "bf16", "MN", 128, 32, "64B", 2048), ("sm100", "tf32", "MN", 64, 16, "128B_atom32B", 0),
         ("sm90", "e4m3", "K", 128, 128, "32B", 0), ("sm100", "s8", "MN", 256, 64, "128B", 0)]


def _stride_breaker():
    # boxes twice as far apart as back to back, and the descriptors follow the boxes: reads right
    c = case_of(K128_2(), box_stride_bytes=16384)
    return redescribe(c, "sm90", start_address=lambda j: 1024 + (32 * j // 128) * 16384 + (32 * j) % 128)


BREAKERS = {   # rule id -> () -> (arch, case, misreads?)
    "recipe.box.swizzle_matches": lambda: ("sm90", redescribe(case_of(K128()), "sm90", swizzle="64B"), True),
    "recipe.box.inner_is_swizzle_row": lambda: (
        "sm90", case_of(K128(), boxDim=[32, 64], box_count=2, box_stride_bytes=8192), True),
    "recipe.box.covers_tile": lambda: ("sm90", case_of(K128(), boxDim=[64, 32]), True),
    "recipe.box.stride": lambda: ("sm90", _stride_breaker(), False),
    "recipe.swizzle_alignment": lambda: (
        "sm90", case_of(built("sm90", "bf16", "K", 64, 64, "128B", 1536, allow_unaligned=True)), False),
    "recipe.k_step.start": lambda: (
        "sm90", redescribe(case_of(K128()), "sm90", step=1, start_address=1056 + 32), True),
    "recipe.k_step.sbo": lambda: ("sm90", redescribe(case_of(K128()), "sm90", step=0, stride_byte_offset=512), True),
    "recipe.k_step.lbo": lambda: ("sm90", redescribe(case_of(K_NONE()), "sm90", leading_byte_offset=2048), True),
    "recipe.k_step.base_offset": lambda: ("sm90", redescribe(case_of(K128()), "sm90", base_offset=1), True),
}


def test_breakers_cover_every_recipe_case_rule():
    assert set(BREAKERS) == {r.id for r in rules_for("recipe_case")}


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_breaker_breaks_its_rule_alone(rule_id):
    arch, case, misreads = BREAKERS[rule_id]()
    c = recipe_case.parse_case(case, arch)
    assert [v.rule.id for v in recipe_case.violations(c)] == [rule_id]
    witness = recipe_case.first_misread(c)
    assert (witness is not None) == misreads, witness
    label = fuzz_recipe.label(case, arch)
    assert label.violates == (rule_id,) and label.outcome == ("wrong-data" if misreads else "unknown")


@pytest.mark.parametrize("args", VALID, ids=lambda a: f"{a[0]}-{a[1]}-{a[2]}-{a[5]}")
def test_valid_recipe_reads_right(args):
    r = built(*args)
    c = recipe_case.parse_case(case_of(r), r.arch)
    assert recipe_case.violations(c) == [] and recipe_case.first_misread(c) is None
    assert fuzz_recipe.label(case_of(r), r.arch).outcome == "ok"


def test_misread_witness_names_the_step_and_element():
    _, case, _ = BREAKERS["recipe.k_step.start"]()
    witness = recipe_case.first_misread(recipe_case.parse_case(case, "sm90"))
    assert witness["k_step"] == 16 and witness["element"]["k"] >= 16 and witness["read_from"] != witness["written_at"]


def test_driver_refuses_a_box_wider_than_the_span():
    case = case_of(K128(), boxDim=[128, 64])                   # 256 bytes > the 128B span
    label = fuzz_recipe.label(case, "sm90")
    assert "tma.map.box_swizzle_span" in label.violates and label.outcome == "refused"


@pytest.mark.parametrize("field,change", [("tma", {"swizzle": "96B"}), ("descriptors", None), ("mn", 12)])
def test_malformed_case_names_the_field(field, change):
    case = case_of(K128())
    if field == "tma":
        case["tma"] = dict(case["tma"], **change)
    elif field == "descriptors":
        case["descriptors"] = case["descriptors"][:2]
    else:
        case[field] = change
    with pytest.raises(SpecError, match=field):
        recipe_case.parse_case(case, "sm90")


# --- Generation ------------------------------------------------------------------------------------------
NOT_ALONE = {"tma.map.box_range", "tma.map.box_inner_16B", "tma.map.box_swizzle_span", "tma.load.coord0_16B",
             "operand.sm103.kind_i8"}
ALONE = {"sm90": set(fuzz_recipe.RULE_IDS) - NOT_ALONE - {"operand.swizzle.table54", "operand.swizzle.k_major_atom32"},
         "sm100": set(fuzz_recipe.RULE_IDS) - NOT_ALONE - {"operand.mn_major.dtype", "operand.sm90.n_extent"}}


def _generated(arch, violate, count=5, seed=1):
    stats = fuzz.Stats()
    records = list(fuzz.generate("recipe", arch, frozenset(violate), count, seed=seed, stats=stats))
    return records, stats


@pytest.mark.parametrize("arch,rule_id", [(a, r) for a in ALONE for r in sorted(ALONE[a])])
def test_generated_cases_break_exactly_the_rule(arch, rule_id):
    records, stats = _generated(arch, {rule_id})
    assert len(records) == 5 and stats.disagreements == []
    for rec in records:
        assert rec["violates"] == [rule_id]
        assert set(fuzz_recipe.label(rec["case"], arch).violates) == {rule_id}


@pytest.mark.parametrize("arch", sorted(ALONE))
def test_valid_cases_are_ok(arch):
    records, stats = _generated(arch, set(), count=20)
    assert len(records) == 20 and stats.disagreements == []
    assert {r["outcome"] for r in records} == {"ok"}


@pytest.mark.parametrize("violate", [{"tma.map.box_range", "recipe.box.covers_tile"},
                                     {"tma.map.box_swizzle_span", "recipe.box.inner_is_swizzle_row"},
                                     {"tma.load.coord0_16B", "tma.map.box_inner_16B", "recipe.box.inner_is_swizzle_row"}])
def test_tied_rules_break_together_and_are_refused(violate):
    records, stats = _generated("sm100", violate)
    assert len(records) == 5 and stats.disagreements == []
    assert {r["outcome"] for r in records} == {"refused"}


def test_same_seed_same_cases():
    """From a fresh process a seed fixes the output (within one process Z3's shared context may find
    other anchors: tests/solver_tests/fuzz/test_fuzz.py)."""
    def run(seed):
        program = ("import json; from solver.fuzz import engine as fuzz; print(json.dumps(list(fuzz.generate('recipe', 'sm90', "
                   f"frozenset({{'recipe.k_step.sbo'}}), 30, seed={seed}))))")
        return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                              cwd=ROOT).stdout
    one, two, other = run(7), run(7), run(8)
    assert one == two and one != other
    cases = [json.dumps(r["case"], sort_keys=True) for r in json.loads(one)]
    assert len(cases) == 30 == len(set(cases))


@pytest.mark.slow
def test_coverage_report():
    report = {e["id"]: e for e in fuzz_coverage.coverage("recipe")}
    assert set(report) == set(fuzz_recipe.RULE_IDS)
    assert {i for i, e in report.items() if not e["breakable"]} == NOT_ALONE - {"operand.sm103.kind_i8"}
    assert report["tma.map.box_range"]["tied_to"] == ["recipe.box.covers_tile"]
