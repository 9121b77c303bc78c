"""The property catalogue: every property comes out as expected, names the spec rules it is about,
refutations carry counterexamples that spec/ confirms, and the prover never says "proved" for what Z3
did not prove. The proofs run once per session (tests/conftest.py: proved_catalogue)."""
import json

import z3
import pytest

from solver.prove import prover
from solver.model.bitvec import var
from solver.prove.catalogue import all_properties
from solver.prove.property import Property, Query
from spec.rules import resolve

CATALOGUE = all_properties()            # registration only: nothing is solved at collection

REQUIRED = ["swizzle.cute.bijective", "swizzle.cute.involution", "swizzle.tma.table_equals_formula",
            "swizzle.tma.bijective", "canonical.injective", "canonical.atom_confined", "k48.contained",
            "base_offset.phase", "alignment.phase", "desc.roundtrip", "model.no_wrap",
            # the model against the manual's tables and definitions, apart from the model (issue 17)
            "desc.table", "swizzle.tma.manual_table", "k48.split", "swizzle.cute.formula", "canonical.k_atoms"]


@pytest.mark.parametrize("family", REQUIRED)
def test_the_issue_s_properties_exist(family):
    assert any(p.id == family or p.id.startswith(family + ".") for p in CATALOGUE)


def test_properties_state_range_source_and_expectation():
    assert len({p.id for p in CATALOGUE}) == len(CATALOGUE)
    for p in CATALOGUE:
        assert p.statement and p.domain and p.source and p.expected in ("proved", "refuted"), p.id


@pytest.mark.parametrize("pid", sorted(p.id for p in CATALOGUE))
def test_status_is_expected(pid, proved_catalogue):
    result = proved_catalogue[pid]
    assert result.status == result.property.expected, (result.status, result.reason, result.counterexample)


@pytest.mark.parametrize("pid", sorted(p.id for p in CATALOGUE))
def test_property_names_rules_spec_resolves(pid):
    p = next(p for p in CATALOGUE if p.id == pid)
    assert p.rules, "a property names at least one rule"
    assert len(set(p.rules)) == len(p.rules)
    for rule_id in p.rules:
        assert resolve(rule_id).id, rule_id           # spec.rules.resolve raises on an unknown id
    assert p.as_json()["rules"] == list(p.rules)
    json.dumps(p.as_json())


def test_every_proved_property_has_a_refuted_neighbour_or_is_a_definition_check(proved_catalogue):
    """Refuted variants exist for the main families, so the catalogue shows it can fail."""
    refuted = {pid for pid, r in proved_catalogue.items() if r.status == "refuted"}
    for family in ("swizzle.cute.bijective", "swizzle.cute.involution", "canonical.injective",
                   "k48", "base_offset.phase", "alignment.phase", "desc.roundtrip",
                   "swizzle.tma.table_equals_formula"):
        assert any(pid.startswith(family) for pid in refuted), family


def test_refutations_are_confirmed_by_spec(proved_catalogue):
    for result in proved_catalogue.values():
        if result.status == "refuted":
            assert result.counterexample and result.property.replay(result.counterexample)


# --- soundness of the prover itself --------------------------------------------------------------------
def _hard_property():
    """Factoring a 62-bit semiprime: Z3 cannot answer within a millisecond."""
    def build():
        x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
        bounds = [z3.UGT(x, 1), z3.UGT(y, 1), z3.ULT(x, 1 << 31), z3.ULT(y, 1 << 31)]
        return Query({"x": x, "y": y}, bounds, x * y != 2147483647 * 2147483629)
    return Property("test.hard", "no factors", "31-bit factors", "test", "proved", build)


def test_timeout_is_unknown_never_proved():
    result = prover.prove(_hard_property(), timeout=0.001)
    assert result.status == "unknown" and "z3" in result.reason


def test_counterexample_not_confirmed_by_spec_is_unknown():
    def build():
        x = var("x")
        return Query({"x": x}, [z3.ULT(x, 4)], x != 2)
    p = Property("test.unconfirmed", "x is never 2", "x < 4", "test", "refuted", build,
                 replay=lambda c: False)
    result = prover.prove(p)
    assert result.status == "unknown" and "disagree" in result.reason and result.counterexample == {"x": 2}


def test_failing_lemma_is_unknown_not_refuted():
    def build():
        x = var("x")
        return [Query({"x": x}, [], x == x), Query({"x": x}, [], x != 3)]
    result = prover.prove(Property("test.lemma", "s", "d", "test", "proved", build))
    assert result.status == "unknown" and "lemma 2 of 2" in result.reason
