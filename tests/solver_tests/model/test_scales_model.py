"""The Z3 model of the scale path (solver/model/scales.py) against the executor (spec/scales): written apart,
they must agree on what the MMA applies, on every layout, scale vector and size tried, legal or not; a
proof is checked by enumeration at the edges, a refutation's witness is replayed by spec."""
from __future__ import annotations

import pytest
import z3

from solver.model import scales as model
from solver.model.bitvec import Arith
from spec.scales import layouts, path, vectors

KIND_OF = {"1X": "mxf8f6f4", "2X": "mxf4", "4X": "mxf4nvf4"}
SIZES = [(128, 4), (256, 32), (200, 9), (32, 1), (384, 13)]


def _value(term_of, rows, blocks, r, c):
    arith = Arith()
    term = term_of(z3.BitVecVal(r, model.WIDTH), z3.BitVecVal(c, model.WIDTH), arith)
    return z3.simplify(term).as_long()


@pytest.mark.parametrize("vector", ["1X", "2X", "4X"])
@pytest.mark.parametrize("rows, blocks", [(128, 4), (200, 9), (256, 12)])
def test_the_models_terms_are_the_executors_at_every_element(vector, rows, blocks):
    kind = KIND_OF[vector]
    k = blocks * vectors.block_size(kind, vector)
    for layout in layouts.LAYOUTS:
        applied = path.applied(layout, rows, k, kind, vector)
        for r in range(0, rows, 7):
            for c in range(blocks):
                assert _value(lambda x, y, a: model.applied_offset(x, y, rows, blocks, vector, a), rows, blocks, r, c) \
                    == applied[r][c]
                assert _value(lambda x, y, a: model.writer_offset(layout, x, y, rows, blocks, a), rows, blocks, r, c) \
                    == layouts.offset(layout, r, c, rows, blocks)


@pytest.mark.parametrize("layout", layouts.LAYOUTS)
@pytest.mark.parametrize("vector", ["1X", "2X", "4X"])
@pytest.mark.parametrize("rows, blocks", SIZES)
def test_the_model_proves_exactly_where_the_executor_finds_no_misread(layout, vector, rows, blocks):
    kind = KIND_OF[vector]
    k = blocks * vectors.block_size(kind, vector)
    found = model.prove_path(layout, rows, blocks, vector)
    misread = path.first_misread(layout, rows, k, kind, vector)
    assert found["status"] == ("proved" if misread is None else "refuted")
    if found["status"] == "refuted":          # the witness, replayed by spec
        w = found["witness"]
        assert path.applied(layout, rows, k, kind, vector)[w["row"]][w["k_block"]] == w["applied_offset"]
        assert layouts.offset(layout, w["row"], w["k_block"], rows, blocks) == w["expected_offset"]
        assert w["applied_offset"] != w["expected_offset"]


@pytest.mark.parametrize("layout", layouts.LAYOUTS)
@pytest.mark.parametrize("rows, blocks", SIZES)
def test_every_layout_is_proved_one_to_one_and_a_footprint_too_small_is_refuted(layout, rows, blocks):
    footprint = layouts.footprint(layout, rows, blocks)
    assert model.prove_one_to_one(layout, rows, blocks, footprint)["status"] == "proved"
    largest = max(layouts.offset(layout, r, c, rows, blocks) for r in range(rows) for c in range(blocks))
    refuted = model.prove_one_to_one(layout, rows, blocks, largest)
    assert refuted["status"] == "refuted" and refuted["witness"]["offset"] == largest


@pytest.mark.parametrize("rows, blocks", [(0, 4), (1 << 13, 1 << 12), (4, -1)])
def test_a_size_outside_the_models_preconditions_is_unknown_not_proved(rows, blocks):
    assert model.prove_path("interleaved", rows, blocks, "1X")["status"] == "unknown"
    assert model.prove_one_to_one("interleaved", rows, blocks, 1 << 20)["status"] == "unknown"
