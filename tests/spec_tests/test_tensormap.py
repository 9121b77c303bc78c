"""TMA tensor-map arguments (spec/tma/tensormap.py) and `layoutproof tma check` (docs/CLI.md "tma check").

Every expectation is read off the manual, not the program: the CUDA driver docs of
cuTensorMapEncodeTiled / Im2col / Im2colWide (cuda.h 13.0), PTX 5.5.5-5.5.7 and the cuda.h element
sizes (BFLOAT16/FLOAT16 2 bytes, FLOAT32 4, 16U4 4 bits, 16U6 6 bits). The arithmetic behind each case
is written next to it.
"""
from __future__ import annotations

import copy
import io
import json
import sys

import pytest

from solver.cli.main import main
from spec.tma import tensormap as tm
from spec.rules import SpecError, resolve, rules_for

# --- Valid documents ---------------------------------------------------------------------------------
# CUTLASS-style bf16 operand tile: a 4096 x 4096 row-major bf16 matrix, box 64 x 128 with 128B swizzle.
# Row = 64 * 2 = 128 bytes (a multiple of 16, = the 128B span); stride 4096 * 2 = 8192 (multiple of 16).
TILED_BF16 = {
    "encode": "tiled", "dataType": "BFLOAT16", "rank": 2, "globalAddress": "0x7f0000000000",
    "globalDim": [4096, 4096], "globalStrides": [8192], "boxDim": [64, 128], "elementStrides": [1, 1],
    "interleave": "NONE", "swizzle": "128B", "l2Promotion": "L2_256B", "oobFill": "NONE",
}
# 1-D byte tensor, no swizzle: box 256 bytes (a multiple of 16), no strides (rank - 1 = 0).
TILED_1D = {
    "encode": "tiled", "dataType": "UINT8", "rank": 1, "globalAddress": 4096, "globalDim": [1024],
    "globalStrides": [], "boxDim": [256], "elementStrides": [1], "interleave": "NONE", "swizzle": "NONE",
    "l2Promotion": "NONE", "oobFill": "NONE",
}
# NC/16HWC16 fp16 (PTX 5.5.6): 16 channels * 2 bytes = 32-byte slices, interleave 32B with swizzle 32B,
# rank 4 (>= 3), address and strides multiples of 32 (32, 32 * 10, 320 * 10).
INTERLEAVED_32B = {
    "encode": "tiled", "dataType": "FLOAT16", "rank": 4, "globalAddress": "0x7f0000000020",
    "globalDim": [16, 10, 10, 2], "globalStrides": [32, 320, 3200], "boxDim": [16, 8, 8, 1],
    "elementStrides": [1, 1, 1, 1], "interleave": "32B", "swizzle": "32B", "l2Promotion": "L2_128B",
    "oobFill": "NAN_REQUEST_ZERO_FMA",
}
# Packed 4-bit values padded to 16 bytes (sm100): 256 values per row = 128 bytes (multiple of 32),
# globalDim[0] = 256 (multiple of 128), boxDim[0] = 128, address 32-byte aligned, swizzle 128B.
PACKED_U4_16B = {
    "encode": "tiled", "dataType": "16U4_ALIGN16B", "rank": 2, "globalAddress": "0x7f0000000000",
    "globalDim": [256, 64], "globalStrides": [128], "boxDim": [128, 16], "elementStrides": [1, 1],
    "interleave": "NONE", "swizzle": "128B", "l2Promotion": "NONE", "oobFill": "NONE",
}
# 16 x U4 in 8 bytes: globalDim[0] even; a box row of 32 values = 16 bytes.
PACKED_U4_8B = {
    "encode": "tiled", "dataType": "16U4_ALIGN8B", "rank": 2, "globalAddress": "0x7f0000000010",
    "globalDim": [256, 64], "globalStrides": [128], "boxDim": [32, 16], "elementStrides": [1, 1],
    "interleave": "NONE", "swizzle": "NONE", "l2Promotion": "NONE", "oobFill": "NONE",
}
# 16U6_ALIGN16B, rank 3: 128 values = 96 bytes per row (multiple of 32), 96 * 4 = 384.
PACKED_U6_RANK3 = {
    "encode": "tiled", "dataType": "16U6_ALIGN16B", "rank": 3, "globalAddress": "0x7f0000000000",
    "globalDim": [128, 4, 4], "globalStrides": [96, 384], "boxDim": [128, 4, 4], "elementStrides": [1, 1, 1],
    "interleave": "NONE", "swizzle": "128B", "l2Promotion": "NONE", "oobFill": "NONE",
}
# im2col, NHWC fp16 (C 64, W 32, H 32, N 8), 3x3 filter with padding 1: lower = -1, upper = 1 - 2 = -1;
# strides 64 * 2 = 128, 128 * 32, 4096 * 32; channels 64 * 2 = 128 bytes (= the 128B span).
IM2COL_NHWC = {
    "encode": "im2col", "dataType": "FLOAT16", "rank": 4, "globalAddress": "0x7f0000000000",
    "globalDim": [64, 32, 32, 8], "globalStrides": [128, 4096, 131072],
    "pixelBoxLowerCorner": [-1, -1], "pixelBoxUpperCorner": [-1, -1], "channelsPerPixel": 64,
    "pixelsPerColumn": 128, "elementStrides": [1, 1, 1, 1], "interleave": "NONE", "swizzle": "128B",
    "l2Promotion": "L2_128B", "oobFill": "NONE",
}
# im2col rank 3 (NWC) and rank 5 (NDHWC), same channel layout.
IM2COL_NWC = {**IM2COL_NHWC, "rank": 3, "globalDim": [64, 32, 8], "globalStrides": [128, 4096],
              "pixelBoxLowerCorner": [-1], "pixelBoxUpperCorner": [-1], "elementStrides": [1, 1, 1]}
IM2COL_NDHWC = {**IM2COL_NHWC, "rank": 5, "globalDim": [64, 8, 8, 8, 2], "globalStrides": [128, 1024, 8192, 65536],
                "pixelBoxLowerCorner": [-1, -1, -1], "pixelBoxUpperCorner": [-1, -1, -1],
                "elementStrides": [1, 1, 1, 1, 1]}
