"""The hints a request to break a size rule (tma.map.box_bytes, tma.map.box_bytes_loaded) gives Z3 for a
tiled map (solver/fuzz/tensormap_sampling.py _box_past_the_load_limit, _outer_box): the outer box they draw
counts as asked (exhaustively over the row sizes the hints draw, and on hypothesis-drawn limits); the
whole set of hints keeps every other rule of the model, and the map they make breaks exactly the asked
rule by the model and by spec; the fuzzer's cases for those rules still break exactly them, with
anchors of several shapes."""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from solver.fuzz import engine
from solver.fuzz import tensormap as fuzz_tensormap
from solver.fuzz import tensormap_sampling as sampling
from solver.model import tensormap as model

SIZE_RULES = {True: "tma.map.box_bytes_loaded", False: "tma.map.box_bytes"}      # rounding -> rule
LIMIT_BYTES = model.MAX_LOAD_BITS // 8


def _counts(boxes, strides):
    """(product of floor(box / stride), product of ceil(box / stride))."""
    return (math.prod(b // s for b, s in zip(boxes, strides)),
            math.prod(-(-b // s) for b, s in zip(boxes, strides)))


def _feasible(most: int, dims: int, rounding: bool) -> bool:
    """What _outer_box asks of `dims` (its docstring)."""
    return sampling.MAX_BOX ** (dims - 1) * 128 > most if rounding else sampling.MAX_BOX ** dims > most


def _assert_outer_box(most: int, dims: int, rounding: bool, seed: int) -> None:
    boxes, strides = sampling._outer_box(most, dims, random.Random(seed), rounding)
    assert len(boxes) == len(strides) == dims
    assert all(1 <= b <= sampling.MAX_BOX for b in boxes) and all(1 <= s <= sampling.MAX_STRIDE for s in strides)
    floors, ceils = _counts(boxes, strides)
    if rounding:
        assert floors <= most < ceils, (most, boxes, strides)
    else:
        assert floors > most, (most, boxes, strides)


@pytest.mark.parametrize("rounding", (True, False))
def test_outer_box_counts_as_asked_for_every_row_the_hints_draw(rounding):
    rows = [16 << k for k in range(8)]          # the row sizes _box_past_the_load_limit draws
    checked = 0
    for row in rows:
        most = LIMIT_BYTES // row
        for dims in range(1, model.MAX_RANK):
            if not _feasible(most, dims, rounding):
                continue
            for seed in range(300):
                _assert_outer_box(most, dims, rounding, seed)
                checked += 1
    assert checked >= 300 * len(rows) * 3


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40_000), st.integers(1, 4), st.booleans(), st.integers(0, 1 << 30))
def test_outer_box_counts_as_asked_for_any_limit(most, dims, rounding, seed):
    if _feasible(most, dims, rounding):
        _assert_outer_box(most, dims, rounding, seed)


@pytest.mark.parametrize("arch", ("sm90", "sm100", "sm103"))
@pytest.mark.parametrize("rounding", (True, False))
def test_size_hints_keep_every_other_rule_and_break_the_asked_one(arch, rounding):
    """The hints as hard constraints on the Problem (every other rule kept, the asked one broken) are
    satisfiable, and the map is labelled by spec and by the model as breaking exactly that rule."""
    rule = SIZE_RULES[rounding]
    shapes = set()
    for seed in range(25):
        problem = sampling.Problem("tiled", arch, break_={rule})
        hints = sampling._box_past_the_load_limit(problem.record, arch, random.Random(seed), rounding)
        problem.solver.add(*hints.values())
        assert problem.solver.check() == model.z3.sat, (arch, rule, seed)
        doc = model.document(problem.solver.model(), problem.record)
        assert model.violated(doc, arch) == [rule]
        assert list(fuzz_tensormap.label(doc, arch).violates) == [rule], doc       # spec's label
        shapes.add((doc["dataType"], doc["swizzle"], doc["interleave"], doc["rank"]))
    assert len(shapes) >= 10


@pytest.mark.parametrize("arch", ("sm90", "sm103"))
@pytest.mark.parametrize("rule", sorted(SIZE_RULES.values()))
def test_fuzz_cases_of_the_size_rules_break_exactly_them(arch, rule):
    stats = engine.Stats()
    records = list(engine.generate("tensormap", arch, frozenset({rule}), 200, 3, stats))
    assert len(records) == 200 and not stats.disagreements
    assert all(r["violates"] == [rule] for r in records)
    assert all(model.violated(r["case"], arch) == [rule] for r in records[:40])
    assert len({(r["case"]["encode"], r["case"]["dataType"], r["case"]["swizzle"]) for r in records}) >= 3
