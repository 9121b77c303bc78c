"""The TMA placement and TMA-vs-MMA properties of solver/prove/tma.py: they exist for every mode,
dtype, major-ness and swizzle; they come out as expected; their ranges are not empty; a deliberately
wrong tile is refuted with a counterexample spec/ confirms; and the canonical descriptors the properties
use read what solver/synth/recipe.py's synthesized descriptors read."""
from __future__ import annotations

import pytest
import z3

from solver.synth import recipe
from solver.model import tma_swizzle as tma_model
from solver.prove import tma as tp
from solver.model.bitvec import evaluate, var
from solver.prove.catalogue import all_properties
from solver.prove.property import Property
from solver.prove.prover import prove
from spec.mma import descriptor as spec_descriptor
from spec.mma import dtypes as spec_dtypes
from spec.mma import readmap as spec_readmap
from spec.tma import place as tma_place

NEW_FAMILIES = ("tma.place.", "tma_mma.")
PROPERTIES = {p.id: p for p in all_properties()}
NEW = sorted((p for p in PROPERTIES.values() if p.id.startswith(NEW_FAMILIES)), key=lambda p: p.id)
NEW_IDS = [p.id for p in NEW]


# --- The catalogue -------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", tma_model.MODES)
def test_every_mode_has_its_placement_properties(mode):
    assert f"tma.place.bijective.{mode}" in PROPERTIES
    assert f"tma.place.element_injective.{mode}" in PROPERTIES


def test_every_smem_dtype_has_its_agreement_properties():
    """wgmma/tcgen05 smem types: K-major with none/32B/64B/128B; MN-major where legal (8/16-bit:
    none..128B on tcgen05, f16/bf16 also on wgmma; 32-bit: only 128B_atom32B, Table 54)."""
    ids = {p.id for p in NEW if p.id.startswith("tma_mma.agree.")}
    for dtype in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"):
        for swizzle in ("none", "32B", "64B", "128B"):
            assert f"tma_mma.agree.{dtype}.K.{swizzle}" in ids
            assert (f"tma_mma.agree.{dtype}.MN.{swizzle}" in ids) == (dtype != "tf32")
        assert (f"tma_mma.agree.{dtype}.MN.128B_atom32B" in ids) == (dtype == "tf32")
        assert f"tma_mma.agree.{dtype}.K.128B_atom32B" not in ids
    assert len(ids) == 7 * 4 + 6 * 4 + 1


def test_dtype_widths_match_spec():
    for name, bits in tp.MMA_DTYPE_BITS.items():
        assert spec_dtypes.dtype(name).bits == bits


@pytest.mark.parametrize("pid", NEW_IDS)
def test_status_is_expected(pid, proved_catalogue):
    """(How long the catalogue takes is benchmarks/bench_prove.py's and BENCHMARKS.md's, not a test's.)"""
    result = proved_catalogue[pid]
    assert result.status == result.property.expected, (result.reason, result.counterexample)


def test_refutations_name_a_confirmed_counterexample(proved_catalogue):
    misaligned = proved_catalogue["tma_mma.misaligned"]
    cx = misaligned.counterexample
    assert cx["tile_start"] % 1024 == 128 and cx["written"] != cx["read"]
    assert misaligned.property.replay(cx)
    line = proved_catalogue["tma.place.bijective.128B.line_aligned"]
    assert line.counterexample["destination"] % 1024 != 0
    assert line.property.replay(line.counterexample)


@pytest.mark.parametrize("pid", NEW_IDS)
def test_ranges_are_not_empty(pid):
    """A proof over an empty range proves nothing: the assumptions have a model."""
    query = PROPERTIES[pid].build()
    solver = z3.Solver()
    solver.add(*query.assumptions)
    assert solver.check() == z3.sat


# --- The placement helper against spec -----------------------------------------------------------------
@pytest.mark.parametrize("mode", tma_model.MODES)
def test_place_byte_is_spec_placement(mode):
    destination, offset = var("destination"), var("offset")
    expr = tma_model.place_byte(mode, destination, offset)
    box = tma_place.make_box(mode, 2, (64, 24), 0x2080)
    for index, address in enumerate(tma_place.place(box)):
        if index % 37 == 0:
            assert evaluate(expr, {"destination": 0x2080, "offset": 2 * index}) == address


# --- A wrong tile is caught ------------------------------------------------------------------------------
class _WrongMode(tp.TileFamily):
    """A mutant: loaded with 64B swizzle, read through 128B descriptors."""
    @property
    def tma_mode(self):
        return "64B"


class _WrongSbo(tp.TileFamily):
    """A mutant: the descriptor's SBO one 16-byte unit short."""
    def canonical_descriptor(self, tile_start, mn_extent, k_tile, k_offset):
        start, lbo, sbo = super().canonical_descriptor(tile_start, mn_extent, k_tile, k_offset)
        return start, lbo, sbo - 16