# Packed im2col (sm100): 128 channels of 4 bits = 64 bytes; 128 values per pixel = 64-byte stride.
IM2COL_PACKED = {**IM2COL_NHWC, "dataType": "16U4_ALIGN16B", "globalDim": [128, 32, 32, 8],
                 "globalStrides": [64, 2048, 65536], "channelsPerPixel": 128}
# im2col::w, the PTX 5.5.5.3 example: Tensor Size 128 (C), 9 (W), 7 (H), 64 (N); pixels-per-column
# 128, channels-per-pixel 64, corners W 0 / 0. bf16: strides 256, 256 * 9, 2304 * 7; 64 * 2 = 128 bytes.
IM2COL_WIDE = {
    "encode": "im2col_wide", "dataType": "BFLOAT16", "rank": 4, "globalAddress": "0x7f0000000000",
    "globalDim": [128, 9, 7, 64], "globalStrides": [256, 2304, 16128], "pixelBoxLowerCornerWidth": 0,
    "pixelBoxUpperCornerWidth": 0, "channelsPerPixel": 64, "pixelsPerColumn": 128,
    "elementStrides": [1, 1, 1, 1], "interleave": "NONE", "mode": "W", "swizzle": "128B",
    "l2Promotion": "NONE", "oobFill": "NONE",
}

VALID = {
    "tiled-bf16-128B": (TILED_BF16, ("sm90", "sm100", "sm103")),
    "tiled-1d": (TILED_1D, ("sm90", "sm100")),
    "interleaved-32B": (INTERLEAVED_32B, ("sm90", "sm100")),
    "packed-u4-16B": (PACKED_U4_16B, ("sm100", "sm103")),
    "packed-u4-8B": (PACKED_U4_8B, ("sm100",)),
    "packed-u6": (PACKED_U6_RANK3, ("sm100",)),
    "im2col-nhwc": (IM2COL_NHWC, ("sm90", "sm100")),
    "im2col-nwc": (IM2COL_NWC, ("sm90",)),
    "im2col-ndhwc": (IM2COL_NDHWC, ("sm90",)),
    "im2col-packed": (IM2COL_PACKED, ("sm100",)),
    "im2col-wide-W": (IM2COL_WIDE, ("sm100", "sm103")),
    "im2col-wide-W128": ({**IM2COL_WIDE, "mode": "W128"}, ("sm100",)),
    "tiled-atom32B-sm100": ({**TILED_BF16, "swizzle": "128B_ATOM_32B", "smemAddress": "0x400"}, ("sm100",)),
}


def variant(base: dict, **changes) -> dict:
    document = copy.deepcopy(base)
    document.update(changes)
    return document


def broken(document: dict, arch: str = "sm100") -> set:
    return {v.rule.id for v in tm.violations(tm.parse_params(document), arch)}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_documents_break_nothing(name):
    document, arches = VALID[name]
    for arch in arches:
        assert broken(document, arch) == set(), (name, arch)
        assert tm.check_document(document, arch) == {"legal": True, "violations": [], "warnings": []}


def test_document_round_trip():
    for document, _ in VALID.values():
        params = tm.parse_params(document)
        assert tm.parse_params(tm.to_document(params)) == params


def test_addresses_are_integers_or_decimal_or_hex_strings():
    as_int = tm.parse_params(variant(TILED_BF16, globalAddress=0x7f0000000000))
    assert tm.parse_params(TILED_BF16) == as_int
    assert tm.parse_params(variant(TILED_BF16, globalAddress=str(0x7f0000000000))) == as_int
    assert as_int.global_address == 0x7f0000000000


