"""The Z3 model of the TMA swizzle modes (solver/model/tma_swizzle.py) and its properties (solver/prove/tma.py)
against the executable spec (spec/tma/swizzle.py), PTX 5.5.7 (Swizzling Modes)."""
from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings, strategies as st

from solver.model import tma_swizzle as model
from solver.prove import tma as tma_properties  # noqa: F401  (registers the swizzle.tma.* properties)
from solver.model.bitvec import evaluate, var
from solver.prove.property import PROPERTIES, Property, Query
from solver.prove.prover import prove
from spec.tma import swizzle as spec_tma
from spec.cute.swizzle import Swizzle

MODES = list(model.MODES)
TIMEOUT = 30.0
TMA_PROPERTIES = sorted((p for p in PROPERTIES.values() if p.id.startswith("swizzle.tma.")),
                        key=lambda p: p.id)
REFUTED_VARIANT = "swizzle.tma.table_equals_formula.128B_ATOM_32B_FLIP_8B_without_flip"

ADDRESS = var("address")
TABLE_EXPR = {mode: model.table_swizzle(mode, ADDRESS) for mode in MODES}
FORMULA_EXPR = {mode: model.formula_swizzle(mode, ADDRESS) for mode in MODES}


def at(expr, address: int) -> int:
    return evaluate(expr, {"address": address})


def _unsat(*constraints) -> bool:
    solver = z3.Solver()
    solver.set("timeout", int(TIMEOUT * 1000))
    solver.add(*constraints)
    return solver.check() == z3.unsat


# --- The registry ---------------------------------------------------------------------------------
def test_registry_lists_every_mode():
    ids = {p.id for p in TMA_PROPERTIES}
    expected = {f"swizzle.tma.{kind}.{mode}" for kind in ("table_equals_formula", "bijective", "manual_table")
                for mode in MODES} | {REFUTED_VARIANT}
    assert ids == expected
    assert set(MODES) == set(spec_tma.MODES)
    for p in TMA_PROPERTIES:
        assert p.family == "swizzle.tma"
        assert "PTX 5.5.7 (Swizzling Modes)" in p.source
        assert p.replay is not None and p.domain and p.statement
        assert p.expected == ("refuted" if p.id == REFUTED_VARIANT else "proved")


@pytest.mark.parametrize("p", TMA_PROPERTIES, ids=lambda p: p.id)
def test_property(p, proved_catalogue):
    result = proved_catalogue[p.id]
    assert result.status == p.expected, (result.status, result.reason, result.counterexample)
    if p.expected == "refuted":
        assert result.counterexample is not None
        assert p.replay(result.counterexample)


def test_refuted_variant_counterexample_is_an_odd_line(proved_catalogue):
    """Without the flip, the formula is wrong exactly on the odd 128-byte lines (spec agrees)."""
    result = proved_catalogue[REFUTED_VARIANT]
    address = result.counterexample["address"]
    assert (address >> 7) & 1 == 1
    assert spec_tma.flips_8b("128B_ATOM_32B_FLIP_8B", address)
    assert (spec_tma.swizzle_byte_address("128B_ATOM_32B_FLIP_8B", address)
            ^ Swizzle(2, 5, 2)(address)) == 8


# --- The transcriptions agree with spec/ (written separately) -------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_tables_and_formulas_match_spec(mode):
    assert [list(row) for row in model.CHUNK_TABLES[mode]] == spec_tma.chunk_table(mode)
    assert (mode in model.FLIP_8B_MODES) == spec_tma.mode_info(mode).flip_8b
    assert model.REPEAT_BYTES[mode] == spec_tma.repeat_boundary(mode)
    if mode != "NONE":   # NONE's table prints the identity row twice: spec's period 256, block 128
        assert model.REPEAT_BYTES[mode] % spec_tma.pattern_period(mode) == 0
    formula = spec_tma.xor_formula(mode)
    spec_triples = ([(s.bits, s.base, s.shift) for s in spec_tma.FLIP_8B_FORMULA] if formula is None
                    else [(formula.bits, formula.base, formula.shift)])
    assert list(model.XOR_FORMULAS[mode]) == spec_triples


