"""spec.mma.readmap.read_addresses computes a row once per MN part modulo the swizzle's period and moves it
for the other rows; here it must equal element_address (the definition, element by element) on any
descriptor a user can write: every arch, dtype, major, swizzle and base offset, any start, LBO and SBO
(including ones that are not multiples of the period and LBO modes), and every phase model."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from spec.mma import descriptor, dtypes, readmap
from spec.rule import SpecError

FIELD = st.integers(0, (1 << 14) - 1).map(lambda x: 16 * x)       # a 14-bit field of 16-byte units


@st.composite
def operands(draw):
    arch = draw(st.sampled_from(descriptor.ARCHES))
    swizzle = draw(st.sampled_from(sorted(descriptor.swizzle_codes(arch))))
    mode = draw(st.sampled_from((None, "absolute"))) if arch == "sm103" else None
    try:
        desc = descriptor.encode(arch, draw(FIELD), draw(FIELD), draw(FIELD), swizzle,
                                 draw(st.integers(0, 7)) if swizzle != "none" else 0, mode)
        op = readmap.make_operand(desc, draw(st.sampled_from(sorted(dtypes.DTYPES))),
                                  draw(st.sampled_from(readmap.MAJORS)), 8 * draw(st.integers(1, 24)))
    except SpecError:               # a request spec refuses to build: nothing is read
        return None
    return op


@settings(max_examples=400, deadline=None)
@given(operands(), st.sampled_from(readmap.PHASE_MODELS))
def test_read_addresses_equals_element_address(op, model):
    if op is None:
        return
    assert readmap.read_addresses(op, model) == [[readmap.element_address(op, mn, k, model) for k in range(op.k)]
                                                 for mn in range(op.mn)]


def test_rows_are_distinct_lists():
    """A row computed once and moved by zero is still its own list: a caller may change one row."""
    op = readmap.make_operand(descriptor.encode("sm90", 0x400, 16, 1024, "128B"), "bf16", "K", 64)
    rows = readmap.read_addresses(op)
    assert len({id(row) for row in rows}) == len(rows)