# --- One breaker per rule: a document that breaks that rule and no other ---------------------------
BREAKERS = {
    # tensorRank 6 > 5, lists of 6; strides stay multiples of 16.
    "tma.map.rank": (variant(TILED_BF16, rank=6, globalDim=[4096, 4, 2, 2, 2, 2],
                             globalStrides=[8192, 32768, 65536, 131072, 262144], boxDim=[64, 4, 2, 2, 2, 2],
                             elementStrides=[1] * 6), "sm100"),
    # interleave 16B with rank 2 (interleave needs 3D..5D; 16B takes any swizzle).
    "tma.map.interleave_rank": (variant(TILED_BF16, interleave="16B"), "sm100"),
    # im2col with rank 2: no spatial dimension, empty corner lists.
    "tma.map.im2col.rank": (variant(IM2COL_NHWC, rank=2, globalDim=[64, 32], globalStrides=[128],
                                    pixelBoxLowerCorner=[], pixelBoxUpperCorner=[], elementStrides=[1, 1]),
                            "sm100"),
    "tma.map.global_address_alignment": (variant(TILED_BF16, globalAddress="0x7f0000000008"), "sm100"),
    "tma.map.global_dim_range": (variant(TILED_BF16, globalDim=[4096, 0]), "sm100"),
    # 16U4_ALIGN16B: 192 values is not a multiple of 128 (row 96 bytes, still a multiple of 32).
    "tma.map.packed_global_dim": (variant(PACKED_U4_16B, globalDim=[192, 64], globalStrides=[96]), "sm100"),
    "tma.map.global_stride_alignment": (variant(TILED_BF16, globalStrides=[8200]), "sm100"),
    "tma.map.global_stride_range": (variant(TILED_BF16, globalStrides=[1 << 40]), "sm100"),
    "tma.map.element_strides_range": (variant(TILED_BF16, elementStrides=[1, 9]), "sm100"),
    "tma.map.element_strides_inner": (variant(TILED_BF16, elementStrides=[2, 1]), "sm100"),
    "tma.map.interleave_swizzle": (variant(INTERLEAVED_32B, swizzle="64B"), "sm100"),
    "tma.map.interleave_dtype": (variant(PACKED_U6_RANK3, interleave="16B"), "sm100"),
    # UINT16 (2 bytes, like bf16) is not a floating-point type.
    "tma.map.oob_nan_dtype": (variant(TILED_BF16, dataType="UINT16", oobFill="NAN_REQUEST_ZERO_FMA"), "sm100"),
    "tma.map.box_range": (variant(TILED_BF16, boxDim=[64, 257]), "sm100"),
    # 60 * 2 = 120 bytes: not a multiple of 16 (but <= 128).
    "tma.map.box_inner_16B": (variant(TILED_BF16, boxDim=[60, 128]), "sm100"),
    # 128 * 2 = 256 bytes > 128 (a multiple of 16, boxDim <= 256).
    "tma.map.box_swizzle_span": (variant(TILED_BF16, boxDim=[128, 128]), "sm100"),
    # 64 packed values (32 bytes, a multiple of 16) instead of 128.
    "tma.map.packed_box": (variant(PACKED_U4_16B, boxDim=[64, 16]), "sm100"),
    "tma.map.packed_swizzle": (variant(PACKED_U4_16B, swizzle="128B_ATOM_64B"), "sm100"),
    "tma.map.dtype_arch": (PACKED_U4_16B, "sm90"),
    "tma.map.swizzle_arch": (variant(TILED_BF16, swizzle="128B_ATOM_64B"), "sm90"),
    # rank 4: [-128, 127]; W size 32 - 1 + 129 = 160 stays non-empty.
    "tma.map.im2col.corner_range": (variant(IM2COL_NHWC, pixelBoxLowerCorner=[-129, -1]), "sm100"),
    # W: 32 + (-40) - (-1) = -7 < 1.
    "tma.map.im2col.box_area": (variant(IM2COL_NHWC, pixelBoxUpperCorner=[-40, -1]), "sm100"),
    "tma.map.im2col.channels_range": (variant(IM2COL_NHWC, channelsPerPixel=0), "sm100"),
    "tma.map.im2col.pixels_range": (variant(IM2COL_NHWC, pixelsPerColumn=1025), "sm100"),
    # 128 * 2 = 256 bytes > the 128B span.
    "tma.map.im2col.channel_span": (variant(IM2COL_NHWC, channelsPerPixel=128), "sm100"),
    "tma.map.im2col_wide.arch": (IM2COL_WIDE, "sm90"),
    # Decided by the H100's driver (tests/hardware/tensormap_encode_sm90.json.gz): 4 x 2 = 8-byte pixel rows,
    # a spatial dimension of 2^31 + 1, a box of 64 x 256 x 8 bf16 = 256 KiB > 228 KiB.
    "tma.map.im2col.channels_16B": (variant(IM2COL_NHWC, channelsPerPixel=4), "sm100"),
    "tma.map.im2col.spatial_dim_range": (variant(IM2COL_WIDE, globalDim=[128, 9, 2 ** 31, 64]), "sm100"),
    "tma.map.box_bytes": (variant(TILED_BF16, rank=3, globalDim=[4096, 4096, 8], globalStrides=[8192, 8192 * 4096],
                                  boxDim=[64, 256, 8], elementStrides=[1, 1, 1]), "sm100"),
    # The H100's driver accepted this box (it counts floor(3 / 2) = 1 row along dimension 1) though it
    # loads 400 KiB (tests/hardware/fuzz_driver_sm90.json.gz).
    "tma.map.box_bytes_loaded": (variant(TILED_BF16, rank=4, globalDim=[1024, 1024, 1024, 16],
                                         globalStrides=[2048, 2048 * 1024, 2048 * 1024 * 1024],
                                         boxDim=[64, 3, 200, 8], elementStrides=[1, 2, 1, 1]), "sm90"),
    "tma.map.im2col_wide.swizzle": (variant(IM2COL_WIDE, swizzle="NONE"), "sm100"),
    "tma.map.im2col_wide.interleave": (variant(IM2COL_WIDE, interleave="16B"), "sm100"),
    "tma.map.im2col_wide.corner_range": (variant(IM2COL_WIDE, pixelBoxLowerCornerWidth=-32769), "sm100"),
    # 0x480 = 1024 + 128: off the 1024-byte repeat of 128B.
    "tma.map.smem_alignment": (variant(TILED_BF16, smemAddress="0x480"), "sm100"),
    "tma.box.destination_alignment": (variant(TILED_1D, smemAddress="0x40"), "sm100"),
    "tma.load.coord0_16B": (variant(TILED_BF16, coordinates=[4, 0]), "sm100"),          # 8 bytes into a row
    "tma.load.packed_coord0": (variant(PACKED_U4_16B, coordinates=[64, 0]), "sm100"),
    "tma.map.copy_direction": (variant(TILED_BF16, swizzle="128B_ATOM_32B_FLIP_8B", direction="shared_to_global"),
                               "sm100"),
}
WARNING_ONLY = {"tma.map.smem_alignment", "tma.map.copy_direction", "tma.map.element_strides_inner",
                "tma.map.box_bytes_loaded", "tma.box.destination_alignment", "tma.load.coord0_16B",
                "tma.load.packed_coord0"}


def test_breakers_cover_every_tensormap_rule():
    assert set(BREAKERS) == {r.id for r in rules_for("tensormap")}


def test_every_rule_names_its_enforcer_and_the_copy_rules_are_warnings():
    """The encoder refuses what breaks a rule on its arguments; the rules on the copy (destination,
    direction), the stride the driver calls ignored and the loaded size it does not count are warnings."""
    rules = rules_for("tensormap")
    assert all(r.enforced_by in ("driver", "nobody") for r in rules)
    assert {r.id for r in rules if r.enforced_by == "nobody"} == WARNING_ONLY


def test_sm90_exceptions_are_the_ones_the_h100_driver_showed():
    """tests/hardware/tensormap_encode_sm90.json.gz: the H100's driver encodes interleave 32B with any
    swizzle and im2col_wide maps without checking the architecture, swizzle or interleave."""
    assert {r.id for r in rules_for("tensormap") if "sm90" in r.not_enforced_on} == {
        "tma.map.interleave_swizzle", "tma.map.im2col_wide.arch", "tma.map.im2col_wide.swizzle",
        "tma.map.im2col_wide.interleave"}
    assert all(tm.enforced(rule_id, "sm100") for rule_id in ("tma.map.interleave_swizzle", "tma.map.im2col_wide.arch"))


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_breaker_breaks_exactly_its_rule(rule_id):
    document, arch = BREAKERS[rule_id]
    assert broken(document, arch) == {rule_id}
    report = tm.check_document(document, arch)
    refused = tm.enforced(rule_id, arch)
    assert [v["rule"] for v in report["violations" if refused else "warnings"]] == [rule_id]
    assert report["legal"] == (not refused)


