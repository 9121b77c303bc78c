"""The property catalogue: every property comes out as expected, names the spec rules it is about,
refutations carry counterexamples that spec/ confirms, and the prover never says "proved" for what Z3
did not prove. The proofs run once per session (tests/conftest.py: proved_catalogue)."""
import dataclasses
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
    refuted = {pid for pid, r in proved_catalogue.expected("refuted").items() if r.status == "refuted"}
    for family in ("swizzle.cute.bijective", "swizzle.cute.involution", "canonical.injective",
                   "k48", "base_offset.phase", "alignment.phase", "desc.roundtrip",
                   "swizzle.tma.table_equals_formula"):
        assert any(pid.startswith(family) for pid in refuted), family


def test_refutations_are_confirmed_by_spec(proved_catalogue):
    for result in proved_catalogue.expected("refuted").values():
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


# --- proof strategies, the memo of proved queries, the batches of prove_many --------------------------------
def _sat_property(strategy: str):
    def build():
        x, y = var("x"), var("y")
        return Query({"x": x, "y": y}, [z3.ULT(x, 100), z3.ULT(y, 100)], x * y != 391)
    return Property("test.strategy_sat", "391 has no factors below 100", "x, y < 100", "test", "refuted",
                    build, replay=lambda c: c["x"] * c["y"] == 391, strategy=strategy)


def test_a_strategy_decides_only_proofs():
    """A strategy's sat is asked again of the default solver: the counterexample is the default one."""
    prover.forget_proofs()
    plain, with_strategy = prover.prove(_sat_property("")), prover.prove(_sat_property("smt"))
    assert plain.status == with_strategy.status == "refuted"
    assert plain.counterexample == with_strategy.counterexample


@pytest.mark.parametrize("pid", [p.id for p in all_properties() if p.strategy][:3] +
                         [p.id for p in all_properties() if p.strategy][-3:])
def test_strategy_properties_are_proved_without_their_strategy_too(pid):
    """The default solver agrees with each strategy (a sample of the properties that name one)."""
    p = next(q for q in all_properties() if q.id == pid)
    assert set(prover.STRATEGIES) >= {p.strategy}
    prover.forget_proofs()
    assert prover.prove(dataclasses.replace(p, strategy="")).status == p.expected == "proved"
    prover.forget_proofs()
    assert prover.prove(p).status == "proved"


def test_a_proved_query_is_not_proved_again_in_the_process(monkeypatch):
    prover.forget_proofs()
    p = next(q for q in all_properties() if q.id == "tma_mma.agree.f16.K.128B")
    assert prover.prove(p).status == "proved"
    twin = next(q for q in all_properties() if q.id == "tma_mma.agree.bf16.K.128B")    # the same query

    def no_solver(*args, **kwargs):
        raise AssertionError("a proved query went to Z3 again")
    with monkeypatch.context() as mp:
        mp.setattr(prover, "_check", no_solver)
        assert prover.prove(twin).status == "proved"
    prover.forget_proofs()
    assert prover.prove(twin).status == "proved"


def test_a_patched_model_is_never_answered_from_the_memo(monkeypatch):
    """The memo is keyed by the query's terms: a mutant (here TMA placing bytes unswizzled) builds other
    terms and gets a counterexample (which spec/ does not confirm: the model and spec now disagree) although
    the original query was proved in this process."""
    from solver.model import tma_swizzle
    p = next(q for q in all_properties() if q.id == "tma_mma.agree.f16.K.128B")
    assert prover.prove(p).status == "proved"
    monkeypatch.setattr(tma_swizzle, "place_byte", lambda mode, destination, offset: destination + offset)
    mutant = prover.prove(p)
    assert mutant.status == "unknown" and mutant.counterexample and "disagree" in mutant.reason


def test_batches_cover_every_property_once_longest_first():
    catalogue = all_properties()
    work = prover.batches(catalogue)
    assert sorted(i for batch in work for i in batch) == list(range(len(catalogue)))
    costs = [sum(prover.cost_hint(catalogue[i]) for i in batch) for batch in work]
    assert costs == sorted(costs, reverse=True)
    for prefix in prover.SHARED_PREFIXES:
        shared = [batch for batch in work if any(catalogue[i].id.startswith(prefix) for i in batch)]
        assert len(shared) == 1 and all(catalogue[i].id.startswith(prefix) for i in shared[0])


def test_prove_many_in_processes_reports_in_order_with_batches():
    chosen = [p for p in all_properties()
              if p.id.startswith(("tma_mma.agree.f16", "tma_mma.agree.bf16", "canonical.injective.K.none",
                                  "model.no_wrap", "tmem.alloc.inside.16x64b", "canonical.injective.K.128B.16bit"))]
    prover.forget_proofs()
    seen = []
    two = prover.prove_many(chosen, jobs=2, on_result=lambda index, r: seen.append(index))
    assert seen == list(range(len(chosen))) and [r.property.id for r in two] == [p.id for p in chosen]
    assert all(r.as_expected for r in two) and any(r.status == "refuted" for r in two)