def test_unknown_mode_rejected():
    with pytest.raises(ValueError):
        model.table_swizzle("256B", ADDRESS)
    with pytest.raises(ValueError):
        model.formula_swizzle("256B", ADDRESS)


# --- Further facts of the model, proved over every 32-bit address ---------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_reading_of_the_table_does_not_matter(mode):
    """Searching the row for the source chunk (PTX 5.5.7's 'destination layout' reading) equals using the
    cell at the source position as the destination: every row is an involution."""
    direct = model._table_swizzle(model.CHUNK_TABLES[mode], mode in model.FLIP_8B_MODES, ADDRESS,
                                  direct=True)
    assert _unsat(direct != TABLE_EXPR[mode])


@pytest.mark.parametrize("mode", MODES)
def test_bytes_stay_in_their_line(mode):
    """Stronger than the repeat block: swizzling never leaves the 128-byte line."""
    assert _unsat(z3.LShR(TABLE_EXPR[mode], 7) != z3.LShR(ADDRESS, 7))


@pytest.mark.parametrize("mode", MODES)
def test_pattern_repeats_with_the_block(mode):
    """f(a + block) == f(a) + block wherever a + block does not wrap: the repeat block is a period."""
    size = model.REPEAT_BYTES[mode]
    shifted = model.table_swizzle(mode, ADDRESS + size)
    assert _unsat(z3.ULT(ADDRESS, 2 ** 32 - size), shifted != TABLE_EXPR[mode] + size)


# --- Differential tests: Z3 terms evaluated on concrete addresses vs spec -------------------------
ADDRESSES = st.lists(st.one_of(st.integers(0, 2 ** 32 - 1), st.integers(0, 1 << 16),
                               st.integers(2 ** 32 - 4096, 2 ** 32 - 1)),
                     min_size=40, max_size=40)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=25, deadline=None)
@given(addresses=ADDRESSES)
def test_model_equals_spec_on_random_addresses(mode, addresses):
    for address in addresses:           # 25 x 40 = 1000 addresses per mode
        expected = spec_tma.swizzle_byte_address(mode, address)
        assert at(TABLE_EXPR[mode], address) == expected, hex(address)
        assert at(FORMULA_EXPR[mode], address) == spec_tma.xor_formula_address(mode, address), hex(address)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["first", "last"])   # the blocks at 0 and at 2^32 - size
def test_model_equals_spec_on_whole_block(mode, where):
    size = model.REPEAT_BYTES[mode]
    base = 0 if where == "first" else 2 ** 32 - size
    # Every 16-byte chunk, at its first byte and at bytes 7 and 8 (either side of the 8-byte flip).
    for address in (a + o for a in range(base, base + size, 16) for o in (0, 7, 8)):
        expected = spec_tma.swizzle_byte_address(mode, address)
        assert at(TABLE_EXPR[mode], address) == expected, hex(address)
        assert at(FORMULA_EXPR[mode], address) == expected, hex(address)
    images = [spec_tma.swizzle_byte_address(mode, a) for a in range(base, base + size)]
    assert sorted(images) == list(range(base, base + size))   # a permutation of the block


# --- Mutation tests: a broken model must be caught ------------------------------------------------
def _mutant_table(mode: str, row: int, new_row):
    table = [tuple(r) for r in model.CHUNK_TABLES[mode]]
    table[row] = tuple(new_row)
    return tuple(table)


def _swap_first_two(row):
    return (row[1], row[0]) + tuple(row[2:])


def _mutant_property(name: str, build, replay, expected: str = "refuted") -> Property:
    return Property(f"mutant.{name}", name, "32-bit addresses", "test", expected, build, replay)