def test_enforcement_is_flipped_in_one_place(monkeypatch):
    """Hardware evidence that the encoder accepts a box of 257 turns the violation into a warning: the
    rule's own enforced_by is the one place that says so."""
    monkeypatch.setattr(resolve("tma.map.box_range"), "enforced_by", "nobody")
    report = tm.check_document(BREAKERS["tma.map.box_range"][0])
    assert report["legal"] and [w["rule"] for w in report["warnings"]] == ["tma.map.box_range"]


# --- Boundaries, both sides of each range (CUDA Driver API cuTensorMapEncode*) ---------------------
RANK_0 = variant(TILED_1D, rank=0, globalDim=[], globalStrides=[], boxDim=[], elementStrides=[])
RANK_5 = variant(TILED_BF16, rank=5, globalDim=[4096, 4, 2, 2, 2], globalStrides=[8192, 32768, 65536, 131072],
                 boxDim=[64, 4, 2, 2, 2], elementStrides=[1] * 5)
BOUNDARIES = [
    # (rule, document, arch, broken?)
    ("tma.map.rank", TILED_1D, "sm100", False),
    ("tma.map.rank", RANK_5, "sm100", False),
    ("tma.map.rank", RANK_0, "sm100", True),
    ("tma.map.interleave_rank", variant(INTERLEAVED_32B, interleave="16B"), "sm100", False),
    ("tma.map.im2col.rank", IM2COL_NWC, "sm100", False),
    ("tma.map.im2col.rank", IM2COL_NDHWC, "sm100", False),
    ("tma.map.global_address_alignment", variant(TILED_BF16, globalAddress=16), "sm100", False),
    ("tma.map.global_address_alignment", variant(TILED_BF16, globalAddress=8), "sm100", True),
    ("tma.map.global_address_alignment", variant(INTERLEAVED_32B, globalAddress="0x7f0000000010"), "sm100", True),
    ("tma.map.global_address_alignment", variant(PACKED_U4_16B, globalAddress="0x7f0000000010"), "sm100", True),
    ("tma.map.global_address_alignment", variant(PACKED_U6_RANK3, globalAddress="0x7f0000000010"), "sm100", True),
    ("tma.map.global_address_alignment", variant(PACKED_U4_8B, globalAddress="0x7f0000000010"), "sm100", False),
    ("tma.map.global_dim_range", variant(TILED_BF16, globalDim=[1, 4096]), "sm100", False),
    ("tma.map.global_dim_range", variant(TILED_BF16, globalDim=[4096, 1 << 32]), "sm100", False),
    ("tma.map.global_dim_range", variant(TILED_BF16, globalDim=[4096, (1 << 32) + 1]), "sm100", True),
    ("tma.map.packed_global_dim", variant(PACKED_U4_16B, globalDim=[128, 64], globalStrides=[64]), "sm100", False),
    ("tma.map.packed_global_dim", variant(PACKED_U6_RANK3, globalDim=[192, 4, 4], globalStrides=[160, 640]),
     "sm100", True),
    ("tma.map.packed_global_dim", variant(PACKED_U4_8B, globalDim=[258, 64]), "sm100", False),
    ("tma.map.packed_global_dim", variant(PACKED_U4_8B, globalDim=[257, 64]), "sm100", True),
    ("tma.map.global_stride_alignment", variant(TILED_BF16, globalStrides=[16]), "sm100", False),
    ("tma.map.global_stride_alignment", variant(TILED_BF16, globalStrides=[8]), "sm100", True),
    ("tma.map.global_stride_alignment", variant(INTERLEAVED_32B, globalStrides=[48, 320, 3200]), "sm100", True),
    ("tma.map.global_stride_alignment", variant(PACKED_U4_16B, globalStrides=[144]), "sm100", True),
    ("tma.map.global_stride_alignment", variant(PACKED_U4_8B, globalStrides=[144]), "sm100", False),
    ("tma.map.global_stride_range", variant(TILED_BF16, globalStrides=[(1 << 40) - 16]), "sm100", False),
    ("tma.map.element_strides_range", variant(TILED_BF16, elementStrides=[1, 8]), "sm100", False),
    ("tma.map.element_strides_range", variant(TILED_BF16, elementStrides=[1, 0]), "sm100", True),
    ("tma.map.element_strides_inner", variant(INTERLEAVED_32B, elementStrides=[2, 1, 1, 1]), "sm100", False),
    ("tma.map.interleave_swizzle", variant(INTERLEAVED_32B, interleave="16B", swizzle="128B"), "sm100", False),
    ("tma.map.interleave_dtype", variant(PACKED_U4_16B, rank=3, globalDim=[256, 4, 4], globalStrides=[128, 512],
                                         boxDim=[128, 4, 4], elementStrides=[1, 1, 1], interleave="16B"),
     "sm100", False),
    ("tma.map.oob_nan_dtype", variant(TILED_BF16, dataType="FLOAT16", oobFill="NAN_REQUEST_ZERO_FMA"), "sm100", False),
    ("tma.map.oob_nan_dtype", variant(TILED_BF16, dataType="TFLOAT32_FTZ", boxDim=[32, 128],
                                      oobFill="NAN_REQUEST_ZERO_FMA"), "sm100", False),
    ("tma.map.oob_nan_dtype", variant(TILED_BF16, dataType="INT32", boxDim=[32, 128],
                                      oobFill="NAN_REQUEST_ZERO_FMA"), "sm100", True),
    ("tma.map.oob_nan_dtype", variant(PACKED_U4_8B, oobFill="NAN_REQUEST_ZERO_FMA"), "sm100", True),
    ("tma.map.box_range", variant(TILED_BF16, boxDim=[64, 1]), "sm100", False),
    ("tma.map.box_range", variant(TILED_BF16, boxDim=[64, 256]), "sm100", False),
    ("tma.map.box_range", variant(TILED_BF16, boxDim=[64, 0]), "sm100", True),
    ("tma.map.box_inner_16B", variant(TILED_BF16, boxDim=[8, 128]), "sm100", False),     # 16 bytes
    ("tma.map.box_inner_16B", variant(TILED_BF16, boxDim=[4, 128]), "sm100", True),      # 8 bytes
    ("tma.map.box_inner_16B", variant(PACKED_U4_8B, boxDim=[16, 16]), "sm100", True),    # 16 x 4 bits = 8 B
    # one load at most 228 KiB (H100 driver): 64 FLOAT32 channels x 1024 pixels = 256 KiB; x 896 = 224 KiB
    ("tma.map.box_bytes", variant(IM2COL_NHWC, dataType="FLOAT32", swizzle="NONE", pixelsPerColumn=1024), "sm100",
     True),
    ("tma.map.box_bytes", variant(IM2COL_NHWC, dataType="FLOAT32", swizzle="NONE", pixelsPerColumn=896), "sm100",
     False),
    # interleaved rows too (the H100's driver refuses 8-byte interleaved rows)
    ("tma.map.box_inner_16B", variant(INTERLEAVED_32B, boxDim=[4, 8, 8, 1]), "sm100", True),
    ("tma.map.box_inner_16B", variant(INTERLEAVED_32B, boxDim=[8, 8, 8, 1]), "sm100", False),
    ("tma.map.box_swizzle_span", variant(TILED_BF16, swizzle="32B", boxDim=[16, 128]), "sm100", False),   # 32 B
    ("tma.map.box_swizzle_span", variant(TILED_BF16, swizzle="32B", boxDim=[24, 128]), "sm100", True),    # 48 B
    ("tma.map.box_swizzle_span", variant(TILED_BF16, swizzle="64B", boxDim=[32, 128]), "sm100", False),   # 64 B
    ("tma.map.box_swizzle_span", variant(TILED_BF16, swizzle="64B", boxDim=[40, 128]), "sm100", True),    # 80 B
    ("tma.map.box_swizzle_span", variant(TILED_BF16, boxDim=[72, 128]), "sm100", True),                   # 144 B
    ("tma.map.box_swizzle_span", variant(TILED_BF16, swizzle="128B_ATOM_64B", boxDim=[72, 128]), "sm100", True),
    ("tma.map.box_swizzle_span", variant(TILED_BF16, dataType="FLOAT32", swizzle="32B", boxDim=[8, 128]),
     "sm100", False),                                                                                     # 32 B
    ("tma.map.box_swizzle_span", variant(TILED_BF16, swizzle="NONE", boxDim=[256, 128]), "sm100", False),
    ("tma.map.packed_box", variant(PACKED_U4_16B, boxDim=[256, 16]), "sm100", True),
    ("tma.map.packed_box", variant(PACKED_U4_8B, boxDim=[64, 16]), "sm100", False),
    ("tma.map.packed_swizzle", variant(PACKED_U6_RANK3, swizzle="128B_ATOM_64B"), "sm100", False),
    ("tma.map.packed_swizzle", variant(PACKED_U6_RANK3, swizzle="128B_ATOM_32B"), "sm100", False),
    ("tma.map.packed_swizzle", variant(PACKED_U6_RANK3, swizzle="NONE"), "sm100", False),
    ("tma.map.packed_swizzle", variant(PACKED_U6_RANK3, swizzle="64B"), "sm100", True),
    ("tma.map.packed_swizzle", variant(PACKED_U6_RANK3, swizzle="128B_ATOM_32B_FLIP_8B"), "sm100", True),
    ("tma.map.packed_swizzle", variant(PACKED_U4_16B, swizzle="32B", boxDim=[128, 16]), "sm100", True),
    ("tma.map.dtype_arch", PACKED_U4_8B, "sm103", False),
    ("tma.map.dtype_arch", PACKED_U6_RANK3, "sm90", True),
    ("tma.map.swizzle_arch", variant(TILED_BF16, swizzle="128B_ATOM_32B"), "sm103", False),
    ("tma.map.swizzle_arch", variant(TILED_BF16, swizzle="128B_ATOM_32B_FLIP_8B"), "sm90", True),
    ("tma.map.swizzle_arch", variant(TILED_BF16, swizzle="128B"), "sm90", False),
    # Corner ranges: rank 3 [-32768, 32767], rank 4 [-128, 127], rank 5 [-16, 15].
    ("tma.map.im2col.corner_range", variant(IM2COL_NWC, pixelBoxLowerCorner=[-32768]), "sm100", False),
    ("tma.map.im2col.corner_range", variant(IM2COL_NWC, pixelBoxUpperCorner=[32767]), "sm100", False),
    ("tma.map.im2col.corner_range", variant(IM2COL_NWC, pixelBoxLowerCorner=[-32769]), "sm100", True),
    ("tma.map.im2col.corner_range", variant(IM2COL_NWC, pixelBoxUpperCorner=[32768]), "sm100", True),
    ("tma.map.im2col.corner_range", variant(IM2COL_NHWC, pixelBoxLowerCorner=[-128, -1]), "sm100", False),
    ("tma.map.im2col.corner_range", variant(IM2COL_NHWC, pixelBoxUpperCorner=[-1, 127]), "sm100", False),
    ("tma.map.im2col.corner_range", variant(IM2COL_NHWC, pixelBoxUpperCorner=[-1, 128]), "sm100", True),
    ("tma.map.im2col.corner_range", variant(IM2COL_NDHWC, pixelBoxLowerCorner=[-16, -1, -1]), "sm100", False),
    ("tma.map.im2col.corner_range", variant(IM2COL_NDHWC, pixelBoxUpperCorner=[-1, -1, 15]), "sm100", False),
    ("tma.map.im2col.corner_range", variant(IM2COL_NDHWC, pixelBoxLowerCorner=[-17, -1, -1]), "sm100", True),
    ("tma.map.im2col.corner_range", variant(IM2COL_NDHWC, pixelBoxUpperCorner=[-1, -1, 16]), "sm100", True),
    # Box size along W = 32 + upper - (-1): upper -32 -> 1, upper -33 -> 0; along H likewise.
    ("tma.map.im2col.box_area", variant(IM2COL_NHWC, pixelBoxUpperCorner=[-32, -1]), "sm100", False),
    ("tma.map.im2col.box_area", variant(IM2COL_NHWC, pixelBoxUpperCorner=[-33, -1]), "sm100", True),
    ("tma.map.im2col.box_area", variant(IM2COL_NHWC, pixelBoxUpperCorner=[-1, -33]), "sm100", True),
    # im2col_wide: W = 9 + upper - 0: upper -8 -> 1, -9 -> 0.
    ("tma.map.im2col.box_area", variant(IM2COL_WIDE, pixelBoxUpperCornerWidth=-8), "sm100", False),
    ("tma.map.im2col.box_area", variant(IM2COL_WIDE, pixelBoxUpperCornerWidth=-9), "sm100", True),
    ("tma.map.im2col.channels_range", variant(IM2COL_NHWC, channelsPerPixel=1), "sm100", False),
    ("tma.map.im2col.channels_range", variant(IM2COL_NHWC, swizzle="NONE", channelsPerPixel=256), "sm100", False),
    ("tma.map.im2col.channels_range", variant(IM2COL_NHWC, swizzle="NONE", channelsPerPixel=257), "sm100", True),
    ("tma.map.im2col.channels_range", variant(IM2COL_PACKED, channelsPerPixel=64), "sm100", True),
    ("tma.map.im2col.channels_range", variant(IM2COL_PACKED, swizzle="NONE", channelsPerPixel=256), "sm100", True),
    ("tma.map.im2col.pixels_range", variant(IM2COL_NHWC, pixelsPerColumn=1), "sm100", False),
    ("tma.map.im2col.pixels_range", variant(IM2COL_NHWC, pixelsPerColumn=1024), "sm100", False),
    ("tma.map.im2col.pixels_range", variant(IM2COL_NHWC, pixelsPerColumn=0), "sm100", True),
    ("tma.map.im2col.pixels_range", variant(IM2COL_WIDE, pixelsPerColumn=1025), "sm100", True),
    # W128 loads 128 pixels whatever pixelsPerColumn says (PTX 5.5.5), yet the H100's driver still refuses 0
    # and 1025 there (tests/hardware/tensormap_encode_sm90.json.gz).
    ("tma.map.im2col.pixels_range", variant(IM2COL_WIDE, mode="W128", pixelsPerColumn=0), "sm100", True),
    ("tma.map.im2col.pixels_range", variant(IM2COL_WIDE, mode="W128", pixelsPerColumn=4096), "sm100", True),
    ("tma.map.im2col.channel_span", variant(IM2COL_NHWC, channelsPerPixel=72), "sm100", True),             # 144 B
    ("tma.map.im2col.channel_span", variant(IM2COL_NHWC, swizzle="32B", channelsPerPixel=16), "sm100", False),
    ("tma.map.im2col.channel_span", variant(IM2COL_NHWC, swizzle="32B", channelsPerPixel=24), "sm100", True),
    ("tma.map.im2col.channel_span", variant(IM2COL_WIDE, swizzle="64B", channelsPerPixel=32), "sm100", False),
    ("tma.map.im2col.channel_span", variant(IM2COL_WIDE, swizzle="64B", channelsPerPixel=40), "sm100", True),
    ("tma.map.im2col_wide.arch", IM2COL_WIDE, "sm103", False),
    ("tma.map.im2col_wide.swizzle", variant(IM2COL_WIDE, swizzle="64B", channelsPerPixel=32), "sm100", False),
    ("tma.map.im2col_wide.swizzle", variant(IM2COL_WIDE, swizzle="128B_ATOM_32B"), "sm100", False),
    ("tma.map.im2col_wide.swizzle", variant(IM2COL_WIDE, swizzle="32B", channelsPerPixel=16), "sm100", True),
    ("tma.map.im2col_wide.swizzle", variant(IM2COL_WIDE, swizzle="128B_ATOM_32B_FLIP_8B"), "sm100", True),
    ("tma.map.im2col_wide.swizzle", variant(IM2COL_WIDE, swizzle="128B_ATOM_64B"), "sm100", True),
    ("tma.map.im2col_wide.interleave", variant(IM2COL_WIDE, interleave="32B", swizzle="32B"), "sm100", True),
    ("tma.map.im2col_wide.corner_range", variant(IM2COL_WIDE, pixelBoxLowerCornerWidth=-32768), "sm100", False),
    ("tma.map.im2col_wide.corner_range", variant(IM2COL_WIDE, pixelBoxUpperCornerWidth=32767), "sm100", False),
    ("tma.map.im2col_wide.corner_range", variant(IM2COL_WIDE, pixelBoxUpperCornerWidth=32768), "sm100", True),
    # Destination: 128 bytes, and the swizzle repeat (32B 256, 64B 512, 128B* 1024).
    ("tma.box.destination_alignment", variant(TILED_1D, smemAddress=0x80), "sm100", False),
    ("tma.box.destination_alignment", variant(TILED_1D, smemAddress=0x40), "sm100", True),   # the H100 traps
    ("tma.box.destination_alignment", variant(TILED_BF16, smemAddress=0x410), "sm100", True),
    ("tma.map.smem_alignment", variant(TILED_1D, smemAddress=0x40), "sm100", False),          # no swizzle
    ("tma.load.coord0_16B", variant(TILED_BF16, coordinates=[8, 3]), "sm100", False),         # 16 bytes
    ("tma.load.coord0_16B", variant(TILED_BF16, coordinates=[-8, 3]), "sm100", False),
    ("tma.load.coord0_16B", variant(TILED_BF16, coordinates=[1, 0]), "sm100", True),          # the H100 traps
    ("tma.load.coord0_16B", variant(TILED_1D, coordinates=[15]), "sm100", True),
    ("tma.load.packed_coord0", variant(PACKED_U4_16B, coordinates=[128, 0]), "sm100", False),
    ("tma.load.packed_coord0", variant(PACKED_U4_16B, coordinates=[-128, 0]), "sm100", False),
    ("tma.load.packed_coord0", variant(PACKED_U4_16B, coordinates=[16, 0]), "sm100", True),
    ("tma.load.coord0_16B", variant(PACKED_U4_16B, coordinates=[16, 0]), "sm100", False),      # the packed rule's
    ("tma.map.smem_alignment", variant(TILED_BF16, smemAddress=0x480), "sm100", True),         # 128B: 1024
    ("tma.map.smem_alignment", variant(TILED_BF16, swizzle="32B", boxDim=[16, 128], smemAddress=0x100), "sm100", False),
    ("tma.map.smem_alignment", variant(TILED_BF16, swizzle="32B", boxDim=[16, 128], smemAddress=0x180), "sm100", True),
    ("tma.map.smem_alignment", variant(TILED_BF16, swizzle="64B", boxDim=[32, 128], smemAddress=0x200), "sm100", False),
    ("tma.map.smem_alignment", variant(TILED_BF16, swizzle="64B", boxDim=[32, 128], smemAddress=0x300), "sm100", True),
    ("tma.map.smem_alignment", variant(TILED_BF16, smemAddress=0x800), "sm100", False),
    ("tma.map.smem_alignment", variant(TILED_BF16, smemAddress=0x410), "sm100", True),
    ("tma.map.smem_alignment", variant(TILED_BF16, swizzle="128B_ATOM_64B", smemAddress=0x440), "sm100", True),
    ("tma.map.copy_direction", variant(TILED_BF16, swizzle="128B_ATOM_32B_FLIP_8B", direction="global_to_shared"),
     "sm100", False),
    ("tma.map.copy_direction", variant(PACKED_U4_16B, direction="shared_to_global"), "sm100", True),
    ("tma.map.copy_direction", variant(PACKED_U4_16B, direction="global_to_shared"), "sm100", False),
    ("tma.map.copy_direction", variant(PACKED_U6_RANK3, swizzle="128B_ATOM_64B", direction="global_to_shared"),
     "sm100", True),
    ("tma.map.copy_direction", variant(PACKED_U6_RANK3, swizzle="128B_ATOM_64B", direction="shared_to_global"),
     "sm100", False),
    ("tma.map.copy_direction", variant(PACKED_U6_RANK3, swizzle="128B_ATOM_64B"), "sm100", False),  # not given
]