@pytest.mark.parametrize("mutant", [_WrongMode("bf16", "K", "128B"), _WrongSbo("e4m3", "MN", "64B"),
                                    _WrongSbo("bf16", "K", "none")], ids=lambda m: type(m).__name__)
def test_mutant_tile_is_refuted_and_spec_confirms(mutant):
    p = Property("test.mutant", "s", "d", "test", "refuted",
                 lambda: tp._agreement_query(mutant, 0, "zero"), replay=tp._replay_agreement(mutant, "zero"))
    result = prove(p)
    assert result.status == "refuted", result.reason


# --- The canonical descriptors are the recipe's ----------------------------------------------------------
RECIPE_CASES = [("sm90", "bf16", "K", "128B"), ("sm90", "f16", "MN", "64B"), ("sm100", "e4m3", "MN", "none"),
                ("sm100", "tf32", "MN", "128B_atom32B"), ("sm100", "s8", "K", "32B"),
                ("sm90", "bf16", "K", "none")]


@pytest.mark.parametrize("case", RECIPE_CASES, ids=lambda c: "-".join(c))
def test_canonical_descriptors_read_what_recipe_descriptors_read(case):
    arch, dtype, major, swizzle = case
    tile = tp.TileFamily(dtype, major, swizzle)
    mn, k_tile, start = 64 if major == "K" else 2 * tile.box_row, 2 * tile.box_row, 0x4000
    k_tile = max(k_tile, 2 * tile.instruction_k)
    built = recipe.build(arch, dtype, major, mn, k_tile, swizzle, start)
    assert built.proof["status"] == "proved"
    assert built.tma["box"] == [tile.box_row, tile.box_extent(mn, k_tile)]
    for instruction in built.instructions:
        k0 = instruction["k_offset"]
        theirs = spec_descriptor.decode(arch, int(instruction["descriptor"], 16))
        ours = spec_descriptor.encode(arch, *tile.canonical_descriptor(start, mn, k_tile, k0), swizzle, 0)
        read = [spec_readmap.read_addresses(spec_readmap.make_operand(d, dtype, major, mn, tile.instruction_k))
                for d in (theirs, ours)]
        assert read[0] == read[1]
        for m, k in [(0, 0), (mn - 1, tile.instruction_k - 1), (mn // 3, tile.instruction_k // 2), (7, 1)]:
            c = {"tile_start": start, "mn_extent": mn, "k_tile": k_tile, "k_offset": k0, "mn": m, "k": k0 + k}
            assert tp._spec_written(tile, c) == read[1][m][k]      # the replay's TMA side, sampled


# --- The cached swizzle-table terms (solver/model/tma_swizzle.py destination_chunk_term) ---------------
@pytest.mark.parametrize("mode", tma_model.MODES)
def test_cached_destination_chunk_is_the_built_term(mode):
    """The template instantiated by substitution is the very term destination_chunk builds (Z3 shares
    equal terms), on every call, so the queries and their counterexamples do not change."""
    table = tma_model.CHUNK_TABLES[mode]
    for address in (var("a"), var("b") + 48):
        row, chunk = tma_model.line_row(table, address), tma_model.source_chunk(address)
        for _ in range(2):
            assert tma_model.destination_chunk_term(table, row, chunk).eq(
                tma_model.destination_chunk(table, row, chunk))


def test_cached_destination_chunk_follows_a_patched_function(monkeypatch):
    """A mutant that replaces destination_chunk, or swaps its code object (tests/mutants.py), gets a
    template built by the mutant, never the cached original; restoring it gives the original again."""
    from mutants import swap
    table = tma_model.CHUNK_TABLES["128B"]
    a = var("a")
    row, chunk = tma_model.line_row(table, a), tma_model.source_chunk(a)
    original = tma_model.destination_chunk_term(table, row, chunk)
    with monkeypatch.context() as mp:
        mp.setattr(tma_model, "destination_chunk", lambda t, r, c: c)
        assert tma_model.destination_chunk_term(table, row, chunk).eq(chunk)
        unswizzled = z3.Solver()
        unswizzled.add(tma_model.table_swizzle("128B", a) != a)
        assert unswizzled.check() == z3.unsat             # the identity chunk map: no swizzle at all
    with monkeypatch.context() as mp:
        swap(mp, tma_model.destination_chunk, "bv(j), result)", "bv(7 - j), result)")
        mutated = tma_model.destination_chunk_term(table, row, chunk)
        assert mutated.eq(tma_model.destination_chunk(table, row, chunk)) and not mutated.eq(original)
    assert tma_model.destination_chunk_term(table, row, chunk).eq(original)
    broken = [list(r) for r in table]
    broken[1][0], broken[1][1] = broken[1][1], broken[1][0]
    assert tma_model.destination_chunk_term(broken, row, chunk).eq(tma_model.destination_chunk(broken, row, chunk))
    assert not tma_model.destination_chunk_term(broken, row, chunk).eq(original)
