"""The desc target's fast paths against their references: spec.cases.desc_case.first_misread
(spec/fast/cases_desc_case.py: rows or columns grouped by their residues modulo the swizzles' period)
against first_misread_by_element (the definition, element by element), both ways round, and
spec.mma.readmap.mn_parts / k_parts / swizzle_row (spec/fast/mma_readmap.py) against their definitions
(mn_part / k_part / apply_swizzle at each index): on the fuzz domain of every arch and rule, on tiles one
step off the right one, on the differential test's near-right cases, and on hypothesis-drawn descriptors,
types and CuTe layouts (any swizzle Sw<B,M,S>, S negative too; offsets; negative and zero strides;
hierarchical modes)."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spec.cases import desc_case
from spec.cute.layout import ComposedLayout, Layout
from spec.cute.swizzle import Swizzle
from spec.fast import cases_desc_case
from spec.mma import dtypes, readmap
from spec.rule import SpecError
from solver.fuzz import engine
from solver.model import desc_case as desc_model
from tests import differential

WAYS = (None, "rows", "columns")


def _assert_same(c) -> object:
    """first_misread, each way, is first_misread_by_element, and readmap's mn_parts / k_parts are
    mn_part / k_part at each index (mn_parts_by_element, k_parts_by_element), and swizzle_row over
    those parts is swizzle_row_by_element; returns first_misread_by_element."""
    op = c.operand
    along_mn, along_k = readmap.mn_parts(op), readmap.k_parts(op)
    assert along_mn == readmap.mn_parts_by_element(op) == [readmap.mn_part(op, mn) for mn in range(op.mn)]
    assert along_k == readmap.k_parts_by_element(op) == [readmap.k_part(op, k) for k in range(op.k)]
    offsets = [origin + offset for origin, offset in along_k]
    for base in along_mn[:9]:
        assert readmap.swizzle_row(op, base, offsets) == readmap.swizzle_row_by_element(op, base, offsets)
    reference = desc_case.first_misread_by_element(c)
    assert desc_case.first_misread(c) == reference
    for by in WAYS:
        assert cases_desc_case.first_misread(c, by=by) == reference, by
    return reference


def _cases(arch: str, rule_id, count: int, seed: int) -> list:
    violate = frozenset() if rule_id is None else frozenset({rule_id})
    return [r["case"] for r in engine.generate("desc", arch, violate, count, seed, engine.Stats())]


@pytest.mark.parametrize("arch", ["sm90", "sm100", "sm103"])
@pytest.mark.parametrize("rule_id", [None, *desc_model.RULE_IDS])
def test_first_misread_on_the_fuzz_domain(arch, rule_id):
    for case in _cases(arch, rule_id, 8, 7):
        c = desc_case.parse_case(case, arch)
        if not c.desc.swizzle.startswith("invalid"):
            _assert_same(c)


@pytest.mark.parametrize("arch", ["sm90", "sm100", "sm103"])
def test_first_misread_on_tiles_one_step_off(arch):
    """Valid cases with the tile moved or one stride changed: misreads in every row and column."""
    rng, misread = random.Random(19), 0
    for case in _cases(arch, None, 40, 3):
        for key, change in (("start_address", rng.choice((-16, 16, 128, 1024))), ("mn", 8), ("k", 1)):
            changed = dict(case, **{key: case[key] + change})
            changed["layout"] = case["layout"].replace(",1)", ",3)", 1) if key == "k" else case["layout"]
            try:
                c = desc_case.parse_case(changed, arch)
            except SpecError:
                continue
            misread += _assert_same(c) is not None
    assert misread > 20


def test_first_misread_near_right_tiles():
    """The differential test's desc cases (tests/differential.py: legal anchors with fields redrawn, and
    records drawn whole with the descriptor mostly equal to the tile), at most 8192 elements each."""
    rng, outcomes = random.Random(1919), {"misread": 0, "late": 0, "none": 0}
    while sum(outcomes.values()) < 300:
        case, arch, _ = differential.desc_case(rng)
        if case["mn"] * case["k"] > 8192:
            continue
        try:
            c = desc_case.parse_case(case, arch)
        except SpecError:
            continue
        witness = _assert_same(c)
        outcomes["none" if witness is None else "late" if witness["element"]["mn"] >= 8 else "misread"] += 1
    assert min(outcomes.values()) >= 10, outcomes


def _layout(draw) -> ComposedLayout:
    def mode():
        sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3))
        strides = draw(st.lists(st.integers(-300, 300), min_size=len(sizes), max_size=len(sizes)))
        return (tuple(sizes), tuple(strides)) if len(sizes) > 1 else (sizes[0], strides[0])
    (mn_shape, mn_stride), (k_shape, k_stride) = mode(), mode()
    swizzle = Swizzle(draw(st.integers(0, 3)), draw(st.integers(0, 6)), draw(st.integers(-5, 5)))
    return ComposedLayout(swizzle, draw(st.integers(-100, 100)), Layout((mn_shape, k_shape), (mn_stride, k_stride)))


@st.composite
def desc_cases(draw):
    arch = draw(st.sampled_from(["sm90", "sm100", "sm103"]))
    d = dtypes.DTYPES[draw(st.sampled_from(sorted(dtypes.DTYPES)))]
    word = draw(st.integers(0, (1 << 64) - 1))
    if draw(st.booleans()):          # a start address, LBO and SBO of a few lines, as tiles have them
        word = (word & ~((1 << 46) - 1)) | draw(st.integers(0, 255)) \
            | draw(st.integers(0, 255)) << 16 | draw(st.integers(0, 255)) << 32
    case = {"descriptor": hex(word), "dtype": d.name, "kind": draw(st.sampled_from(d.kinds)),
            "major": draw(st.sampled_from(["K", "MN"])), "mn": 8 * draw(st.integers(1, 6)),
            "k": draw(st.integers(1, 40)), "layout": _layout(draw),
            "start_address": draw(st.integers(0, 4096))}
    try:
        return desc_case.parse_case(case, arch)
    except SpecError:
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(desc_cases())
def test_first_misread_on_drawn_cases(c):
    if c is not None:
        _assert_same(c)