@pytest.mark.parametrize("rule_id,document,arch,expected", BOUNDARIES,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BOUNDARIES)])
def test_boundary(rule_id, document, arch, expected):
    assert (rule_id in broken(document, arch)) == expected


# --- Malformed documents: SpecError naming the field ------------------------------------------------
def without(base: dict, key: str) -> dict:
    return {k: v for k, v in base.items() if k != key}


MALFORMED = [
    # (document, field named)
    ([TILED_BF16], "params"),
    (without(TILED_BF16, "encode"), "encode"),
    (variant(TILED_BF16, encode="tile"), "encode"),
    (without(TILED_BF16, "swizzle"), "swizzle"),
    (without(TILED_BF16, "boxDim"), "boxDim"),
    (without(IM2COL_NHWC, "pixelsPerColumn"), "pixelsPerColumn"),
    (without(IM2COL_WIDE, "mode"), "mode"),
    (variant(TILED_BF16, rank="2"), "rank"),
    (variant(TILED_BF16, rank=True), "rank"),
    (variant(TILED_BF16, rank=-1), "rank"),
    (variant(TILED_BF16, rank=2.0), "rank"),
    (variant(TILED_BF16, dataType="FLOAT8"), "dataType"),
    (variant(TILED_BF16, dataType="bf16"), "dataType"),
    (variant(TILED_BF16, globalDim=[-1, 4096]), "globalDim[0]"),
    (variant(TILED_BF16, globalDim=[4096, "4096"]), "globalDim[1]"),
    (variant(TILED_BF16, globalDim=[4096, False]), "globalDim[1]"),
    (variant(TILED_BF16, globalDim=[4096]), "globalDim"),
    (variant(TILED_BF16, globalDim=4096), "globalDim"),
    (variant(TILED_BF16, globalDim=[4096, 1 << 64]), "globalDim[1]"),
    (variant(TILED_BF16, globalStrides=[8192, 8192]), "globalStrides"),
    (variant(TILED_BF16, globalStrides=[-16]), "globalStrides[0]"),
    (variant(TILED_BF16, boxDim=[64, 1 << 32]), "boxDim[1]"),
    (variant(TILED_BF16, boxDim=[64, -1]), "boxDim[1]"),
    (variant(TILED_BF16, elementStrides=[1, 1, 1]), "elementStrides"),
    (variant(TILED_BF16, globalAddress="0xZZ"), "globalAddress"),
    (variant(TILED_BF16, globalAddress=-16), "globalAddress"),
    (variant(TILED_BF16, globalAddress=1 << 64), "globalAddress"),
    (variant(TILED_BF16, globalAddress=None), "globalAddress"),
    (variant(TILED_BF16, interleave="64B"), "interleave"),
    (variant(TILED_BF16, swizzle="96B"), "swizzle"),      # no cuda.h 13.0 CUtensorMapSwizzle enumerator
    (variant(TILED_BF16, swizzle="128 bytes"), "swizzle"),
    (variant(TILED_BF16, l2Promotion="L2_512B"), "l2Promotion"),
    (variant(TILED_BF16, oobFill="NAN"), "oobFill"),
    (variant(TILED_BF16, boxDims=[64, 128]), "boxDims"),              # a typo is not ignored
    (variant(IM2COL_NHWC, boxDim=[64, 8, 8, 1]), "boxDim"),           # not an im2col argument
    (variant(IM2COL_NHWC, pixelBoxLowerCorner=[-1]), "pixelBoxLowerCorner"),
    (variant(IM2COL_NHWC, pixelBoxUpperCorner=[-1, 1 << 31]), "pixelBoxUpperCorner[1]"),
    (variant(IM2COL_NHWC, channelsPerPixel=-64), "channelsPerPixel"),
    (variant(IM2COL_WIDE, pixelBoxLowerCornerWidth=[0]), "pixelBoxLowerCornerWidth"),
    (variant(IM2COL_WIDE, mode="W64"), "mode"),
    (variant(TILED_BF16, smemAddress="somewhere"), "smemAddress"),
    (variant(TILED_BF16, direction="load"), "direction"),
]


