"""The recipe target's fast paths against their references: spec.cases.recipe_case.first_misread (rows or
columns grouped by their residues modulo the swizzles' period, boxes written over found on linear
addresses) against first_misread_by_element (the definition: every box placed, every element read), and
recipe_case.violations (the load's size rules of the first box only) against every box's rules. On the
fuzz domain of every arch and rule (the anchors and the samples spec rejects too), on hypothesis-drawn
cases (any box shape, count and stride: boxes that overlap, leave rows or columns unwritten, or lie
apart; descriptors of any start, LBO, SBO, swizzle and base offset), and with the TMA swizzle replaced
(the fast path then goes element by element)."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mutants import swap
from spec.cases import recipe_case
from spec.fast import cases_recipe_case
from spec.rule import SpecError
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle
from solver.fuzz import recipe as fuzz_recipe
from solver.fuzz import recipe_sampling
from solver.model import recipe as model

ARCHES = ("sm90", "sm100", "sm103")


def _outcome(function, c):
    try:
        return function(c)
    except SpecError as error:
        return ("SpecError", str(error))


def _violations_box_by_box(c) -> list:
    """recipe_case.violations with every box's whole tma_place.violations (the load's size rules too)."""
    found, seen = [], set()
    for box in recipe_case.boxes(c):
        recipe_case._once(found, seen, tma_place.violations(box))
    for _, op in c.steps:
        recipe_case._once(found, seen, recipe_case.readmap.violations(op))
    recipe_case._once(found, seen, recipe_case.check_all(recipe_case.SUBJECT, c))
    return found


def _assert_same(case: dict, arch: str):
    """first_misread is first_misread_by_element (the same witness, or the same refusal) and violations
    is the box-by-box list; returns the reference witness (None when the case does not parse)."""
    try:
        c = recipe_case.parse_case(case, arch)
    except SpecError:
        return None
    reference = _outcome(recipe_case.first_misread_by_element, c)
    assert _outcome(recipe_case.first_misread, c) == reference, case
    assert [(v.rule.id, v.message) for v in recipe_case.violations(c)] == \
        [(v.rule.id, v.message) for v in _violations_box_by_box(c)], case
    return reference


def _fuzz_candidates(arch: str, rule_id, count: int, seed: int) -> list:
    """The anchors of the target's Z3 problem and samples around them as the fuzzer draws them, kept or
    not by spec."""
    rng = random.Random(seed)
    problem = recipe_sampling.Problem(arch, frozenset() if rule_id is None else frozenset({rule_id}))
    anchors = [v for v in (problem.next(rng.randrange(1 << 30)) for _ in range(2)) if v is not None]
    mutators = fuzz_recipe._mutators(rng)
    cases = [fuzz_recipe.case_of(v) for v in anchors]
    while anchors and len(cases) < count:
        values = dict(rng.choice(anchors))
        for mutate in rng.sample(mutators, rng.randint(1, 3)):
            mutate(values)
        cases.append(fuzz_recipe.case_of(values))
    return [case for case in cases if case is not None]


@pytest.mark.parametrize("arch", ARCHES)
def test_fast_paths_are_the_reference_on_the_fuzz_domain(arch):
    compared = 0
    for n, rule_id in enumerate((None,) + fuzz_recipe.RULE_IDS):
        cases = _fuzz_candidates(arch, rule_id, 12, n)
        for case in cases:
            _assert_same(case, arch)
        compared += len(cases)
    assert compared >= 12 * 10        # most rules have anchors on every arch


def test_the_fuzz_domain_reaches_boxes_written_over_and_every_kind_of_witness():
    """The comparisons above meet what the fast path takes apart: boxes that overwrite others, rows or
    columns no box wrote, witnesses with and without "holds", and right reads."""
    seen = set()
    for arch in ARCHES:
        for rule_id in ("recipe.box.stride", "recipe.box.covers_tile", "recipe.k_step.start", None):
            for case in _fuzz_candidates(arch, rule_id, 40, 3):
                c = recipe_case.parse_case(case, arch)
                rows, inner, pitch = tma_place.row_layout(recipe_case.box_at(c, 0))
                witness = _assert_same(case, arch)
                if cases_recipe_case._last_box(c, rows, inner, pitch) is not None:
                    seen.add("overlap")
                if witness is None:
                    seen.add("reads right")
                else:
                    seen.add("holds" if "holds" in witness else "holds nothing")
                    seen.add("unwritten" if witness["written_at"] is None else "written elsewhere")
    assert seen == {"overlap", "reads right", "holds", "holds nothing", "unwritten", "written elsewhere"}


# --- hypothesis-drawn cases ------------------------------------------------------------------------------
SIZES = {"bf16": 2, "f16": 2, "tf32": 4, "e4m3": 1, "s8": 1}
ROW = {tma: recipe_case.readmap.ROW_BYTES[descriptor] for tma, descriptor in recipe_case.TMA_TO_DESC.items()}   # W per TMA swizzle


@st.composite
def recipe_cases(draw):
    arch = draw(st.sampled_from(ARCHES))
    dtype = draw(st.sampled_from(sorted(SIZES)))
    E, major = SIZES[dtype], draw(st.sampled_from(("K", "MN")))
    modes = [m for m in recipe_case.TMA_TO_DESC if arch != "sm90" or m != "128B_ATOM_32B"]
    swizzle = draw(st.sampled_from(modes))
    W, kinst = ROW[swizzle], 32 // E
    mn = 8 * draw(st.integers(1, 6))
    steps = draw(st.integers(1, 3))
    k_tile = steps * kinst
    across, along = (mn, k_tile) if major == "K" else (k_tile, mn)
    if draw(st.booleans()):      # the boxes the recipe rules ask for
        inner, rows = W // E, across
        count, stride = max(1, along // inner), rows * W
    else:
        inner = draw(st.sampled_from(sorted({W // E, max(1, 16 // E), max(1, 8 // E), 2 * W // E, along})))
        rows = draw(st.sampled_from(sorted({across, max(1, across - 8), across + 8, 8})))
        count = draw(st.sampled_from(sorted({max(1, -(-along // inner)), 1, 2, 3})))
        back_to_back = rows * tma_place.row_pitch(swizzle, inner * E)
        stride = draw(st.sampled_from(sorted({0, 16, back_to_back, back_to_back + 128, 2 * back_to_back,
                                              max(0, back_to_back - 16 * draw(st.integers(1, 70)))})))
    smem = 16 * draw(st.integers(0, 200))
    desc_swizzle = recipe_case.TMA_TO_DESC[draw(st.sampled_from(modes))]
    needs_lbo = 16 * draw(st.integers(0, 600))
    needs_sbo = 16 * draw(st.integers(0, 600))
    descriptors = []
    for j in range(steps):
        if major == "K":
            start = smem + (32 * j // W) * stride + (32 * j) % W
        else:
            start = smem + j * kinst * W
        start = max(0, start + 16 * draw(st.sampled_from((0, 0, 0, 1, -1, 8, 64))))
        lbo = draw(st.sampled_from((stride, 128, needs_lbo)))
        sbo = draw(st.sampled_from((8 * W, stride, W * (4 if swizzle == "128B_ATOM_32B" else 8), needs_sbo)))
        base_offset = draw(st.sampled_from((0, 0, 0, 1, 4)))
        if not all(0 <= x < model.FIELD_LIMIT for x in (start, lbo, sbo)):
            start, lbo, sbo = start % model.FIELD_LIMIT, lbo % model.FIELD_LIMIT, sbo % model.FIELD_LIMIT
        word = fuzz_recipe.descriptor_word(arch, start, lbo, sbo, base_offset, desc_swizzle)
        descriptors.append({"k_offset": j * kinst, "descriptor": f"0x{word:016x}"})
    case = {"dtype": dtype, "major": major, "mn": mn, "k_tile": k_tile, "smem_address": smem,
            "tma": {"swizzle": swizzle, "boxDim": [inner, rows], "box_count": count, "box_stride_bytes": stride},
            "descriptors": descriptors}
    if draw(st.booleans()):     # the descriptors the placement needs (recipe_case.needs), one step perhaps off
        try:
            need = recipe_case.needs(recipe_case.parse_case(case, arch))
        except SpecError:
            return case, arch
        off = draw(st.integers(0, 2 * steps))
        for j, start in enumerate(need["starts"]):
            word = fuzz_recipe.descriptor_word(arch, start % model.FIELD_LIMIT, (need["lbo"] or 0) % model.FIELD_LIMIT,
                                               (need["sbo"] or 0) % model.FIELD_LIMIT, 1 if j == off else 0,
                                               recipe_case.TMA_TO_DESC[swizzle])
            descriptors[j]["descriptor"] = f"0x{word:016x}"
    return case, arch


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe_cases())
def test_fast_paths_are_the_reference_on_drawn_cases(drawn):
    case, arch = drawn
    _assert_same(case, arch)


# --- a replaced TMA swizzle reaches the fast path ----------------------------------------------------------
def test_a_replaced_tma_swizzle_is_followed(monkeypatch):
    cases = _fuzz_candidates("sm90", "recipe.box.stride", 10, 5) + _fuzz_candidates("sm100", None, 10, 5)
    original = tma_swizzle.swizzle_byte_address
    monkeypatch.setattr(tma_swizzle, "swizzle_byte_address",
                        lambda mode, a: original(mode, a ^ 0x80) ^ 0x80 if mode != "NONE" else a)
    assert tma_swizzle.period_deltas("128B") is None
    witnesses = [_assert_same(case, arch) for case, arch in zip(cases, ["sm90"] * 10 + ["sm100"] * 10)]
    assert any(w is not None for w in witnesses)


def test_a_changed_read_map_is_followed(monkeypatch):
    """A mutant of the read swizzle (the phase adds the base offset) reaches first_misread: it goes element
    by element then, and labels as the reference does."""
    cases = _fuzz_candidates("sm90", "recipe.k_step.base_offset", 12, 9)
    before = [_assert_same(case, "sm90") for case in cases]
    swap(monkeypatch, recipe_case.readmap.read_addresses, "(a >> 7) - base_offset", "(a >> 7) + base_offset")
    after = [_assert_same(case, "sm90") for case in cases]
    assert before != after
