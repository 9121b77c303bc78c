"""The TMA loads the H100 probe runs (hardware/tma_probe.cu), as plain data.

Every case names its tensor (global_dim, dimension 0 fastest, packed), the tensor map's fields and the
instruction's operands. Plain Python with no CUDA, so CI can check the list without a GPU.
"""
from __future__ import annotations

import math

SPAN = {"NONE": 128, "32B": 32, "64B": 64, "128B": 128}
TYPE_OF_SIZE = {1: "UINT8", 2: "FLOAT16", 4: "FLOAT32"}


def _tiled(element_bytes, swizzle, global_dim, box, coord, smem_offset, where, element_strides=None,
           oob_fill="NONE", data_type=None):
    strides = list(element_strides or [1] * len(box))
    # The driver's notes: with no interleave elementStrides[0] is ignored (no stride along dimension 0);
    # the other dimensions load ceil(box / stride) elements.
    counts = [box[0]] + [math.ceil(b / s) for b, s in zip(box[1:], strides[1:])]
    return {"mode": "tiled", "data_type": data_type or TYPE_OF_SIZE[element_bytes], "element_bytes": element_bytes,
            "swizzle": swizzle, "oob_fill": oob_fill, "global_dim": list(global_dim), "box": list(box),
            "element_strides": strides, "coord": list(coord), "smem_offset": smem_offset, "where": where,
            "expect_bytes": math.prod(counts) * element_bytes}


def _im2col(global_dim, lower, upper, channels, pixels, coord, offsets, swizzle="NONE", element_strides=None,
            smem_offset=0, where=""):
    rank = len(global_dim)
    return {"mode": "im2col", "data_type": "FLOAT16", "element_bytes": 2, "swizzle": swizzle, "oob_fill": "NONE",
            "global_dim": list(global_dim), "element_strides": list(element_strides or [1] * rank),
            "lower": list(lower), "upper": list(upper), "channels": channels, "pixels": pixels,
            "coord": list(coord), "offsets": list(offsets), "smem_offset": smem_offset, "where": where,
            "expect_bytes": pixels * channels * 2}


# Decided on the H100 (hardware/README.md): a tiled load whose dimension-0 coordinate is not a
# multiple of 16 bytes traps ("illegal instruction"), so placement cases start on 16-byte columns:
# ALIGN[e] elements of e bytes are 16 bytes. A few cases keep misaligned starts as evidence of the trap.
ALIGN = {1: 16, 2: 8, 4: 4}