@pytest.mark.parametrize("mode", MODES)
def test_mutated_table_row_is_refuted(mode):
    """Swapping two cells of the last row (still a permutation) breaks table == formula."""
    last = len(model.CHUNK_TABLES[mode]) - 1
    table = _mutant_table(mode, last, _swap_first_two(model.CHUNK_TABLES[mode][last]))
    flip = mode in model.FLIP_8B_MODES
    mutant_expr = model._table_swizzle(table, flip, ADDRESS)

    def build():
        return Query({"address": ADDRESS}, [], mutant_expr == FORMULA_EXPR[mode])

    def replay(cx):   # the mutant, run concretely, disagrees with spec's formula where spec does not
        address = cx["address"]
        formula = spec_tma.xor_formula_address(mode, address)
        return (at(mutant_expr, address) != formula
                and spec_tma.swizzle_byte_address(mode, address) == formula)

    result = prove(_mutant_property(f"table.{mode}", build, replay), timeout=TIMEOUT)
    assert result.status == "refuted", (result.status, result.reason)
    assert (result.counterexample["address"] >> 7) % len(table) == last
    # The genuine property's replay (spec) does not confirm the mutant's counterexample: the prover
    # would report the model/spec disagreement as "unknown", never as "refuted".
    genuine = PROPERTIES[f"swizzle.tma.table_equals_formula.{mode}"]
    assert not genuine.replay(result.counterexample)
    disagreement = prove(_mutant_property(f"table.{mode}.vs_spec", build, genuine.replay, "proved"),
                         timeout=TIMEOUT)
    assert disagreement.status == "unknown" and "disagree" in disagreement.reason


def test_non_permutation_row_breaks_bijectivity():
    """A row that lists a chunk twice (and so misses one) is caught by the bijectivity claim."""
    mode = "128B"
    table = _mutant_table(mode, 3, (3, 2, 1, 0, 7, 6, 5, 5))
    a, b = var("a"), var("b")
    fa, fb = model._table_swizzle(table, False, a), model._table_swizzle(table, False, b)
    size = model.REPEAT_BYTES[mode]

    def build():
        claim = z3.And(z3.Implies(a != b, fa != fb), z3.UDiv(fa, size) == z3.UDiv(a, size))
        return Query({"a": a, "b": b}, [], claim)

    def replay(cx):
        ma, mb = evaluate(fa, {"a": cx["a"]}), evaluate(fb, {"b": cx["b"]})
        return (cx["a"] != cx["b"] and ma == mb) or ma // size != cx["a"] // size

    result = prove(_mutant_property("bijective.duplicate_cell", build, replay), timeout=TIMEOUT)
    assert result.status == "refuted", (result.status, result.reason)


@pytest.mark.parametrize("mode, wrong", [("128B", (3, 4, 2)), ("64B", (2, 4, 4)),
                                         ("128B_ATOM_32B", (2, 5, 1)), ("128B_ATOM_64B", (1, 6, 2)),
                                         ("32B", (1, 4, 2))])
def test_wrong_formula_shift_is_refuted(mode, wrong):
    """A wrong shift in the claimed formula is refuted, and spec confirms the counterexample."""
    wrong_expr = model._formula_swizzle((wrong,), ADDRESS)

    def build():
        return Query({"address": ADDRESS}, [], TABLE_EXPR[mode] == wrong_expr)

    def replay(cx):
        return spec_tma.swizzle_byte_address(mode, cx["address"]) != Swizzle(*wrong)(cx["address"])

    result = prove(_mutant_property(f"formula.{mode}", build, replay), timeout=TIMEOUT)
    assert result.status == "refuted", (result.status, result.reason)


def test_flip_on_even_lines_is_refuted():
    """The flip formula with the flip moved to the even lines (bit 7 clear) differs from the table."""
    mode = "128B_ATOM_32B_FLIP_8B"
    even_flip = z3.If(z3.Extract(7, 7, ADDRESS) == 0, ADDRESS ^ 8, ADDRESS)
    wrong_expr = model._formula_swizzle(((2, 5, 2),), even_flip)

    def build():
        return Query({"address": ADDRESS}, [], TABLE_EXPR[mode] == wrong_expr)

    def replay(cx):
        address = cx["address"]
        flipped = address ^ 8 if (address >> 7) % 2 == 0 else address
        return spec_tma.swizzle_byte_address(mode, address) != Swizzle(2, 5, 2)(flipped)

    result = prove(_mutant_property("flip.even_lines", build, replay), timeout=TIMEOUT)
    assert result.status == "refuted", (result.status, result.reason)