@pytest.mark.parametrize("document,field", MALFORMED, ids=[f"{m[1]}-{i}" for i, m in enumerate(MALFORMED)])
def test_malformed_documents_name_the_field(document, field):
    with pytest.raises(SpecError) as raised:
        tm.parse_params(document)
    assert raised.value.field_name == field
    assert raised.value.rule_id


def test_out_of_range_but_expressible_values_are_violations_not_malformed():
    for document in (variant(TILED_BF16, globalDim=[4096, 0]), variant(TILED_BF16, boxDim=[64, 300]),
                     BREAKERS["tma.map.rank"][0]):
        assert tm.check_document(document)["legal"] is False


def test_unknown_arch_is_malformed():
    with pytest.raises(SpecError) as raised:
        tm.check_document(TILED_BF16, "sm80")
    assert raised.value.field_name == "arch"


# --- CLI ----------------------------------------------------------------------------------------------
REPORT_KEYS = {"legal", "violations", "warnings"}


def write(tmp_path, document, name="params.json") -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


def run(capsys, *argv):
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys, *argv):
    rc, out, err = run(capsys, *argv, "--json")
    document = json.loads(out)
    assert err == "" and REPORT_KEYS <= set(document)
    for entry in document["violations"] + document["warnings"]:
        assert set(entry) == {"rule", "source", "message"} and "\n" not in entry["message"]
    return rc, document


