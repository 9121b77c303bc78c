"""The scale-factor properties of the prove catalogue (solver/prove/scales.py).

Their lemmas are checked to be able to fail (a weakened lemma is refuted), the all-sizes claims are checked
by the executable specification at the sizes around every tile edge, and each refuted property's
counterexample is replayed by spec (the prover requires it)."""
from __future__ import annotations

import pytest
import z3

from solver.prove import scales as props
from solver.prove.property import Query
from spec.scales import layouts, path, vectors

SCALE_PROPERTIES = ["scales.interleaved.injective", "scales.path.interleaved.1X", "scales.path.interleaved.2X",
                    "scales.path.interleaved.4X", "scales.path.linear-k.1X", "scales.path.linear-mn.1X",
                    "scales.path.linear-k.2X", "scales.path.linear-mn.2X", "scales.path.linear-k.4X",
                    "scales.path.linear-mn.4X", "scales.path.interleaved.1X.sf_id_plus_one",
                    "scales.path.interleaved.4X.copy_128x128b"]


@pytest.mark.parametrize("property_id", SCALE_PROPERTIES)
def test_each_scale_property_is_decided_as_expected(proved_catalogue, property_id):
    result = proved_catalogue[property_id]
    assert result.status == result.property.expected, result.reason
    if result.status == "refuted":
        assert result.property.replay(result.counterexample)


def _holds(query: Query) -> bool:
    solver = z3.Solver()
    solver.add(*query.assumptions)
    solver.add(z3.Not(query.claim))
    return solver.check() == z3.unsat


def test_the_lemmas_hold():
    for lemma in [props._lemma_mixed_radix(), props._lemma_footprint(), props._lemma_tile(),
                  props._lemma_chunk_column()] + [props._lemma_k_step(n) for n in (1, 2, 4)]:
        assert _holds(lemma)


def test_weakened_lemmas_are_refuted():
    """The lemmas can fail: without its bound the mixed radix is not one-to-one; three scales per k-step
    (N = 3 does not divide 4) cross chunk boundaries; a tile of 5 scale columns overflows its 512 bytes."""
    radix = props._lemma_mixed_radix()
    kt, j = radix.variables["KT"], radix.variables["j"]
    loose = Query(radix.variables, [a for a in radix.assumptions if not z3.eq(a, j < kt)], radix.claim)
    assert not _holds(loose)
    assert not _holds(props._lemma_k_step(3))
    w, b = z3.Ints("w b")
    assert not _holds(Query({}, [w >= 0, w < 128, b >= 0, b < 5], props._inner(w, b) < 512))


EDGES = [1, 31, 32, 33, 127, 128, 129, 255, 256, 257]


@pytest.mark.parametrize("vector, kind", [("1X", "mxf8f6f4"), ("2X", "mxf4"), ("4X", "mxf4nvf4")])
def test_the_all_sizes_claims_hold_in_spec_at_every_tile_edge(vector, kind):
    block = vectors.block_size(kind, vector)
    for rows in EDGES:
        for blocks in range(1, 10):
            assert path.first_misread("interleaved", rows, blocks * block, kind, vector) is None, (rows, blocks)


def test_the_interleaved_layout_is_one_to_one_at_every_tile_edge():
    for rows in EDGES:
        for blocks in range(1, 10):
            found = [layouts.offset("interleaved", r, c, rows, blocks) for r in range(rows) for c in range(blocks)]
            assert len(set(found)) == len(found)
            assert max(found) < layouts.footprint("interleaved", rows, blocks)
