"""A rule owns what breaking it leads to (issue 30): `Rule.outcome_on(arch)` is "refused" where its enforcer
refuses it, else its recorded consequence, else "unknown"; the fuzz targets ask the records and keep no
table of their own.

The tables the targets kept by hand before are written out below as they were; the records must give
the same outcome for every rule a target can break, on every arch. Where a hand table named a rule on
an arch where no case can break it (an sm90-only operand rule on sm100), the records also name it: that
changes no label and is listed below.
"""
from __future__ import annotations

import pytest

import spec.rules as catalogue
from spec.rule import ARCHITECTURES, OUTCOMES, Consequence

from solver.fuzz import outcome
from solver.fuzz import recipe as fuzz_recipe
from solver.fuzz import tensormap as fuzz_tensormap
from solver.fuzz import tmem_alloc as fuzz_tmem_alloc
from solver.model import desc_case as desc_model

# --- the hand-made tables, as they were before the records owned them --------------------------------------
OLD_PTXAS_REFUSES = {"sm90": {"operand.sm90.dtype", "operand.mn_major.dtype", "operand.instruction_k",
                              "operand.sm90.n_extent"},
                     "sm103": {"operand.sm103.kind_i8"}}
OLD_RECIPE_DRIVER_REFUSES = {"tma.map.box_range", "tma.map.box_inner_16B", "tma.map.box_swizzle_span",
                             "tma.map.element_strides_range"}
OLD_RECIPE_TRAPS = {"tma.load.coord0_16B"}
OLD_TMEM_ALLOC = {"tmem.alloc.cta_group_uniform": "refused", "tmem.alloc.capacity": "hang"}
OLD_TENSORMAP_RUNTIME = {"tma.map.element_strides_inner": "ok", "tma.map.copy_direction": "unknown",
                         "tma.load.coord0_16B": "trap", "tma.load.packed_coord0": "unknown",
                         "tma.box.destination_alignment": "trap", "tma.map.smem_alignment": "wrong-data"}

# Rules the records refuse on an arch where no case can break them (each rule's own check is for the
# other arch): no label changes.
UNBREAKABLE_THERE = {("operand.sm103.kind_i8", "sm90"), ("operand.sm103.kind_i8", "sm100"),
                     ("operand.sm90.dtype", "sm100"), ("operand.sm90.dtype", "sm103"),
                     ("operand.sm90.n_extent", "sm100"), ("operand.sm90.n_extent", "sm103")}


def _rule(rule_id):
    return catalogue.resolve(rule_id)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_ptxas_refusals_of_the_mma_form_come_from_the_records(arch):
    derived = set(outcome.refused_ids(desc_model.RULE_IDS, arch, "ptxas"))
    old = OLD_PTXAS_REFUSES.get(arch, set())
    assert old <= derived
    assert {(rule_id, arch) for rule_id in derived - old} <= UNBREAKABLE_THERE


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_the_recipe_targets_driver_refusals_and_traps(arch):
    ids = fuzz_recipe.RULE_IDS
    assert set(outcome.refused_ids(ids, arch, "driver")) == OLD_RECIPE_DRIVER_REFUSES & set(ids)
    assert set(outcome.outcome_ids(ids, arch, "trap")) & OLD_RECIPE_TRAPS == OLD_RECIPE_TRAPS & set(ids)


@pytest.mark.parametrize("arch", ("sm100", "sm103"))
def test_an_allocation_sequence_is_refused_or_hangs_as_before(arch):
    for rule_id, was in OLD_TMEM_ALLOC.items():
        assert outcome.rule_outcome(rule_id, arch)[0] == was
    others = set(fuzz_tmem_alloc.RULE_IDS) - set(OLD_TMEM_ALLOC)
    assert all(outcome.rule_outcome(i, arch)[0] == "unknown" for i in others)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_what_a_map_the_encoder_takes_leads_to(arch):
    for rule_id in fuzz_tensormap.RULE_IDS:
        found, _ = outcome.rule_outcome(rule_id, arch)
        if _rule(rule_id).refused_on(arch):
            assert found == "refused"
        else:
            assert found == OLD_TENSORMAP_RUNTIME.get(rule_id, "unknown"), rule_id


def test_every_constraint_states_its_outcome_on_every_arch():
    for r in catalogue.all_rules():
        if not r.subjects:
            assert not r.consequences
            continue
        for arch in ARCHITECTURES:
            found, why = r.outcome_on(arch)
            assert found in OUTCOMES and why, (r.id, arch)
        assert set(r.as_json()["if_broken"]) == set(ARCHITECTURES)


def test_a_consequence_is_never_a_refusal_and_names_real_arches():
    with pytest.raises(ValueError):
        Consequence("refused", "ptxas refuses it")
    with pytest.raises(ValueError):
        Consequence("trap", "seen", arches=("sm80",))


def test_the_targets_keep_no_table_of_outcomes():
    """The old names are gone from the targets: the records are the one place."""
    for module, names in ((outcome, ("PTXAS_REFUSES",)), (fuzz_recipe, ("DRIVER_REFUSES", "TRAPS")),
                          (fuzz_tensormap, ("RUNTIME",)), (fuzz_tmem_alloc, ("REFUSED", "HANGS", "OUTCOME_RULES"))):
        assert not any(hasattr(module, name) for name in names), module.__name__
