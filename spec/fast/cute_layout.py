"""Fast path of spec/cute/layout.py: a layout evaluated by a loop over each mode's leaves."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from spec import fast
from spec.cute.layout import Layout, flatten, is_int, is_tuple


@fast.fast_version_of(Layout.__call__)
def evaluate(layout: Layout, *coord) -> Any:
    """layout(*coord) (Layout.__call__, the reference), by a loop over each top-level mode's leaves when
    the coordinate gives one integer per top-level mode and every stride is an integer: splitting an index
    colexicographically mode by mode and then within each mode (split_index) is splitting it leaf by leaf,
    the last leaf of a mode taking the rest. tests/spec_tests/fast/test_cute_fast.py checks the two equal."""
    modes = _int_modes(layout) if len(coord) > 1 else None
    if modes is None or len(coord) != len(modes) or any(type(c) is not int for c in coord):
        return layout(*coord)
    total = 0
    for index, (sizes, strides) in zip(coord, modes):
        for size, step in zip(sizes, strides):     # every leaf but the last wraps (rule layout.colexicographic)
            index, part = divmod(index, size)
            total += part * step
        total += index * strides[-1]
    return total


@lru_cache(maxsize=4096)
def _int_modes(layout: Layout) -> Optional[tuple]:
    """((leaf sizes but the last, leaf strides), ...) per top-level mode; None unless the shape is a tuple
    of non-empty modes with positive sizes and every stride an integer."""
    if not is_tuple(layout.shape) or not all(is_int(d) for d in flatten(layout.stride)) \
            or not all(flatten(s) and all(is_int(n) and n > 0 for n in flatten(s)) for s in layout.shape):
        return None
    return tuple((flatten(s)[:-1], flatten(d)) for s, d in zip(layout.shape, layout.stride))