def _half_row(box0, element_bytes):
    """About half of the box's row, rounded down to whole 16-byte columns (at least one)."""
    return max(ALIGN[element_bytes], box0 // 2 // ALIGN[element_bytes] * ALIGN[element_bytes])


def tiled_placement_cases() -> list:
    """Every swizzle x element size x inner row (span, half span) x rows x where x 128-B offset."""
    found = []
    for element_bytes in (1, 2, 4):
        for swizzle in SPAN:
            inner_rows = [SPAN[swizzle], SPAN[swizzle] // 2] if swizzle != "NONE" else [128, 48]
            for inner in inner_rows:
                box0 = inner // element_bytes
                for box1 in (8, 11):
                    g0, g1 = 2 * box0 + 16, 40
                    for where, coord in (("inside", (2 * ALIGN[element_bytes], 3)),
                                         ("past_far_corner", (g0 - _half_row(box0, element_bytes), g1 - 5)),
                                         ("before_origin", (-ALIGN[element_bytes], -3))):
                        for offset in range(0, 1024, 128):
                            found.append(_tiled(element_bytes, swizzle, (g0, g1), (box0, box1), coord, offset, where))
    return found


def tiled_other_cases() -> list:
    found = []
    for element_bytes in (2, 4):
        for swizzle in ("NONE", "128B"):
            box0 = 128 // element_bytes
            for strides in ((1, 2), (1, 3), (2, 1), (3, 2)):
                found.append(_tiled(element_bytes, swizzle, (2 * box0 + 16, 40), (box0, 12),
                                    (ALIGN[element_bytes], 3), 0, "traversal_strides", element_strides=strides))
    for swizzle, inner_rows in (("NONE", (16, 32)), ("32B", (16,)), ("64B", (16, 48)), ("128B", (16, 32, 48, 96))):
        for inner in inner_rows:
            for offset in (0, 384):
                found.append(_tiled(2, swizzle, (inner // 2 + 16, 24), (inner // 2, 9), (8, 2), offset,
                                    "narrow_rows"))
    for element_bytes in (1, 2, 4):
        for swizzle in ("NONE", "128B"):
            for x in (1, -1):
                found.append(_tiled(element_bytes, swizzle, (2 * 64 // element_bytes + 16, 40),
                                    (64 // element_bytes, 8), (x, 3), 0, "misaligned_coord"))
    for swizzle in SPAN:
        box0 = SPAN[swizzle] // 2
        for offset in (0, 384):
            found.append(_tiled(2, swizzle, (box0 + 24, 8, 6), (box0, 4, 3), (-8, 6, -1), offset, "rank3_edges"))
    for element_bytes in (2, 4):
        for swizzle in ("NONE", "128B"):
            box0 = 128 // element_bytes
            found.append(_tiled(element_bytes, swizzle, (2 * box0 + 16, 40), (box0, 8), (-ALIGN[element_bytes], -3), 0,
                                "nan_fill",
                                oob_fill="NAN_REQUEST_ZERO_FMA"))
    # destinations off the 128-byte alignment the CUDA programming guide asks (PTX 5.5.3.1 asks 16)
    for swizzle in ("NONE", "128B"):
        for offset in (8, 16, 32, 48, 64, 96):
            found.append(_tiled(2, swizzle, (80, 24), (64, 8), (8, 2), offset, "misaligned_destination"))
    return found


def im2col_cases() -> list:
    """Rank 3 (NWC), 4 (NHWC), 5 (NDHWC); corners, traversal strides and im2col offsets varied."""
    found = []
    nwc, nhwc, ndhwc = (32, 40, 2), (64, 8, 6, 2), (32, 4, 4, 4, 2)
    for swizzle in ("NONE", "128B"):
        # 3-D: W only; a 3-wide filter with padding 1 (corners -1 / -1), and positive corners
        found.append(_im2col(nwc, [-1], [-1], 32, 16, (0, -1, 0), [0], swizzle, where="nwc_pad"))
        found.append(_im2col(nwc, [-1], [-1], 32, 32, (0, -1, 1), [2], swizzle, where="nwc_offset2"))
        found.append(_im2col(nwc, [2], [-3], 32, 16, (0, 2, 0), [1], swizzle, where="nwc_positive_lower"))
        found.append(_im2col(nwc, [-1], [-1], 32, 16, (0, -1, 0), [0], swizzle, [1, 2, 1], where="nwc_stride2"))
        found.append(_im2col(nwc, [-1], [-1], 16, 64, (16, 30, 0), [1], swizzle, where="nwc_across_images"))
        # 4-D: W and H
        found.append(_im2col(nhwc, [-1, -1], [-1, -1], 64, 32, (0, -1, -1, 0), [0, 0], swizzle, where="nhwc_pad"))
        found.append(_im2col(nhwc, [-1, -1], [-1, -1], 64, 32, (0, -1, -1, 0), [1, 2], swizzle, where="nhwc_offsets"))
        found.append(_im2col(nhwc, [-1, -1], [-1, -1], 32, 16, (32, -1, -1, 1), [2, 1], swizzle, [1, 2, 2, 1],
                             where="nhwc_stride2"))
        found.append(_im2col(nhwc, [0, 1], [-2, 0], 64, 24, (0, 0, 1, 0), [1, 0], swizzle, where="nhwc_positive"))
        found.append(_im2col(nhwc, [-2, -2], [0, 0], 64, 64, (0, -2, -2, 0), [0, 3], swizzle, where="nhwc_wide_pad"))
        # 5-D: W, H and D
        found.append(_im2col(ndhwc, [-1, -1, -1], [-1, -1, -1], 32, 16, (0, -1, -1, -1, 0), [0, 0, 0], swizzle,
                             where="ndhwc_pad"))
        found.append(_im2col(ndhwc, [-1, -1, -1], [-1, -1, -1], 32, 32, (0, -1, -1, -1, 1), [2, 1, 2], swizzle,
                             where="ndhwc_offsets"))
        found.append(_im2col(ndhwc, [0, -1, 1], [-1, 0, -1], 32, 16, (0, 0, -1, 1, 0), [1, 1, 0], swizzle,
                             [1, 2, 1, 2, 1], where="ndhwc_mixed"))
    return found


def cases() -> list:
    found = tiled_placement_cases() + tiled_other_cases() + im2col_cases()
    for i, case in enumerate(found):
        case["id"] = i
    return found


if __name__ == "__main__":
    import collections
    listed = cases()
    print(len(listed), collections.Counter((c["mode"], c["where"]) for c in listed))
