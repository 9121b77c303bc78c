"""Mutation tests: a proof that cannot fail proves nothing. Each deliberately broken variant of the Z3
model (wrong shift, wrong mask, SBO scaled wrong, base offset ignored, ...) must make at least one
property of the catalogue come out differently from its expected status."""
import z3
import pytest

from solver.model import descriptor as descriptor_model
from solver.prove import im2col as im2col_properties
from solver.model import readmap as layout_model
from solver.prove import layout as layout_properties
from solver.prove import prover
from solver.model import swizzle as swizzle_model
from solver.prove import swizzle as swizzle_properties
from solver.model import tma_swizzle as tma_model
from solver.model.bitvec import bv
from solver.prove.catalogue import all_properties

CATALOGUE = all_properties()
TIMEOUT = 20.0
pytestmark = pytest.mark.slow


def chosen(families) -> list:
    properties = [p for p in CATALOGUE if p.id.startswith(tuple(families))]
    assert properties
    return properties


def broken_statuses(families) -> list:
    return [p.id for p in chosen(families) if prover.prove(p, timeout=TIMEOUT).status != p.expected]


def wrong_shift_cute(x, B, M, S):
    return ORIGINAL_CUTE(x, B, M, (bv(S) if isinstance(S, int) else S) + 1)


def base_offset_ignored(address, swizzle, base_offset):
    return ORIGINAL_DESCRIPTOR_SWIZZLE(address, swizzle, bv(0))


def wrong_mask(address, swizzle, base_offset):
    bits, base = swizzle_model.DESCRIPTOR_BITS[swizzle]
    if bits == 0:
        return address
    phase = (z3.LShR(address, 7) - base_offset) & bv((1 << bits + 1) - 1)   # one bit too many
    return address ^ (phase << base)


def phase_plus_base_offset(address, swizzle, base_offset):
    return ORIGINAL_DESCRIPTOR_SWIZZLE(address, swizzle, bv(0) - base_offset)


ORIGINAL_CUTE = swizzle_model.cute_swizzle
ORIGINAL_DESCRIPTOR_SWIZZLE = swizzle_model.descriptor_swizzle
ORIGINAL_LINEAR = layout_model.linear_address
ORIGINAL_DECODE = descriptor_model.decode


def sbo_scaled_wrong(shape, f, mn, k, arith):
    return ORIGINAL_LINEAR(shape, layout_model.Fields(f.start, f.lbo, f.sbo * 2, f.base_offset, f.absolute_lbo),
                           mn, k, arith)


def lbo_sbo_swapped(shape, f, mn, k, arith):
    return ORIGINAL_LINEAR(shape, layout_model.Fields(f.start, f.sbo, f.lbo, f.base_offset, f.absolute_lbo),
                           mn, k, arith)


def k48_split_ignored(shape, f, mn, k, arith):
    return ORIGINAL_LINEAR(shape, layout_model.Fields(f.start, f.lbo, f.sbo, f.base_offset, False), mn, k, arith)


def decode_off_by_one(arch, word, width=32):
    fields = ORIGINAL_DECODE(arch, word, width)
    fields["sbo"] = fields["sbo"] + 16
    return fields


def tma_writes_unswizzled(mode, destination, offset):
    return destination + offset


def tma_swizzles_from_the_destination(mode, destination, offset):
    """The phase counted from the destination instead of the absolute address (what the H100 refuted)."""
    return destination + ORIGINAL_TABLE_SWIZZLE(mode, offset)


ORIGINAL_TABLE_SWIZZLE = tma_model.table_swizzle


def buffers_two_apart(v, k, j):
    return v["lower"] + 2 * v[k] + v["stride"] * v[j]


def patch_descriptor_swizzle(monkeypatch, replacement):
    for module in (swizzle_model, layout_model, layout_properties):
        if hasattr(module, "descriptor_swizzle"):
            monkeypatch.setattr(module, "descriptor_swizzle", replacement)


MUTATIONS = {
    "cute swizzle shifts by S + 1": (
        lambda mp: [mp.setattr(m, "cute_swizzle", wrong_shift_cute)
                    for m in (swizzle_model, swizzle_properties, tma_model) if hasattr(m, "cute_swizzle")],
        ["swizzle.cute", "alignment", "base_offset", "swizzle.tma"]),
    "phase ignores the base offset": (
        lambda mp: patch_descriptor_swizzle(mp, base_offset_ignored), ["base_offset", "canonical.atom_confined"]),
    "phase mask one bit too wide": (
        lambda mp: patch_descriptor_swizzle(mp, wrong_mask), ["base_offset", "canonical.atom_confined"]),
    "base offset added instead of subtracted": (
        lambda mp: patch_descriptor_swizzle(mp, phase_plus_base_offset), ["base_offset"]),
    "SBO scaled by 2": (
        lambda mp: [mp.setattr(m, "linear_address", sbo_scaled_wrong) for m in (layout_model, layout_properties)],
        ["canonical.injective", "k48"]),
    "LBO and SBO swapped": (
        lambda mp: [mp.setattr(m, "linear_address", lbo_sbo_swapped) for m in (layout_model, layout_properties)],
        ["canonical.injective"]),
    "48-byte K read contiguously": (
        lambda mp: [mp.setattr(m, "linear_address", k48_split_ignored) for m in (layout_model, layout_properties)],
        ["k48"]),
    "TMA writes without its swizzle": (
        lambda mp: mp.setattr(tma_model, "place_byte", tma_writes_unswizzled), ["tma_mma.agree", "tma.place"]),
    "TMA swizzle phase from the destination": (
        lambda mp: mp.setattr(tma_model, "place_byte", tma_swizzles_from_the_destination),
        ["tma_mma.misaligned", "tma.place"]),
    "wOffset buffers two pixels apart": (
        lambda mp: mp.setattr(im2col_properties, "_position", buffers_two_apart), ["im2col.w"]),
    "decode adds 16 to SBO": (
        lambda mp: mp.setattr(descriptor_model, "decode", decode_off_by_one), ["desc.roundtrip"]),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutation_is_caught(name, monkeypatch):
    apply, families = MUTATIONS[name]
    apply(monkeypatch)
    assert broken_statuses(families), f"no property noticed the mutation: {name}"


def test_unmutated_model_passes_the_same_families(proved_catalogue):
    """The control: unmutated, every property of those families comes out as expected, well within the
    mutants' time limit (so a mutant's other status is the mutation's doing, not a timeout's)."""
    families = sorted({f for _, fs in MUTATIONS.values() for f in fs})
    results = [proved_catalogue[p.id] for p in chosen(families)]
    assert [r.property.id for r in results if r.status != r.property.expected] == []
    assert max(r.seconds for r in results) < TIMEOUT / 4