def assert_malformed(rc, out, err, name):
    assert rc == 2 and out == ""
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert name in err


def test_cli_legal_exits_0(capsys, tmp_path):
    rc, document = run_json(capsys, "tma", "check", "--params", write(tmp_path, TILED_BF16), "--arch", "sm100")
    assert rc == 0 and document["legal"] is True and document["violations"] == []


def test_cli_illegal_exits_1_and_lists_the_rule(capsys, tmp_path):
    path = write(tmp_path, BREAKERS["tma.map.box_swizzle_span"][0])
    rc, document = run_json(capsys, "tma", "check", "--params", path, "--arch", "sm100")
    assert rc == 1 and document["legal"] is False
    assert [v["rule"] for v in document["violations"]] == ["tma.map.box_swizzle_span"]


def test_cli_warnings_alone_exit_0(capsys, tmp_path):
    path = write(tmp_path, BREAKERS["tma.map.smem_alignment"][0])
    rc, document = run_json(capsys, "tma", "check", "--params", path, "--arch", "sm100")
    assert rc == 0 and document["legal"] is True
    assert [w["rule"] for w in document["warnings"]] == ["tma.map.smem_alignment"]


def test_cli_arch_is_required_and_decides(capsys, tmp_path):
    path = write(tmp_path, variant(TILED_BF16, swizzle="128B_ATOM_32B"))
    assert_malformed(*run(capsys, "tma", "check", "--params", path), "--arch")
    assert run_json(capsys, "tma", "check", "--params", path, "--arch", "sm100")[0] == 0
    rc, document = run_json(capsys, "tma", "check", "--params", path, "--arch", "sm90")
    assert rc == 1 and [v["rule"] for v in document["violations"]] == ["tma.map.swizzle_arch"]


