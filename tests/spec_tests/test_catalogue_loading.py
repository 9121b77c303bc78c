"""Rules register themselves when their module is imported, so a query (spec.rule.check_all, rules_for)
must load every module that defines rules about its subject first. Before, with only spec.rule imported,
rules_for("descriptor") gave no rule and check_all("recipe", broken) no violation (issue 25, item 4).

The expected lists come from the whole catalogue (spec.rules imports every topic module); each entry
point is imported alone in a fresh process and must see the same rules."""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

import spec.rules
from spec.rule import DEFINITION, SUBJECT_MODULES, SpecError

ENTRY_POINTS = sorted({"spec.rule", "spec.rules", "layoutproof", "solver.synth.recipe", "solver.kernel.mma",
                       "solver.cli.main", "solver.fuzz.desc"}
                      | {name for names in SUBJECT_MODULES.values() for name in names})


def _module_of(rule) -> str:
    return rule.defined_in.rpartition(":")[0][:-len(".py")].replace("/", ".")


def _expected() -> dict:
    every = spec.rules.all_rules()
    return {subject: [r.id for r in every if r.is_about(subject)] for subject in SUBJECT_MODULES}


def test_every_rule_is_found_where_the_table_says():
    for r in spec.rules.all_rules():
        for subject in r.subjects:
            assert subject in SUBJECT_MODULES, f"{r.id}: subject {subject!r} missing from SUBJECT_MODULES"
            assert _module_of(r) in SUBJECT_MODULES[subject], \
                f"{r.id} is defined in {_module_of(r)}, not listed for subject {subject!r}"


def test_the_table_names_no_subject_without_rules():
    for subject in SUBJECT_MODULES:
        assert spec.rules.rules_for(subject), subject


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_an_entry_point_imported_alone_sees_the_whole_catalogue(entry):
    program = (f"import json, importlib; importlib.import_module({entry!r}); from spec.rule import rules_for; "
               f"print(json.dumps({{s: [r.id for r in rules_for(s)] for s in {sorted(SUBJECT_MODULES)!r}}}))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == _expected()


def test_check_all_in_a_fresh_process_reports_a_broken_recipe():
    """The exact failure of the issue: only spec.rule imported, a recipe off its swizzle boundary."""
    program = ("from types import SimpleNamespace; from spec.rule import check_all; "
               "r = SimpleNamespace(swizzle='128B', allow_unaligned=False, smem_address=0x480); "
               "print([v.rule.id for v in check_all('recipe', r, only=['recipe.swizzle_alignment'])])")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['recipe.swizzle_alignment']"


def test_an_unknown_subject_is_refused_not_empty():
    with pytest.raises(SpecError, match="subject"):
        spec.rules.check_all("recipes", SimpleNamespace())
    with pytest.raises(SpecError, match="subject"):
        spec.rules.rules_for("descriptors")


def test_definitions_load_the_whole_catalogue():
    assert DEFINITION in SUBJECT_MODULES
    assert [r.id for r in spec.rules.rules_for(DEFINITION)] == \
        [r.id for r in spec.rules.all_rules() if not r.subjects]


def test_the_table_names_only_modules_of_spec():
    """spec/ never imports solver/ (tests/cli_tests/test_architecture.py); the table's imports keep to that too."""
    import importlib
    for names in SUBJECT_MODULES.values():
        for name in names:
            assert name.split(".")[0] == "spec", name
            importlib.import_module(name)
