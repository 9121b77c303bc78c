"""`recipe` proves its tile through spec's recipe case (issue 30): solver.synth.recipe builds the case
document (spec/cases/recipe_case.py) and takes its proof from recipe_case.first_misread and its written
addresses from recipe_case.written; there is no second checker in solver/.

The oracle here is the manual's, written apart: a TMA box is dense with dimension 0 fastest (PTX ISA 5.5.3,
tiled mode) and its swizzle acts on the absolute shared address (5.5.7); a descriptor reads element
(mn, k) at spec.mma.readmap.element_address. Every element of every k-step is compared, on built recipes
and on recipes whose descriptors were changed, whole-byte and 4-bit (e2m1, which the case reads as its
byte tile)."""
from __future__ import annotations

import dataclasses
import random

import pytest

from spec import fast
from spec.mma import descriptor, dtypes, readmap
from spec.rule import SpecError
from spec.tma import swizzle as tma_swizzle
from solver.synth import recipe

RECIPES = [("sm90", "bf16", "K", 64, 128, "128B", 0x400, None), ("sm90", "f16", "MN", 64, 32, "64B", 0x400, None),
           ("sm100", "e2m1", "K", 32, 256, "128B", 0x800, "mxf4"), ("sm100", "e2m1", "K", 16, 512, "64B", 0x400, "mxf4"),
           ("sm100", "tf32", "MN", 32, 16, "128B_atom32B", 0x400, None), ("sm100", "e4m3", "K", 16, 64, "none", 0x400, None),
           ("sm100", "bf16", "K", 16, 64, "128B", 0x480, None), ("sm100", "e4m3", "MN", 32, 64, "32B", 0x400, None),
           ("sm90", "bf16", "K", 24, 64, "32B", 0x2000, None), ("sm90", "s8", "K", 32, 128, "none", 0x400, None)]


def _built(case) -> recipe.Recipe:
    arch, dtype, major, mn, k_tile, swizzle, address, kind = case
    return recipe.build(arch, dtype, major, mn, k_tile, swizzle, address, kind=kind, allow_unaligned=True)


