"""The multi-buffer im2col::w properties: their closed form of the walk against spec.tma.im2col's walk, and
their statuses (im2col.w.buffers_cover proved, the one-buffer-short variant refuted and confirmed)."""
import pytest

from solver.prove import im2col as im2col_properties
from solver.prove.catalogue import all_properties


@pytest.mark.parametrize("stride", range(1, 5))
@pytest.mark.parametrize("lower", (-3, 0, 5))
@pytest.mark.parametrize("per_row", (1, 2, 5))
def test_the_closed_form_is_specs_walk(stride, lower, per_row):
    """Buffer k's j-th pixel of an image row is at W = L + k + S * j (relative to L: k + S * j)."""
    rows = im2col_properties.spec_rows(stride, lower, per_row, stride)
    assert rows == [[k + stride * j for j in range(per_row)] for k in range(stride)]


def test_seed_example_2_is_an_instance():
    """PTX 5.5.5.4 Example 2: stride 3, three buffers, lower corner -1: each image row W = -1 .. 7 once."""
    rows = im2col_properties.spec_rows(3, -1, 3, 3)
    assert sorted(w - 1 for row in rows for w in row) == list(range(-1, 8))


@pytest.mark.parametrize("property_id,expected", [("im2col.w.buffers_cover", "proved"),
                                                  ("im2col.w.buffers_cover.one_short", "refuted")])
def test_statuses(property_id, expected, proved_catalogue):
    found = {p.id: p for p in all_properties()}[property_id]
    result = proved_catalogue[property_id]
    assert result.status == expected == found.expected
