"""Fast path of solver/kernel/audit/scales.py: a scale load's byte offsets as one affine function of the box
index. tests/solver_tests/kernel/test_audit_scales.py (test_the_affine_offset_is_the_global_elements_offset) checks it equal to
_global_offset."""
from __future__ import annotations

from spec import fast
from solver.kernel.audit import scales


@fast.fast_version_of(scales.offset_by_element)
def affine_offset(load, params):
    """scales.offset_by_element as an affine function of the box index, for one load: the global element
    along d is c[d] + i[d] x elementStrides[d] (compose.global_element, no packing), so the offset is the
    load's corner's offset plus i[d] x elementStrides[d] x stride[d]. None for a map that is not UINT8."""
    if params.dtype.bits != 8:
        return None
    strides = (1,) + tuple(params.global_strides)
    base = sum(c * s for c, s in zip(load.coordinates, strides))
    steps = tuple((1 if d == 0 else e) * s for d, (e, s) in enumerate(zip(params.element_strides, strides)))
    return lambda index: base + sum(i * step for i, step in zip(index, steps))