def _tma_written(r: recipe.Recipe, mn: int, k: int) -> int:
    """The byte the recipe's TMA loads put element (mn, k) at: dense box, d0 fastest, swizzled absolute."""
    per_row, bits = r.tma["box"][0], dtypes.dtype(r.dtype).bits
    load, inner, outer = (k // per_row, k % per_row, mn) if r.major == "K" else (mn // per_row, mn % per_row, k)
    base = r.tma["loads"][load]["smem_address"]
    return tma_swizzle.swizzle_byte_address(r.tma["swizzle"], base + (outer * per_row + inner) * bits // 8)


def _oracle_proof(r: recipe.Recipe) -> dict:
    k_inst = recipe.instruction_k(r)
    for step in r.instructions:
        if step["status"] != "found":
            return {"status": "refuted", "reason": f"no descriptor for K offset {step['k_offset']}"}
        op = readmap.make_operand(descriptor.decode(r.arch, int(step["descriptor"], 16)), r.dtype, r.major, r.mn,
                                  k_inst, r.kind)
        for mn in range(r.mn):
            for k in range(k_inst):
                written = _tma_written(r, mn, step["k_offset"] + k)
                read = readmap.element_address(op, mn, k)
                if written != read:
                    return {"status": "refuted", "element": [mn, step["k_offset"] + k], "written": written,
                            "read": read}
    return {"status": "proved", "method": "exhaustive", "elements": r.mn * r.k_tile,
            "statement": "every element each descriptor reads is the one the TMA boxes wrote there"}


def _changed(r: recipe.Recipe, rng: random.Random):
    """r with one k-step's descriptor changed in one field (None when the change cannot be encoded)."""
    steps = [dict(s) for s in r.instructions]
    step = rng.choice(steps)
    d = descriptor.decode(r.arch, int(step["descriptor"], 16))
    fields = [d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset]
    which = rng.randrange(4)
    fields[which] = (fields[which] + rng.choice((1, 3))) % 8 if which == 3 else fields[which] + 16 * rng.choice((1, 2, 8, 64))
    try:
        step["descriptor"] = descriptor.encode(r.arch, fields[0], fields[1], fields[2], d.swizzle, fields[3],
                                               d.lbo_mode).hex
    except SpecError:
        return None
    return dataclasses.replace(r, instructions=steps)


@pytest.mark.parametrize("case", RECIPES, ids=lambda c: "-".join(map(str, c[:6])))
def test_the_recipe_proof_is_the_manuals_element_by_element(case):
    r = _built(case)
    assert r.proof == _oracle_proof(r) and r.proof["status"] == "proved"
    rng = random.Random(case[3] * 7 + case[4])
    tried = 0
    for _ in range(40):
        changed = _changed(r, rng)
        if changed is None:
            continue
        tried += 1
        assert recipe._prove(changed) == _oracle_proof(changed)
    assert tried >= 20


@pytest.mark.parametrize("case", RECIPES[:4], ids=lambda c: "-".join(map(str, c[:6])))
def test_written_addresses_are_the_manuals(case):
    r = _built(case)
    assert recipe.written_addresses(r) == [[_tma_written(r, mn, k) for k in range(r.k_tile)] for mn in range(r.mn)]


def test_the_proof_is_the_same_with_fast_paths_off():
    """With spec's fast paths off (the mutation tests' switch) the recipe proof is spec's definition, element by
    element (recipe_case.first_misread_by_element), and gives the same answers."""
    rng = random.Random(5)
    for case in RECIPES[:3]:
        r = _built(case)
        changed = next(c for c in iter(lambda: _changed(r, rng), 0) if c is not None)
        fast_answers = (recipe._prove(r), recipe._prove(changed))
        with fast.references_only():
            assert (recipe._prove(r), recipe._prove(changed)) == fast_answers


def test_a_sub_byte_recipe_is_read_as_its_byte_tile():
    r = _built(RECIPES[2])
    document = recipe.case_document(r)
    assert document["dtype"] == recipe.BYTE_TYPE and document["k_tile"] == r.k_tile // 2
    assert [s["k_offset"] for s in document["descriptors"]] == [i["k_offset"] // 2 for i in r.instructions]
    assert [s["descriptor"] for s in document["descriptors"]] == [i["descriptor"] for i in r.instructions]


def test_a_long_tile_is_a_case_and_a_tile_past_shared_memory_is_refused():
    """The case takes every tile a recipe builds (K up to what one SM's 228 KiB hold), and refuses one
    larger, naming k_tile, before any work."""
    from spec.cases import recipe_case
    r = recipe.build("sm90", "e4m3", "K", 8, 8192, "128B", 0x400)
    assert r.proof["status"] == "proved" and r.proof["elements"] == 8 * 8192
    document = recipe.case_document(r)
    document["mn"], document["k_tile"] = 256, 1024          # 256 KiB of e4m3
    with pytest.raises(SpecError) as refused:
        recipe_case.parse_case(document, "sm90")
    assert refused.value.field_name == "k_tile" and "228 KiB" in str(refused.value)


def test_an_mn_major_tile_longer_than_a_box_is_refused():
    """An MN-major box holds the tile's whole K as its rows; a TMA box has at most 256 in a dimension (rule
    tma.map.box_range): K 448 is refused, naming k_tile and the rule, where `recipe` once gave an 8 x 448
    box no encoder takes."""
    with pytest.raises(SpecError) as refused:
        recipe.build("sm90", "bf16", "MN", 256, 448, "none", 0x400)
    assert refused.value.field_name == "k_tile" and refused.value.rule_id == "tma.map.box_range"
    assert recipe.build("sm90", "bf16", "MN", 64, 256, "none", 0x400).proof["status"] == "proved"
