"""Fast paths of spec/tma/im2col.py: the placement a shared-memory row at a time."""
from __future__ import annotations

from typing import Optional

from spec import fast
from spec.rule import SpecError
from spec.tma import im2col
from spec.tma import swizzle as tma_swizzle


@fast.fast_version_of(im2col.placement_rows_by_element)
def placement_rows(load: im2col.Im2colLoad, loaded: Optional[list] = None) -> list:
    """placement_rows_by_element without placing each element: per row, the channels and whether they lie
    in the tensor once, and the row's swizzled addresses from spec.tma.swizzle.swizzle_byte_range (one
    table lookup per element). tests/spec_tests/fast/test_fast_paths.py checks the two equal."""
    if load.interleave != "NONE":
        raise SpecError("interleave", load.interleave, "placement is modelled without interleave only",
                        im2col.PLACEMENT.id)
    im2col._check_listable(load, im2col._row_count(load))
    first_channel, channels = load.coords[0], load.tensor[0]
    count, pitch, elem = load.channels_per_pixel, load.row_pitch, load.elem_bytes
    along = range(first_channel, first_channel + count)
    inside = [0 <= channel < channels for channel in along]
    return [(pixel, along, inside,
             tma_swizzle.swizzle_byte_range(load.swizzle, load.smem_address + pixel.row * pitch, count, elem))
            for pixel in (im2col.pixels(load) if loaded is None else loaded)]


@fast.fast_version_of(im2col.placement_json_by_element)
def placement_json(load: im2col.Im2colLoad) -> list:
    """placement_json_by_element, from placement_rows (no PlacedElement). tests/spec_tests/fast/test_fast_paths.py checks
    the two equal."""
    fill = im2col.fill_value(load)
    placed = []
    for pixel, along, inside, addresses in placement_rows(load):
        row, n, d, h, w = pixel.row, pixel.n, pixel.d, pixel.h, pixel.w
        if pixel.oob:
            placed += [{"row": row, "channel": channel, "source": None, "fill": fill, "smem_address": address}
                       for channel, address in zip(along, addresses)]
        else:
            placed += [{"row": row, "channel": channel, "source": [n, d, h, w, channel] if ok else None,
                        "fill": None if ok else fill, "smem_address": address}
                       for channel, ok, address in zip(along, inside, addresses)]
    return placed