def test_cli_reads_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(IM2COL_WIDE)))
    rc, document = run_json(capsys, "tma", "check", "--params", "-", "--arch", "sm90")
    # the H100's driver encodes im2col_wide maps (only the copies need sm100): a warning there
    assert rc == 0 and [v["rule"] for v in document["warnings"]] == ["tma.map.im2col_wide.arch"]


def test_cli_human_output(capsys, tmp_path):
    rc, out, err = run(capsys, "tma", "check", "--params", write(tmp_path, BREAKERS["tma.map.box_range"][0]),
                       "--arch", "sm100")
    assert rc == 1 and err == ""
    assert "legal: no" in out and "tma.map.box_range" in out


@pytest.mark.parametrize("content,name", [
    ("{not json", "params"),
    ("", "params"),
    (json.dumps(without(TILED_BF16, "swizzle")), "swizzle"),
    (json.dumps(variant(TILED_BF16, rank="two")), "rank"),
    (json.dumps(variant(TILED_BF16, globalDim=[-4096, 4096])), "globalDim[0]"),
    (json.dumps([1, 2]), "params"),
])
def test_cli_malformed_exits_2(capsys, tmp_path, content, name):
    assert_malformed(*run(capsys, "tma", "check", "--params", write(tmp_path, content), "--arch", "sm100"), name)


def test_cli_missing_file_exits_2(capsys, tmp_path):
    assert_malformed(*run(capsys, "tma", "check", "--params", tmp_path / "absent.json", "--arch", "sm100"), "params")


def test_cli_unknown_arch_exits_2(capsys, tmp_path):
    assert_malformed(*run(capsys, "tma", "check", "--params", write(tmp_path, TILED_BF16), "--arch", "sm80"), "arch")


# --- Interleaved layouts (PTX 5.5.6) ------------------------------------------------------------------
def test_interleave_16B_is_nc8hwc8():
    """PTX 5.5.6: 'C8 utilizes 16 bytes in memory assuming 2B per channel'; 20 channels need 3 slices, the
    last padded. Innermost first: (8, W, H, C/8, N); strides 16 B, 16 * W, 16 * W * H, ..."""
    layout = tm.interleaved_layout(n=2, c=20, spatial=(10, 6), element_bytes=2, interleave="16B")
    assert layout["globalDim"] == [8, 10, 6, 3, 2] and layout["channels_padded"] == 24
    assert layout["globalStrides"] == [16, 160, 960, 2880]


def test_interleave_32B_is_nc16hwc16_and_none_is_nhwc():
    """CUDA Driver API: 'NC/16HWC16 where C16 uses 32 bytes': 16 two-byte channels per 32-byte slice
    (PTX 5.5.6's 'assuming 4B per channel' cannot hold: 16 x 4 = 64 bytes), 8 four-byte ones.
    No interleave: C innermost."""
    assert tm.interleaved_layout(1, 32, (7,), 2, "32B")["globalDim"] == [16, 7, 2, 1]
    assert tm.interleaved_layout(1, 32, (7,), 4, "32B")["globalDim"] == [8, 7, 4, 1]
    assert tm.interleaved_layout(1, 32, (7, 5), 2, "NONE")["globalDim"] == [32, 7, 5, 1]


def test_interleaved_layouts_the_encoder_cannot_describe():
    with pytest.raises(SpecError, match="interleave_layout"):
        tm.interleaved_layout(1, 8, (4, 4, 4), 2, "16B")      # (8, W, H, D, C/8, N): 6 dimensions
    with pytest.raises(SpecError, match="element_bytes"):
        tm.interleaved_layout(1, 8, (4,), 32, "16B")
